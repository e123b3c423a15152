"""Create Subgraph (SPEC G-2): give an unset graph attribute of a node (If branches, a Loop or
Scan body, …) a new graph — the inputs and outputs its operator requires, or a copy of a
subgraph the document already has — as one undo step, and optionally open it in a tab."""

from __future__ import annotations

from collections.abc import Callable

import onnx
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QWidget,
)

from designer.core.document import Document
from designer.core.errors import DesignerError
from designer.core.names import identifier_problem, unique_name
from designer.core.scope import ScopeId
from designer.core.subgraphs import CreateSubgraph, subgraph_template
from designer.core.walk import iter_graphs
from designer.ui.session import DocumentSession
from designer.ui.widgets.error_label import ErrorLabel

OpenScope = Callable[[DocumentSession, ScopeId], object]


def scope_title(doc: Document, scope_id: ScopeId) -> str:
    """``parent ▸ node ▸ attribute`` for a subgraph (``ƒ name ▸ …`` inside a function)."""
    parts = [f"ƒ {scope_id.function[1]}" if scope_id.function else "main"]
    current = ScopeId(scope_id.function)
    for step in scope_id.steps:
        scope = doc.scope(current)
        node = scope.node(step.node_key)
        parts.append(node.name or f"{node.op_type} #{scope.index_of(step.node_key)}")
        parts.append(step.attribute if step.index < 0 else f"{step.attribute}[{step.index}]")
        current = current.child(step.node_key, step.attribute, step.index)
    return " ▸ ".join(parts)


def graph_names_in(doc: Document, scope_id: ScopeId) -> set[str]:
    """The scope's own name and the names of every graph its nodes hold (at any depth): a
    new subgraph's name must differ from all of them (as CreateSubgraph requires)."""
    scope = doc.scope(scope_id)
    return {scope.name} | {w.graph.name for w in iter_graphs(scope.proto) if w.path}


def existing_subgraphs(doc: Document) -> list[ScopeId]:
    """Every subgraph of the document (any depth, also inside functions), parents first."""
    return [scope.id for scope in doc.scopes() if scope.id.steps]


def _signature(graph: onnx.GraphProto) -> str:
    inputs = ", ".join(v.name for v in graph.input) or "none"
    outputs = ", ".join(v.name for v in graph.output) or "none"
    return f"inputs: {inputs}<br>outputs: {outputs}"


class CreateSubgraphDialog(QDialog):
    """Name (unique among the graphs of the scope, a valid identifier; errors inline), copy
    from an existing subgraph, open after creation. Accepting pushes ONE CreateSubgraph."""

    def __init__(
        self,
        session: DocumentSession,
        scope_id: ScopeId,
        node_key: int,
        attribute: str,
        open_scope: OpenScope | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.scope_id = scope_id
        self.node_key = node_key
        self.attribute = attribute
        self.open_scope = open_scope
        self.created: ScopeId | None = None
        doc = session.doc
        node = doc.scope(scope_id).node(node_key)
        label = node.name or node.op_type
        self.setWindowTitle("Create Subgraph")
        form = QFormLayout(self)
        form.addRow(QLabel(f"<b>{label}</b> ({node.op_type}) ▸ <b>{attribute}</b>"))
        self.name = QLineEdit(unique_name(f"{label}_{attribute}", graph_names_in(doc, scope_id)))
        self.name.setToolTip("Unique among the graphs of this scope; letters, digits and '_'")
        self.name.textChanged.connect(lambda _t: self._validate())
        form.addRow("Name:", self.name)
        self.error = ErrorLabel()
        form.addRow(self.error)

        self.copy = QCheckBox("Copy from an existing subgraph")
        self.source = QComboBox()
        for sid in existing_subgraphs(doc):
            self.source.addItem(scope_title(doc, sid), sid)
        self.copy.setEnabled(self.source.count() > 0)
        if self.source.count() == 0:
            self.copy.setToolTip("This model has no subgraph yet")
        self.source.setEnabled(False)
        self.copy.toggled.connect(self.source.setEnabled)
        self.copy.toggled.connect(lambda _on: self._describe())
        self.source.currentIndexChanged.connect(lambda _i: self._describe())
        form.addRow(self.copy)
        form.addRow("Source:", self.source)
        self.contents = QLabel()
        self.contents.setWordWrap(True)
        self.contents.setTextFormat(Qt.TextFormat.RichText)
        form.addRow("Contents:", self.contents)

        self.open_after = QCheckBox("Open after creation")
        self.open_after.setChecked(open_scope is not None)
        self.open_after.setEnabled(open_scope is not None)
        form.addRow(self.open_after)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Create")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self.setMinimumWidth(460)
        self._describe()
        self._validate()

    # --- state ---------------------------------------------------------------------------
    def copy_from(self) -> ScopeId | None:
        if not self.copy.isChecked():
            return None
        sid = self.source.currentData()
        return sid if isinstance(sid, ScopeId) else None

    def problem(self) -> str | None:
        """Why the name cannot be used, or None."""
        name = self.name.text().strip()
        problem = identifier_problem(name)
        if problem is None and name in graph_names_in(self.session.doc, self.scope_id):
            problem = f"a graph named '{name}' already exists in this scope"
        return problem

    def _validate(self) -> bool:
        problem = self.problem()
        self._show_error(problem or "")
        self.name.setStyleSheet("border: 1px solid #b00020;" if problem else "")
        return problem is None

    def _show_error(self, text: str) -> None:
        self.error.setText(text)

    def _describe(self) -> None:
        """What the new graph will hold: the copy's or the operator's inputs and outputs."""
        doc = self.session.doc
        source = self.copy_from()
        try:
            if source is not None:
                graph = doc.scope(source).proto
                assert isinstance(graph, onnx.GraphProto)
                text = f"a copy of {scope_title(doc, source)} ({len(graph.node)} nodes)<br>"
            else:
                name = self.name.text().strip() or self.attribute
                graph = subgraph_template(doc, self.scope_id, self.node_key, self.attribute, name)
                op_type = doc.scope(self.scope_id).node(self.node_key).op_type
                text = f"an empty graph with what {op_type} requires<br>"
        except (DesignerError, KeyError) as exc:
            self.contents.setText(f"<i>{exc}</i>")
            return
        self.contents.setText(text + _signature(graph))

    # --- result --------------------------------------------------------------------------
    def accept(self) -> None:
        if not self._validate():
            return
        messages: list[str] = []

        def rejected(message: str) -> None:
            messages.append(message)

        self.session.editRejected.connect(rejected)
        try:
            edit = CreateSubgraph(
                self.scope_id,
                self.node_key,
                self.attribute,
                self.name.text().strip(),
                copy_from=self.copy_from(),
            )
            pushed = self.session.push(edit)
        except DesignerError as exc:
            pushed, messages = False, [str(exc)]
        finally:
            self.session.editRejected.disconnect(rejected)
        if not pushed:
            self._show_error(messages[-1] if messages else "the subgraph was refused")
            return
        self.created = edit.created
        super().accept()
        if self.open_after.isChecked() and self.open_scope is not None:
            self.open_scope(self.session, edit.created)


def show_create_subgraph(
    window: QWidget,
    session: DocumentSession,
    scope_id: ScopeId,
    node_key: int,
    attribute: str,
) -> CreateSubgraphDialog:
    """Open the dialog window-modally over ``window`` (not blocking; deleted on close).
    "Open after creation" uses ``window.open_scope`` when the window has one."""
    open_scope = getattr(window, "open_scope", None)
    dialog = CreateSubgraphDialog(
        session, scope_id, node_key, attribute, open_scope if callable(open_scope) else None, window
    )
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog
