"""The Local Functions dock (G-4): lists functions with call counts, filters, creates, opens,
deletes (call sites flagged by the type checker) and extracts a function."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper
from PySide6.QtWidgets import QFileDialog, QMessageBox

from designer.core.scope import ScopeId
from designer.ui.dialogs.new_function import NewFunctionDialog
from designer.ui.docks.functions import FunctionsDock
from tests.helpers.models import FN_DOMAIN, OPSET, function_model
from tests.helpers.shots import save_screenshot

SCALED = (FN_DOMAIN, "ScaledAdd", "")
DOUBLE = (FN_DOMAIN, "Double", "")


def two_functions_model() -> onnx.ModelProto:
    """``function_model`` (ScaledAdd called twice) plus an unused function ``Double``."""
    model = function_model()
    model.functions.append(
        helper.make_function(
            FN_DOMAIN,
            "Double",
            ["x"],
            ["y"],
            [helper.make_node("Add", ["x", "x"], ["y"], name="double_add")],
            [helper.make_opsetid("", OPSET)],
        )
    )
    return model


def dock_of(window) -> FunctionsDock:  # type: ignore[no-untyped-def]
    dock = next(d for d in window.docks if d.objectName() == "dock_functions")
    assert isinstance(dock, FunctionsDock)
    return dock


@pytest.fixture
def opened(window, save_model: Callable[[onnx.ModelProto, str], Path], qtbot):  # type: ignore[no-untyped-def]
    path = save_model(two_functions_model(), "functions.onnx")
    window.open_files([path])
    tab = window.tab()
    assert tab is not None
    dock = dock_of(window)
    dock.show()
    dock.raise_()
    qtbot.waitUntil(lambda: dock.model.rowCount() == 2)
    return window, tab, dock


def test_without_document_everything_is_disabled_with_reason(window) -> None:  # type: ignore[no-untyped-def]
    dock = dock_of(window)
    assert dock.model.rowCount() == 0
    for button in (dock.add_button, dock.open_button, dock.remove_button, dock.extract_button):
        assert not button.isEnabled()
    assert "Open a model" in dock.status.text()
    assert "open a model first" in dock.add_button.toolTip()


def test_lists_functions_with_call_counts_and_filters(opened, qtbot) -> None:  # type: ignore[no-untyped-def]
    _window, _tab, dock = opened
    assert dock.visible_rows() == [("Double", FN_DOMAIN, "0"), ("ScaledAdd", FN_DOMAIN, "2")]
    assert dock.status.text() == "2 local function(s)"
    assert dock.select_fid(SCALED)
    dock.resize(380, 260)
    save_screenshot(dock, "functions_dock.png")
    dock.filter.setText("scal")
    dock.filter.flush()
    assert dock.visible_rows() == [("ScaledAdd", FN_DOMAIN, "2")]
    assert "1 of 2" in dock.status.text()
    assert dock.select_fid(SCALED)
    assert dock.open_button.isEnabled() and dock.remove_button.isEnabled()
    dock.filter.setText("")
    dock.filter.flush()
    assert len(dock.visible_rows()) == 2


def test_add_creates_and_opens_a_function(opened, monkeypatch, qtbot) -> None:  # type: ignore[no-untyped-def]
    window, tab, dock = opened
    session = tab.session

    def fill(self: NewFunctionDialog) -> int:
        self.name_edit.setText("Brand_new")
        self.set_import_checked(FN_DOMAIN, False)
        self.accept()
        return int(self.result())

    monkeypatch.setattr(NewFunctionDialog, "exec", fill)
    fid = dock.add_function()
    assert fid == ("local", "Brand_new", "")
    fn = session.doc.function(*fid)
    assert {op.domain: op.version for op in fn.opset_import} == {"": OPSET}
    assert "local" in session.doc.opset_imports  # the new domain is imported by the model
    current = window.tab()
    assert current is not tab and current.view.scope_id == ScopeId(function=fid)
    # the dock keeps listing the model's functions while a function tab is shown
    qtbot.waitUntil(lambda: ("Brand_new", "local", "0") in dock.visible_rows())
    assert dock.session is session and len(dock.visible_rows()) == 3
    window.close_tab(window.tabs.indexOf(current))
    window.tabs.setCurrentWidget(tab)
    window.actions_by_name["undo"].trigger()
    qtbot.waitUntil(lambda: dock.model.rowCount() == 2)


def test_add_refuses_a_taken_name_inline() -> None:
    dialog = NewFunctionDialog({"": 17}, {("local", "Taken")})
    dialog.name_edit.setText("Taken")
    dialog.accept()
    assert dialog.result() != NewFunctionDialog.DialogCode.Accepted
    assert "already exists" in dialog.error.text()
    dialog.name_edit.setText("Free")
    dialog.domain_edit.setText("ai.onnx")
    dialog.accept()
    assert "standard ONNX domain" in dialog.error.text()


def test_remove_after_confirmation_flags_call_sites(opened, monkeypatch, qtbot) -> None:  # type: ignore[no-untyped-def]
    window, tab, dock = opened
    session = tab.session
    asked: list[str] = []

    def question(_parent, _title, text, *_args):  # type: ignore[no-untyped-def]
        asked.append(text)
        return QMessageBox.StandardButton.No if len(asked) == 1 else QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", question)
    assert dock.select_fid(SCALED)
    assert not dock.remove_selected()  # answered No: nothing changes
    assert len(session.doc.model.functions) == 2
    assert "2 call site(s)" in asked[0] and "type checker" in asked[0]
    assert dock.remove_selected()
    assert [f.name for f in session.doc.model.functions] == ["Double"]
    assert [n.op_type for n in session.doc.model.graph.node] == ["ScaledAdd", "ScaledAdd"]

    def flagged() -> set[str]:  # a check of the document without the function
        result = session.check_result
        if result is None:
            return set()
        return {d.node_name for d in result.diagnostics if "ScaledAdd" in d.message}

    qtbot.waitUntil(lambda: {"call1", "call2"} <= flagged(), timeout=20_000)
    qtbot.waitUntil(lambda: dock.visible_rows() == [("Double", FN_DOMAIN, "0")])
    window.actions_by_name["undo"].trigger()
    qtbot.waitUntil(lambda: dock.model.rowCount() == 2)
    assert session.doc.model == two_functions_model()


def test_extract_writes_a_valid_model_and_opens_it(opened, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window, tab, dock = opened
    target = tmp_path / "out" / "scaled_add.onnx"
    target.parent.mkdir()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    assert dock.select_fid(SCALED)
    assert dock.extract_selected() == target
    onnx.checker.check_model(str(target), full_check=True)
    model = onnx.load(str(target))
    assert [v.name for v in model.graph.input] == ["a", "b"]
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal((2, 3)).astype(np.float32)
    session = ort.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    (out,) = session.run(None, {"a": a, "b": b})
    np.testing.assert_allclose(out, (a + b) * 2.0, rtol=1e-6)  # call1 uses the default alpha
    opened_tab = window.tab()
    assert opened_tab is not tab and opened_tab.session.doc.path == target.resolve()
    assert not window.errors


def test_extract_error_is_shown_and_writes_nothing(opened, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window, _tab, dock = opened
    target = tmp_path / "never.onnx"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    assert dock.select_fid(DOUBLE)  # never called: its input types are unknown
    assert dock.extract_selected() is None
    assert len(window.errors) == 1 and "Double" in window.errors[0]
    assert "call site" in window.errors[0]
    assert not target.exists()


def test_dock_follows_edits_and_tabs(opened, window, qtbot) -> None:  # type: ignore[no-untyped-def]
    _window, tab, dock = opened
    from designer.core.edits.functions import RemoveFunction

    assert tab.session.push(RemoveFunction(DOUBLE))
    qtbot.waitUntil(lambda: dock.model.rowCount() == 1)
    window.close_tab(window.tabs.indexOf(tab))
    assert dock.model.rowCount() == 0
    assert not dock.add_button.isEnabled()


def test_open_and_settings_of_the_selected_function(opened, qtbot) -> None:  # type: ignore[no-untyped-def]
    window, tab, dock = opened
    assert dock.select_fid(SCALED)
    dialog = dock.settings_selected()
    assert dialog is not None and dialog.session is tab.session
    assert dialog.table.item(0, 0).text() == "alpha"
    dialog.close()
    index = dock.proxy.index(1, 0)
    assert index.data() == "ScaledAdd"
    dock.table.doubleClicked.emit(index)
    current = window.tab()
    assert current is not tab and current.view.scope_id == ScopeId(function=SCALED)
    assert [r[0] for r in dock.visible_rows()] == ["Double", "ScaledAdd"]


def test_extract_refuses_the_model_being_edited_and_open_tabs(  # type: ignore[no-untyped-def]
    opened, monkeypatch, tmp_path, save_model
) -> None:
    """Extract… wrote the function body over the open model's own file, whose tab still
    looked unmodified: the model was lost. It also wrote over a model open in another tab."""
    window, tab, dock = opened
    own = tab.session.doc.path
    before = own.read_bytes()
    other = save_model(function_model(), "other.onnx")
    window.open_files([other])
    window.tabs.setCurrentWidget(tab)
    other_bytes = other.read_bytes()
    for target, reason in ((own, "the output path is the input"), (other, "is open in the tab")):
        monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, t=target, **k: (str(t), ""))
        assert dock.select_fid(SCALED)
        assert dock.extract_selected() is None
        assert reason in window.errors[-1]
    assert own.read_bytes() == before and other.read_bytes() == other_bytes
