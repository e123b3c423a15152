"""``onnx-designer engine export-image`` and its Python API: a headless render of the engine
graph on the real TREx ResNet18 FP16 export (profile beside it) and the TensorRT 10.16 layer
JSON of the cookbook."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.engine_fixtures import A100_FP16 as FP16
from helpers.engine_fixtures import LAYER_JSON_10 as LAYER_10
from PySide6.QtGui import QImage

from designer.cli import main
from designer.core.errors import DesignerError
from designer.ui.engine.export import export_engine_image

pytestmark = pytest.mark.skipif(not FP16.is_file(), reason=f"{FP16} (shared fixtures) is absent")


def test_cli_writes_png_and_svg(
    tmp_path: Path, qapp: object, capsys: pytest.CaptureFixture[str]
) -> None:
    png = tmp_path / "engine.png"
    assert main(["engine", "export-image", str(FP16), str(png)]) == 0
    image = QImage(str(png))
    assert image.height() > 3 * image.width() > 0  # the tall strip of a ResNet
    assert f"wrote {png} ({image.width()}×{image.height()})" in capsys.readouterr().out
    svg = tmp_path / "engine.svg"
    assert main(["engine", "export-image", str(LAYER_10), str(svg), "--json"]) == 0
    text = svg.read_text()
    assert "node_conv2d + node_relu" in text and '"width": 0' in capsys.readouterr().out


def test_cli_bad_input_is_one_line_and_exit_1(
    tmp_path: Path, qapp: object, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["engine", "export-image", str(FP16), str(tmp_path / "x.bmp")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ".png, .jpg or .svg" in err
    other = tmp_path / "other.json"
    other.write_text('{"not": "an engine"}')
    assert main(["engine", "export-image", str(other), str(tmp_path / "x.png")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "TensorRT layer-information JSON" in err
    assert not (tmp_path / "x.png").exists()


def test_python_api_draws_latency_from_a_given_profile(tmp_path: Path, qapp: object) -> None:
    alone = tmp_path / "alone.onnx.engine.graph.json"
    alone.write_bytes(FP16.read_bytes())  # no profile beside this copy
    plain, profiled = tmp_path / "plain.png", tmp_path / "profiled.png"
    export_engine_image(alone, plain)
    export_engine_image(alone, profiled, profile=FP16.with_name("resnet.onnx.engine.profile.json"))
    assert QImage(str(plain)).size() != QImage(str(profiled)).size() or (
        plain.read_bytes() != profiled.read_bytes()
    )  # latency captions and bars change the drawing
    with pytest.raises(DesignerError, match="background"):
        export_engine_image(alone, plain, background="not-a-colour")
