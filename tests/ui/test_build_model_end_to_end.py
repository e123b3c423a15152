"""Issue 4, end to end: build Conv → Relu → MaxPool from nothing with the palette and quick
add, feed it generated initializers, set attributes in the Parameters window, watch the Type
Checking window, save, and run the result with onnxruntime. Every step undoes exactly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto
from PySide6.QtCore import QPointF
from pytestqt.qtbot import QtBot

from designer.core.scope import MAIN_SCOPE
from designer.core.tensorgen import Fill
from designer.ui.dialogs import create_initializer
from designer.ui.dialogs.create_initializer import GENERATE, CreateInitializerDialog
from designer.ui.dialogs.new_model import NewModelDialog
from designer.ui.docks.initializers import InitializersDock
from designer.ui.docks.palette import add_operator
from designer.ui.docks.parameters import ParametersDock
from designer.ui.docks.type_check import TypeCheckPanel
from designer.ui.main_window import DocumentTab, MainWindow
from designer.ui.params.node_panel import NodePanel
from designer.ui.settings import Settings
from designer.ui.tools.graph_io import make_outputs
from designer.ui.tools.quick_add import open_quick_add

#: Shapes of the generated initializers: a [1, 3, 8, 8] image, 4 filters of 3x3.
SHAPES = {
    0: ("[1, 3, 8, 8]", Fill.STANDARD_NORMAL),
    1: ("[4, 3, 3, 3]", Fill.STANDARD_NORMAL),
    2: ("[4]", Fill.ZEROS),
}


@pytest.fixture
def window(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> Iterator[MainWindow]:
    win = MainWindow(Settings())
    qtbot.addWidget(win)
    win.show_error = lambda title, message: pytest.fail(message)  # type: ignore[method-assign]
    win.ask_save_changes = lambda tab: "discard"  # type: ignore[method-assign]
    win.resize(1400, 900)
    win.show()
    yield win
    for tab in win.document_tabs():
        tab.session.undo_stack.setClean()
    win.close()


def dock(window: MainWindow, kind: type) -> object:
    return next(d for d in window.docks if isinstance(d, kind))


def select(window: MainWindow, tab: DocumentTab, key: int) -> None:
    tab.view.select_keys([key])
    window.selectionChanged.emit([key])


def node_panel(window: MainWindow, tab: DocumentTab, key: int, qtbot: QtBot) -> NodePanel:
    select(window, tab, key)
    parameters = dock(window, ParametersDock)
    qtbot.waitUntil(
        lambda: isinstance(parameters.panel, NodePanel) and parameters.panel.keys == [key]  # type: ignore[attr-defined]
    )
    return parameters.panel  # type: ignore[attr-defined, no-any-return]


def commit(panel: NodePanel, name: str, text: str) -> None:
    line = panel.rows[name].line
    assert line is not None
    line.setText(text)
    line.editingFinished.emit()


def problems(window: MainWindow) -> list[str]:
    """Codes of the current document's errors, from the latest background check."""
    tab = window.tab()
    assert tab is not None and tab.session.check_result is not None
    return [d.code for d in tab.session.check_result.errors]


