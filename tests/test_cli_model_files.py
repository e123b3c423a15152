"""Commands that write an image or a layout refuse the model's own files as their output:
`layout M M.data` and `export-image M weights.png` replaced the model's weights (exit 0);
a wrong image suffix is a usage error before the model is read."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from designer.cli import main


def cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in args])
    except SystemExit as stop:  # argparse's usage errors
        code = stop.code if isinstance(stop.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def external_model(folder: Path, data_name: str) -> tuple[Path, Path]:
    weight = numpy_helper.from_array(np.ones((8, 8), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
        [weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = folder / "m.onnx"
    onnx.save_model(model, path, save_as_external_data=True, location=data_name, size_threshold=0)
    return path, folder / data_name


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("command", "data_name"),
    [("layout", "m.data"), ("export-image", "weights.png"), ("screenshot", "weights.png")],
)
def test_the_models_data_file_is_refused_as_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, data_name: str
) -> None:
    model, data = external_model(tmp_path, data_name)
    before = digest(data)
    code, out, err = cli(capsys, command, model, data)
    assert code == 1 and out == ""
    assert "external data file of tensor 'w' of m.onnx; writing there would destroy it" in err
    assert digest(data) == before
    onnx.checker.check_model(str(model), full_check=True)  # the model still loads whole


def test_the_models_layout_file_is_refused_as_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    model, _ = external_model(tmp_path, "m.data")
    companion = tmp_path / "m.onnx.designer.json"
    companion.write_text('{"version": 3}')
    code, _, err = cli(capsys, "layout", model, companion)
    assert code == 1 and "its layout file of m.onnx" in err
    assert companion.read_text() == '{"version": 3}'


def test_a_new_output_beside_the_model_is_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    model, _ = external_model(tmp_path, "m.data")
    code, _, err = cli(capsys, "layout", model, tmp_path / "other.json")
    assert code == 0, err
    assert (tmp_path / "other.json").exists()


@pytest.mark.parametrize(
    ("command", "name"), [("export-image", "x.pdf"), ("export-image", "x"), ("screenshot", "x.svg")]
)
def test_a_wrong_image_suffix_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, name: str
) -> None:
    model, _ = external_model(tmp_path, "m.data")
    code, _, err = cli(capsys, command, model, tmp_path / name)
    assert code == 2
    assert "the image format comes from the file name" in err
    assert not (tmp_path / name).exists()


def test_a_scale_too_small_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    model, _ = external_model(tmp_path, "m.data")
    code, _, err = cli(capsys, "export-image", model, tmp_path / "s.png", "--scale", "1e-9")
    assert code == 2 and "too small" in err and not (tmp_path / "s.png").exists()


def test_a_transparent_jpeg_is_refused_before_the_layout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    model, _ = external_model(tmp_path, "m.data")
    out = tmp_path / "t.jpg"
    code, _, err = cli(capsys, "export-image", model, out, "--background", "transparent")
    assert code == 1 and "JPEG image has no transparency" in err and not out.exists()
    code, _, err = cli(capsys, "export-image", model, out, "--background", "white")
    assert code == 0, err
