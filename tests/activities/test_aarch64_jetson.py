"""The Jetson path of the TensorRT activities on the emulated aarch64 target (see jetson.py).

The target is the cached Debian arm64 root under qemu with L4T's marker file and JetPack's
trtexec path, where the stand-in trtexec (TensorRT 10.16's real option parser, recorded real
output) runs under the root's own aarch64 python3. Three states of the dependency panel are
checked: TensorRT found with a GPU (a device node where a Jetson has its GPU's), TensorRT found
without one (the emulated machine as it is), and no TensorRT (the plain root).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import jetson
import pytest
from aarch64 import MODULE_TIMEOUT
from aarch64_sshd import Aarch64Env, start_or_skip
from conftest import EXAMPLE
from helpers.shots import save_screenshot

from designer.activities.deploy import DeployError
from designer.activities.trt.deps import trt_deployment, wheels_allowed
from designer.activities.trt.detect import TrtDetection, detect_tensorrt
from designer.activities.trt.options import TrtBuildOptions, TrtProfileOptions
from designer.activities.trt.version import TrtVersion

pytestmark = [pytest.mark.aarch64, pytest.mark.timeout(MODULE_TIMEOUT)]

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(jetson.STANDIN))
import sample_options  # noqa: E402  (the stand-in's parser reader: the real flags of 10.16)

SHAPE = ([1, 3, 32, 32],) * 3  # tiny_cnn's dynamic batch, fixed at 1


def _layer(factory: pytest.TempPathFactory) -> Path:
    reason = jetson.missing_reason()
    if reason:
        pytest.skip(reason)
    return jetson.make_l4t_layer(factory.mktemp("l4t") / "layer")


@pytest.fixture(scope="module")
def jetson_gpu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Aarch64Env]:
    """The emulated Jetson with a GPU node (detection sees what it sees on a board)."""
    layer = _layer(tmp_path_factory)
    with contextlib.ExitStack() as stack:
        yield start_or_skip(stack, [layer], jetson.binds(), [jetson.GPU_NODE])


@pytest.fixture(scope="module")
def jetson_no_gpu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Aarch64Env]:
    """The emulated Jetson as the emulation really is: TensorRT there, no GPU."""
    layer = _layer(tmp_path_factory)
    with contextlib.ExitStack() as stack:
        yield start_or_skip(stack, [layer], jetson.binds())


def _detect(env: Aarch64Env) -> TrtDetection:
    with env.connect() as target:
        return detect_tensorrt(target, deploy_dir=".designer-test/trt")


@pytest.fixture(scope="module")
def found_gpu(jetson_gpu: Aarch64Env) -> TrtDetection:
    return _detect(jetson_gpu)


@pytest.fixture(scope="module")
def found_no_gpu(jetson_no_gpu: Aarch64Env) -> TrtDetection:
    return _detect(jetson_no_gpu)


def _model(folder: Path) -> Path:
    model = folder / "tiny_cnn.onnx"
    shutil.copy(EXAMPLE, model)
    return model


def _build_options(model: Path, folder: Path) -> TrtBuildOptions:
    return TrtBuildOptions(
        model=str(model),
        engine=str(folder / "tiny.engine"),
        layer_info=str(folder / "tiny.layers.json"),
        profiles=[{"input": SHAPE}],
    )


def test_recognises_a_jetson_and_its_system_tensorrt(
    jetson_gpu: Aarch64Env, found_gpu: TrtDetection
) -> None:
    found = found_gpu
    with jetson_gpu.connect() as target:
        assert target.run(["uname", "-m"]).stdout.strip() == "aarch64"
        dep = trt_deployment(target, ".designer-test/trt", found)
        statuses = dep.check()
        with pytest.raises(DeployError, match="not deployed on a Jetson"):
            trt_deployment(target, ".designer-test/trt", found, use_wheels=True)
    assert found.jetson and found.machine == "aarch64"
    assert found.l4t is not None and found.l4t.startswith("# R36 (release), REVISION: 4.0,")
    assert (found.source, found.trtexec) == ("system", jetson.SYSTEM_TRTEXEC)
    assert found.version == TrtVersion(10, 16, 1)  # read from the banner [TensorRT v101601]
    assert found.state == "found-gpu" and found.gpu
    assert found.summary.startswith("TensorRT 10.16.1 found, GPU found on a Jetson")
    assert not wheels_allowed(found)
    assert [s.key for s in statuses] == ["python", "runners", "tensorrt"]  # no pip wheels
    assert statuses[2].current and statuses[2].detail == found.summary


def test_builds_and_profiles_on_the_jetson(
    jetson_gpu: Aarch64Env, found_gpu: TrtDetection, tmp_path: Path
) -> None:
    model = _model(tmp_path)
    deploy = f".designer-test/trt-{uuid.uuid4().hex[:8]}"
    from designer.activities.trt.run import run_trt_build, run_trt_profile

    with jetson_gpu.connect() as target:
        built = run_trt_build(target, _build_options(model, tmp_path), deploy_dir=deploy)
        assert built.status == "ok", built.error
        cache = built.details["timing_cache"]
        assert cache.startswith(target.resolve(deploy)) and target.exists(cache)  # kept there
        again = run_trt_build(
            target, _build_options(model, tmp_path), detection=found_gpu, deploy_dir=deploy
        )
        profiled = run_trt_profile(
            target,
            TrtProfileOptions(
                _build_options(model, tmp_path),
                use_engine=str(tmp_path / "tiny.engine"),
                iterations=5,
                export_times=str(tmp_path / "tiny.times.json"),
            ),
            detection=found_gpu,
            deploy_dir=deploy,
        )
    assert not any(p.endswith(".whl") for p in built.copied)  # the system TensorRT, no wheels
    assert built.details["version"] == "10.16.1" and built.details["source"] == "system"
    argv = built.details["argv"]
    assert argv[0] == jetson.SYSTEM_TRTEXEC
    _options, unknown = sample_options.check_arguments(argv[1:], "10.16")
    assert unknown == []
    assert set(built.outputs) == {"engine", "layer_info", "log"}
    plan = built.outputs["engine"].read_bytes()  # what the stand-in wrote on the target
    assert plan.startswith(b"trtexec-standin plan\n")
    recorded = json.loads(plan.split(b"\n", 1)[1])
    assert recorded["version"] == "10.16.1" and recorded["args"] == argv[1:]
    assert json.loads(built.outputs["layer_info"].read_text())  # the layer JSON came back
    assert "[TensorRT v101601]" in built.outputs["log"].read_text()
    assert again.status == "ok" and again.copied == []  # deployment and model reused
    assert profiled.status == "ok", profiled.error
    assert profiled.profile is not None
    from designer.activities.reports.trt_profile import parse_profile_json

    layers = parse_profile_json(json.loads(profiled.profile.read_text()), profiled.profile)
    assert layers.layers
    assert profiled.outputs["times"].is_file()
    assert "--loadEngine=" in " ".join(profiled.details["argv"])


def _cli_build(
    env: Aarch64Env,
    model: Path,
    tmp_path: Path,
    *extra: str,
    verb: tuple[str, ...] = ("trt", "build"),
) -> subprocess.CompletedProcess[str]:
    s = env.settings()
    argv = [sys.executable, "-m", "designer.cli", *verb, str(model)]
    argv += ["--target", f"ssh://{s.user}@127.0.0.1:{s.port}", "--identity", str(s.key_file)]
    argv += ["--known-hosts", str(s.known_hosts), "--ssh-config", str(tmp_path / "none")]
    argv += ["--deploy-dir", ".designer-test/trt", "--free-dims-as-one", *extra]
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
        env={**os.environ, "ONNX_DESIGNER_CONFIG_DIR": str(tmp_path / "config")},
    )


def test_print_command_shows_the_system_trtexec(jetson_no_gpu: Aarch64Env, tmp_path: Path) -> None:
    model = _model(tmp_path)
    shown = _cli_build(
        jetson_no_gpu, model, tmp_path, "--print-command", "--fp16", "--opt-level", "3"
    )
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{jetson.SYSTEM_TRTEXEC} ")
    import shlex

    argv = shlex.split(lines[0])
    _options, unknown = sample_options.check_arguments(argv[1:], "10.16")
    assert unknown == []  # only options TensorRT 10.16 has
    assert "--fp16" in argv and "--builderOptimizationLevel=3" in argv
    assert any(a.startswith("--onnx=/home/odtest/.designer-test/trt/") for a in argv)


def test_no_gpu_is_said_and_a_build_refused(
    jetson_no_gpu: Aarch64Env, found_no_gpu: TrtDetection, tmp_path: Path
) -> None:
    found = found_no_gpu
    assert found.found and found.jetson and found.state == "found-no-gpu"
    assert found.summary.startswith("TensorRT 10.16.1 found, no GPU (")
    from designer.activities.trt.run import run_trt_build

    with jetson_no_gpu.connect() as target:
        result = run_trt_build(
            target,
            _build_options(_model(tmp_path), tmp_path),
            detection=found,
            deploy_dir=".designer-test/trt",
        )
    assert result.status == "failed"
    assert "no GPU" in (result.error or "")
    assert not any(line.startswith(f"$ {jetson.SYSTEM_TRTEXEC}") for line in result.log)
    assert not (tmp_path / "tiny.engine").exists()
    cli = _cli_build(jetson_no_gpu, _model(tmp_path), tmp_path, "--engine", str(tmp_path / "e"))
    lines = cli.stderr.strip().splitlines()
    assert cli.returncode == 1 and len(lines) == 1 and "no GPU on " in lines[0], cli.stderr
    assert not (tmp_path / "e").exists()


def _panel_rows(env: Aarch64Env, tmp_path: Path, shot: str) -> dict[str, tuple[str, str]]:
    """What the TensorRT dialog's dependency panel shows for ``env`` after Check: the same
    worker function (check_trt) fills a real DependencyPanel."""
    from designer.activities.connections import Connection
    from designer.activities.targets import CancelToken
    from designer.ui.dialogs.activity_jobs import ActivitySignals
    from designer.ui.dialogs.dependency_panel import DependencyPanel
    from designer.ui.dialogs.trt_jobs import check_trt

    s = env.settings()
    conn = Connection(
        "127.0.0.1",
        s.user,
        s.port,
        key_file=str(s.key_file),
        known_hosts=str(s.known_hosts),
        ssh_config=str(tmp_path / "none"),
        deploy_dir=".designer-test/trt",
    )
    signals = ActivitySignals()
    panel = DependencyPanel()
    signals.dependency.connect(panel.set_status)
    try:
        statuses, _found = check_trt(
            conn, None, lambda info: pytest.fail("known host"), signals, False, None, None,
            CancelToken(),
        )  # fmt: skip
        panel.set_statuses(statuses)
        panel.tree.setMaximumHeight(200)
        panel.resize(900, 200)
        save_screenshot(panel, f"trt_dependency_panel_{shot}.png")
        rows = [panel.tree.topLevelItem(i) for i in range(panel.tree.topLevelItemCount())]
        return {r.text(0): (r.text(1), r.text(2)) for r in rows if r is not None}
    finally:
        panel.deleteLater()
        signals.deleteLater()


def test_the_three_states_in_the_dependency_panel(
    jetson_gpu: Aarch64Env,
    jetson_no_gpu: Aarch64Env,
    aarch64_env: Aarch64Env,
    qtbot: object,
    tmp_path: Path,
) -> None:
    gpu = _panel_rows(jetson_gpu, tmp_path, "jetson_gpu")
    no_gpu = _panel_rows(jetson_no_gpu, tmp_path, "jetson_no_gpu")
    plain = _panel_rows(aarch64_env, tmp_path, "aarch64_no_trt")
    # TensorRT found, GPU found
    assert gpu["TensorRT (system)"][0] == "current"
    assert gpu["TensorRT (system)"][1].startswith("TensorRT 10.16.1 found, GPU found on a Jetson")
    assert gpu["CUDA GPU"][0] == "current"
    # TensorRT found, no GPU
    assert no_gpu["TensorRT (system)"][1].startswith("TensorRT 10.16.1 found, no GPU (")
    assert no_gpu["CUDA GPU"][0].startswith("unavailable")
    # no TensorRT (the root without L4T's marker nor trtexec)
    assert plain["TensorRT (system)"][0].startswith("unavailable")
    assert plain["TensorRT (system)"][1].startswith("no TensorRT")
    for rows in (gpu, no_gpu, plain):
        assert rows["Python ≥ 3.9"][1].startswith("Linux aarch64, Debian 12, Python 3.11")
        assert "Python packages" not in " ".join(rows)  # never pip wheels for TensorRT here


def test_a_jetson_without_tensorrt_says_what_to_install(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    if jetson.missing_reason():
        pytest.skip(jetson.missing_reason())
    layer = jetson.make_l4t_layer(tmp_path_factory.mktemp("l4t-bare") / "layer", tensorrt=False)
    with contextlib.ExitStack() as stack:
        env = start_or_skip(stack, [layer], (), [jetson.GPU_NODE])
        found = _detect(env)
        with env.connect() as target:
            statuses = trt_deployment(target, ".designer-test/trt", found).check()
    assert found.jetson and found.state == "missing"
    assert "install JetPack's TensorRT" in found.reason
    assert statuses[-1].key == "tensorrt" and not statuses[-1].current  # never pip wheels
    assert all(s.key != "venv" for s in statuses)


def test_profile_trt_cli_on_the_jetson(jetson_gpu: Aarch64Env, tmp_path: Path) -> None:
    model = _model(tmp_path)
    done = _cli_build(
        jetson_gpu,
        model,
        tmp_path,
        *("--iterations", "3", "--save-engine", str(tmp_path / "cli.engine")),
        *("--report-dir", str(tmp_path / "report")),
        verb=("profile", "trt"),
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "cli.engine").read_bytes().startswith(b"trtexec-standin plan\n")
    assert (tmp_path / "tiny_cnn.trt-profile.json").is_file()  # the default beside the model
    assert list((tmp_path / "report").glob("*.csv")) and done.stdout.strip()
