"""File > Compare Models…: pick two model files (A defaults to the open document's), diff
them off the GUI thread and open the Compare view (SPEC B-2)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from designer.ui.diff import last_step
from designer.ui.jobs import Job, start_job_with
from designer.ui.widgets.error_label import ErrorLabel

if TYPE_CHECKING:
    import onnx

    from designer.core.diff import ModelDiff
    from designer.ui.main_window import MainWindow

MODEL_FILTER = "ONNX models (*.onnx);;All files (*)"
Loaded = tuple["ModelDiff", "onnx.ModelProto", "onnx.ModelProto"]


def load_and_diff(a: Path, b: Path) -> Loaded:
    """Read both files and diff them (plain data; runs on the thread pool)."""
    from designer.core.diff import diff_models
    from designer.core.io import read_model

    ma, mb = read_model(a), read_model(b)
    return diff_models(ma, mb, a.parent, b.parent, a_label=str(a), b_label=str(b)), ma, mb


class CompareModelsDialog(QDialog):
    """Two file fields (A before, B after), Compare and Close; problems show inline."""

    def __init__(self, window: MainWindow, parent: QWidget | None = None) -> None:
        super().__init__(parent or window)
        self.window_ = window
        self.job: Job | None = None
        self.dropped = False  # closed while comparing: the result is not shown
        self.setWindowTitle("Compare Models")
        self.setMinimumWidth(620)
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Lists nodes added, removed and changed (matched by name, then by structure), "
            "attributes, initializers, inputs/outputs, opsets and metadata, and shows both "
            "models side by side."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        form = QFormLayout()
        tab = window.tab()
        start = tab.session.root().doc.path if tab is not None else None
        self.a = QLineEdit(str(start) if start is not None else "")
        self.b = QLineEdit()
        for label, edit in (("A (before):", self.a), ("B (after):", self.b)):
            row = QHBoxLayout()
            row.addWidget(edit, 1)
            browse = QPushButton("Browse…")
            browse.setAutoDefault(False)
            browse.clicked.connect(lambda _c=False, e=edit: self._browse(e))
            row.addWidget(browse)
            form.addRow(label, row)
        layout.addLayout(form)
        self.error = ErrorLabel()
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.compare = buttons.addButton("Compare", QDialogButtonBox.ButtonRole.AcceptRole)
        self.compare.setDefault(True)
        self.compare.clicked.connect(self.run)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def choose_file(self, title: str, start: str) -> str:
        """Ask for a model file (a seam for tests)."""
        name, _ = QFileDialog.getOpenFileName(self, title, start, MODEL_FILTER)
        return name

    def _browse(self, edit: QLineEdit) -> None:
        start = edit.text() or self.a.text() or str(Path.cwd())
        chosen = self.choose_file("Model to Compare", start)
        if chosen:
            edit.setText(chosen)

    def problem(self) -> str | None:
        for label, edit in (("A", self.a), ("B", self.b)):
            text = edit.text().strip()
            if not text:
                return f"Choose model {label}."
            if not Path(text).expanduser().is_file():
                return f"Model {label}: {text} is not a file."
        return None

    def show_error(self, text: str) -> None:
        self.error.setText(text)

    def run(self) -> Job | None:
        """Validate, then diff off the GUI thread; the view opens when done."""
        if self.job is not None:
            return None
        problem = self.problem()
        if problem is not None:
            self.show_error(problem)
            return None
        self.show_error("")
        a = Path(self.a.text().strip()).expanduser()
        b = Path(self.b.text().strip()).expanduser()
        self.compare.setEnabled(False)
        self.setCursor(Qt.CursorShape.BusyCursor)

        def done(result: Loaded) -> None:
            self.job = None
            if self.dropped:  # the user closed the dialog: no tab takes the focus later
                return
            diff, ma, mb = result
            from designer.ui.diff import open_diff_tab

            open_diff_tab(
                self.window_,
                diff,
                (str(a), ma, a.parent),
                (str(b), mb, b.parent),
                f"Compare: {a.name} ↔ {b.name}",
            )
            self.accept()

        def failed(message: str) -> None:
            self.job = None
            self.compare.setEnabled(True)
            self.unsetCursor()
            self.show_error(message)

        self.job = start_job_with(
            lambda _p, _c: load_and_diff(a, b), self, finished=done, failed=failed
        )
        return self.job

    def reject(self) -> None:
        """Close; a comparison under way is cancelled (its tab opened a second later)."""
        if self.job is not None:
            self.dropped = True
            self.job.cancel()
        super().reject()


def open_compare_dialog(window: MainWindow) -> CompareModelsDialog:
    dialog = CompareModelsDialog(window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog


def install(window: MainWindow) -> None:
    menu = window.menus["File"]
    action = QAction("Compare &Models…", window)
    action.setStatusTip("Diff two models and show them side by side with their changes")
    action.setToolTip(action.statusTip())
    action.triggered.connect(lambda _c=False: open_compare_dialog(window))
    quit_action = window.actions_by_name.get("quit")
    actions = menu.actions()
    if quit_action is not None and quit_action in actions:
        at = actions.index(quit_action)
        before = actions[at - 1] if at > 0 and actions[at - 1].isSeparator() else quit_action
        menu.insertAction(before, action)
    else:
        menu.addAction(action)
    window.actions_by_name["compare_models"] = action
    last_step.install(window)  # Edit > Show Changes of Last Step
