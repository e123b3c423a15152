"""The TensorRT activities (build, profile) on this machine and over a real loopback sshd,
with E1's stand-in trtexec: real TensorRT 10.16 output replayed, every flag checked against
the real sampleOptions.cpp. Failures: no TensorRT, wrong version, unknown option, failing
build, no GPU, Cancel, dropped connection — each one line, the log kept."""

from __future__ import annotations

import os
import shutil
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from helpers.trt_gpu import fake_gpu  # noqa: F401 (a fixture)
from sshd import SshServer, processes_with

from designer.activities.reports.trt_tables import load_trt_report
from designer.activities.reports.trtexec_log import load_trtexec_log
from designer.activities.targets import CancelToken, HostKeyDecision, LocalTarget, SshTarget
from designer.activities.trt.detect import detect_tensorrt
from designer.activities.trt.options import TrtBuildOptions, TrtOptionError, TrtProfileOptions
from designer.activities.trt.run import run_trt_build, run_trt_profile

if TYPE_CHECKING:
    from conftest import SshEnv

pytestmark = pytest.mark.usefixtures("fake_gpu")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "tiny_cnn.onnx"
STANDIN = ROOT / "tests" / "helpers" / "trtexec_standin" / "trtexec"
SAMPLES = ROOT.parent / "shared" / "fixtures" / "NVIDIA" / "trt-samples-for-hackathon-cn"
TRTEXEC_DIR = SAMPLES / "cookbook" / "07-Tool" / "trtexec"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ONNX_DESIGNER_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("DELAY", "NO_GPU", "FAIL_BUILD", "VERSION"):
        monkeypatch.delenv(f"TRTEXEC_STANDIN_{name}", raising=False)


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "in put" / "tiny cnn.onnx"  # spaces: quoting is exercised
    path.parent.mkdir()
    shutil.copy(EXAMPLE, path)
    return path


def _build(model: Path, out: Path, **changes: object) -> TrtBuildOptions:
    return TrtBuildOptions(
        model=str(model),
        engine=str(out / "tiny.engine"),
        layer_info=str(out / "tiny.layers.json"),
        **changes,  # type: ignore[arg-type]
    )


