"""The one error label of the dialogs and fields (designer.ui.widgets.error_label): hidden
while empty, and in a dialog too narrow for a long message the dialog grows until every
line shows (the Add Graph Input dialog cut its second line off before)."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QFormLayout, QLineEdit, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from designer.ui.widgets.error_label import ErrorLabel

LONG = "invalid input name: '1bad' starts with a digit; names start with a letter or '_'"


def fully_shown(label: ErrorLabel) -> bool:
    return label.isVisible() and label.height() >= label.heightForWidth(label.width())


def form_dialog(qtbot: QtBot) -> tuple[QDialog, ErrorLabel]:
    """A shown dialog with one field and an error label under it."""
    dialog = QDialog()
    qtbot.addWidget(dialog)
    form = QFormLayout(dialog)
    form.addRow("Name:", QLineEdit())
    label = ErrorLabel()
    form.addRow(label)
    dialog.show()
    return dialog, label


def test_hidden_while_empty(qtbot: QtBot) -> None:
    _dialog, label = form_dialog(qtbot)
    assert not label.isVisible()
    label.setText("bad")
    assert label.isVisible() and label.text() == "bad"
    label.show_message("")
    assert not label.isVisible()


def test_a_long_message_makes_the_dialog_taller(qtbot: QtBot) -> None:
    dialog, label = form_dialog(qtbot)
    dialog.resize(220, dialog.minimumSizeHint().height())
    qtbot.wait(10)
    before = dialog.height()
    label.setText(LONG)
    qtbot.waitUntil(lambda: fully_shown(label), timeout=2000)
    assert dialog.height() > before and dialog.width() == 220


def test_a_window_that_is_no_dialog_is_left_as_it_is(qtbot: QtBot) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    layout = QVBoxLayout(window)
    label = ErrorLabel()
    layout.addWidget(label)
    window.show()
    window.resize(200, 40)
    qtbot.wait(10)
    label.setText(LONG)
    qtbot.wait(50)
    assert (window.width(), window.height()) == (200, 40)
