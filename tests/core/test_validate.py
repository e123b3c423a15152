"""Validation at load (issue 11, points 6, 8, 9) and the checker gate of the transforms
(point 7): one line naming the node or tensor, exit code 1, never an internal error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers.models import chain_model, function_model
from onnx import TensorProto, helper, numpy_helper

from designer.cli import main
from designer.core.analysis import check_document
from designer.core.errors import ModelLoadError
from designer.core.io import open_document, read_model
from designer.core.validate import MAX_GRAPH_DEPTH, model_problem


def _nested_if(depth: int) -> onnx.ModelProto:
    inner = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y_in"], name="innermost")],
        "g_in",
        [],
        [helper.make_tensor_value_info("y_in", TensorProto.FLOAT, [1])],
    )
    for level in range(depth - 1, -1, -1):
        other = helper.make_graph(
            [helper.make_node("Identity", ["x"], [f"e{level}"], name=f"else{level}")],
            f"e{level}",
            [],
            [helper.make_tensor_value_info(f"e{level}", TensorProto.FLOAT, [1])],
        )
        node = helper.make_node(
            "If", ["c"], [f"y{level}"], name=f"if{level}", then_branch=inner, else_branch=other
        )
        out = helper.make_tensor_value_info(f"y{level}", TensorProto.FLOAT, [1])
        inner = helper.make_graph([node], f"g{level}", [], [out])
    inner.input.extend(
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
        ]
    )
    model = helper.make_model(inner, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, list[str]]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, [line for line in err.splitlines() if line.strip()]


def _bad_text(model: onnx.ModelProto, name: str) -> bytes:
    data = model.SerializeToString()
    assert data.count(name.encode()) >= 1
    return data.replace(name.encode(), b"\xff" * len(name))


# --- what load refuses -----------------------------------------------------------------------
def test_invalid_utf8_name_is_named(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(_bad_text(chain_model(), "relu1"))
    with pytest.raises(ModelLoadError, match="not valid UTF-8 text") as info:
        read_model(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_invalid_utf8_value_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = chain_model()
    path = tmp_path / "m.onnx"
    path.write_bytes(_bad_text(model, "Y_pre"))
    out = str(tmp_path / "o.onnx")
    image = str(tmp_path / "o.svg")
    for args in (["check"], ["info"], ["sanitize", out], ["fp16", out], ["export-image", image]):
        args.insert(1, str(path))
        code, _out, err = _cli(args, capsys)
        assert code == 1 and len(err) == 1 and "not valid UTF-8" in err[0], err
        assert "node 'relu" in err[0] or "add_w" in err[0], err


@pytest.mark.parametrize(
    ("mutate", "words"),
    [
        (lambda m: setattr(m.graph.initializer[0], "data_type", 99), "data type 99"),
        (
            lambda m: m.graph.output[0].type.tensor_type.__setattr__("elem_type", 1000),
            "element type 1000",
        ),
        (lambda m: m.graph.initializer[0].dims.__setitem__(0, -2), "dimension -2 is negative"),
        (lambda m: m.graph.initializer[0].dims.__setitem__(0, 2**62), "too large"),
        (
            lambda m: m.graph.input[0].type.tensor_type.shape.dim[0].__setattr__("dim_value", -1),
            "negative",
        ),
        (
            lambda m: m.graph.initializer[0].dims.__setitem__(0, 3),
            "need 36 bytes of data, it holds 24",
        ),
    ],
)
def test_bad_dtypes_and_dims(mutate: object, words: str, tmp_path: Path) -> None:
    model = chain_model()
    mutate(model)  # type: ignore[operator]
    problem = model_problem(model)
    assert problem is not None and words in problem, problem
    assert "'W'" in problem or "'Y'" in problem or "'X'" in problem, problem


def test_typed_data_count(tmp_path: Path) -> None:
    model = chain_model()
    tensor = model.graph.initializer[0]
    tensor.ClearField("raw_data")
    tensor.float_data.extend([1.0] * 5)
    assert "need 6 values, it holds 5" in (model_problem(model) or "")


def test_function_names_are_checked() -> None:
    data = _bad_text(function_model(), "fn_mul")
    model = onnx.ModelProto()
    model.ParseFromString(data)
    problem = model_problem(model)
    assert problem is not None and "local function 'local.fn:ScaledAdd'" in problem


# --- point 9: dims against data, also for large initializers ---------------------------------
def test_check_fails_a_large_initializer_whose_dims_disagree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = chain_model()
    big = numpy_helper.from_array(np.zeros((64, 64), np.float32), "W")  # over 4 KiB
    big.dims[:] = [64, 65]
    model.graph.initializer[0].CopyFrom(big)
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    code, _out, err = _cli(["check", str(path)], capsys)
    assert code == 1 and len(err) == 1
    assert "initializer 'W': dims [64, 65] need 16640 bytes of data, it holds 16384" in err[0]


# --- point 8: deep nesting -------------------------------------------------------------------
def test_34_nested_ifs_open_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.onnx"
    path.write_bytes(_nested_if(34).SerializeToString())
    doc = open_document(path)
    result = check_document(doc)
    assert not result.has_errors
    assert any(d.code == "onnx-not-run" for d in result.diagnostics)
    code, out, err = _cli(["check", str(path)], capsys)
    assert code == 0 and not err
    assert "recursion limit of 100" in out
    code, out, err = _cli(["info", str(path)], capsys)
    assert code == 0 and "Subgraphs:" in out


def test_too_deep_is_refused_with_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "deeper.onnx"
    path.write_bytes(_nested_if(MAX_GRAPH_DEPTH + 1).SerializeToString())
    with pytest.raises(ModelLoadError, match=f"nested more than {MAX_GRAPH_DEPTH} levels"):
        read_model(path)


# --- point 7: transforms refuse invalid input ------------------------------------------------
def _dangling(tmp_path: Path) -> Path:
    model = chain_model()
    model.graph.node[1].input[0] = "ghost"
    path = tmp_path / "bad.onnx"
    path.write_bytes(model.SerializeToString())
    return path


@pytest.mark.parametrize("command", ["sanitize", "fp16", "cast"])
def test_transform_refuses_invalid_input(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _dangling(tmp_path)
    out = tmp_path / "out.onnx"
    extra = ["--to", "float16", "--initializer", "W"] if command == "cast" else []
    extra += ["--no-check"] if command == "fp16" else []
    code, _stdout, err = _cli([command, str(path), str(out), *extra], capsys)
    assert code == 1 and len(err) == 1, err
    assert "not a valid model" in err[0] and "ghost" in err[0] and "--force" in err[0]
    assert not out.exists()
    code, _stdout, err = _cli([command, str(path), str(out), *extra, "--force"], capsys)
    assert code == 1
    assert len(err) == 1 and err[0].startswith("onnx-designer: warning:"), err
    assert out.exists()


def test_check_does_not_depend_on_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    model = chain_model()
    onnx.save(
        model,
        str(folder / "m.onnx"),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="m.data",
        size_threshold=0,
    )
    verdicts = []
    for cwd in (folder, tmp_path):
        monkeypatch.chdir(cwd)
        result = check_document(open_document(folder / "m.onnx"))
        verdicts.append([str(d) for d in result.errors])
    assert verdicts == [[], []]