def test_local_build_then_profile(model: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    logged: list[str] = []
    built = run_trt_build(
        LocalTarget(), _build(model, out, fp16=True), custom=str(STANDIN), on_log=logged.append
    )
    assert built.status == "ok", built.error
    assert set(built.outputs) == {"engine", "layer_info", "log"}
    assert built.outputs["engine"] == out / "tiny.engine" and (out / "tiny.engine").stat().st_size
    assert built.outputs["log"] == out / "tiny.build.log"
    assert "&&&& PASSED" in built.outputs["log"].read_text()
    assert any(line.startswith("$ ") and "--fp16" in line for line in logged)
    cache = tmp_path / "cache" / "trt" / "timing-10.16.1.cache"
    assert built.details["timing_cache"] == str(cache) and cache.is_file()
    assert built.details["version"] == "10.16.1"
    assert sorted(p.name for p in out.iterdir()) == [
        "tiny.build.log",
        "tiny.engine",
        "tiny.layers.json",
    ]

    profiled = run_trt_profile(
        LocalTarget(),
        TrtProfileOptions(
            build=TrtBuildOptions(model=str(model)),
            use_engine=str(out / "tiny.engine"),
            iterations=20,
            export_times=str(out / "tiny.times.json"),
        ),
        custom=str(STANDIN),
    )
    assert profiled.status == "ok", profiled.error
    assert profiled.profile == out / "tiny.trt-profile.json"  # beside the prebuilt engine
    assert set(profiled.outputs) == {"profile", "times", "log"}
    argv = profiled.details["argv"]
    assert "--iterations=20" in argv and any(a.startswith("--loadEngine=") for a in argv)
    report = load_trt_report(
        profiled.profile,
        layer_info=built.outputs["layer_info"],
        log=profiled.outputs["log"],
        times=profiled.outputs["times"],
    )
    recorded = load_trtexec_log(TRTEXEC_DIR / "result-05.log").profile
    assert recorded is not None
    assert [r.name for r in report.layers] == [p.name for p in recorded.layers]
    assert [r.mean_ms for r in report.layers] == [p.average_ms for p in recorded.layers]
    assert report.performance is not None and report.performance.gpu_compute is not None


def test_report_tables_match_the_fixture(tmp_path: Path) -> None:
    report = load_trt_report(
        None,
        layer_info=TRTEXEC_DIR / "model-trained-exportLayerInfo.log",
        log=TRTEXEC_DIR / "result-05.log",
    )
    tables = report.tables()
    layers = {r["name"]: r for r in tables["layers"].records()}
    pool = layers["node_max_pool2d"]
    assert (pool["mean_ms"], pool["median_ms"], pool["total_ms"], pool["percent"]) == (
        0.0045,
        0.0041,
        82.34,
        5.4,
    )
    assert pool["precision"] == "FP32" and str(pool["tactic"]).startswith("sm50_xmma_pooling")
    assert pool["onnx_nodes"] == "node_max_pool2d"
    assert layers["node_conv2d_myl0_1"]["onnx_nodes"] == "node_conv2d"  # Myelin name
    assert layers["__mye59_0_myl0_0"]["onnx_nodes"] == ""
    assert len(layers) == 15 and abs(report.total_ms - 0.0833) < 1e-9
    assert tables["layers"].column_values("min_ms") == [None] * 15  # one measurement pass
    summary = load_trt_report(None, log=TRTEXEC_DIR / "result-03.log").tables()["summary"]
    values = {r["metric"]: r["value"] for r in summary.records()}
    assert values["Throughput"] == 24896.9
    assert values["Latency median"] == 0.0388184 and values["Latency p99"] == 0.0390625
    assert values["GPU compute mean"] == 0.0387646 and values["H2D mean"] == 0.0
    assert values["TensorRT version"] == "10.16.1" and values["GPU"] == "NVIDIA H100 PCIe"
    from designer.activities.reports import write_tables

    written = write_tables(tables, tmp_path, "p")
    assert sorted(p.name for p in written) == sorted(
        f"p_{n}.{e}"
        for n in ("layers", "layer_types", "precisions", "summary")
        for e in ("csv", "json")
    )


def test_several_passes_give_min_and_max(tmp_path: Path) -> None:
    import json

    rows = [{"name": "a", "timeMs": 1.0, "averageMs": m, "medianMs": m, "percentage": 100.0}
            for m in (0.5,)]  # fmt: skip
    paths = []
    for i, mean in enumerate((0.5, 0.7, 0.6)):
        path = tmp_path / f"p{i}.json"
        path.write_text(json.dumps([{"count": 10}, {**rows[0], "averageMs": mean}]))
        paths.append(path)
    report = load_trt_report(paths[0], extra_profiles=paths[1:])
    row = report.layers[0]
    assert (row.min_ms, row.max_ms) == (0.5, 0.7) and abs((row.mean_ms or 0) - 0.6) < 1e-12


# --- failures ------------------------------------------------------------------------------
def _failed(result: object, *words: str) -> None:
    assert result.status == "failed", result  # type: ignore[attr-defined]
    error = result.error or ""  # type: ignore[attr-defined]
    assert "\n" not in error and all(w in error for w in words), error
    log = result.outputs["log"]  # type: ignore[attr-defined]
    assert log.is_file() and error in log.read_text()


def test_no_tensorrt(model: Path, tmp_path: Path) -> None:
    result = run_trt_build(
        LocalTarget(), _build(model, tmp_path), custom=str(tmp_path / "no-trtexec")
    )
    _failed(result, "no TensorRT on local")
    assert not (tmp_path / "tiny.engine").exists()


def test_wrong_version_is_refused(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRTEXEC_STANDIN_VERSION", "11.1")
    result = run_trt_build(LocalTarget(), _build(model, tmp_path, fp16=True), custom=str(STANDIN))
    _failed(result, "TensorRT 11.1", "on local")
    assert "argv" not in result.details  # refused before trtexec ran


def test_unknown_option_fails_like_trtexec(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = detect_tensorrt(LocalTarget(), custom=str(STANDIN))  # 10.16 when detected …
    monkeypatch.setenv("TRTEXEC_STANDIN_VERSION", "11.1")  # … 11.1 when run: --fp16 is gone
    result = run_trt_build(LocalTarget(), _build(model, tmp_path, fp16=True), detection=found)
    _failed(result, "does not know the option --fp16")
    assert any("Unknown option" in line for line in result.log)


def test_failing_build(model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRTEXEC_STANDIN_FAIL_BUILD", "1")
    result = run_trt_build(LocalTarget(), _build(model, tmp_path), custom=str(STANDIN))
    _failed(result)
    assert "engine" not in result.outputs
    assert any("&&&& FAILED" in line for line in result.outputs["log"].read_text().splitlines())


def test_no_gpu_is_refused_before_trtexec_runs(model: Path, tmp_path: Path) -> None:
    from designer.activities.trt.detect import TrtProbePaths

    nothing = TrtProbePaths(gpu_devices=(str(tmp_path / "no-device"),), nvidia_smi="no-smi")
    found = detect_tensorrt(LocalTarget(), custom=str(STANDIN), probe=nothing)
    assert found.found and not found.gpu
    result = run_trt_build(LocalTarget(), _build(model, tmp_path), detection=found)
    _failed(result, "no GPU on local", "nvidia-smi")
    assert not any(line.startswith("$ ") for line in result.log)


def test_cuda_failure_in_trtexec(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRTEXEC_STANDIN_NO_GPU", "1")  # a device, but CUDA cannot use it
    result = run_trt_build(LocalTarget(), _build(model, tmp_path), custom=str(STANDIN))
    _failed(result, "no usable CUDA GPU on local", "nvidia-smi")


def test_bad_options_raise_before_anything(model: Path, tmp_path: Path) -> None:
    with pytest.raises(TrtOptionError, match="FP8 and INT8"):
        run_trt_build(LocalTarget(), _build(model, tmp_path, fp8=True, int8=True))
    with pytest.raises(Exception, match="not found"):
        run_trt_build(LocalTarget(), _build(tmp_path / "missing.onnx", tmp_path))
    assert list(tmp_path.glob("*.log")) == []


def test_cancel_stops_trtexec(model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRTEXEC_STANDIN_DELAY", "60")
    marker = f"marker{uuid.uuid4().hex[:8]}"
    named = model.with_name(f"{marker}.onnx")
    shutil.copy(model, named)
    token = CancelToken()
    threading.Timer(1.5, token.cancel).start()
    start = time.monotonic()
    result = run_trt_build(
        LocalTarget(), _build(named, tmp_path), custom=str(STANDIN), cancel=token
    )
    assert result.status == "cancelled" and result.error == "cancelled by the user"
    assert time.monotonic() - start < 15
    assert result.outputs["log"].is_file()
    assert processes_with(marker) == []


# --- SSH target ------------------------------------------------------------------------------
def _remote_standin(target: SshTarget, deploy: str, delay: float = 0) -> str:
    """A wrapper ``<deploy>/bin/trtexec`` on the target running the stand-in (custom path)."""
    root = target.check_writable(deploy)
    target.mkdir(f"{root}/bin")
    local = Path(os.environ.get("TMPDIR", "/tmp")) / f"trtexec-wrapper-{uuid.uuid4().hex[:8]}"
    env = f"TRTEXEC_STANDIN_DELAY={delay} " if delay else ""
    local.write_text(f'#!/bin/sh\n{env}exec "{STANDIN}" "$@"\n')
    try:
        target.put(local, f"{root}/bin/trtexec")
    finally:
        local.unlink()
    assert target.run(["chmod", "755", f"{root}/bin/trtexec"]).ok
    return "bin/trtexec"


def test_remote_build_and_profile(
    ssh_env: SshEnv, remote_dir: str, model: Path, tmp_path: Path
) -> None:
    out = tmp_path / "home"
    with ssh_env.connect() as target:
        custom = _remote_standin(target, remote_dir)
        built = run_trt_build(target, _build(model, out), custom=custom, deploy_dir=remote_dir)
        assert built.status == "ok", built.error
        assert set(built.outputs) == {"engine", "layer_info", "log"}
        root = target.resolve(remote_dir)
        assert built.details["timing_cache"] == f"{root}/trt/timing-10.16.1.cache"
        assert target.exists(built.details["timing_cache"])
        assert any(p.endswith("/model/tiny cnn.onnx") for p in built.copied)
        from designer.activities.trt.run import preview_trt_build

        found = detect_tensorrt(target, deploy_dir=remote_dir, custom=custom)
        preview = preview_trt_build(target, _build(model, out), found, deploy_dir=remote_dir)
        assert preview == built.details["argv"]
        again = run_trt_build(target, _build(model, out), custom=custom, deploy_dir=remote_dir)
        assert again.status == "ok" and again.copied == []  # model unchanged: nothing copied
        profiled = run_trt_profile(
            target,
            TrtProfileOptions(
                build=TrtBuildOptions(model=str(model)),
                use_engine=str(out / "tiny.engine"),
                export_profile=str(out / "p.json"),
                export_layer_info=str(out / "p.layers.json"),
            ),
            custom=custom,
            deploy_dir=remote_dir,
        )
    assert profiled.status == "ok", profiled.error
    assert set(profiled.outputs) == {"profile", "layer_info", "log"}
    report = load_trt_report(profiled.profile, layer_info=profiled.outputs["layer_info"])
    assert len(report.layers) == 15


def test_remote_connection_dropped(
    ssh_env: SshEnv, remote_dir: str, model: Path, tmp_path: Path
) -> None:
    server = SshServer(ssh_env.folder, ssh_env.folder / "authorized_keys").start()
    marker = f"marker{uuid.uuid4().hex[:8]}"
    named = model.with_name(f"{marker}.onnx")
    shutil.copy(model, named)
    try:
        target = SshTarget(
            ssh_env.settings(port=server.port, known_hosts=tmp_path / "kh"),
            lambda i: HostKeyDecision.ACCEPT_ONCE,
        ).connect()
        custom = _remote_standin(target, remote_dir, delay=60)

        def on_log(line: str) -> None:
            if line.startswith("$ "):
                threading.Timer(1.0, server.kill_all).start()

        result = run_trt_build(
            target, _build(named, tmp_path), custom=custom, deploy_dir=remote_dir, on_log=on_log
        )
        target.close()
        _failed(result, "connection was lost")
        assert any(line.startswith("$ ") for line in result.log)
    finally:
        server.stop()
        for pid in processes_with(marker):
            os.kill(pid, 9)


# --- command preview and the Python builder path ---------------------------------------------
def test_preview_is_the_command_that_runs(model: Path, tmp_path: Path) -> None:
    from designer.activities.trt.run import preview_trt_build

    found = detect_tensorrt(LocalTarget(), custom=str(STANDIN))
    options = _build(model, tmp_path / "out", fp16=True)
    preview = preview_trt_build(LocalTarget(), options, found)
    built = run_trt_build(LocalTarget(), options, detection=found)
    assert built.status == "ok" and built.details["argv"] == preview
    assert not (tmp_path / "out" / "tiny.build.log").read_text().count("error:")


def test_wheels_only_python_builder(model: Path, tmp_path: Path) -> None:
    """Deployed wheels bring no trtexec: the build runs trt_build.py with that Python (here
    one without tensorrt, so it fails saying so); profiling refuses up front."""
    import dataclasses
    import sys

    found = dataclasses.replace(
        detect_tensorrt(LocalTarget(), custom=str(STANDIN)),
        source="deployed",
        trtexec=None,
        python=sys.executable,
    )
    result = run_trt_build(LocalTarget(), _build(model, tmp_path), detection=found)
    _failed(result, "Python builder", "tensorrt cannot be imported")
    assert result.details["argv"][1].endswith("trt_build.py")
    profiled = run_trt_profile(
        LocalTarget(), TrtProfileOptions(build=_build(model, tmp_path)), detection=found
    )
    _failed(profiled, "profiling needs trtexec")


def test_measurement_passes_give_min_and_max(model: Path, tmp_path: Path) -> None:
    from designer.activities.reports.trt_tables import load_run_report

    out = tmp_path / "out"
    options = TrtProfileOptions(
        build=TrtBuildOptions(model=str(model), profiles=[{"input": ([1, 3, 32, 32],) * 3}]),
        iterations=5,
        export_profile=str(out / "p.json"),
    )
    result = run_trt_profile(LocalTarget(), options, custom=str(STANDIN), passes=3)
    assert result.status == "ok", result.error
    assert result.outputs["profile_2"] == out / "p.pass2.json"
    assert result.outputs["profile_3"].is_file()
    runs = [line for line in result.log if line.startswith("$ ")]
    assert len(runs) == 3 and "--onnx=" in runs[0] and "--saveEngine=" in runs[0]
    assert all("--loadEngine=" in line and "pass-engine.trt" in line for line in runs[1:])
    report = load_run_report(result)
    assert len(report.profiles) == 3
    row = report.layers[0]
    assert row.min_ms is not None and row.max_ms is not None  # same recording: min == max
    assert row.min_ms <= (row.mean_ms or 0) <= row.max_ms
    assert sorted(p.name for p in out.iterdir()) == [
        "p.json",
        "p.log",
        "p.pass2.json",
        "p.pass3.json",
    ]
