"""Tools > Custom Tools… (U-1): the list of user tools and the dialog that edits one.

Every change (New, Edit, Delete) is saved at once to the shared tool file, so the Tools > User
menu and ``onnx-designer tool`` see it; ``toolsChanged`` tells the window.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from designer.activities.custom_tools import (
    CustomTool,
    ToolError,
    check_application,
    command_line,
    expand_arguments,
    load_tools,
    save_tools,
    shell_warning,
    tools_path,
    validate_tool,
)
from designer.ui.widgets.error_label import ErrorLabel

_RED, _GREEN = "#b00020", "#1b7a1b"
_EXAMPLE_MODEL = Path("/path/to/model.onnx") if sys.platform != "win32" else Path("C:/model.onnx")
_EXAMPLE_OUTPUT = _EXAMPLE_MODEL.with_name("output.onnx")
ARGUMENTS_HELP = (
    "Quoted like a shell line. <b>$Model</b> is the absolute path of the current model; "
    "<b>$Output</b> the path of the model the tool writes (asked for, or a new temporary file)."
    " A Python script: the interpreter as application, the script as first argument."
)


def _buddy(text: str, field: QWidget) -> QLabel:
    """A form label whose mnemonic focuses ``field`` (a row of several widgets has none)."""
    label = QLabel(text)
    label.setBuddy(field)
    return label


class ToolEditDialog(QDialog):
    """Name (unique, required), Application (checked executable), Arguments and the two
    output options. :meth:`tool` is the result once accepted."""

    def __init__(
        self,
        tool: CustomTool | None,
        others: list[CustomTool],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.others = others
        self.setWindowTitle("Edit Custom Tool" if tool else "New Custom Tool")
        self.setMinimumWidth(640)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        form = QFormLayout()

        self.name = QLineEdit(tool.name if tool else "")
        self.name.setPlaceholderText("shown in Tools > User")
        form.addRow("&Name:", self.name)

        self.application = QLineEdit(tool.application if tool else "")
        self.application.setPlaceholderText("the program to run")
        self.browse = QPushButton("Browse…")
        self.browse.clicked.connect(self._browse)
        self.use_python = QPushButton("Use Python")
        self.use_python.setToolTip(f"Run with this interpreter: {sys.executable}")
        self.use_python.clicked.connect(lambda: self.application.setText(sys.executable))
        row = QHBoxLayout()
        row.addWidget(self.application, 1)
        row.addWidget(self.browse)
        row.addWidget(self.use_python)
        form.addRow(_buddy("&Application:", self.application), row)
        self.app_status = QLabel()
        form.addRow("", self.app_status)

        self.arguments = QLineEdit(tool.arguments if tool else "")
        self.arguments.setFont(mono)
        self.arguments.setPlaceholderText("script.py $Model $Output")
        insert = QHBoxLayout()
        insert.addWidget(self.arguments, 1)
        self.insert_buttons: dict[str, QPushButton] = {}
        for word in ("$Model", "$Output"):
            button = QPushButton(word)
            button.setToolTip(f"Insert {word} at the cursor")
            button.clicked.connect(lambda _c=False, w=word: self._insert(w))
            insert.addWidget(button)
            self.insert_buttons[word] = button
        form.addRow(_buddy("A&rguments:", self.arguments), insert)
        help_label = QLabel(ARGUMENTS_HELP)
        help_label.setWordWrap(True)
        help_label.setMinimumWidth(480)  # a wrapped label in a form needs a width to size by
        help_label.setStyleSheet("color:#555555;")
        form.addRow("", help_label)
        self.preview = QLabel()
        self.preview.setWordWrap(True)
        self.preview.setMinimumWidth(480)
        self.preview.setFont(mono)
        self.preview.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow("Runs:", self.preview)
        self.shell_note = QLabel()
        self.shell_note.setWordWrap(True)
        self.shell_note.setMinimumWidth(480)
        self.shell_note.setStyleSheet("color:#9a5b00;")
        self.shell_note.setVisible(False)
        form.addRow("", self.shell_note)

        self.prompt_output = QCheckBox("Prompt for model output")
        self.prompt_output.setChecked(bool(tool and tool.prompt_output))
        self.open_output = QCheckBox("Automatically open model output")
        self.open_output.setChecked(bool(tool and tool.open_output))
        form.addRow("", self.prompt_output)
        form.addRow("", self.open_output)

        self.error = ErrorLabel()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addStretch(1)  # spare height goes here, not between the rows
        layout.addWidget(buttons)

        self.application.textChanged.connect(self._refresh)
        self.arguments.textChanged.connect(self._refresh)
        self._refresh()
        self.arguments.setCursorPosition(0)
        self.application.setCursorPosition(0)

    def tool(self) -> CustomTool:
        return CustomTool(
            self.name.text().strip(),
            self.application.text().strip(),
            self.arguments.text().strip(),
            self.prompt_output.isChecked(),
            self.open_output.isChecked(),
        )

    def choose_application(self) -> str | None:
        """Ask for the program (tests replace this)."""
        name, _ = QFileDialog.getOpenFileName(self, "Choose Application", self.application.text())
        return name or None

    def _browse(self) -> None:
        chosen = self.choose_application()
        if chosen:
            self.application.setText(chosen)

    def _insert(self, word: str) -> None:
        self.arguments.insert(word if self.arguments.text().endswith(" ") else f" {word}")
        self.arguments.setFocus()

    def _refresh(self) -> None:
        app = self.application.text().strip()
        problem = check_application(app) if app else None
        if not app:
            self.app_status.setText("")
        elif problem:
            self.app_status.setText(f"✗ {problem}")
            self.app_status.setStyleSheet(f"color:{_RED};")
        else:
            self.app_status.setText("✓ executable")
            self.app_status.setStyleSheet(f"color:{_GREEN};")
        tool = self.tool()
        try:
            argv = expand_arguments(tool.arguments, _EXAMPLE_MODEL, _EXAMPLE_OUTPUT, app)
        except ToolError as exc:
            self.preview.setText(str(exc))
            self.preview.setStyleSheet(f"color:{_RED};")
        else:
            self.preview.setText(command_line([app or "<application>", *argv]))
            self.preview.setStyleSheet("")
        warning = shell_warning(tool)
        self.shell_note.setText(f"⚠ {warning}" if warning else "")
        self.shell_note.setVisible(warning is not None)
        for box in (self.prompt_output, self.open_output):
            box.setEnabled(tool.uses_output)
            box.setToolTip("" if tool.uses_output else "Needs $Output in the arguments")

    def accept(self) -> None:
        try:
            validate_tool(self.tool(), self.others)
        except ToolError as exc:
            self.error.setText(str(exc))
            return
        super().accept()


class CustomToolsDialog(QDialog):
    """The list of tools; selecting one shows its application and arguments below."""

    toolsChanged = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Custom Tools")
        self.resize(640, 420)
        self.tools: list[CustomTool] = []
        self.list = QListWidget()
        self.list.currentRowChanged.connect(self._show_details)
        self.list.itemDoubleClicked.connect(lambda _item: self.edit())
        self.new_button = QPushButton("&New…")
        self.edit_button = QPushButton("&Edit…")
        self.delete_button = QPushButton("&Delete")
        self.new_button.clicked.connect(self.new)
        self.edit_button.clicked.connect(self.edit)
        self.delete_button.clicked.connect(self.delete)
        side = QVBoxLayout()
        for button in (self.new_button, self.edit_button, self.delete_button):
            side.addWidget(button)
        side.addStretch(1)
        top = QHBoxLayout()
        top.addWidget(self.list, 1)
        top.addLayout(side)

        details = QGroupBox("Selected tool")
        form = QFormLayout(details)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.app_label = QLabel()
        self.args_label = QLabel()
        self.options_label = QLabel()
        for label in (self.app_label, self.args_label):
            label.setFont(mono)
        for label in (self.app_label, self.args_label, self.options_label):
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow("Application:", self.app_label)
        form.addRow("Arguments:", self.args_label)
        form.addRow("Output:", self.options_label)

        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet(f"color:{_RED};")
        self.message.setVisible(False)
        where = QLabel(f"Saved in {tools_path()}; run them from Tools > User.")
        where.setStyleSheet("color:#555555;")
        where.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addLayout(top, 1)
        layout.addWidget(details)
        layout.addWidget(self.message)
        layout.addWidget(where)
        layout.addWidget(buttons)
        self.reload()

    # --- data ------------------------------------------------------------------------------
    def reload(self) -> None:
        """Read the tool file again; a broken file is reported and locks editing (so it is
        not overwritten)."""
        try:
            self.tools = load_tools()
        except ToolError as exc:
            self.tools = []
            self._report(str(exc))
            self.new_button.setEnabled(False)
        self._fill()

    def _fill(self, select: str | None = None) -> None:
        self.list.clear()
        for tool in self.tools:
            self.list.addItem(QListWidgetItem(tool.name))
        names = [t.name for t in self.tools]
        row = names.index(select) if select in names else (0 if names else -1)
        self.list.setCurrentRow(row)
        self._show_details(row)

    def _save(self, tools: list[CustomTool], select: str | None) -> None:
        try:
            save_tools(tools)
        except ToolError as exc:
            self._report(str(exc))
            return
        self.message.setVisible(False)
        self.tools = tools
        self._fill(select)
        self.toolsChanged.emit()

    def _report(self, text: str) -> None:
        self.message.setText(text)
        self.message.setVisible(True)

    def selected(self) -> CustomTool | None:
        row = self.list.currentRow()
        return self.tools[row] if 0 <= row < len(self.tools) else None

    def _show_details(self, row: int) -> None:
        tool = self.tools[row] if 0 <= row < len(self.tools) else None
        self.edit_button.setEnabled(tool is not None)
        self.delete_button.setEnabled(tool is not None)
        if tool is None:
            self.app_label.setText("—")
            self.args_label.setText("—")
            self.options_label.setText("—")
            return
        self.app_label.setText(tool.application)
        self.args_label.setText(tool.arguments or "(none)")
        if not tool.uses_output:
            options = "does not write a model ($Output not used)"
        else:
            where = "asks where to write it" if tool.prompt_output else "a new temporary file"
            opens = "opened afterwards" if tool.open_output else "not opened"
            options = f"{where}; {opens}"
        self.options_label.setText(options)

    # --- actions ---------------------------------------------------------------------------
    def edit_tool(self, tool: CustomTool | None, others: list[CustomTool]) -> CustomTool | None:
        """Show the tool dialog; the edited tool, or None if cancelled (tests replace this)."""
        dialog = ToolEditDialog(tool, others, self)
        return dialog.tool() if dialog.exec() == QDialog.DialogCode.Accepted else None

    def confirm_delete(self, tool: CustomTool) -> bool:
        answer = QMessageBox.question(self, "Delete Tool", f"Delete the tool {tool.name!r}?")
        return answer == QMessageBox.StandardButton.Yes

    def new(self) -> None:
        tool = self.edit_tool(None, list(self.tools))
        if tool is not None:
            self._save([*self.tools, tool], tool.name)

    def edit(self) -> None:
        current = self.selected()
        if current is None:
            return
        others = [t for t in self.tools if t is not current]
        tool = self.edit_tool(current, others)
        if tool is not None:
            self._save([tool if t is current else t for t in self.tools], tool.name)

    def delete(self) -> None:
        current = self.selected()
        if current is not None and self.confirm_delete(current):
            self._save([t for t in self.tools if t is not current], None)
