"""Canvas export: PNG/JPEG decode at the expected size, SVG parses and names every node,
the headless command works in a subprocess, huge rasters are scaled down with a message."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QImage

from designer.core.errors import DesignerError
from designer.ui.canvas import export
from designer.ui.canvas.export import PADDING, ExportOptions, raster_size
from designer.ui.canvas.view import CanvasView
from designer.ui.session import DocumentSession

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def view(qtbot, resnet_path: Path) -> CanvasView:
    canvas = CanvasView(DocumentSession.open(resnet_path))
    qtbot.addWidget(canvas)
    return canvas


def expected_size(view: CanvasView, scale: float) -> tuple[int, int]:
    rect = view.canvas.content_rect().adjusted(-PADDING, -PADDING, PADDING, PADDING)
    w, h, _s, _m = raster_size(rect, scale)
    return w, h


@pytest.mark.parametrize(("suffix", "scale"), [(".png", 1.0), (".jpg", 0.5), (".png", 2.0)])
def test_raster_export_has_expected_size(view: CanvasView, tmp_path: Path, suffix, scale) -> None:
    path = tmp_path / f"canvas{suffix}"
    options = ExportOptions(background=QColor("#102030"), scale=scale)
    view.export_image(path, options)
    image = QImage(str(path))
    assert not image.isNull()
    assert (image.width(), image.height()) == expected_size(view, scale)
    corner = image.pixelColor(1, 1)
    assert abs(corner.red() - 0x10) < 12 and abs(corner.blue() - 0x30) < 12
    options.grid, options.grid_color = True, QColor("#ff0000")
    view.export_image(path, options)
    gridded = QImage(str(path))
    assert gridded.size() == image.size()
    reddish = sum(
        1
        for x in range(0, gridded.width(), 3)
        if gridded.pixelColor(x, gridded.height() // 2).red() > 0x60
    )
    assert reddish > 0


def test_svg_export_parses_and_names_every_node(view: CanvasView, tmp_path: Path) -> None:
    path = tmp_path / "canvas.svg"
    view.export_image(path, ExportOptions(grid=True))
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    ns = "{http://www.w3.org/2000/svg}"
    titles = {t.text for t in root.iter(f"{ns}title")}
    for item in view.canvas.node_items.values():  # every node by its full name, searchable
        name = item.view.name
        assert any(t and t.startswith(name) for t in titles), name


def test_export_keeps_selection_and_rejects_bad_names(view: CanvasView, tmp_path: Path) -> None:
    key = next(iter(view.canvas.node_items))
    view.select_keys([key])
    view.export_image(tmp_path / "a.png", ExportOptions())
    assert view.selected_keys() == [key]
    with pytest.raises(DesignerError, match="format"):
        view.export_image(tmp_path / "a.gif", ExportOptions())
    with pytest.raises(DesignerError, match=r"a\.png: cannot write \(No such file or directory\)"):
        view.export_image(tmp_path / "missing" / "a.png", ExportOptions())


def test_huge_raster_is_scaled_down_with_message(
    view: CanvasView, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(export, "MAX_SIDE", 400)
    messages: list[str] = []
    view.statusMessage.connect(messages.append)
    path = tmp_path / "big.png"
    view.export_image(path, ExportOptions(scale=3.0))
    image = QImage(str(path))
    assert max(image.width(), image.height()) <= 400
    assert messages and "scaled down" in messages[-1] and "SVG" in messages[-1]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run(
        [sys.executable, "-m", "designer", "export-image", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )


def test_cli_export_image(resnet_path: Path, tmp_path: Path) -> None:
    png = tmp_path / "out.png"
    result = _cli(str(resnet_path), str(png), "--grid", "--background", "#ffffff", "--scale", "0.5")
    assert result.returncode == 0, result.stderr
    image = QImage(str(png))
    assert image.width() > 50 and image.height() > 200
    svg = tmp_path / "out.svg"
    assert _cli(str(resnet_path), str(svg)).returncode == 0
    assert "head_fc" in svg.read_text(encoding="utf-8")
    bad = _cli(str(resnet_path), str(tmp_path / "out.png"), "--background", "notacolour")
    assert bad.returncode == 2 and "'notacolour' is not a colour" in bad.stderr  # usage error
    missing = _cli(str(tmp_path / "nope.onnx"), str(png))
    assert missing.returncode == 1 and "error" in missing.stderr
