"""Finding TensorRT on a target: the probe runs there (this machine, or over a real sshd)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from conftest import SshEnv

from designer.activities.deploy import DependencyState, DeployError
from designer.activities.targets import LocalTarget
from designer.activities.trt.deps import SystemTensorRT, trt_deployment
from designer.activities.trt.detect import (
    TrtProbePaths,
    detect_tensorrt,
    lock_clocks_argv,
    parse_probe,
)
from designer.activities.trt.options import TrtOptionError
from designer.activities.trt.version import TrtVersion
from tests.helpers.trtexec_standin import SCRIPT, fixtures_root, install_standin, write_wrapper

TEGRA = "# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64"
BANNER = "&&&& RUNNING TensorRT.trtexec [TensorRT v101601] [b11] # trtexec --help"
NOWHERE = TrtProbePaths(
    nv_tegra_release="/nonexistent/nv_tegra_release",
    system_trtexec="/nonexistent/trtexec",
    system_python="/nonexistent/python3",
    gpu_devices=("/nonexistent/nvidia0",),
    nvidia_smi="/nonexistent/nvidia-smi",
    jetson_clocks="/nonexistent/jetson_clocks",
)


def test_jetson_uses_the_system_tensorrt() -> None:
    out = "\n".join(
        [
            "machine=aarch64",
            f"tegra={TEGRA}",
            "system=/usr/src/tensorrt/bin/trtexec",
            f"system_banner={BANNER}",
            "sys_python=/usr/bin/python3",
            "sys_trt=10.3.0.30",
            "device=/dev/nvhost-ctrl-gpu",
            "jetson_clocks=/usr/bin/jetson_clocks",
            "uid=1000",
            "sudo=1",
        ]
    )
    det = parse_probe(out, "orin")
    assert det.jetson and det.l4t == TEGRA and det.source == "system"
    assert det.trtexec == "/usr/src/tensorrt/bin/trtexec" and det.method == "trtexec"
    assert det.version == TrtVersion(10, 16, 1) and det.python == "/usr/bin/python3"
    assert det.gpu and det.state == "found-gpu"
    assert det.summary.startswith("TensorRT 10.16.1 found, GPU found on a Jetson")
    assert det.can_lock_clocks
    lock, restore = lock_clocks_argv(det, "/tmp/c.conf")
    assert lock[:2] == ["sudo", "-n"] and "/usr/bin/jetson_clocks" in lock and "/tmp/c.conf" in lock
    assert restore == ["sudo", "-n", "/usr/bin/jetson_clocks", "--restore", "/tmp/c.conf"]
    with pytest.raises(DeployError, match="not deployed on a Jetson"):
        trt_deployment(LocalTarget(), ".x", det, use_wheels=True)


def test_jetson_never_takes_pip_wheels_or_path() -> None:
    out = "machine=aarch64\ntegra=" + TEGRA + "\nvenv_trt=10.16.1\nuid=1000\n"
    det = parse_probe(out, "orin", venv_python="/d/venv/bin/python")
    assert not det.found and det.state == "missing"
    assert "JetPack" in det.reason and det.summary.startswith("no TensorRT: ")
    assert not det.can_lock_clocks and "jetson_clocks is not installed" in det.clocks_detail
    deployed = parse_probe(out, "orin", venv_python="/d/venv/bin/python", source="deployed")
    assert "never deployed on a Jetson" in deployed.reason


def test_x86_sources_and_user_choice() -> None:
    out = "\n".join(
        [
            "machine=x86_64",
            "path=/opt/trt/bin/trtexec",
            "path_banner=&&&& RUNNING TensorRT.trtexec [TensorRT v110100] [b3] # trtexec --help",
            "venv_trt=10.16.1.11",
            "smi=/usr/bin/nvidia-smi",
            "smi_gpu=GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-x)",
            "uid=0",
        ]
    )
    det = parse_probe(out, "server", venv_python="/d/venv/bin/python")
    assert det.source == "path" and det.version == TrtVersion(11, 1, 0)
    assert det.gpu and "H100" in det.gpu_detail and det.python == "/d/venv/bin/python"
    assert lock_clocks_argv(det, "x") == (
        ["/usr/bin/nvidia-smi", "-lgc", "tdp,tdp"],
        ["/usr/bin/nvidia-smi", "-rgc"],
    )
    deployed = parse_probe(out, "server", venv_python="/d/venv/bin/python", source="deployed")
    assert deployed.source == "deployed" and deployed.method == "python"
    assert deployed.version == TrtVersion(10, 16, 1, 11)
    custom = parse_probe(out, "server", source="custom")
    assert not custom.found and "custom trtexec" in custom.reason


def test_nothing_found_says_what_to_do() -> None:
    det = parse_probe("machine=x86_64\nuid=1000\n", "box")
    assert not det.found and "deploy the tensorrt wheels" in det.reason
    assert not det.gpu and "no nvidia-smi" in det.gpu_detail
    with pytest.raises(TrtOptionError, match="cannot lock the clocks on box"):
        lock_clocks_argv(det, "x")
    status = SystemTensorRT(det).check(None)  # type: ignore[arg-type]
    assert status.state is DependencyState.UNAVAILABLE and "wheels" in status.detail
    missing = parse_probe("machine=x86_64\ncustom_missing=/x/trtexec\n", "box")
    assert "/x/trtexec is missing" in missing.reason


def _paths(root: Path, **changes: object) -> TrtProbePaths:
    base = {
        "nv_tegra_release": str(root / "etc" / "nv_tegra_release"),
        "system_trtexec": str(root / "usr" / "src" / "tensorrt" / "bin" / "trtexec"),
        "system_python": "/nonexistent/python3",
        "gpu_devices": (str(root / "dev" / "nvidia0"),),
        "nvidia_smi": "/nonexistent/nvidia-smi",
        "jetson_clocks": "/nonexistent/jetson_clocks",
    }
    base.update(changes)
    return TrtProbePaths(**base)  # type: ignore[arg-type]


def test_local_target_with_a_standin_system_trtexec(tmp_path: Path) -> None:
    target = LocalTarget()
    paths = _paths(tmp_path)
    write_wrapper(target, paths.system_trtexec, str(SCRIPT), str(fixtures_root()), "11.1")
    det = detect_tensorrt(target, probe=paths)
    assert det.source == "system" and det.trtexec == paths.system_trtexec
    assert det.version == TrtVersion(11, 1, 0) and not det.jetson
    assert det.state == "found-no-gpu"
    assert det.summary.startswith("TensorRT 11.1.0 found, no GPU")
    # A GPU device node makes it "GPU found"; a tegra file alone on x86_64 is no Jetson.
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "nvidia0").write_text("")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "nv_tegra_release").write_text(TEGRA + "\n")
    det = detect_tensorrt(target, probe=paths)
    assert det.gpu and det.state == "found-gpu" and not det.jetson and det.l4t == TEGRA
    # A custom trtexec relative to the deployment folder wins.
    deploy = tmp_path / "deploy"
    write_wrapper(target, str(deploy / "tools" / "trtexec"), str(SCRIPT), str(fixtures_root()))
    det = detect_tensorrt(target, deploy_dir=str(deploy), custom="tools/trtexec", probe=paths)
    assert det.source == "custom" and det.trtexec == str(deploy / "tools" / "trtexec")
    assert det.version == TrtVersion(10, 16, 1)
    gone = detect_tensorrt(target, deploy_dir=str(deploy), custom="tools/nothing", probe=paths)
    assert not gone.found and "tools/nothing is missing" in gone.reason


def test_local_target_without_tensorrt() -> None:
    det = detect_tensorrt(LocalTarget(), probe=NOWHERE)
    if det.found:  # a real TensorRT on PATH or in python3: then it must have a version
        assert det.version is not None
    else:
        assert det.machine and det.reason and det.state == "missing"


def test_detection_over_ssh_reads_the_banner_there(ssh_env: SshEnv, remote_dir: str) -> None:
    with ssh_env.connect() as target:
        root = target.resolve(remote_dir)
        standin = install_standin(target, f"{root}/standin")
        paths = TrtProbePaths(
            nv_tegra_release=f"{root}/etc/nv_tegra_release",
            system_trtexec=f"{root}/usr/src/tensorrt/bin/trtexec",
            system_python="/nonexistent/python3",
            gpu_devices=(f"{root}/dev/nvidia0",),
            nvidia_smi="/nonexistent/nvidia-smi",
        )
        write_wrapper(target, paths.system_trtexec, standin, f"{root}/standin/fixtures", "11.1")
        det = detect_tensorrt(target, deploy_dir=remote_dir, probe=paths)
        assert det.target == target.name and det.source == "system"
        assert det.trtexec == paths.system_trtexec and det.version == TrtVersion(11, 1, 0)
        assert det.state == "found-no-gpu" and det.machine
        run = target.run([paths.system_trtexec, "--onnx=x", f"--bogus{uuid.uuid4().hex[:4]}"])
        assert run.exit_code == 1 and "Unknown option: --bogus" in run.stderr


def test_a_trtexec_that_does_not_start_is_explained() -> None:
    out = "machine=x86_64\nsystem=/usr/src/tensorrt/bin/trtexec\n"
    out += "system_banner=trtexec: error while loading shared libraries: libnvinfer.so.10\nuid=0\n"
    det = parse_probe(out, "box")
    assert det.found and det.version is None
    assert "not trtexec's version banner" in det.reason and "LD_LIBRARY_PATH" in det.reason


def test_python_tensorrt_found_by_its_version(tmp_path: Path) -> None:
    """The probe's Python check: a python whose ``tensorrt_bindings`` (the standalone wheels'
    module) says its version; here a package that holds only ``__version__``."""
    package = tmp_path / "site" / "tensorrt_bindings"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('__version__ = "10.16.1.11"\n')
    python = tmp_path / "bin" / "python3"
    python.parent.mkdir()
    python.write_text(f'#!/bin/sh\nPYTHONPATH={tmp_path / "site"} exec python3 "$@"\n')
    python.chmod(0o755)
    paths = _paths(tmp_path, system_python=str(python))
    det = detect_tensorrt(LocalTarget(), probe=paths)
    assert (det.source, det.method, det.python) == ("python", "python", str(python))
    assert det.version == TrtVersion(10, 16, 1, 11) and det.trtexec is None
    venv = tmp_path / "deploy" / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text(python.read_text())
    (venv / "python").chmod(0o755)
    det = detect_tensorrt(LocalTarget(), deploy_dir=str(tmp_path / "deploy"), probe=paths)
    assert det.source == "deployed" and det.python == str(venv / "python")
    assert trt_deployment(LocalTarget(), str(tmp_path / "deploy"), det).dependencies[-1].key == (
        "tensorrt"
    )
