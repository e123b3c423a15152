"""Deployment and ORT profiling on the SSH target (a real sshd on loopback).

Wheels come from an offline cache made by repacking the test venv's own onnxruntime and its
dependencies (see wheels.py), so the default run needs no network. The one test that really
downloads wheels with ``pip download`` runs only with ``ONNX_DESIGNER_TEST_DOWNLOAD=1``.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from pathlib import Path

import onnx
import pytest
from conftest import EXAMPLE, SshEnv
from sshd import SshServer, processes_with

from designer.activities.deploy import DependencyState
from designer.activities.reports import model_nodes, parse_ort_profile
from designer.activities.runner import OrtProfileOptions, ort_deployment, run_ort_profile
from designer.activities.targets import CancelToken, HostKeyDecision, LocalTarget, SshTarget

HOSTILE = "a b;rm -rf x.onnx"


def test_first_deploy_then_all_current(ssh_env: SshEnv, wheel_cache: Path, remote_dir: str) -> None:
    progress: list[tuple[int, int, str]] = []
    with ssh_env.connect() as target:
        dep = ort_deployment(target, remote_dir, wheel_cache=wheel_cache, allow_download=False)
        before = dep.check(lambda i, n, s: progress.append((i, n, s.state.value)))
        assert [s.state for s in before] == [
            DependencyState.CURRENT,
            DependencyState.MISSING,
            DependencyState.MISSING,
        ]
        assert progress == [(1, 3, "current"), (2, 3, "missing"), (3, 3, "missing")]
        dep.deploy()
        assert any(p.endswith("/runners/ort_profile.py") for p in dep.copied)
        assert any("onnxruntime" in p and p.endswith(".whl") for p in dep.copied)
    with ssh_env.connect() as target:
        again = ort_deployment(target, remote_dir, wheel_cache=wheel_cache, allow_download=False)
        start = time.monotonic()
        assert all(s.current for s in again.check())
        assert time.monotonic() - start < 1.0
        again.deploy()
        assert again.copied == []
        # An outdated runner is noticed and only it is copied again.
        script = target.resolve(f"{remote_dir}/runners/ort_profile.py")
        assert target.run(["sh", "-c", 'echo "# changed" >> "$1"', "sh", script]).ok
        third = ort_deployment(target, remote_dir, wheel_cache=wheel_cache, allow_download=False)
        assert third.check()[2].state is DependencyState.OUTDATED
        third.deploy()
        assert third.copied == [script]


def test_unwritable_deployment_fails_clearly(ssh_env: SshEnv, remote_dir: str) -> None:
    with ssh_env.connect() as target:
        locked = target.resolve(remote_dir)
        target.mkdir(locked)
        target.run(["chmod", "500", locked])
        try:
            result = run_ort_profile(
                target,
                OrtProfileOptions(EXAMPLE, output=Path("/dev/null")),
                deploy_dir=f"{remote_dir}/deploy",
            )
        finally:
            target.run(["chmod", "700", locked])
    assert result.status == "failed" and "not writable" in (result.error or "")


@pytest.mark.parametrize("optimize", [False, True])
def test_remote_profile_matches_local_shape(
    ssh_env: SshEnv, deployed: str, tmp_path: Path, optimize: bool
) -> None:
    model = tmp_path / HOSTILE
    shutil.copy(EXAMPLE, model)
    options = OrtProfileOptions(
        model, iterations=5, warmup=2, optimize=optimize, output=tmp_path / "remote.json"
    )
    logged: list[str] = []
    with ssh_env.connect() as target:
        remote = run_ort_profile(target, options, deploy_dir=deployed, on_log=logged.append)
        assert remote.status == "ok", remote.error
        assert remote.copied == [
            f"{target.resolve(deployed)}/work/ort_profile/"
            f"{remote.copied[0].split('/work/ort_profile/')[1]}"
        ]
        assert remote.copied[0].endswith(f"/model/{HOSTILE}")
        second = run_ort_profile(target, options, deploy_dir=deployed)
        assert second.status == "ok" and second.copied == []  # nothing changed: nothing copied
        assert not target.exists(target.resolve(f"{deployed}/work/ort_profile/x.onnx"))
    assert any("iteration" in line for line in logged)
    local = run_ort_profile(
        LocalTarget(),
        OrtProfileOptions(
            model, iterations=5, warmup=2, optimize=optimize, output=tmp_path / "local.json"
        ),
    )
    nodes = model_nodes(onnx.load(model))
    r = parse_ort_profile(remote.profile, warmup=2, model_nodes=nodes)  # type: ignore[arg-type]
    l_ = parse_ort_profile(local.profile, warmup=2, model_nodes=nodes)  # type: ignore[arg-type]
    assert r.summary.runs == l_.summary.runs == 7
    assert sorted(n.name for n in r.nodes) == sorted(n.name for n in l_.nodes)
    assert set(r.tables()) == set(l_.tables())
    assert sorted(tmp_path.iterdir()) == sorted(
        [model, tmp_path / "remote.json", tmp_path / "local.json"]
    )


def test_remote_cancel_keeps_partial_profile(
    ssh_env: SshEnv, deployed: str, tmp_path: Path
) -> None:
    token = CancelToken()

    def on_log(line: str) -> None:
        if "iteration" in line:
            token.cancel()

    marker = f"marker{uuid.uuid4().hex[:8]}"
    model = tmp_path / f"{marker}.onnx"
    shutil.copy(EXAMPLE, model)
    with ssh_env.connect() as target:
        result = run_ort_profile(
            target,
            OrtProfileOptions(model, iterations=10**7, warmup=0, output=tmp_path / "p.json"),
            deploy_dir=deployed,
            on_log=on_log,
            cancel=token,
        )
    assert result.status == "cancelled"
    assert result.profile is not None and parse_ort_profile(result.profile).summary.runs > 0
    assert processes_with(marker) == []


def test_server_killed_mid_run(ssh_env: SshEnv, deployed: str, tmp_path: Path) -> None:
    server = SshServer(ssh_env.folder, ssh_env.folder / "authorized_keys").start()
    marker = f"marker{uuid.uuid4().hex[:8]}"
    model = tmp_path / f"{marker}.onnx"
    shutil.copy(EXAMPLE, model)
    try:
        target = SshTarget(
            ssh_env.settings(port=server.port, known_hosts=tmp_path / "kh"),
            lambda i: HostKeyDecision.ACCEPT_ONCE,
        ).connect()

        def on_log(line: str) -> None:
            if "iteration" in line:
                server.kill_all()

        result = run_ort_profile(
            target,
            OrtProfileOptions(model, iterations=10**7, warmup=0, output=tmp_path / "p.json"),
            deploy_dir=deployed,
            on_log=on_log,
        )
        target.close()
        assert result.status == "failed"
        assert "connection was lost" in (result.error or "")
        assert any("iteration" in line for line in result.log)  # the log is kept
    finally:
        server.stop()
        for pid in processes_with(marker):
            os.kill(pid, 9)


@pytest.mark.skipif(
    not os.environ.get("ONNX_DESIGNER_TEST_DOWNLOAD"),
    reason="downloads ~40 MB of wheels; set ONNX_DESIGNER_TEST_DOWNLOAD=1",
)
def test_real_wheel_download(ssh_env: SshEnv, remote_dir: str, tmp_path: Path) -> None:
    with ssh_env.connect() as target:
        dep = ort_deployment(target, remote_dir, wheel_cache=tmp_path / "cache")
        dep.deploy()
        assert all(s.current for s in dep.check())
        assert list((tmp_path / "cache").glob("*/onnxruntime-*.whl"))
