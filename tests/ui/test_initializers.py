"""The Initializer Editor and the Create Initializer dialog with real widgets; each step is
one undo step that restores the model exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers.gui import open_model
from helpers.shared import model as shared_model
from helpers.shots import save_screenshot
from onnx import TensorProto as T
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from designer.core.document import Document
from designer.core.scope import MAIN_SCOPE
from designer.core.tensorgen import Fill, TensorGenError
from designer.ui.dialogs import create_initializer, tensor_editor
from designer.ui.dialogs.create_initializer import (
    EXTERNAL,
    GENERATE,
    NPY,
    VALUE,
    CreateInitializerDialog,
)
from designer.ui.docks.initializers import NAME_COLUMN, STORAGE_COLUMN, InitializersDock
from designer.ui.main_window import DocumentTab, MainWindow


def dock_of(window: MainWindow) -> InitializersDock:
    return next(d for d in window.docks if isinstance(d, InitializersDock))


def model_bytes(tab: DocumentTab) -> bytes:
    return tab.session.doc.model.SerializeToString()


def select_node(window: MainWindow, tab: DocumentTab, qtbot: QtBot, name: str) -> None:
    key = next(k for k, n in tab.session.doc.scope().nodes() if n.name == name)
    tab.view.select_keys([key])
    window.selectionChanged.emit([key])
    dock = dock_of(window)
    qtbot.waitUntil(lambda: dock.terminals is not None and dock.terminals.key == key)


def test_create_dialog_sources(tmp_path: Path, qtbot: QtBot) -> None:
    doc = Document(onnx.helper.make_model(onnx.helper.make_graph([], "g", [], [])))
    dialog = CreateInitializerDialog(doc, MAIN_SCOPE, "w")
    qtbot.addWidget(dialog)
    dialog.tabs.setCurrentIndex(VALUE)
    dialog.value_text.setPlainText("[[1, 2], [3, 4]]")
    assert onnx.numpy_helper.to_array(dialog.build()).tolist() == [[1, 2], [3, 4]]
    dialog.value_text.setPlainText("[1, 2")
    with pytest.raises(TensorGenError, match="value: at position 5"):
        dialog.build()
    # generated fills: unsupported combinations are disabled
    dialog.tabs.setCurrentIndex(GENERATE)
    dialog.dtype.setCurrentIndex(dialog.dtype.findData(T.UINT8))
    items = dialog.fill.model()
    enabled = {dialog.fill.itemData(r): items.item(r).isEnabled() for r in range(4)}  # type: ignore[attr-defined]
    assert enabled == {
        Fill.STANDARD_NORMAL: False,
        Fill.ZEROS: True,
        Fill.UNIFORM_POSITIVE: True,
        Fill.UNIFORM_NEGATIVE: False,
    }
    dialog.fill.setCurrentIndex(dialog.fill.findData(Fill.UNIFORM_POSITIVE))
    tensor = dialog.build()
    assert tensor.data_type == T.UINT8 and list(tensor.dims) == [1, 2, 3, 4]
    # .npy with a dtype that does not match
    np.save(tmp_path / "v.npy", np.ones(3, np.float64))
    dialog.tabs.setCurrentIndex(NPY)
    dialog.npy_path.setText(str(tmp_path / "v.npy"))
    with pytest.raises(TensorGenError, match="float64"):
        dialog.build()
    dialog.dtype.setCurrentIndex(dialog.dtype.findData(T.DOUBLE))
    assert dialog.build().data_type == T.DOUBLE
    # never-saved model: External is disabled with the reason
    assert not dialog.tabs.isTabEnabled(EXTERNAL)
    assert "save the model first" in dialog.tabs.tabToolTip(EXTERNAL)
    dialog.name.setText("1bad")
    with pytest.raises(TensorGenError, match="starts with a digit"):
        dialog.build()
    dialog.accept()
    assert "starts with a digit" in dialog.error.text() and dialog.tensor is None


def test_create_generate_edit_delete(
    window: MainWindow,
    resnet_path: Path,
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tab = open_model(window, resnet_path, qtbot)
    dock = dock_of(window)
    steps = [model_bytes(tab)]

    # create with the dialog's generator (a real dialog, driven without exec)
    def fake_ask(parent, doc, scope_id, name="", elem_type=T.FLOAT):  # type: ignore[no-untyped-def]
        dialog = CreateInitializerDialog(doc, scope_id, name or "gen_w", elem_type)
        dialog.tabs.setCurrentIndex(GENERATE)
        dialog.gen_shape.setText("[4, 4, 3, 3]")
        dialog.fill.setCurrentIndex(dialog.fill.findData(Fill.STANDARD_NORMAL))
        tensor = dialog.build()
        dialog.deleteLater()
        return tensor

    monkeypatch.setattr(create_initializer, "ask_new_initializer", fake_ask)
    dock.create_initializer()
    scope = tab.session.doc.scope()
    assert scope.initializer("gen_w") is not None
    steps.append(model_bytes(tab))
    qtbot.waitUntil(lambda: any(t.name == "gen_w" for t in dock.model.tensors))
    dock.filter.setText("gen_")
    assert dock.proxy.rowCount() == 1
    dock.filter.setText("")
    # edit in the Tensor Editor
    monkeypatch.setattr(
        tensor_editor,
        "edit_tensor",
        lambda parent, array, elem_type, **kw: (array * 0 + 1, elem_type),
    )
    dock.select_name("stem_scale")
    dock.edit_selected()
    assert (onnx.numpy_helper.to_array(scope.initializer("stem_scale")) == 1).all()  # type: ignore[arg-type]
    steps.append(model_bytes(tab))
    # delete disconnects users
    qtbot.waitUntil(lambda: dock.proxy.rowCount() == len(tab.session.doc.model.graph.initializer))
    dock.select_name("fc_b")
    dock.delete_selected()
    gemm = next(n for n in tab.session.doc.model.graph.node if n.name == "head_fc")
    assert list(gemm.input) == ["flat", "fc_w"] and scope.initializer("fc_b") is None
    for expected in reversed(steps):
        tab.session.undo_stack.undo()
        assert model_bytes(tab) == expected
    assert tab.session.undo_stack.index() == 0


def test_terminals_switch_disconnect_and_connect(
    window: MainWindow,
    resnet_path: Path,
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tab = open_model(window, resnet_path, qtbot)
    dock = dock_of(window)
    steps = [model_bytes(tab)]
    select_node(window, tab, qtbot, "head_fc")
    panel = dock.terminals
    assert panel is not None and set(panel.combos) == {1, 2}
    assert not panel.connect_button.isEnabled()  # Gemm: A, B, C all connected
    dock.setFloating(True)
    dock.resize(460, 640)
    dock.splitter.setSizes([330, 310])
    qtbot.wait(20)
    save_screenshot(dock.widget(), "initializers_gemm.png")
    panel.switch(2, "nope")
    assert "no initializer named 'nope'" in panel.errors[2].text()
    assert model_bytes(tab) == steps[-1]
    panel.switch(2, "stem_bias")  # a float[4]: the type checker will complain, the edit works
    gemm = lambda: next(n for n in tab.session.doc.model.graph.node if n.name == "head_fc")  # noqa: E731
    assert gemm().input[2] == "stem_bias"
    steps.append(model_bytes(tab))
    qtbot.waitUntil(lambda: dock.terminals is not panel)
    panel = dock.terminals
    assert panel is not None
    panel.disconnect_slot(2)
    assert list(gemm().input) == ["flat", "fc_w"]
    steps.append(model_bytes(tab))
    qtbot.waitUntil(lambda: dock.terminals is not panel)
    panel = dock.terminals
    assert panel is not None and panel.connect_button.isEnabled() and panel.free_slots() == [2]
    monkeypatch.setattr(
        create_initializer,
        "ask_new_initializer",
        lambda parent, doc, scope_id, name="", elem_type=T.FLOAT: onnx.numpy_helper.from_array(
            np.zeros(10, np.float32), name
        ),
    )
    panel.connect_new(2)
    assert gemm().input[2] == "head_fc_C"
    assert tab.session.doc.scope().initializer("head_fc_C") is not None
    steps.append(model_bytes(tab))
    for expected in reversed(steps[:-1]):
        tab.session.undo_stack.undo()
        assert model_bytes(tab) == expected


def test_external_initializer_for_a_saved_model(
    window: MainWindow,
    resnet_path: Path,
    qtbot: QtBot,
) -> None:
    tab = open_model(window, resnet_path, qtbot)
    (resnet_path.parent / "w.bin").write_bytes(np.arange(6, dtype=np.float32).tobytes())
    dialog = CreateInitializerDialog(tab.session.doc, MAIN_SCOPE, "ext_w")
    qtbot.addWidget(dialog)
    assert dialog.tabs.isTabEnabled(EXTERNAL)
    dialog.tabs.setCurrentIndex(EXTERNAL)
    dialog.ext_path.setText("w.bin")
    dialog.ext_shape.setText("[2, 3]")
    tensor = dialog.build()
    assert tensor.data_location == T.EXTERNAL
    dialog.ext_length.setText("20")
    with pytest.raises(TensorGenError, match="needs 24 bytes"):
        dialog.build()


def test_sorting_is_by_value_and_keeps_the_selection(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    """The table sorts through its source model (one key per tensor: a proxy sort read two
    cells per comparison, seconds for 30k initializers), by the value of each column."""
    from designer.core.tensor_sizes import tensor_nbytes

    tab = open_model(window, resnet_path, qtbot)
    dock = dock_of(window)
    dock.refresh()
    proxy, table = dock.proxy, dock.table
    names = [proxy.index(r, 0).data() for r in range(proxy.rowCount())]
    assert names == sorted(names) and len(names) > 3  # by name at first
    by_name = {t.name: t for t in tab.session.doc.model.graph.initializer}
    chosen = names[1]
    dock.select_name(chosen)
    table.sortByColumn(3, Qt.SortOrder.DescendingOrder)  # bytes, largest first
    sizes = [tensor_nbytes(by_name[proxy.index(r, 0).data()]) for r in range(proxy.rowCount())]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1]
    assert dock.selected_names() == [chosen]  # the selection followed its row
    dock.filter.setText(names[0][:3])  # filtering still works on the sorted rows
    shown = [proxy.index(r, 0).data() for r in range(proxy.rowCount())]
    assert shown and all(names[0][:3].lower() in n.lower() for n in shown)
    dock.refresh()  # a refresh keeps the chosen order
    sizes = [tensor_nbytes(by_name[proxy.index(r, 0).data()]) for r in range(proxy.rowCount())]
    assert sizes == sorted(sizes, reverse=True)


def _shown_dock(window: MainWindow, tab: DocumentTab, qtbot: QtBot) -> InitializersDock:
    dock = dock_of(window)
    dock.show()
    dock.raise_()
    qtbot.waitUntil(lambda: dock.proxy.rowCount() == len(tab.session.doc.model.graph.initializer))
    qtbot.wait(50)
    return dock


def test_names_are_readable_at_the_default_size(window: MainWindow, qtbot: QtBot) -> None:
    """The dock where the 1400x900 window puts it: the names get most of the table (they
    were squeezed to ~45 px, "m.e…", "onn…" on every row), lose their middle rather than
    their distinguishing end, and show whole in the tooltip; Storage ("embedded" on every
    row) is left out while nothing is external."""
    tab = open_model(window, shared_model("bert_4l_h64.torchscript.onnx"), qtbot)
    dock = _shown_dock(window, tab, qtbot)
    table, header = dock.table, dock.table.horizontalHeader()
    name_width = header.sectionSize(NAME_COLUMN)
    assert name_width >= 0.45 * table.viewport().width(), name_width
    assert table.isColumnHidden(STORAGE_COLUMN)
    assert table.textElideMode() == Qt.TextElideMode.ElideLeft and not table.wordWrap()
    names = [dock.proxy.index(r, NAME_COLUMN).data() for r in range(dock.proxy.rowCount())]
    short = [n for n in names if n.startswith("onnx::")]  # "onnx::MatMul_550": all "onn…"
    assert short
    room = name_width - 12  # the cell's margins
    assert [n for n in short if table.fontMetrics().horizontalAdvance(n) > room] == []
    long_name = max(names, key=len)
    row = names.index(long_name)
    assert dock.proxy.index(row, NAME_COLUMN).data(Qt.ItemDataRole.ToolTipRole) == long_name


def test_storage_shows_where_some_initializer_is_external(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    model = onnx.load(shared_model("bert_4l_h64.torchscript.onnx"))
    path = tmp_path / "bert_ext.onnx"
    onnx.save_model(model, path, save_as_external_data=True, location="bert_ext.data")
    tab = open_model(window, path, qtbot)
    dock = _shown_dock(window, tab, qtbot)
    assert not dock.table.isColumnHidden(STORAGE_COLUMN)
    column = [dock.proxy.index(r, STORAGE_COLUMN).data() for r in range(dock.proxy.rowCount())]
    assert "external" in column
