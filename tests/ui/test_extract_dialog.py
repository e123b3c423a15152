"""Tools > Extract Model Subgraph (G-3) with real widgets: only the current document's
subgraphs are listed, the lists depend on each other, and the written model passes onnx's
full check and gives the original's results in onnxruntime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from helpers.gui import open_model
from helpers.models import function_model, subgraph_model
from helpers.shots import save_screenshot
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from designer.ui.dialogs.extract_subgraph import ExtractSubgraphDialog
from designer.ui.main_window import MainWindow


def open_dialog(window: MainWindow) -> ExtractSubgraphDialog:
    window.actions_by_name["extract_subgraph"].trigger()
    (dialog,) = [d for d in window.findChildren(ExtractSubgraphDialog) if d.isVisible()]
    return dialog


def items(combo) -> list[str]:  # type: ignore[no-untyped-def]
    return [combo.itemText(i) for i in range(combo.count())]


def run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def test_lists_only_this_documents_subgraphs(window: MainWindow, save_model, qtbot: QtBot) -> None:
    open_model(window, save_model(function_model(), "fn.onnx"), qtbot)
    open_model(window, save_model(subgraph_model(), "sub.onnx"), qtbot)
    dialog = open_dialog(window)
    assert items(dialog.kind) == ["Operator"]  # this model has no local function
    assert items(dialog.parent_name) == ["branch", "loop", "body_if"]
    assert items(dialog.subgraph) == ["else_branch", "then_branch"]  # model order
    assert dialog.path.text().endswith("sub_branch_else_branch.onnx")
    dialog.parent_name.setCurrentIndex(2)
    assert items(dialog.subgraph) == ["else_branch", "then_branch"]  # model order
    assert dialog.choice() is not None and dialog.choice().parent == "body_if"  # type: ignore[union-attr]
    dialog.parent_name.setCurrentIndex(1)
    assert items(dialog.subgraph) == ["body"]
    assert dialog.path.text().endswith("sub_loop_body.onnx")
    dialog.reject()

    window.tabs.setCurrentIndex(0)  # the function model
    dialog = open_dialog(window)
    assert items(dialog.kind) == ["Local function"]
    assert items(dialog.parent_name) == ["local.fn:ScaledAdd"]
    assert items(dialog.subgraph) == ["(body)"]
    dialog.reject()


def test_extract_an_if_branch_reading_outer_values(
    window: MainWindow, save_model, qtbot: QtBot, tmp_path: Path
) -> None:
    source = subgraph_model()
    tab = open_model(window, save_model(source, "sub.onnx"), qtbot)
    dialog = open_dialog(window)
    dialog.select("operator", "branch", "then_branch")
    out = tmp_path / "then.onnx"
    dialog.path.setText(str(out))
    assert dialog.open_after.isChecked()
    save_screenshot(dialog, "extract_subgraph_dialog.png")
    tabs = window.tabs.count()
    dialog.buttons.accepted.emit()
    assert not dialog.isVisible()
    assert "Extracted branch ▸ then_branch to" in window.statusBar().currentMessage()
    qtbot.waitUntil(lambda: window.tabs.count() == tabs + 1)
    assert window.tab() is not tab and window.tab().session.doc.path == out  # type: ignore[union-attr]

    model = onnx.load(str(out))
    onnx.checker.check_model(model, full_check=True)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y, _z) = run(source, {"X": x, "cond": np.array(True)})
    # The branch reads the outer value A = X + outer_w: it is a graph input now.
    feeds = {"A": x + 3.0}
    assert [i.name for i in model.graph.input] == ["A"]
    np.testing.assert_allclose(run(model, feeds)[0], y, rtol=1e-6)


def test_errors_stay_in_the_dialog_and_browse_adds_the_suffix(
    window: MainWindow, save_model, qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tab = open_model(window, save_model(subgraph_model(), "sub.onnx"), qtbot)
    original = tab.session.doc.path
    assert original is not None
    before = original.read_bytes()
    dialog = open_dialog(window)
    dialog.path.setText(str(original))
    dialog.buttons.accepted.emit()
    assert "this is the model being edited" in dialog.error.text()
    assert original.read_bytes() == before
    dialog.path.setText(str(tmp_path / "missing" / "x.onnx"))
    dialog.buttons.accepted.emit()
    assert dialog.isVisible()
    assert "does not exist" in dialog.error.text()
    assert not (tmp_path / "missing").exists()

    asked: list[str] = []

    def fake_save(parent, caption, start, filters):  # type: ignore[no-untyped-def]
        asked.append(start)
        return str(tmp_path / "picked"), filters

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake_save))
    dialog.browse()
    assert asked and asked[0].endswith("x.onnx")
    assert dialog.path.text() == str(tmp_path / "picked.onnx")
    dialog.select("operator", "loop", "body")
    assert dialog.path.text() == str(tmp_path / "picked.onnx")  # a chosen path is kept
    dialog.open_after.setChecked(False)
    dialog.buttons.accepted.emit()
    assert not dialog.isVisible()
    onnx.checker.check_model(onnx.load(str(tmp_path / "picked.onnx")), full_check=True)


def test_a_model_without_subgraphs_says_so(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    open_model(window, resnet_path, qtbot)
    dialog = open_dialog(window)
    assert dialog.kind.count() == 0
    assert "no subgraphs or local functions" in dialog.error.text()
    assert not dialog.extract_button.isEnabled()
    dialog.reject()


def test_extract_from_a_subgraph_tab(
    window: MainWindow, save_model, qtbot: QtBot, tmp_path: Path
) -> None:
    """In a subgraph tab (a working copy without a file) the dialog still names the output
    after the model's file and extracts from the tab's (unconfirmed) content."""
    main = open_model(window, save_model(subgraph_model(), "sub.onnx"), qtbot)
    scope = main.session.doc.scope()
    key = next(k for k, n in scope.nodes() if n.name == "loop")
    sub_tab = window.open_scope(main.session, scope.id.child(key, "body"))
    assert sub_tab is not None and window.tab() is sub_tab
    dialog = open_dialog(window)
    dialog.select("operator", "body_if", "then_branch")
    out = tmp_path / "sub_body_if_then_branch.onnx"
    assert dialog.path.text() == str(out)
    dialog.open_after.setChecked(False)
    dialog.buttons.accepted.emit()
    assert not dialog.isVisible(), dialog.error.text()
    onnx.checker.check_model(onnx.load(str(out)), full_check=True)


def test_show_changes_of_an_extraction(
    window: MainWindow, save_model, qtbot: QtBot, tmp_path: Path
) -> None:
    """Edit > Show Changes of Last Step after an extraction compares the branch as it sits
    in the model with the written file: the outer value it reads became a graph input."""
    from designer.ui.diff import diff_tabs

    open_model(window, save_model(subgraph_model(), "sub.onnx"), qtbot)
    action = window.actions_by_name["show_last_changes"]
    dialog = open_dialog(window)
    dialog.select("operator", "branch", "then_branch")
    dialog.path.setText(str(tmp_path / "then.onnx"))
    dialog.open_after.setChecked(False)
    dialog.buttons.accepted.emit()
    assert "Show Changes of Last Step" in window.statusBar().currentMessage()
    window.menus["Edit"].aboutToShow.emit()
    assert action.isEnabled() and "extract branch ▸ then_branch" in action.text()
    action.trigger()
    (tab,) = diff_tabs(window)
    inputs = {(f.field, f.kind) for f in tab.diff.graph.inputs}
    assert ("A", "added") in inputs  # the outer value A is an input of the extracted model
    assert tab.diff.graph.nodes_added == () and tab.diff.graph.nodes_removed == ()
    window.close_tab(window.tabs.indexOf(tab))


def test_an_output_open_in_another_tab_is_refused(
    window: MainWindow, save_model, qtbot: QtBot, tmp_path: Path
) -> None:
    """Extract wrote over a model open in another tab, which kept showing the old one."""
    other = save_model(subgraph_model(), "other.onnx")
    open_model(window, other, qtbot)
    open_model(window, save_model(subgraph_model(), "sub.onnx"), qtbot)
    before = other.read_bytes()
    dialog = open_dialog(window)
    dialog.path.setText(str(other))
    dialog.buttons.accepted.emit()
    assert "is open in the tab other.onnx" in dialog.error.text()
    assert other.read_bytes() == before
    dialog.close()
