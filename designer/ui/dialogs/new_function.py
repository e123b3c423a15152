"""The "+" dialog of the Local Functions dock (G-4): name, domain and opset imports of a new,
empty local function. The imports start as the model's own, so that the body can use every
operator the model can; unticking one keeps the function from depending on that domain."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from designer.core.names import identifier_problem, unique_name
from designer.ui.widgets.error_label import ErrorLabel

DEFAULT_DOMAIN = "local"


def domain_problem(domain: str) -> str | None:
    """Why ``domain`` cannot name a function domain: dot-separated identifiers, not the
    standard ONNX domain (a local function must not shadow a standard operator)."""
    if not domain:
        return "a function needs a domain (e.g. 'local'); the default domain is ONNX's own"
    if domain in ("ai.onnx", "ai.onnx.ml"):
        return f"'{domain}' is a standard ONNX domain; choose another (e.g. 'local')"
    for part in domain.split("."):
        problem = identifier_problem(part)
        if problem is not None:
            return f"domain '{domain}': {problem}"
    return None


class NewFunctionDialog(QDialog):
    """Asks for a new function's name, domain and opset imports; errors show inline.

    After ``exec()`` returns Accepted, :attr:`name`, :attr:`domain` and
    :meth:`opset_imports` hold what was chosen (the dock then pushes AddFunction).
    """

    def __init__(
        self,
        model_opsets: Mapping[str, int],
        taken: set[tuple[str, str]],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("New Local Function")
        self.taken = taken
        names_in_domain = {n for d, n in taken if d == DEFAULT_DOMAIN}
        self.name_edit = QLineEdit(unique_name("Function", names_in_domain))
        self.domain_edit = QLineEdit(DEFAULT_DOMAIN)
        self.domain_edit.setToolTip(
            "The operator domain call sites use; it is added to the model's opset imports"
        )
        self.imports = QTableWidget(0, 2)
        self.imports.setHorizontalHeaderLabels(["Domain", "Version"])
        self.imports.verticalHeader().setVisible(False)
        self.imports.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        header = self.imports.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        for domain, version in sorted(model_opsets.items()):
            self._add_import(domain, version)
        self.imports.setMinimumHeight(110)
        self.error = ErrorLabel()
        form = QFormLayout(self)
        form.addRow("Name:", self.name_edit)
        form.addRow("Domain:", self.domain_edit)
        hint = QLabel("Opset imports of the body (ticked ones are used):")
        hint.setWordWrap(True)
        form.addRow(hint)
        form.addRow(self.imports)
        form.addRow(self.error)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.resize(380, 340)

    def _add_import(self, domain: str, version: int) -> None:
        row = self.imports.rowCount()
        self.imports.insertRow(row)
        item = QTableWidgetItem(domain or "ai.onnx (default)")
        item.setData(Qt.ItemDataRole.UserRole, domain)
        item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked)
        self.imports.setItem(row, 0, item)
        spin = QSpinBox()
        spin.setRange(1, 10_000)
        spin.setValue(version)
        self.imports.setCellWidget(row, 1, spin)

    @property
    def name(self) -> str:
        return self.name_edit.text().strip()

    @property
    def domain(self) -> str:
        return self.domain_edit.text().strip()

    def opset_imports(self) -> dict[str, int]:
        """The ticked imports, domain → version."""
        chosen: dict[str, int] = {}
        for row in range(self.imports.rowCount()):
            item = self.imports.item(row, 0)
            spin = self.imports.cellWidget(row, 1)
            if item is None or not isinstance(spin, QSpinBox):
                continue
            if item.checkState() == Qt.CheckState.Checked:
                chosen[str(item.data(Qt.ItemDataRole.UserRole))] = spin.value()
        return chosen

    def set_import_checked(self, domain: str, on: bool) -> None:
        for row in range(self.imports.rowCount()):
            item = self.imports.item(row, 0)
            if item is not None and item.data(Qt.ItemDataRole.UserRole) == domain:
                item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def problem(self) -> str | None:
        """What keeps the dialog from being accepted, or None."""
        name_problem = identifier_problem(self.name)
        if name_problem is not None:
            return f"invalid function name: {name_problem}"
        domain_error = domain_problem(self.domain)
        if domain_error is not None:
            return domain_error
        if (self.domain, self.name) in self.taken:
            return f"a local function {self.domain}:{self.name} already exists"
        return None

    def show_error(self, text: str) -> None:
        self.error.setText(text)

    def accept(self) -> None:
        problem = self.problem()
        if problem is not None:
            self.show_error(problem)
            return
        super().accept()