def test_build_conv_relu_maxpool_from_nothing(
    window: MainWindow, qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def new_model(dialog: NewModelDialog) -> int:
        dialog.opset.setCurrentIndex(dialog.opset.findData(17))
        return NewModelDialog.DialogCode.Accepted

    monkeypatch.setattr(NewModelDialog, "exec", new_model)
    window.new_document()
    tab = window.tab()
    assert tab is not None
    view, session = tab.view, tab.session
    state = lambda: session.doc.model.SerializeToString()  # noqa: E731
    steps = [state()]

    # Layers: Conv from the palette, Relu with quick add, MaxPool from the palette.
    conv = add_operator(view, "", "Conv", QPointF(0, 0))
    steps.append(state())
    popup = open_quick_add(window, view.viewport().mapToGlobal(view.viewport().rect().center()))
    assert popup is not None
    popup.set_query("relu")
    assert popup.current_op() == ("", "Relu")
    popup.add_current()
    relu = popup.added_key
    steps.append(state())
    pool = add_operator(view, "", "MaxPool", QPointF(0, 300))
    steps.append(state())
    assert conv is not None and relu is not None and pool is not None
    names = [n.name for n in session.doc.model.graph.node]
    assert names == ["Conv", "Relu", "MaxPool"]

    # Links, drawn the way the canvas draws them.
    assert view.link_terminals((conv, 0), (relu, 0))
    steps.append(state())
    assert view.link_terminals((relu, 0), (pool, 0))
    steps.append(state())

    # The Type Checking window lists Conv's missing inputs.
    session.check_now()
    qtbot.waitUntil(lambda: "missing-input" in problems(window), timeout=10_000)
    type_check = window.findChild(TypeCheckPanel)
    assert type_check is not None
    qtbot.waitUntil(lambda: type_check.model.rowCount() > 0)

    # Generated initializers feed Conv's X, W and B through the Initializer Editor.
    def generate(parent, doc, scope_id, name="", elem_type=TensorProto.FLOAT):  # type: ignore[no-untyped-def]
        slot = {"X": 0, "W": 1, "B": 2}.get(
            name.rsplit("_", 1)[-1], len(doc.scope().initializer_names())
        )
        shape, fill = SHAPES[slot]
        dialog = CreateInitializerDialog(doc, scope_id, name, elem_type)
        dialog.tabs.setCurrentIndex(GENERATE)
        dialog.gen_shape.setText(shape)
        dialog.fill.setCurrentIndex(dialog.fill.findData(fill))
        tensor = dialog.build()
        dialog.deleteLater()
        return tensor

    monkeypatch.setattr(create_initializer, "ask_new_initializer", generate)
    initializers = dock(window, InitializersDock)

    def ready(slot: int) -> bool:
        panel = initializers.terminals  # type: ignore[attr-defined]
        return panel is not None and panel.key == conv and slot in panel.free_slots()

    for slot in (0, 1, 2):
        select(window, tab, conv)
        qtbot.waitUntil(lambda slot=slot: ready(slot))
        initializers.terminals.connect_new(slot)  # type: ignore[attr-defined]
        steps.append(state())
    inputs = list(session.doc.scope().node(conv).input)
    assert len(inputs) == 3 and all(session.doc.scope().initializer(n) for n in inputs)

    # Parameters: invalid text changes nothing; pads and the pooling window are set.
    panel = node_panel(window, tab, conv, qtbot)
    before = state()
    commit(panel, "pads", "[1, 1,")
    assert panel.rows["pads"].error.text() and state() == before
    commit(panel, "pads", "[1, 1, 1, 1]")
    steps.append(state())
    panel = node_panel(window, tab, pool, qtbot)
    commit(panel, "kernel_shape", "[2, 2]")
    steps.append(state())
    panel = node_panel(window, tab, pool, qtbot)
    commit(panel, "strides", "[2, 2]")
    steps.append(state())

    # MaxPool's output becomes the graph's output, typed from the latest check.
    pool_out = session.doc.scope().node(pool).output[0]
    session.check_now()
    qtbot.waitUntil(
        lambda: (
            session.check_result is not None
            and session.check_result.type_of(MAIN_SCOPE, pool_out) is not None
        ),
        timeout=10_000,
    )
    view.select_keys([pool])
    make_outputs(window)
    steps.append(state())
    output = session.doc.model.graph.output[0]
    assert output.name == pool_out and output.type.tensor_type.elem_type == TensorProto.FLOAT

    panel = node_panel(window, tab, pool, qtbot)
    commit(panel, "ceil_mode", "1")
    panel = node_panel(window, tab, pool, qtbot)
    panel.rows["ceil_mode"].reset_button.click()  # back to the schema default
    assert state() == steps[-1]
    assert session.undo_stack.count() == len(steps) + 1  # set + restore: two undo steps
    panel = node_panel(window, tab, relu, qtbot)
    panel.name_edit.setText("Conv")  # a duplicate: refused, nothing changes
    panel.name_edit.editingFinished.emit()
    assert "already exists" in panel.name_error.text()

    # The type checker is satisfied now.
    session.check_now()
    qtbot.waitUntil(lambda: problems(window) == [], timeout=10_000)
    assert "Type Checking" in type_check.dock.windowTitle()

    # Save; onnx's full check accepts the file and onnxruntime runs it.
    path = tmp_path / "built.onnx"
    window.choose_save_path = lambda tab, current: path  # type: ignore[method-assign]
    assert window.save()
    onnx.checker.check_model(str(path), full_check=True)
    result = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {})
    assert result[0].shape == (1, 4, 4, 4)
    assert np.isfinite(result[0]).all() and (result[0] >= 0).all()  # after Relu

    # Every step undoes to exactly the model before it.
    session.undo_stack.undo()  # the restored default
    session.undo_stack.undo()  # ceil_mode = 1
    assert state() == steps[-1]
    for expected in reversed(steps[:-1]):
        session.undo_stack.undo()
        assert state() == expected
    assert session.undo_stack.index() == 0
