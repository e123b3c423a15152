"""The Parameters window's content for selected nodes (SPEC P-1, P-3, P-5, T-2)."""

from __future__ import annotations

from collections.abc import Callable

import onnx
from PySide6.QtCore import SIGNAL
from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout, QWidget

from designer.core.edits import ClearAttribute, CompoundEdit, RenameNode, SetAttribute
from designer.core.names import identifier_problem
from designer.core.scope import ScopeId
from designer.core.summary import type_text
from designer.ui.canvas.view import CanvasView
from designer.ui.dialogs import tensor_editor
from designer.ui.params.attr_refs import reference_attribute
from designer.ui.params.attr_text import (
    AttributeTextError,
    attribute_array,
    empty_array,
    list_attribute,
    tensor_attribute,
)
from designer.ui.params.attribute_row import LABEL_WIDTH, AttributeRow, AttributeState
from designer.ui.params.fields import CommitLineEdit, Section
from designer.ui.params.node_state import (
    function_attribute_types,
    node_schema,
    selection_states,
)
from designer.ui.params.trt_section import NodeTrtSection
from designer.ui.session import DocumentSession
from designer.ui.widgets.error_label import ErrorLabel

A = onnx.AttributeProto
_SUBGRAPH_SIGNAL = SIGNAL("subgraphRequested(int,QString,int)")


