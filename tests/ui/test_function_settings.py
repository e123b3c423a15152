"""Local Function Settings (G-5): add typed and required attributes, inline errors, removal
refused while the body references the attribute (reason shown), undo."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import onnx
import pytest

from designer.ui.dialogs.function_settings import REQUIRED_TEXT, UNDEFINED, FunctionSettingsDialog
from tests.helpers.models import FN_DOMAIN, function_model
from tests.helpers.shots import save_screenshot

A = onnx.AttributeProto
SCALED = (FN_DOMAIN, "ScaledAdd", "")


@pytest.fixture
def dialog(window, save_model: Callable[[onnx.ModelProto, str], Path], qtbot):  # type: ignore[no-untyped-def]
    window.open_files([save_model(function_model(), "fn.onnx")])
    tab = window.tab()
    assert tab is not None
    dlg = FunctionSettingsDialog(tab.session, SCALED, window)
    qtbot.addWidget(dlg)
    dlg.show()
    return dlg


def rows(dlg: FunctionSettingsDialog) -> list[tuple[str, str, str]]:
    return [
        tuple(dlg.table.item(r, c).text() for c in range(3))  # type: ignore[misc]
        for r in range(dlg.table.rowCount())
    ]


def choose_type(dlg: FunctionSettingsDialog, label: str) -> None:
    index = dlg.type_box.findText(label)
    assert index >= 0, label
    dlg.type_box.setCurrentIndex(index)


def test_lists_the_declared_attributes(dialog) -> None:  # type: ignore[no-untyped-def]
    assert rows(dialog) == [("alpha", "FLOAT", "2.0")]
    assert "ScaledAdd" in dialog.windowTitle()


def test_add_typed_and_required_attributes(dialog, window, qtbot) -> None:  # type: ignore[no-untyped-def]
    session = dialog.session
    original = onnx.FunctionProto()
    original.CopyFrom(session.doc.function(*SCALED))

    dialog.name_edit.setText("beta")
    choose_type(dialog, "FLOAT")
    dialog.default_edit.setText("0.5")
    assert dialog.add_attribute()
    fn = session.doc.function(*SCALED)
    beta = next(a for a in fn.attribute_proto if a.name == "beta")
    assert beta.type == A.FLOAT and beta.f == pytest.approx(0.5)

    dialog.name_edit.setText("gamma")
    choose_type(dialog, UNDEFINED)
    assert not dialog.default_edit.isEnabled()
    assert dialog.add_attribute()
    assert list(session.doc.function(*SCALED).attribute) == ["gamma"]

    dialog.name_edit.setText("sizes")
    choose_type(dialog, "INTS")
    dialog.default_edit.setText("[1, 2, 3]")
    assert dialog.add_attribute()
    assert rows(dialog) == [
        ("gamma", REQUIRED_TEXT, "—"),
        ("alpha", "FLOAT", "2.0"),
        ("beta", "FLOAT", "0.5"),
        ("sizes", "INTS", "[1, 2, 3]"),
    ]
    assert not dialog.error.isVisible()
    dialog.resize(640, 420)
    save_screenshot(dialog, "function_settings.png")

    for _ in range(3):  # every addition is one undo step
        window.actions_by_name["undo"].trigger()
    qtbot.waitUntil(lambda: rows(dialog) == [("alpha", "FLOAT", "2.0")])
    assert session.doc.function(*SCALED) == original


def test_bad_values_show_inline_errors_and_change_nothing(dialog) -> None:  # type: ignore[no-untyped-def]
    fn = dialog.session.doc.function(*SCALED)
    before = fn.SerializeToString()
    dialog.name_edit.setText("beta")
    choose_type(dialog, "INT")
    dialog.default_edit.setText("1.5")
    assert not dialog.add_attribute()
    assert dialog.error.isVisible() and "integer" in dialog.error.text()

    dialog.default_edit.setText("[1, 2")
    assert not dialog.add_attribute()
    assert "position" in dialog.error.text()

    dialog.default_edit.setText("")
    assert not dialog.add_attribute()
    assert "needs a default value" in dialog.error.text()

    dialog.name_edit.setText("alpha")
    dialog.default_edit.setText("3")
    assert not dialog.add_attribute()
    assert "already has an attribute 'alpha'" in dialog.error.text()

    dialog.name_edit.setText("2bad")
    assert not dialog.add_attribute()
    assert "starts with a digit" in dialog.error.text()
    assert fn.SerializeToString() == before
    assert not dialog.session.undo_stack.canUndo()


def test_remove_refused_while_referenced_then_allowed(dialog) -> None:  # type: ignore[no-untyped-def]
    session = dialog.session
    dialog.select_name("alpha")
    assert dialog.remove_button.isEnabled()
    assert not dialog.remove_selected()
    assert dialog.error.isVisible()
    assert "fn_alpha" in dialog.error.text()  # the body node that references it
    assert [a.name for a in session.doc.function(*SCALED).attribute_proto] == ["alpha"]

    dialog.name_edit.setText("unused")
    choose_type(dialog, UNDEFINED)
    assert dialog.add_attribute()
    dialog.select_name("unused")
    assert dialog.remove_selected()
    assert not dialog.error.isVisible()
    assert list(session.doc.function(*SCALED).attribute) == []
    assert rows(dialog) == [("alpha", "FLOAT", "2.0")]
