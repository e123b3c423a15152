"""``onnx-designer tool list|add|remove|run`` against real tools."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from designer.activities.custom_tools import CustomTool, load_tools, save_tools
from designer.cli import main

ROOT = Path(__file__).resolve().parents[1]
HISTOGRAM = ROOT / "plugins" / "op_histogram.py"
COPY = "import shutil, sys; print('copying'); shutil.copy(sys.argv[1], sys.argv[2])"


@pytest.fixture(autouse=True)
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config"
    monkeypatch.setenv("ONNX_DESIGNER_CONFIG_DIR", str(folder))
    temp = tmp_path / "temp"  # temporary copies and outputs stay inside the test
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return folder


@pytest.fixture
def model(tmp_path: Path) -> Path:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    path = tmp_path / "a model's dir" / "two relus.onnx"
    path.parent.mkdir()
    onnx.save(helper.make_model(graph), str(path))
    return path


def test_list_add_remove(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tool", "list"]) == 0
    assert "no custom tools yet" in capsys.readouterr().err
    args = shlex.quote(str(HISTOGRAM)) + " $Model"
    assert main(["tool", "add", "Histogram", sys.executable, "--arguments", args]) == 0
    assert main(["tool", "add", "histogram", sys.executable]) == 1
    assert "already exists" in capsys.readouterr().err
    assert main(["tool", "add", "Bad", "/no/such/program"]) == 1
    assert "application /no/such/program not found" in capsys.readouterr().err
    assert main(["tool", "add", "Copy", sys.executable, "--arguments", "x $Output"]) == 0
    assert "added tool 'Copy'" in capsys.readouterr().out
    assert main(["tool", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Histogram") and str(HISTOGRAM) in out[0]
    assert main(["tool", "list", "--json"]) == 0
    assert [t["name"] for t in json.loads(capsys.readouterr().out)] == ["Histogram", "Copy"]
    assert main(["tool", "add", "copy", sys.executable, "--open-output", "--replace"]) == 0
    assert load_tools()[1] == CustomTool("copy", sys.executable, "", False, True)
    assert main(["tool", "remove", "COPY"]) == 0
    assert [t.name for t in load_tools()] == ["Histogram"]
    assert main(["tool", "remove", "Nope"]) == 1


def test_run_with_output(model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    save_tools([CustomTool("Copy", sys.executable, f"-c {shlex.quote(COPY)} $Model $Output")])
    output = tmp_path / "out dir" / "copied model.onnx"
    assert main(["tool", "run", "copy", str(model), "--output", str(output)]) == 1
    assert "output folder does not exist" in capsys.readouterr().err
    output.parent.mkdir()
    assert main(["tool", "run", "copy", str(model), "--output", str(output)]) == 0
    captured = capsys.readouterr()
    assert "copying" in captured.out
    assert f"output model: {output}" in captured.err
    assert onnx.load(str(output)).graph.node[0].op_type == "Relu"
    assert main(["tool", "run", "copy", str(model)]) == 0  # a temporary output
    temporary = Path(capsys.readouterr().err.rsplit("output model: ", 1)[1].strip())
    assert temporary.is_file() and temporary.name == "two relus-Copy.onnx"


def test_run_errors_and_exit_codes(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fail = "import sys; print('no good', file=sys.stderr); sys.exit(5)"
    save_tools(
        [
            CustomTool("Fail", sys.executable, f"-c {shlex.quote(fail)} $Model"),
            CustomTool("Silent", sys.executable, "-c pass $Output"),
            CustomTool("Ghost", "/no/such/tool", "$Model"),
        ]
    )
    assert main(["tool", "run", "Fail", str(model)]) == 5
    assert "no good" in capsys.readouterr().err
    assert main(["tool", "run", "Fail", str(model), "--output", "x.onnx"]) == 1
    assert "does not use $Output" in capsys.readouterr().err
    assert main(["tool", "run", "Silent", str(model)]) == 1
    assert "wrote no model" in capsys.readouterr().err
    assert main(["tool", "run", "Ghost", str(model)]) == 1
    assert "application /no/such/tool not found" in capsys.readouterr().err
    assert main(["tool", "run", "Fail", str(model.with_name("missing.onnx"))]) == 1
    assert "model file not found" in capsys.readouterr().err


def test_run_example_plugin_as_a_process(model: Path, config: Path) -> None:
    """End to end: the installed command runs the op histogram example on a quoted path."""
    args = shlex.quote(str(HISTOGRAM)) + " $Model --json"
    save_tools([CustomTool("Histogram", sys.executable, args)])
    result = subprocess.run(
        [sys.executable, "-m", "designer", "tool", "run", "Histogram", str(model)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"ONNX_DESIGNER_CONFIG_DIR": str(config), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"Relu": 2}
    assert "running: " in result.stderr and shlex.quote(str(model)) in result.stderr
