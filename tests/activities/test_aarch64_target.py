"""ONNX Runtime profiling on an emulated aarch64 target (Debian 12 arm64 under qemu-user).

The target is real aarch64 code: sshd, python3 and the deployed onnxruntime run through qemu,
so these tests prove what an x86_64 loopback server cannot: the platform is detected as
aarch64, the aarch64 wheels are fetched on the host (cached in the test cache, outside the
checkout) and installed, the model is profiled there. With the cached root the module takes
about a minute here; the first build of the root about 4 minutes (see aarch64.py).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import onnx
import pytest
from aarch64 import MODULE_TIMEOUT, cache_base, unavailable, wheel_cache
from aarch64_sshd import Aarch64Env
from conftest import EXAMPLE
from helpers.shots import save_screenshot
from pytestqt.qtbot import QtBot

from designer.activities.connections import Connection, test_connection
from designer.activities.deploy import DependencyState, DependencyStatus
from designer.activities.reports import model_nodes, parse_ort_profile
from designer.activities.runner import (
    ActivityResult,
    OrtProfileOptions,
    ort_deployment,
    run_ort_profile,
)

pytestmark = [pytest.mark.aarch64, pytest.mark.timeout(MODULE_TIMEOUT)]

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = "Linux aarch64, Debian 12, Python 3.11"
EM_AARCH64 = 183  # ELF e_machine of AArch64


@dataclass
class FirstRun:
    deploy_dir: str
    model: Path
    before: list[DependencyStatus]
    result: ActivityResult


def _options(model: Path, out: Path) -> OrtProfileOptions:
    return OrtProfileOptions(model, iterations=2, warmup=1, output=out)


@pytest.fixture(scope="module")
def first_run(aarch64_env: Aarch64Env, tmp_path_factory: pytest.TempPathFactory) -> FirstRun:
    """One fresh deployment and profile (the session's overlay starts without any)."""
    folder = tmp_path_factory.mktemp("aarch64-ort")
    model = folder / "tiny_cnn.onnx"
    shutil.copy(EXAMPLE, model)
    rel = f".designer-test/ort-{uuid.uuid4().hex[:8]}"
    with aarch64_env.connect() as target:
        dep = ort_deployment(target, rel, wheel_cache=wheel_cache(), allow_download=True)
        before = dep.check()
        result = run_ort_profile(target, _options(model, folder / "first.json"), deployment=dep)
    if result.status != "ok" and "downloading wheels" in (result.error or ""):
        unavailable(f"no aarch64 wheels in {wheel_cache()} and none downloadable: {result.error}")
    assert result.status == "ok", "\n".join(result.log[-30:])
    return FirstRun(rel, model, before, result)


def test_the_target_really_is_aarch64(aarch64_env: Aarch64Env) -> None:
    with aarch64_env.connect() as target:
        uname = target.run(["uname", "-m"], timeout=60)
        info = target.platform()
    assert uname.ok and uname.stdout.strip() == "aarch64"
    assert platform.machine() != "aarch64"  # the host is not: the target is emulated
    assert (info.system, info.machine, info.os_name) == ("Linux", "aarch64", "Debian 12")
    assert info.python_version is not None and info.python_version[:2] == (3, 11)
    assert info.platform_tags[0].endswith("_aarch64") and info.describe() == PLATFORM


def test_deploys_aarch64_wheels_and_profiles(first_run: FirstRun) -> None:
    states = [s.state for s in first_run.before]
    assert states == [DependencyState.CURRENT, DependencyState.MISSING, DependencyState.MISSING]
    assert first_run.before[0].detail.startswith(PLATFORM)
    result = first_run.result
    wheels = [p for p in result.copied if p.endswith(".whl")]
    ort = [w for w in wheels if w.rsplit("/", 1)[-1].startswith("onnxruntime-")]
    assert len(ort) == 1 and ort[0].endswith("_aarch64.whl"), wheels
    assert "-cp311-" in ort[0]
    assert any(p.endswith("/model/tiny_cnn.onnx") for p in result.copied)
    assert any(line.startswith("installing onnxruntime") for line in result.log)
    assert list((wheel_cache() / "cp311-manylinux_2_36_aarch64").glob("onnxruntime-*.whl"))
    assert result.profile is not None and result.profile.is_file()
    report = parse_ort_profile(
        result.profile, warmup=1, model_nodes=model_nodes(onnx.load(first_run.model))
    )
    assert report.summary.runs == 3  # 1 warm-up + 2 iterations, run on the target
    assert {n.name for n in report.nodes} >= {n.name for n in onnx.load(EXAMPLE).graph.node}


def test_deployed_onnxruntime_is_an_aarch64_elf(
    aarch64_env: Aarch64Env, first_run: FirstRun
) -> None:
    with aarch64_env.connect() as target:
        site = target.resolve(f"{first_run.deploy_dir}/venv/lib/python3.11/site-packages")
        found = target.run(
            ["sh", "-c", 'ls "$1"/onnxruntime/capi/onnxruntime_pybind11_state*.so', "sh", site]
        )
        assert found.ok, found.stderr
        module = found.stdout.split()[0]
        header = target.run(["od", "-An", "-tu1", "-N20", module])
    assert header.ok, header.stderr
    ident = [int(x) for x in header.stdout.split()]
    assert ident[:4] == [0x7F, ord("E"), ord("L"), ord("F")] and ident[4] == 2  # ELF64
    assert ident[5] == 1 and ident[18] | ident[19] << 8 == EM_AARCH64  # little-endian AArch64


def test_second_run_reuses_the_deployment(
    aarch64_env: Aarch64Env, first_run: FirstRun, tmp_path: Path
) -> None:
    with aarch64_env.connect() as target:
        dep = ort_deployment(target, first_run.deploy_dir, wheel_cache=wheel_cache())
        statuses = dep.check()
        assert all(s.current for s in statuses), statuses
        start = time.monotonic()
        again = run_ort_profile(
            target, _options(first_run.model, tmp_path / "again.json"), deployment=dep
        )
        seconds = time.monotonic() - start
    assert again.status == "ok", again.error
    assert again.copied == []  # no wheel, no script, not even the model: all current
    assert not any(line.startswith(("installing", "deploying", "creating")) for line in again.log)
    assert again.profile is not None and parse_ort_profile(again.profile).summary.runs == 3
    assert seconds < first_run.result.seconds


def test_connection_test_names_the_platform(
    aarch64_env: Aarch64Env, first_run: FirstRun, tmp_path: Path
) -> None:
    s = aarch64_env.settings()
    conn = Connection(
        "127.0.0.1",
        s.user,
        s.port,
        key_file=str(s.key_file),
        known_hosts=str(s.known_hosts),
        ssh_config=str(tmp_path / "none"),
        deploy_dir=first_run.deploy_dir,
    )
    found = test_connection(conn)
    assert found.platform.describe() == PLATFORM
    url = f"ssh://{s.user}@127.0.0.1:{s.port}"
    common = ["--identity", str(s.key_file), "--known-hosts", str(s.known_hosts)]
    common += ["--ssh-config", str(tmp_path / "none"), "--deploy-dir", first_run.deploy_dir]
    cli = subprocess.run(
        [sys.executable, "-m", "designer.cli", "connection", "test", url, *common],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
        env={**os.environ, "ONNX_DESIGNER_CACHE_DIR": str(cache_base())},
    )
    assert cli.returncode == 0, cli.stderr
    assert f"OK ({PLATFORM}, deployment folder " in cli.stdout


def test_dependency_panel_names_the_platform(
    aarch64_env: Aarch64Env, first_run: FirstRun, qtbot: QtBot
) -> None:
    from designer.ui.dialogs.dependency_panel import DependencyPanel

    with aarch64_env.connect() as target:
        statuses = ort_deployment(target, first_run.deploy_dir, wheel_cache=wheel_cache()).check()
    panel = DependencyPanel()
    try:
        panel.set_statuses(statuses)
        row = panel.tree.topLevelItem(0)
        assert row is not None and row.text(1) == "current"
        assert row.text(2).startswith(f"{PLATFORM} (/usr/bin/python3 3.11.")
    finally:
        panel.deleteLater()


def test_connections_dialog_names_the_platform(
    aarch64_env: Aarch64Env,
    first_run: FirstRun,
    qtbot: QtBot,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from designer.ui.dialogs.connections_dialog import ConnectionsDialog

    monkeypatch.setenv("ONNX_DESIGNER_CONFIG_DIR", str(tmp_path / "config"))
    s = aarch64_env.settings()
    dialog = ConnectionsDialog()
    qtbot.addWidget(dialog)
    for name, value in {
        "host": "127.0.0.1",
        "user": s.user,
        "key_file": str(s.key_file),
        "known_hosts": str(s.known_hosts),
        "ssh_config": str(tmp_path / "none"),
        "deploy_dir": first_run.deploy_dir,
        "name": "emulated-jetson",
    }.items():
        getattr(dialog, name).setText(value)
    dialog.port.setValue(s.port)
    assert dialog.test_form() is not None
    qtbot.waitUntil(lambda: dialog.job is None, timeout=120_000)
    text = dialog.result_label.text()
    assert text.startswith("OK in ") and f": {PLATFORM}; deployment folder " in text
    save_screenshot(dialog, "connections_dialog_aarch64.png")
