"""``cast``: a precision loss is a warning on stderr in the README's form
(``onnx-designer: warning: …``); an unknown ``--to`` is a usage error (exit 2)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from designer.cli import main


def _overflow(path: Path) -> Path:
    k = numpy_helper.from_array(np.array(1000.0, np.float32), "k")
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "k"], ["y"], name="mul")],
        "overflow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [k],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_lost_precision_is_a_warning_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = _overflow(tmp_path / "m.onnx"), tmp_path / "c.onnx"
    code, stdout, err = _run(capsys, "cast", src, out, "--to", "int8", "--initializer", "k")
    assert code == 0 and f"saved {out}" in stdout
    assert err.strip() == (
        "onnx-designer: warning: initializer 'k' lost precision: 1 clipped to the int8 range"
    )


def test_an_unknown_type_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = _overflow(tmp_path / "m.onnx"), tmp_path / "c.onnx"
    code, _, err = _run(capsys, "cast", src, out, "--to", "bogus", "--initializer", "k")
    assert code == 2 and "argument --to: unknown or unsupported data type 'bogus'" in err
    assert not out.exists()
