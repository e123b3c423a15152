"""Image export of a big scene whose items are not built yet: node items are built, the links
are drawn from their paths (no items made), pixel for pixel the picture the built items give;
SVG still builds every link item."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from PySide6.QtGui import QImage

from designer.ui.canvas import scene as scene_module
from designer.ui.canvas.export import ExportOptions, render_scene_to_file
from designer.ui.canvas.headless import headless_scene

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from canvas_models import decoder_stack_model


def _pixels(path: Path) -> np.ndarray:
    image = QImage(str(path)).convertToFormat(QImage.Format.Format_ARGB32)
    data = np.frombuffer(image.constBits(), np.uint8)
    return data.reshape(image.height(), image.bytesPerLine() // 4, 4).copy()


def test_png_of_queued_links_matches_built_items(
    qapp: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "decoder.onnx"
    onnx.save(decoder_stack_model(3), str(model))  # ~150 nodes, ~180 links
    monkeypatch.setattr(scene_module, "LAZY_NODES", 10)  # this small scene builds items lazily
    scene, _notes = headless_scene(model)
    assert scene.edges_pending
    queued = len(scene.pending_links())
    assert queued > 100
    lazy = tmp_path / "lazy.png"
    render_scene_to_file(scene, lazy, ExportOptions())
    assert scene.edges_pending and not scene.built_edge_items  # drawn without items
    assert len(scene.node_items.built) == len(scene.node_items)  # every box, as items
    scene.complete()
    assert len(scene.built_edge_items) == queued
    built = tmp_path / "built.png"
    render_scene_to_file(scene, built, ExportOptions())
    a, b = _pixels(lazy), _pixels(built)
    assert a.shape == b.shape
    assert int(np.abs(a.astype(int) - b.astype(int)).max()) == 0
    assert (a[..., :3] < 200).any()  # links and boxes were drawn at all


def test_svg_export_builds_every_link(
    qapp: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "decoder.onnx"
    onnx.save(decoder_stack_model(2), str(model))
    monkeypatch.setattr(scene_module, "LAZY_NODES", 10)
    scene, _notes = headless_scene(model)
    assert scene.edges_pending
    render_scene_to_file(scene, tmp_path / "out.svg", ExportOptions())
    assert not scene.edges_pending and scene.built_edge_items