class NodePanel(QWidget):
    """Name, attributes (set ones, then the collapsible defaults) and inferred types of the
    nodes ``keys`` of ``view``'s scope. Every change is one edit on the session."""

    def __init__(
        self,
        view: CanvasView,
        keys: list[int],
        status: Callable[[str], None],
        defaults_expanded: bool = True,
    ) -> None:
        super().__init__()
        self.view = view
        self.session: DocumentSession = view.session
        self.scope_id: ScopeId = view.scope_id
        self.keys = keys
        self.status = status
        self.rows: dict[str, AttributeRow] = {}
        #: the local function's attributes a node here may refer to (None outside functions)
        self.function_attributes = function_attribute_types(self.session.doc, self.scope_id)
        self.create_dialog: QDialog | None = None  # the last Create Subgraph dialog opened
        scope = self.session.doc.scope(self.scope_id)
        nodes = [scope.node(k) for k in keys]
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)

        ops = sorted({n.op_type for n in nodes})
        if len(nodes) == 1:
            node = nodes[0]
            schema = node_schema(self.session.doc, self.scope_id, node)
            version = f" (since opset {schema.since_version})" if schema else " (no schema)"
            title = QLabel(f"<b>{node.op_type}</b>{version}")
            title.setToolTip(schema.doc[:2000] if schema else "")
            layout.addWidget(title)
            name_row = QWidget()
            name_layout = QVBoxLayout(name_row)
            name_layout.setContentsMargins(0, 0, 0, 0)
            self.name_edit = CommitLineEdit(node.name)
            self.name_edit.setPlaceholderText("(unnamed)")
            self.name_edit.setToolTip("Node name: unique in this graph, a C90 identifier")
            self.name_edit.committed.connect(self._rename)
            self.name_error = ErrorLabel()
            name_layout.addWidget(_labelled("Name", self.name_edit))
            name_layout.addWidget(self.name_error)
            layout.addWidget(name_row)
        else:
            layout.addWidget(
                QLabel(f"<b>{len(nodes)} nodes</b> ({', '.join(ops)}): common attributes")
            )

        states = selection_states(self.session.doc, self.scope_id, keys)
        set_states = [s for s in states if s.value is not None]
        unset = [s for s in states if s.value is None]
        self.set_section = Section(f"Parameters ({len(set_states)})")
        for state in set_states:
            self.set_section.add(self._row(state))
        if not set_states:
            self.set_section.add(QLabel("(none set)"))
        layout.addWidget(self.set_section)
        self.default_section = Section(
            f"Default Value Parameters ({len(unset)})", expanded=defaults_expanded
        )
        for state in unset:
            self.default_section.add(self._row(state))
        if unset:
            layout.addWidget(self.default_section)
        if not states:
            layout.addWidget(QLabel("No attributes in common." if len(nodes) > 1 else ""))
        self.trt_section = NodeTrtSection(self.session, self.scope_id, keys)
        layout.addWidget(self.trt_section)
        self.types = QLabel()
        self.types.setWordWrap(True)
        self.types_section = Section("Inputs and outputs")
        self.types_section.add(self.types)
        layout.addWidget(self.types_section)
        layout.addStretch(1)
        self.refresh_types()

    def _row(self, state: AttributeState) -> AttributeRow:
        row = AttributeRow(state, refs=self.function_attributes, can_create=len(self.keys) == 1)
        row.committed.connect(self._commit)
        row.resetRequested.connect(self._reset)
        row.tensorRequested.connect(self._open_tensor)
        row.graphRequested.connect(self._open_graph)
        row.createGraphRequested.connect(self._create_graph)
        row.referenceRequested.connect(self._set_reference)
        self.rows[state.name] = row
        return row

    # --- edits ---------------------------------------------------------------------------
    def _commit(self, name: str, attr: A) -> None:
        edits = []
        for key in self.keys:
            copy = A()
            copy.CopyFrom(attr)
            edits.append(SetAttribute(self.scope_id, key, copy))
        # A compound never merges, so each commit is its own undo step.
        if not self.session.push(CompoundEdit(f"Set {name}", edits)):
            self.rows[name].show_error("the model refused this value; see the status bar")

    def _reset(self, name: str) -> None:
        scope = self.session.doc.scope(self.scope_id)
        keys = [k for k in self.keys if any(a.name == name for a in scope.node(k).attribute)]
        if keys:
            edits = [ClearAttribute(self.scope_id, k, name) for k in keys]
            self.session.push(CompoundEdit(f"Reset {name}", edits))

    def _set_reference(self, name: str, ref: str) -> None:
        """Refer to the function attribute ``ref``, or ("") go back to a plain value: the
        attribute is unset, so it shows its default and takes a typed value."""
        if not ref:
            self._reset(name)
            return
        state = self.rows[name].state
        self._commit(name, reference_attribute(name, state.type, ref))

    def _create_graph(self, name: str) -> None:
        """Open the Create Subgraph dialog (G-2) for the unset graph attribute ``name``."""
        from designer.ui.dialogs.create_subgraph import show_create_subgraph

        self.create_dialog = show_create_subgraph(
            self.window(), self.session, self.scope_id, self.keys[0], name
        )

    def _rename(self, text: str) -> None:
        problem = identifier_problem(text)
        scope = self.session.doc.scope(self.scope_id)
        node = scope.node(self.keys[0])
        if problem is None and text != node.name and text in scope.node_names():
            problem = f"a node named '{text}' already exists in this graph"
        if problem is not None:
            self.name_error.show_message(problem)
            self.name_edit.setStyleSheet("border: 1px solid #b00020;")
            return
        self.name_error.show_message("")
        self.name_edit.setStyleSheet("")
        self.session.push(RenameNode(self.scope_id, self.keys[0], text))

    def _open_tensor(self, name: str) -> None:
        row = self.rows[name]
        state = row.state
        shown = state.shown
        array, elem_type = attribute_array(shown) if shown is not None else empty_array(state.type)
        is_list = state.type != A.TENSOR
        result = tensor_editor.edit_tensor(
            self,
            array,
            elem_type,
            title=f"{name} — Tensor Editor",
            fixed_type=is_list,
            max_rank=1 if is_list else None,
        )
        if result is None:
            return
        values, new_type = result
        try:
            attr = (
                list_attribute(name, state.type, values)
                if is_list
                else tensor_attribute(name, values, new_type)
            )
        except AttributeTextError as exc:
            row.show_error(str(exc))
            return
        self._commit(name, attr)

    def _open_graph(self, name: str, index: int) -> None:
        if self.view.receivers(_SUBGRAPH_SIGNAL) == 0:
            self.status("Opening a subgraph in its own tab is not available in this version")
            return
        self.view.subgraphRequested.emit(self.keys[0], name, index)

    # --- types ---------------------------------------------------------------------------
    def refresh_types(self) -> None:
        """List the inferred type of every input and output (T-2) from the last check."""
        if len(self.keys) != 1:
            self.types.setText("Types are listed when one node is selected.")
            return
        doc = self.session.doc
        scope = doc.scope(self.scope_id)
        if not scope.has_node(self.keys[0]):
            return
        node = scope.node(self.keys[0])
        schema = node_schema(doc, self.scope_id, node)
        result = self.session.check_result
        lines = []
        for side, names in (("in", list(node.input)), ("out", list(node.output))):
            for i, tensor in enumerate(names):
                param = None
                if schema is not None:
                    param = schema.input_param(i) if side == "in" else schema.output_param(i)
                label = param.name if param is not None else f"#{i}"
                proto = result.type_of(self.scope_id, tensor) if result and tensor else None
                kind = type_text(proto) if proto is not None else ("—" if not tensor else "?")
                shown = tensor or "(not connected)"
                arrow = "→" if side == "in" else "←"
                lines.append(f"{arrow} <b>{label}</b>: {shown} <i>{kind}</i>")
        if result is None:
            lines.append("<i>checking…</i>")
        self.types.setText("<br>".join(lines) or "No inputs or outputs.")


def _labelled(text: str, field: QWidget) -> QWidget:
    from PySide6.QtWidgets import QHBoxLayout

    box = QWidget()
    layout = QHBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    label = QLabel(text)
    label.setFixedWidth(LABEL_WIDTH)
    layout.addWidget(label)
    layout.addWidget(field, 1)
    return box
