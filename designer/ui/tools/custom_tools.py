"""Tools > Custom Tools… and Tools > User (U-1, U-2): manage user tools and run one on the
focused document without blocking the GUI."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMessageBox

from designer.activities.custom_tools import (
    CustomTool,
    ToolError,
    ToolInvocation,
    ToolResult,
    check_output,
    load_tools,
    plugin_tools,
    prepare,
)
from designer.core.errors import DesignerError
from designer.ui.dialogs.custom_tools_dialog import CustomToolsDialog
from designer.ui.dialogs.tool_run_dialog import ToolRunDialog

if TYPE_CHECKING:
    from designer.ui.document_tab import DocumentTab
    from designer.ui.main_window import MainWindow

MODEL_FILTER = "ONNX models (*.onnx);;All files (*)"


class CustomToolsPlugin(QObject):
    """Owns the two menu entries and the run dialogs of one window."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.setObjectName("custom_tools")
        self.window = window
        self.runs: list[ToolRunDialog] = []
        tools_menu = window.menus["Tools"]
        tools_menu.addSeparator()
        self.manage_action = QAction("&Custom Tools…", window)
        self.manage_action.triggered.connect(lambda _c=False: self.manage())
        tools_menu.addAction(self.manage_action)
        self.user_menu = tools_menu.addMenu("&User")
        self.user_menu.aboutToShow.connect(self.rebuild_menu)  # picks up `tool add` too
        self.rebuild_menu()
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.cancel_all)

    # --- menu ------------------------------------------------------------------------------
    def load(self) -> list[CustomTool]:
        try:
            return load_tools()
        except ToolError as exc:
            self.window.statusBar().showMessage(str(exc), 10000)
            return []

    def rebuild_menu(self) -> None:
        """One action per tool (enabled when a document is open)."""
        self.user_menu.clear()
        tools = self.load()
        has_doc = self.window.tab() is not None
        taken = {t.name.casefold() for t in tools}
        extra = [t for t in plugin_tools() if t.name.casefold() not in taken]
        for tool in [*tools, *extra]:
            if tool is (extra[0] if extra else None) and tools:
                self.user_menu.addSeparator()  # the plug-ins' tools follow the user's own
            action = self.user_menu.addAction(tool.name.replace("&", "&&"))
            action.setEnabled(has_doc)
            source = " (from a plug-in)" if tool in extra else ""
            action.setToolTip(f"{tool.application} {tool.arguments}{source}")
            action.triggered.connect(lambda _c=False, t=tool: self.run(t))
        if not tools and not extra:
            empty = self.user_menu.addAction("No tools yet — add them in Custom Tools…")
            empty.setEnabled(False)

    def manage(self) -> None:
        dialog = self.manager_dialog()
        dialog.exec()
        dialog.deleteLater()

    def manager_dialog(self) -> CustomToolsDialog:
        dialog = CustomToolsDialog(self.window)
        dialog.toolsChanged.connect(self.rebuild_menu)
        return dialog

    # --- questions (tests replace these) ---------------------------------------------------
    def ask_unsaved(self, tab: DocumentTab) -> str:
        """'save', 'copy' (run on a temporary copy) or 'cancel' for a modified document."""
        box = QMessageBox(self.window)
        box.setWindowTitle("Unsaved changes")
        box.setIcon(QMessageBox.Icon.Question)
        box.setText(f"{tab.session.title.rstrip('*')} has unsaved changes.")
        box.setInformativeText(
            "Save them before running the tool, or run it on a temporary copy of the model "
            "as it is now?"
        )
        save = box.addButton("Save and Run", QMessageBox.ButtonRole.AcceptRole)
        copy = box.addButton("Run on a Copy", QMessageBox.ButtonRole.ActionRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        clicked = box.clickedButton()
        return "save" if clicked is save else "copy" if clicked is copy else "cancel"

    def ask_output_path(self, tool: CustomTool, model: Path) -> Path | None:
        start = str(model.with_name(f"{model.stem}-{tool.name}.onnx".replace(" ", "_")))
        name, _ = QFileDialog.getSaveFileName(
            self.window, f"Model Output of {tool.name}", start, MODEL_FILTER
        )
        return Path(name) if name else None

    # --- running ---------------------------------------------------------------------------
    def run(self, tool: CustomTool) -> ToolRunDialog | None:
        """Run ``tool`` on the focused document; the run dialog, or None when nothing ran
        (no document, the user cancelled, or the model could not be written)."""
        tab = self.window.tab()
        if tab is None:
            self.window.show_error("Cannot run tool", "Open a model first; tools run on it.")
            return None
        model, copy_dir = self._model_path(tab)
        if model is None:
            return None
        output: Path | None = None
        if tool.uses_output and tool.prompt_output:
            output = self.ask_output_path(tool, model)
            if output is None:
                _remove(copy_dir)
                return None
        try:
            invocation = prepare(tool, model, output)
        except ToolError as exc:
            _remove(copy_dir)
            self.window.show_error(f"Cannot run {tool.name}", str(exc))
            return None
        note = "a temporary copy with the unsaved changes" if copy_dir is not None else ""
        dialog = ToolRunDialog(invocation, note, self.window)
        dialog.finished_run.connect(
            lambda result, d=dialog: self._finished(d, invocation, result, copy_dir)
        )
        dialog.finished.connect(lambda _code, d=dialog: self._forget(d))
        self.runs.append(dialog)
        dialog.show()
        dialog.start()
        return dialog

    def _model_path(self, tab: DocumentTab) -> tuple[Path | None, Path | None]:
        """The file the tool reads, and the temporary folder holding it when it is a copy."""
        session = tab.session
        if not session.modified and session.doc.path is not None:
            return session.doc.path.absolute(), None
        answer = self.ask_unsaved(tab)
        if answer == "save":
            if not self.window.save(tab) or session.doc.path is None:
                return None, None
            return session.doc.path.absolute(), None
        if answer != "copy":
            return None, None
        from designer.core.io import write_model

        folder = Path(tempfile.mkdtemp(prefix="onnx-designer-input-"))
        name = session.doc.path.name if session.doc.path is not None else "untitled.onnx"
        try:
            write_model(
                session.doc.model,
                folder / name,
                session.doc.base_dir,
                stamps=session.doc.data_stamps,
            )
        except DesignerError as exc:
            _remove(folder)
            self.window.show_error("Cannot write a temporary copy", str(exc))
            return None, None
        return folder / name, folder

    def _finished(
        self,
        dialog: ToolRunDialog,
        invocation: ToolInvocation,
        result: ToolResult,
        copy_dir: Path | None,
    ) -> None:
        _remove(copy_dir)
        if not result.ok or invocation.output is None:
            invocation.discard_temporary_output()
            return
        try:
            output = check_output(invocation)
        except ToolError as exc:
            invocation.discard_temporary_output()
            dialog.show_outcome(str(exc), ok=False)
            self.window.statusBar().showMessage(str(exc), 10000)
            return
        if invocation.tool.open_output:
            self.window.open_files([output])
            dialog.show_outcome(f"Opened the output model {output} in a new tab.", ok=True)
        else:
            dialog.show_outcome(f"Output model: {output}", ok=True)

    def _forget(self, dialog: ToolRunDialog) -> None:
        if dialog in self.runs and not dialog.running:
            self.runs.remove(dialog)
            dialog.deleteLater()

    def cancel_all(self) -> None:
        """Cancel every running tool (the application is quitting)."""
        for dialog in list(self.runs):
            dialog.cancel()


def _remove(folder: Path | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def install(window: MainWindow) -> None:
    CustomToolsPlugin(window)
