"""QA editing findings 1 and 6 in the GUI, on the real SqueezeNet export: insert a layer
into the chain with Quick Add and two mouse-drawn links, save, and the file passes
``onnx.checker`` (full check) and computes what the original does; a link that would close a
cycle is refused in the status bar and changes nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from helpers.shared import model
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from designer.core.transforms.toposort import is_sorted
from designer.ui.canvas.view import CanvasView
from designer.ui.main_window import MainWindow
from designer.ui.tools.quick_add import open_quick_add

LEFT = Qt.MouseButton.LeftButton
NO_MOD = Qt.KeyboardModifier.NoModifier
POOL = "/features/features.2/MaxPool"
SQUEEZE = "/features/features.3/squeeze/Conv"
CONCAT = "/features/features.3/Concat"


def drag(view: CanvasView, start: QPoint, end: QPoint, steps: int = 6) -> None:
    viewport = view.viewport()
    assert viewport.rect().contains(start) and viewport.rect().contains(end), (start, end)
    QTest.mousePress(viewport, LEFT, NO_MOD, start)
    for k in range(1, steps + 1):
        QTest.mouseMove(viewport, start + (end - start) * (k / steps))
    QTest.mouseRelease(viewport, LEFT, NO_MOD, end)


def run(path: Path | bytes, x: np.ndarray) -> np.ndarray:
    source = str(path) if isinstance(path, Path) else path
    session = ort.InferenceSession(source, providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {session.get_inputs()[0].name: x})[0])


def test_insert_relu_into_squeezenet_chain_saves_a_sorted_valid_model(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / "squeezenet.onnx"
    shutil.copy(model("squeezenet1_0.torchscript.onnx"), path)
    original = onnx.load(path)
    window.open_files([path])
    tab = window.tab()
    assert tab is not None and tab.view.wait_for_layout(60_000)
    view, session = tab.view, tab.session
    doc = session.doc
    keys = {n.name: k for k, n in doc.scope().nodes()}
    pool, squeeze, concat = keys[POOL], keys[SQUEEZE], keys[CONCAT]

    # Quick Add a Relu beside the MaxPool: it is appended to the node list.
    view.flush()
    view.centerOn(view.canvas.node_items[pool])
    qtbot.wait(50)
    at = view.mapFromScene(view.canvas.node_items[pool].output_pos(0)) + QPoint(160, -60)
    popup = open_quick_add(window, view.viewport().mapToGlobal(at))
    assert popup is not None
    popup.set_query("relu")
    assert popup.current_op() == ("", "Relu")
    popup.add_current()
    relu = popup.added_key
    assert relu is not None and doc.scope().keys[-1] == relu
    relu_name = doc.scope().node(relu).name

    # MaxPool output → Relu input, Relu output → the next Conv's input 0: mouse-drawn links.
    view.flush()
    items = view.canvas.node_items
    drag(
        view,
        view.mapFromScene(items[pool].output_pos(0)),
        view.mapFromScene(items[relu].input_pos(0)),
    )
    assert list(doc.scope().node(relu).input) == [doc.scope().node(pool).output[0]]
    view.flush()
    items = view.canvas.node_items
    drag(
        view,
        view.mapFromScene(items[relu].output_pos(0)),
        view.mapFromScene(items[squeeze].input_pos(0)),
    )
    assert doc.scope().node(squeeze).input[0] == doc.scope().node(relu).output[0]
    names = [n.name for n in doc.model.graph.node]
    assert names.index(POOL) < names.index(relu_name) < names.index(SQUEEZE)
    assert is_sorted(doc.model.graph)
    undo_index = session.undo_stack.index()

    # Concat output → the squeeze Conv that feeds it: a cycle, refused before any change.
    before = doc.model.SerializeToString()
    view.flush()
    assert not view.link_terminals((concat, 0), (squeeze, 0))
    message = window.statusBar().currentMessage()
    assert message.startswith("Cannot link: the link would create a cycle:"), message
    assert f"'{SQUEEZE}'" in message and f"'{CONCAT}'" in message and "\n" not in message
    assert doc.model.SerializeToString() == before
    assert session.undo_stack.index() == undo_index

    # Type Checking finds nothing wrong; Save writes a model onnx.checker accepts.
    with qtbot.waitSignal(session.checked, timeout=60_000) as checked:
        session.check_now()
    assert [d.code for d in checked.args[0].errors] == []
    assert window.save(tab)
    saved = onnx.load(path)
    onnx.checker.check_model(saved, full_check=True)
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    np.testing.assert_array_equal(run(path, x), run(original.SerializeToString(), x))

    # Undo every step: the original bytes, node order included.
    while session.undo_stack.canUndo():
        session.undo_stack.undo()
    assert doc.model.SerializeToString() == original.SerializeToString()
