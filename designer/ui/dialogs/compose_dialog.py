"""File > Compose Models… (issue 17, point 5): pick models A and B, wire outputs of A to
inputs of B in a table that shows both types and flags mismatches, set name prefixes and
the output file; Compose checks and writes the result (:mod:`designer.core.compose`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import onnx
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from designer.core.compose import compose_files
from designer.core.compose_ports import (
    Port,
    collisions,
    graph_inputs,
    graph_outputs,
    pair_problem,
    suggest_map,
)
from designer.core.errors import DesignerError
from designer.core.io import read_model
from designer.ui.widgets.error_label import ErrorLabel

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow

MODEL_FILTER = "ONNX models (*.onnx);;All files (*)"
NOT_CONNECTED = "— not connected (stays an input) —"
COLUMNS = ("Input of B", "Type in B", "Fed by output of A", "Type in A", "Check")
_BAD = QColor("#b00020")
_GOOD = QColor("#1b7f3b")


class ComposeDialog(QDialog):
    """Composes on Compose; the dialog stays open with the reason when that fails.

    ``status`` shows the success message; ``open_model`` opens the written file when
    "Open the composed model" is checked."""

    def __init__(
        self,
        first: Path | None = None,
        status: Callable[[str], object] | None = None,
        open_model: Callable[[Path], object] | None = None,
        parent: QWidget | None = None,
        output_problem: Callable[[Path], str | None] | None = None,
        unsaved: Callable[[Path], str | None] | None = None,
    ) -> None:
        super().__init__(parent)
        self.status = status
        self.open_model = open_model
        #: why a path must not be written (a model open in a tab), or None
        self.output_problem = output_problem
        #: the title of the tab holding unsaved changes of a model file, or None
        self.unsaved = unsaved
        self.models: dict[str, onnx.ModelProto | None] = {"A": None, "B": None}
        self.written: Path | None = None
        self.summary: list[str] = []
        self._loaded: dict[str, str] = {}  # the path text each model was read from
        self._edited: set[str] = set()  # fields the user typed in (not filled in for them)
        self.setWindowTitle("Compose Models")
        form = QFormLayout(self)
        self.path_a, row_a = self._file_row("A")
        self.path_b, row_b = self._file_row("B")
        form.addRow("Model A:", row_a)
        form.addRow("Model B (fed by A):", row_b)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        form.addRow(self.table)
        self.prefix_a, self.prefix_b = QLineEdit(), QLineEdit()
        for key, edit in (("prefix_a", self.prefix_a), ("prefix_b", self.prefix_b)):
            edit.setPlaceholderText("none")
            edit.textEdited.connect(lambda _t, k=key: self._typed(k))
        prefixes = QHBoxLayout()
        prefixes.addWidget(QLabel("A:"))
        prefixes.addWidget(self.prefix_a, 1)
        prefixes.addWidget(QLabel("B:"))
        prefixes.addWidget(self.prefix_b, 1)
        form.addRow("Name prefixes:", prefixes)
        self.names = QLabel()
        self.names.setWordWrap(True)
        form.addRow(self.names)
        self.output, row_out = self._file_row("output")
        form.addRow("Output file:", row_out)
        self.open_after = QCheckBox("Open the composed model")
        self.open_after.setChecked(open_model is not None)
        self.open_after.setEnabled(open_model is not None)
        form.addRow(self.open_after)
        self.error = ErrorLabel()
        form.addRow(self.error)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.compose_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.compose_button.setText("Compose")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self.setMinimumSize(760, 520)
        if first is not None:
            self.set_model("A", first)
        self._refresh()

    # --- files ---------------------------------------------------------------------------
    def _file_row(self, key: str) -> tuple[QLineEdit, QHBoxLayout]:
        edit = QLineEdit()
        edit.textEdited.connect(lambda _t: self._typed(key))
        if key != "output":  # a bound method: disconnected when the dialog is deleted
            edit.editingFinished.connect(self._finished_a if key == "A" else self._finished_b)
        browse = QPushButton("Browse…")
        browse.clicked.connect(lambda _c=False: self._browse(key, edit))
        row = QHBoxLayout()
        row.addWidget(edit, 1)
        row.addWidget(browse)
        return edit, row

    def _finished_a(self) -> None:
        if self.path_a.text().strip() != self._loaded.get("A"):
            self.set_model("A", Path(self.path_a.text().strip()))

    def _finished_b(self) -> None:
        if self.path_b.text().strip() != self._loaded.get("B"):
            self.set_model("B", Path(self.path_b.text().strip()))

    def _typed(self, key: str) -> None:
        self._edited.add(key)
        if key.startswith("prefix"):
            self._refresh()

    def _browse(self, key: str, edit: QLineEdit) -> None:
        if key == "output":
            chosen, _f = QFileDialog.getSaveFileName(
                self, "Composed model", edit.text(), MODEL_FILTER
            )
            if chosen:
                edit.setText(chosen if Path(chosen).suffix else chosen + ".onnx")
                self._edited.add("output")
            return
        chosen, _f = QFileDialog.getOpenFileName(self, f"Model {key}", edit.text(), MODEL_FILTER)
        if chosen:
            self.set_model(key, Path(chosen))

    def set_model(self, key: str, path: Path) -> None:
        """Read model ``key`` ("A" or "B") from ``path`` (weights stay on disk)."""
        edit = self.path_a if key == "A" else self.path_b
        if edit.text() != str(path):
            edit.setText(str(path))
        self._loaded[key] = edit.text().strip()
        if not str(path) or str(path) == ".":
            self.models[key] = None
        else:
            try:
                self.models[key] = read_model(path)
                self.error.setText("")
            except DesignerError as exc:
                self.models[key] = None
                self.error.setText(f"Model {key}: {exc}")
        self._fill_table()
        if "output" not in self._edited and self.models["A"] is not None:
            a = Path(self.path_a.text())
            stem_b = f"_{Path(self.path_b.text()).stem}" if self.models["B"] is not None else ""
            self.output.setText(str(a.with_name(f"{a.stem}{stem_b}_composed.onnx")))

    # --- the wiring table ----------------------------------------------------------------
    def _fill_table(self) -> None:
        a, b = self.models["A"], self.models["B"]
        self.table.setRowCount(0)
        if a is None or b is None:
            self._refresh()
            return
        outs = graph_outputs(a)
        guess = dict((i, o) for o, i in suggest_map(a, b))
        for row, port in enumerate(graph_inputs(b)):
            self.table.insertRow(row)
            self.table.setItem(row, 0, QTableWidgetItem(port.name))
            self.table.setItem(row, 1, QTableWidgetItem(port.text))
            combo = QComboBox()
            combo.addItem(NOT_CONNECTED, None)
            for out in outs:
                combo.addItem(out.name, out)
            if port.name in guess:
                combo.setCurrentIndex(combo.findText(guess[port.name]))
            combo.currentIndexChanged.connect(lambda _i: self._refresh())
            self.table.setCellWidget(row, 2, combo)
            self.table.setItem(row, 3, QTableWidgetItem(""))
            self.table.setItem(row, 4, QTableWidgetItem(""))
        if "prefix_a" not in self._edited and "prefix_b" not in self._edited:
            clash = collisions(a, b, self.io_map())
            self.prefix_a.setText("a/" if clash else "")
            self.prefix_b.setText("b/" if clash else "")
        self._refresh()

    def connect_pair(self, output: str, inp: str) -> None:
        """Wire output ``output`` of A to input ``inp`` of B (or disconnect with output "")."""
        for row in range(self.table.rowCount()):
            if self._item(row, 0).text() == inp:
                combo = self._combo(row)
                combo.setCurrentIndex(combo.findText(output) if output else 0)
                return
        raise KeyError(f"B has no input '{inp}'")

    def _item(self, row: int, column: int) -> QTableWidgetItem:
        item = self.table.item(row, column)
        assert item is not None
        return item

    def _combo(self, row: int) -> QComboBox:
        widget = self.table.cellWidget(row, 2)
        assert isinstance(widget, QComboBox)
        return widget

    def io_map(self) -> list[tuple[str, str]]:
        pairs = []
        for row in range(self.table.rowCount()):
            out = self._combo(row).currentData()
            if isinstance(out, Port):
                pairs.append((out.name, self._item(row, 0).text()))
        return pairs

    def problems(self) -> list[str]:
        """Why Compose is disabled, as short sentences (empty when it is not)."""
        found = []
        if self.models["A"] is None or self.models["B"] is None:
            found.append("Choose models A and B.")
        elif not self.io_map():
            found.append("Connect at least one output of A to an input of B.")
        for row in range(self.table.rowCount()):
            if self._item(row, 4).data(Qt.ItemDataRole.UserRole):
                found.append(f"Input '{self._item(row, 0).text()}': types do not fit.")
        a, b = self.models["A"], self.models["B"]
        pairs = self.io_map()
        prefixes = self.prefix_a.text(), self.prefix_b.text()
        if a is not None and b is not None and pairs and collisions(a, b, pairs, *prefixes):
            found.append("Give prefixes: both models use some of the same names.")
        if not self.output.text().strip():
            found.append("Choose the output file.")
        for key, field in (("A", self.path_a), ("B", self.path_b)):
            text = field.text().strip()
            title = self.unsaved(Path(text).expanduser()) if text and self.unsaved else None
            if title is not None:  # Compose reads the files: the tab's edits would be left out
                found.append(
                    f"Model {key} has unsaved changes in the tab {title}: Compose reads the "
                    "file, so save it first (or undo the changes) to compose what you see."
                )
        return found

    def _refresh(self) -> None:
        ins = {p.name: p for p in graph_inputs(self.models["B"])} if self.models["B"] else {}
        for row in range(self.table.rowCount()):
            out = self._combo(row).currentData()
            type_item, check = self._item(row, 3), self._item(row, 4)
            if not isinstance(out, Port):
                type_item.setText("")
                check.setText("stays an input of the result")
                check.setForeground(self.palette().placeholderText())
                check.setData(Qt.ItemDataRole.UserRole, None)
                continue
            problem = pair_problem(out, ins[self._item(row, 0).text()])
            type_item.setText(out.text)
            short = problem.split(" (")[0] if problem else ""  # the types are shown beside
            check.setText(f"✗ {short}" if problem else "✓ fits")
            check.setToolTip(problem or "")
            check.setForeground(_BAD if problem else _GOOD)
            check.setData(Qt.ItemDataRole.UserRole, problem)
        a, b = self.models["A"], self.models["B"]
        if a is not None and b is not None:
            clash = collisions(a, b, self.io_map(), self.prefix_a.text(), self.prefix_b.text())
            self.names.setStyleSheet("color:#b00020" if clash else "")
            self.names.setText(
                f"Names both models use: {'; '.join(clash[:2])}. Give prefixes."
                if clash
                else "No name is used by both models"
                + (
                    " once the prefixes are applied."
                    if self.prefix_a.text() or self.prefix_b.text()
                    else "."
                )
            )
        else:
            self.names.setText("")
        problems = self.problems()
        self.compose_button.setEnabled(not problems)
        self.compose_button.setToolTip(" ".join(problems))

    # --- composing -----------------------------------------------------------------------
    def compose(self) -> Path | None:
        """Compose and write; the path written, or None (the reason shown)."""
        problems = self.problems()
        if problems:
            self.error.setText(problems[0])
            return None
        out = Path(self.output.text().strip()).expanduser()
        problem = self.output_problem(out) if self.output_problem is not None else None
        if problem is not None:
            self.error.setText(problem)
            return None
        QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            result, _files = compose_files(
                Path(self.path_a.text().strip()),
                Path(self.path_b.text().strip()),
                out,
                self.io_map(),
                prefix_a=self.prefix_a.text(),
                prefix_b=self.prefix_b.text(),
            )
        except DesignerError as exc:
            self.error.setText(f"Cannot compose: {exc}")
            return None
        finally:
            QGuiApplication.restoreOverrideCursor()
        self.error.setText("")
        self.summary = result.notes
        return out

    def accept(self) -> None:
        path = self.compose()
        if path is None:
            return
        self.written = path
        if self.status is not None:
            self.status(f"Composed {'; '.join(self.summary)} into {path}")
        super().accept()
        if self.open_after.isChecked() and self.open_model is not None:
            self.open_model(path)


def _unsaved_title(window: MainWindow, path: Path) -> str | None:
    tab = window.unsaved_tab(path)
    return tab.session.title.rstrip("*") if tab is not None else None


def show_compose_dialog(window: MainWindow) -> ComposeDialog:
    """Open Compose Models (window-modal), model A preset to the current document's file."""
    from designer.ui.dialogs.extract_subgraph import model_path

    tab = window.tab()
    first = model_path(tab.session) if tab is not None else None
    dialog = ComposeDialog(
        first,
        status=lambda message: window.statusBar().showMessage(message, 10000),
        open_model=lambda path: window.open_files([path]),
        parent=window,
        output_problem=window.output_problem,
        unsaved=lambda path: _unsaved_title(window, path),
    )
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog
