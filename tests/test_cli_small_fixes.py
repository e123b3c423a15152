"""Small CLI defects, each pinned on real parts (real models, real ONNX Runtime, real Qt):

1. a colour ``export-image`` (or ``engine export-image``) cannot read is a usage error (exit 2)
   before any file, checked as the renderer reads it, and ``--help`` still loads no Qt;
2. ``trt build`` refuses an ``--engine`` / ``--layer-json`` that is the model or its data file;
3. ``engine info``'s note on stderr carries the ``onnx-designer:`` prefix;
4. the Cast (and FP16) logs write large counts with thousands separators;
5. a model ONNX Runtime rejects is not blamed on the inputs it was given.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers.engine_fixtures import A100_FP16
from onnx import TensorProto, helper, numpy_helper

from designer.activities.numerics import run_model
from designer.activities.ort_errors import error_line, failed_on_inputs
from designer.cli import main
from designer.core.transforms import cast_tensors, list_cast_candidates, select_candidates
from designer.core.transforms.fp16 import FP16Options, convert_to_fp16

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "resources" / "examples" / "tiny_cnn.onnx"
SAME = "the output path is the input; choose another file"
F = TensorProto.FLOAT


def cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    """``onnx-designer ARGS`` in this process: (exit code, stdout, stderr)."""
    try:
        code = main([str(a) for a in args])
    except SystemExit as stop:  # argparse's usage errors
        code = stop.code if isinstance(stop.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "m.onnx"
    shutil.copyfile(EXAMPLE, path)
    return path


# --- 1: a colour the renderer cannot read is a usage error ---------------------------------
@pytest.mark.parametrize(
    ("option", "value"),
    [("--background", "notacolour"), ("--grid-color", "#12"), ("--background", "")],
)
def test_a_bad_colour_is_a_usage_error_before_any_file(
    capsys: pytest.CaptureFixture[str], tiny: Path, tmp_path: Path, option: str, value: str
) -> None:
    out = tmp_path / "o.png"
    code, stdout, err = cli(capsys, "export-image", tiny, out, option, value)
    assert code == 2 and stdout == ""
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"onnx-designer export-image: error: argument {option}: ")
    assert f"{value!r} is not a colour" in last and "#rrggbb" in last
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]


@pytest.mark.parametrize("value", ["#fff", "#336699", "#80336699", "Red", "transparent"])
def test_every_colour_form_the_renderer_reads_is_accepted(
    capsys: pytest.CaptureFixture[str], tiny: Path, tmp_path: Path, value: str
) -> None:
    out = tmp_path / "o.svg"
    code, stdout, err = cli(capsys, "export-image", tiny, out, "--background", value)
    assert code == 0, err
    assert stdout.startswith(f"wrote {out}") and out.stat().st_size > 0


def test_engine_export_image_checks_its_background_alike(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "e.png"
    code, _, err = cli(capsys, "engine", "export-image", "missing.json", out, "--background", "x")
    assert code == 2 and "argument --background: 'x' is not a colour" in err
    assert not out.exists()


def test_help_loads_no_qt() -> None:
    """The colour check imports Qt only when a colour is parsed, never for ``--help``."""
    probe = (
        "import contextlib, io, sys\n"
        "from designer.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'PySide6'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# --- 2: trt build never writes over the model it reads -------------------------------------
def _external_model(folder: Path) -> tuple[Path, Path]:
    """A MatMul model whose weight lives in ``e.weights`` beside ``e.onnx``."""
    weight = numpy_helper.from_array(np.ones((8, 8), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "g",
        [helper.make_tensor_value_info("x", F, [1, 8])],
        [helper.make_tensor_value_info("y", F, [1, 8])],
        [weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = folder / "e.onnx"
    onnx.save_model(model, path, save_as_external_data=True, location="e.weights", size_threshold=0)
    return path, folder / "e.weights"


PREVIEW = ("--print-command", "--trt-version", "10.16", "--free-dims-as-one")


def test_trt_build_refuses_the_model_as_engine(
    capsys: pytest.CaptureFixture[str], tiny: Path, tmp_path: Path
) -> None:
    (tmp_path / "sub").mkdir()
    hard = tmp_path / "hard.engine"
    os.link(tiny, hard)
    before = tiny.read_bytes()
    for engine in (tiny, tmp_path / "sub" / ".." / "m.onnx", hard):
        code, out, err = cli(capsys, "trt", "build", tiny, "--engine", engine, *PREVIEW)
        assert code == 1 and out == "", engine
        assert err.strip() == f"onnx-designer: error: {engine}: {SAME}"
    # a real build (no preview) is refused before TensorRT is even looked for
    code, out, err = cli(capsys, "trt", "build", tiny, "--engine", tiny, "--free-dims-as-one")
    assert code == 1 and out == "" and err.strip() == f"onnx-designer: error: {tiny}: {SAME}"
    assert tiny.read_bytes() == before


def test_trt_build_refuses_the_models_data_file_and_layer_json_over_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    model, data = _external_model(tmp_path)
    code, _, err = cli(capsys, "trt", "build", model, "--engine", data, *PREVIEW)
    assert code == 1 and err.strip() == (
        f"onnx-designer: error: {data}: this is the external data file of tensor 'w' of "
        f"{model.name}; writing there would destroy it, choose another file name"
    )
    code, _, err = cli(capsys, "trt", "build", model, "--layer-json", model, *PREVIEW)
    assert code == 1 and err.strip() == f"onnx-designer: error: {model}: {SAME}"
    code, out, err = cli(capsys, "trt", "build", model, "--engine", tmp_path / "e.plan", *PREVIEW)
    assert code == 0, err
    assert f"--saveEngine={tmp_path / 'e.plan'}" in out


def test_trt_build_refuses_a_default_engine_path_that_is_the_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    odd = tmp_path / "m.engine"  # a model file named like an engine: MODEL.engine is itself
    shutil.copyfile(EXAMPLE, odd)
    code, out, err = cli(capsys, "trt", "build", odd, *PREVIEW)
    assert code == 1 and out == "" and err.strip() == f"onnx-designer: error: {odd}: {SAME}"


# --- 3: engine info's note has the prefix every CLI message has ----------------------------
@pytest.mark.skipif(not A100_FP16.is_file(), reason=f"{A100_FP16} (shared fixtures) is absent")
def test_engine_info_note_carries_the_prefix(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    graph = Path(shutil.copy(A100_FP16, tmp_path / A100_FP16.name))
    (tmp_path / "resnet.onnx.engine.profile.json").write_text("{not json", encoding="utf-8")
    code, out, err = cli(capsys, "engine", "info", graph)
    assert code == 0 and "layers:" in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("onnx-designer: note: skipped ")


# --- 4: large counts in the Cast and FP16 logs have thousands separators -------------------
def _weights_model(values: np.ndarray) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        "g",
        [helper.make_tensor_value_info("x", F, list(values.shape))],
        [helper.make_tensor_value_info("y", F, list(values.shape))],
        [numpy_helper.from_array(values, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_the_cast_log_writes_large_counts_with_separators() -> None:
    values = np.full(12_345, 0.1, np.float32)  # 0.1 is not a float16: every value rounds
    values[:2_000] = 1e6  # beyond float16's 65504: clipped
    model = _weights_model(values)
    keys = select_candidates(list_cast_candidates(model), ["w"])
    log = cast_tensors(model, keys, TensorProto.FLOAT16).log
    assert log.lines[0].startswith("1 tensor(s) cast; 2,000 value(s) clipped, 10,345 rounded;")
    detail = "2,000 clipped to the float16 range, 10,345 rounded"
    assert f"initializer 'w': float -> float16, {detail}" in log.lines
    assert log.warnings == [f"initializer 'w' lost precision: {detail}"]


def test_the_fp16_clip_warning_writes_large_counts_with_separators() -> None:
    values = np.full(3_000, 1e6, np.float32)
    result = convert_to_fp16(_weights_model(values), FP16Options())
    assert any("3,000 clipped to the float16 range" in w for w in result.log.warnings)


# --- 5: a model ONNX Runtime rejects is the model's fault, not the inputs' -----------------
def _relu(dangling: bool = False) -> onnx.ModelProto:
    """Relu(x) over x[2, 3]; ``dangling``: it reads a tensor nothing produces."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["nope" if dangling else "x"], ["y"], name="relu")],
        "g",
        [helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_tensor_value_info("y", F, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _ort_line(model: onnx.ModelProto, x: np.ndarray) -> str:
    """:func:`error_line` of what onnxruntime raises running ``model`` on ``x``."""
    with pytest.raises(Exception) as caught:
        run_model(model, {"x": x})
    assert "[ONNXRuntimeError]" in str(caught.value)
    return error_line(caught.value)


def test_a_model_ort_rejects_is_not_the_inputs_fault() -> None:
    rejected = _ort_line(_relu(dangling=True), np.ones((2, 3), np.float32))
    assert rejected.startswith("INVALID_ARGUMENT: Invalid model.") and "'nope'" in rejected
    assert not failed_on_inputs(rejected)
    assert not failed_on_inputs(f"onnxruntime cannot run the original model ({rejected})")


def test_inputs_that_do_not_fit_are_still_the_inputs_fault() -> None:
    shape = _ort_line(_relu(), np.ones((5, 3), np.float32))
    assert shape.startswith("INVALID_ARGUMENT: Got invalid dimensions for input: x")
    assert "Please fix either the inputs/outputs or the model" in shape  # not "invalid model"
    assert failed_on_inputs(shape)
    rank = _ort_line(_relu(), np.ones((2, 3, 1), np.float32))
    assert rank.startswith("INVALID_ARGUMENT: Invalid rank for input: x") and failed_on_inputs(rank)


def test_fp16_tells_a_rejected_model_from_inputs_that_do_not_fit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The check's error line asks for other inputs only when inputs are what failed."""
    bad = tmp_path / "bad.onnx"
    onnx.save(_relu(dangling=True), bad)
    code, _, err = cli(capsys, "fp16", bad, tmp_path / "bad16.onnx", "--force")
    assert code == 1
    line = next(x for x in err.splitlines() if "numerical check could not run" in x)
    assert "INVALID_ARGUMENT: Invalid model." in line
    assert "give real inputs" not in line and "--check-dim" not in line
    # x[batch, 6] reshaped to [4, 3]: random inputs take batch as 1, which does not fit
    shape = numpy_helper.from_array(np.array([4, 3], np.int64), "s")
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
        "g",
        [helper.make_tensor_value_info("x", F, ["batch", 6])],
        [helper.make_tensor_value_info("y", F, [4, 3])],
        [shape],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    fits_not = tmp_path / "reshape.onnx"
    onnx.save(model, fits_not)
    code, _, err = cli(capsys, "fp16", fits_not, tmp_path / "reshape16.onnx")
    assert code == 1
    line = next(x for x in err.splitlines() if "numerical check could not run" in x)
    assert "Reshape node 'rs'" in line and "give real inputs (--inputs DIR)" in line
