"""Tools > Extract Model Subgraph (SPEC G-3): pick a subgraph of the current document (parent
kind, parent, subgraph — only what this document has, each list following the previous
choice) and write it as a standalone model that passes onnx's full check."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QWidget,
)

from designer.core.errors import DesignerError
from designer.core.extract import ExtractChoice, extract_choices, extract_scope
from designer.core.io import write_model
from designer.core.io.companion import scope_label
from designer.core.names import sanitize_identifier
from designer.core.scope import ScopeId
from designer.ui.session import DocumentSession
from designer.ui.widgets.error_label import ErrorLabel

KINDS = (("operator", "Operator"), ("function", "Local function"))
MODEL_FILTER = "ONNX models (*.onnx);;All files (*)"


def model_path(session: DocumentSession) -> Path | None:
    """The file of the model ``session`` edits: a subgraph or function tab's working copy
    has none itself, its topmost parent session does."""
    while (parent := getattr(session, "parent_session", None)) is not None:
        session = parent
    return session.doc.path


def default_output(session: DocumentSession, choice: ExtractChoice) -> Path:
    """``<model>_<parent>_<subgraph>.onnx`` beside the model (home folder when unsaved)."""
    path = model_path(session)
    folder = path.parent if path is not None else Path.home()
    stem = path.stem if path is not None else "model"
    subgraph = "" if choice.subgraph == "(body)" else f"_{choice.subgraph}"
    return folder / f"{stem}_{sanitize_identifier(choice.parent + subgraph)}.onnx"


class ExtractSubgraphDialog(QDialog):
    """Extracts on Extract; the dialog stays open with the reason when it fails.

    ``status`` shows the success message (the main window's status bar); ``open_model`` opens
    the written file when "Open the extracted model" is checked."""

    def __init__(
        self,
        session: DocumentSession,
        status: Callable[[str], object] | None = None,
        open_model: Callable[[Path], object] | None = None,
        parent: QWidget | None = None,
        output_problem: Callable[[Path], str | None] | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.status = status
        self.open_model = open_model
        #: why a path must not be written (the window's own files and open tabs), or None
        self.output_problem = output_problem
        #: called after a successful extraction with (what, scope id, written path)
        self.extracted: Callable[[str, ScopeId, Path], object] | None = None
        self.choices = extract_choices(session.doc)
        self.written: Path | None = None
        self._path_edited = False
        self.setWindowTitle("Extract Model Subgraph")
        form = QFormLayout(self)
        self.kind = QComboBox()
        for kind, text in KINDS:
            if any(c.kind == kind for c in self.choices):
                self.kind.addItem(text, kind)
        self.parent_name = QComboBox()
        self.subgraph = QComboBox()
        form.addRow("Parent kind:", self.kind)
        form.addRow("Parent:", self.parent_name)
        form.addRow("Subgraph:", self.subgraph)
        self.path = QLineEdit()
        self.path.textEdited.connect(self._path_typed)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self.browse)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        form.addRow("Output file:", row)
        self.open_after = QCheckBox("Open the extracted model")
        self.open_after.setChecked(True)
        self.open_after.setEnabled(open_model is not None)
        form.addRow(self.open_after)
        self.error = ErrorLabel()
        form.addRow(self.error)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.extract_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.extract_button.setText("Extract")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self.setMinimumWidth(520)
        self.kind.currentIndexChanged.connect(lambda _i: self._fill_parents())
        self.parent_name.currentIndexChanged.connect(lambda _i: self._fill_subgraphs())
        self.subgraph.currentIndexChanged.connect(lambda _i: self._chosen())
        self._fill_parents()
        if not self.choices:
            self.error.setText("This model has no subgraphs or local functions to extract.")
            self.extract_button.setEnabled(False)

    # --- the dependent lists -------------------------------------------------------------
    def _fill_parents(self) -> None:
        kind = self.kind.currentData()
        parents = list(dict.fromkeys(c.parent for c in self.choices if c.kind == kind))
        self.parent_name.blockSignals(True)
        self.parent_name.clear()
        self.parent_name.addItems(parents)
        self.parent_name.blockSignals(False)
        self._fill_subgraphs()

    def _fill_subgraphs(self) -> None:
        kind, parent = self.kind.currentData(), self.parent_name.currentText()
        matching = [c for c in self.choices if c.kind == kind and c.parent == parent]
        labels = [c.subgraph for c in matching]
        self.subgraph.blockSignals(True)
        self.subgraph.clear()
        for choice in matching:
            label = choice.subgraph
            if labels.count(label) > 1:  # same node name in two scopes: say where
                label += f"  ({scope_label(self.session.doc, choice.scope_id)})"
            self.subgraph.addItem(label, choice)
        self.subgraph.blockSignals(False)
        self._chosen()

    def _chosen(self) -> None:
        choice = self.choice()
        if choice is not None and not self._path_edited:
            self.path.setText(str(default_output(self.session, choice)))

    def _path_typed(self, _text: str) -> None:
        self._path_edited = True

    def choice(self) -> ExtractChoice | None:
        data = self.subgraph.currentData()
        return data if isinstance(data, ExtractChoice) else None

    def select(self, kind: str, parent: str, subgraph: str) -> None:
        """Choose an entry by its texts (used by the Local Functions dock and tests)."""
        self.kind.setCurrentIndex(self.kind.findData(kind))
        self.parent_name.setCurrentIndex(self.parent_name.findText(parent))
        for i in range(self.subgraph.count()):
            data = self.subgraph.itemData(i)
            if isinstance(data, ExtractChoice) and data.subgraph == subgraph:
                self.subgraph.setCurrentIndex(i)
                return
        raise KeyError(f"no subgraph {kind} {parent} {subgraph} in this model")

    def browse(self) -> None:
        chosen, _filter = QFileDialog.getSaveFileName(
            self, "Extract Model Subgraph", self.path.text(), MODEL_FILTER
        )
        if chosen:
            if not Path(chosen).suffix:
                chosen += ".onnx"
            self.path.setText(chosen)
            self._path_edited = True

    # --- extracting ----------------------------------------------------------------------
    def extract(self) -> Path | None:
        """Extract and save the chosen subgraph; the path written, or None (error shown)."""
        choice = self.choice()
        text = self.path.text().strip()
        if choice is None:
            self.error.setText("Choose a subgraph to extract.")
            return None
        if not text:
            self.error.setText("Choose the file to write.")
            return None
        path = Path(text).expanduser()
        edited = model_path(self.session)
        if edited is not None and path.resolve() == edited.resolve():
            self.error.setText("Choose another file: this is the model being edited.")
            return None
        problem = self.output_problem(path) if self.output_problem is not None else None
        if problem is not None:
            self.error.setText(problem)
            return None
        doc = self.session.doc
        source_dir = doc.base_dir  # where the model's external data files are
        QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            model = extract_scope(doc, choice.scope_id)
            write_model(model, path, source_dir, stamps=doc.data_stamps)
        except DesignerError as exc:
            self.error.setText(f"Cannot extract {choice.parent} ▸ {choice.subgraph}: {exc}")
            return None
        finally:
            QGuiApplication.restoreOverrideCursor()
        self.error.setText("")
        return path

    def accept(self) -> None:
        path = self.extract()
        if path is None:
            return
        self.written = path
        choice = self.choice()
        assert choice is not None
        what = f"extract {choice.parent} ▸ {choice.subgraph}"
        if self.extracted is not None:
            self.extracted(what, choice.scope_id, path)
        if self.status is not None:
            self.status(
                f"Extracted {choice.parent} ▸ {choice.subgraph} to {path} "
                "(Edit > Show Changes of Last Step compares it with the subgraph in the model)"
            )
        super().accept()
        if self.open_after.isChecked() and self.open_model is not None:
            self.open_model(path)
