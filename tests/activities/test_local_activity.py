"""LocalTarget and local ORT profiling: streaming, cancel, hostile names, reports."""

from __future__ import annotations

import shutil
import threading
import time
import uuid
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import EXAMPLE
from onnx import numpy_helper
from sshd import processes_with

from designer.activities.reports import model_nodes, parse_ort_profile
from designer.activities.runner import OrtProfileOptions, list_providers, run_ort_profile
from designer.activities.targets import CancelToken, LocalTarget
from designer.core.errors import DesignerError

HOSTILE = "a b;rm -rf x.onnx"


@pytest.fixture
def hostile_model(tmp_path: Path) -> Path:
    path = tmp_path / HOSTILE
    shutil.copy(EXAMPLE, path)
    return path


def test_run_streams_lines_and_quotes_nothing(tmp_path: Path) -> None:
    lines: list[str] = []
    result = LocalTarget().run(
        ["sh", "-c", 'printf "one\\ntwo\\n"; echo err >&2', "x"], on_stdout=lines.append
    )
    assert result.ok and lines == ["one", "two"] and result.stderr == "err\n"


def test_cancel_kills_the_process_group() -> None:
    marker = f"{int(time.time()) % 1000}.{uuid.uuid4().int % 10**6:06d}"
    token = CancelToken()
    threading.Timer(0.5, token.cancel).start()
    start = time.monotonic()
    result = LocalTarget().run(
        ["sh", "-c", f"sleep {marker} & sleep {marker} & wait"], cancel=token
    )
    assert result.cancelled and not result.ok
    assert time.monotonic() - start < 5
    time.sleep(0.2)
    assert processes_with(f"sleep {marker}") == []


def test_files_hashes_and_writability(tmp_path: Path) -> None:
    target = LocalTarget()
    src = tmp_path / HOSTILE
    src.write_bytes(b"x" * 1000)
    target.mkdir(str(tmp_path / "d" / "e"))
    target.put(src, str(tmp_path / "d" / "e" / HOSTILE))
    hashes = target.hashes([str(tmp_path / "d" / "e" / HOSTILE), str(tmp_path / "none")])
    assert hashes[str(tmp_path / "none")] is None
    assert len(hashes[str(tmp_path / "d" / "e" / HOSTILE)] or "") == 64
    assert target.check_writable(str(tmp_path / "deploy")) == str(tmp_path / "deploy")
    assert target.platform().python_version is not None


@pytest.mark.parametrize("optimize", [False, True])
def test_local_profile_of_hostile_name(hostile_model: Path, optimize: bool) -> None:
    logged: list[str] = []
    result = run_ort_profile(
        LocalTarget(),
        OrtProfileOptions(hostile_model, iterations=4, warmup=1, optimize=optimize),
        on_log=logged.append,
    )
    assert result.status == "ok", result.error
    assert result.profile == hostile_model.with_name("a b;rm -rf x.ort-profile.json")
    assert any("iteration" in line for line in logged)
    assert sorted(p.name for p in hostile_model.parent.iterdir()) == sorted(
        [HOSTILE, "a b;rm -rf x.ort-profile.json"]
    )
    report = parse_ort_profile(
        result.profile, warmup=1, model_nodes=model_nodes(onnx.load(hostile_model))
    )
    assert report.summary.runs == 5 and report.summary.measured_runs == 4
    kinds = {n.mapping.kind for n in report.nodes}
    assert kinds == {"exact"} if not optimize else "exact" in kinds or "fused" in kinds
    assert result.details["status"] == "ok"


def test_inputs_folder_and_dims(tmp_path: Path) -> None:
    model = onnx.load(EXAMPLE)
    inp = model.graph.input[0]
    shape = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]
    folder = tmp_path / "inputs"
    folder.mkdir()
    tensor = numpy_helper.from_array(np.ones(shape, np.float32), inp.name)
    (folder / f"{inp.name}.pb").write_bytes(tensor.SerializeToString())
    result = run_ort_profile(
        LocalTarget(),
        OrtProfileOptions(EXAMPLE, iterations=2, inputs_dir=folder, output=tmp_path / "p.json"),
    )
    assert result.status == "ok", result.error
    assert result.details["inputs"][inp.name][0] == shape
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DesignerError, match=r"no \.pb file for input"):
        run_ort_profile(
            LocalTarget(), OrtProfileOptions(EXAMPLE, inputs_dir=empty, output=tmp_path / "q.json")
        )


def test_failing_runner_keeps_the_log(tmp_path: Path) -> None:
    result = run_ort_profile(
        LocalTarget(),
        OrtProfileOptions(EXAMPLE, provider="NoSuchExecutionProvider", output=tmp_path / "p.json"),
    )
    assert result.status == "failed"
    assert "NoSuchExecutionProvider is not available" in (result.error or "")
    assert result.log and result.profile is None


def test_cancelled_profile_keeps_partial_profile(tmp_path: Path) -> None:
    token = CancelToken()
    lines: list[str] = []

    def on_log(line: str) -> None:
        lines.append(line)
        if "iteration" in line:
            token.cancel()

    result = run_ort_profile(
        LocalTarget(),
        OrtProfileOptions(EXAMPLE, iterations=10**7, warmup=0, output=tmp_path / "p.json"),
        on_log=on_log,
        cancel=token,
    )
    assert result.status == "cancelled"
    assert result.profile is not None and result.profile.is_file()
    assert result.details["status"] == "stopped"
    assert parse_ort_profile(result.profile).summary.runs > 0


def test_providers_include_cpu() -> None:
    assert list_providers(LocalTarget())[0] == "CPUExecutionProvider"
