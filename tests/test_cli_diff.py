"""``onnx-designer diff A B [--json]``, run as a real subprocess: exit 0 identical, 1
differences, 2 usage or an unreadable file; the text summary and the JSON schema."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import onnx
from helpers.models import chain_model
from test_cli import ROOT, run

MODELS = ROOT / ".." / "shared" / "models"
SQUEEZENET = MODELS / "squeezenet1_0.torchscript.onnx"


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    a = chain_model(3)
    b = copy.deepcopy(a)
    del b.graph.node[1]  # relu1
    b.graph.node[0].attribute.append(onnx.helper.make_attribute("alpha", 2.0))
    pa, pb = tmp_path / "a.onnx", tmp_path / "b.onnx"
    onnx.save(a, pa)
    onnx.save(b, pb)
    return pa, pb


def test_identical_exits_0() -> None:
    result = run("diff", SQUEEZENET, SQUEEZENET)
    assert result.returncode == 0, result.stderr
    assert "identical" in result.stdout and result.stderr == ""


def test_differences_exit_1_with_a_text_summary(tmp_path: Path) -> None:
    pa, pb = _pair(tmp_path)
    result = run("diff", pa, pb)
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert f"A: {pa}" in out and f"B: {pb}" in out
    assert "2 difference(s): 1 node removed, 1 node changed" in out
    assert "- Relu relu1 (#1)" in out
    assert "attribute alpha: added 2.0" in out


def test_json_output(tmp_path: Path) -> None:
    pa, pb = _pair(tmp_path)
    result = run("diff", pa, pb, "--json")
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["schema"] == 1 and data["identical"] is False and data["change_count"] == 2
    nodes = data["graph"]["nodes"]
    assert [n["name"] for n in nodes["removed"]] == ["relu1"]
    (changed,) = nodes["changed"]
    assert changed["matched_by"] == "name"
    assert changed["fields"] == [
        {"field": "attribute alpha", "kind": "added", "before": None, "after": "2.0"}
    ]
    same = run("diff", pa, pa, "--json")
    assert same.returncode == 0 and json.loads(same.stdout)["identical"] is True


def test_usage_and_unreadable_files_exit_2(tmp_path: Path) -> None:
    usage = run("diff", SQUEEZENET)
    assert usage.returncode == 2 and "usage:" in usage.stderr
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    result = run("diff", SQUEEZENET, bad)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad.onnx" in lines[0] and "Traceback" not in result.stderr
    missing = run("diff", tmp_path / "missing.onnx", SQUEEZENET)
    assert missing.returncode == 2 and "file not found" in missing.stderr


def test_metadata_changes_exit_1_and_counts_add_up(tmp_path: Path) -> None:
    """QA model-ops 6/7: a stored TensorRT layer precision (node metadata) or a graph
    metadata entry is a difference (exit 1), in text and JSON; the counts add up."""
    model = onnx.load(SQUEEZENET)
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    conv.metadata_props.add(key="onnx_designer.tensorrt.precision", value="fp16")
    model.graph.metadata_props.add(key="gk", value="gv")
    model.opset_import[0].version += 1
    changed = tmp_path / "changed.onnx"
    onnx.save(model, changed)
    result = run("diff", SQUEEZENET, changed)
    assert result.returncode == 1, result.stderr
    assert (
        "3 difference(s): 1 node changed, 1 opset change(s), 1 metadata change(s);" in result.stdout
    )
    assert "metadata onnx_designer.tensorrt.precision: added fp16" in result.stdout
    assert "graph metadata gk: added gv" in result.stdout
    data = json.loads(run("diff", SQUEEZENET, changed, "--json").stdout)
    assert data["change_count"] == 3
    assert [f["field"] for f in data["graph"]["nodes"]["changed"][0]["fields"]] == [
        "metadata onnx_designer.tensorrt.precision"
    ]
    assert [m["field"] for m in data["metadata"]] == ["graph metadata gk"]
    same = run("diff", changed, changed)
    assert same.returncode == 0 and "identical" in same.stdout
