"""The Initializer Editor's bottom half (SPEC I-4): the selected node's initializer-fed input
terminals, each with a filterable drop-down to switch the initializer, a cross to disconnect,
a value preview and an arrow to the Tensor Editor; "Connect Initializer" feeds a free one."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from designer.core.edits import AddInitializer, CompoundEdit, SetNodeInput
from designer.core.io.external import is_external, tensor_array
from designer.core.names import unique_name
from designer.core.scope import ScopeId
from designer.core.values import format_tensor
from designer.ui.dialogs import create_initializer
from designer.ui.params.fields import tool_button
from designer.ui.params.node_state import node_schema
from designer.ui.session import DocumentSession
from designer.ui.widgets.error_label import ErrorLabel

PREVIEW_ELEMENTS = 8
_SINGLE_TYPES = {
    "tensor(int64)": onnx.TensorProto.INT64,
    "tensor(int32)": onnx.TensorProto.INT32,
    "tensor(float)": onnx.TensorProto.FLOAT,
    "tensor(bool)": onnx.TensorProto.BOOL,
}


def preview(session: DocumentSession, tensor: onnx.TensorProto) -> str:
    """A few leading values (external data is memory-mapped, not read whole)."""
    try:
        array = tensor_array(tensor, session.doc.base_dir)
        return format_tensor(np.asarray(array), max_elements=PREVIEW_ELEMENTS)
    except (ValueError, OSError) as exc:
        return f"(cannot read the values: {exc})"


class TerminalPanel(QWidget):
    def __init__(
        self,
        session: DocumentSession,
        scope_id: ScopeId,
        key: int,
        edit_tensor: Callable[[str], None],
    ) -> None:
        super().__init__()
        self.session = session
        self.scope_id = scope_id
        self.key = key
        self.edit_tensor = edit_tensor
        scope = session.doc.scope(scope_id)
        self.node = scope.node(key)
        self.schema = node_schema(session.doc, scope_id, self.node)
        self.initializers = sorted(scope.initializer_names())
        known = set(self.initializers)
        self.combos: dict[int, QComboBox] = {}
        self.errors: dict[int, ErrorLabel] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        title = self.node.name or self.node.op_type
        layout.addWidget(QLabel(f"<b>{title}</b> ({self.node.op_type}): initializer inputs"))
        grid = QGridLayout()
        grid.setColumnStretch(1, 1)
        row = 0
        for slot, tensor in enumerate(self.node.input):
            if tensor not in known:
                continue
            self._add_row(grid, row, slot, tensor, scope.initializer(tensor))
            row += 2
        if row == 0:
            grid.addWidget(QLabel("No input of this node is fed by an initializer."), 0, 0, 1, 4)
        layout.addLayout(grid)
        self.connect_button = QPushButton("Connect Initializer")
        free = self.free_slots()
        self.connect_button.setEnabled(bool(free))
        self.connect_button.setToolTip(
            "Feed a free input terminal with a new or existing initializer"
            if free
            else "Every input terminal of this node is already connected"
        )
        menu = QMenu(self.connect_button)
        for slot in free:
            label = self.slot_label(slot)
            new = menu.addAction(f"{label}: new initializer…")
            new.triggered.connect(lambda _c=False, s=slot: self.connect_new(s))
            if self.initializers:
                existing = menu.addMenu(f"{label}: existing initializer")
                for name in self.initializers[:200]:
                    pick = existing.addAction(name)
                    pick.triggered.connect(
                        lambda _c=False, s=slot, n=name: self.connect_existing(s, n)
                    )
        self.connect_button.setMenu(menu)
        buttons = QHBoxLayout()
        buttons.addWidget(self.connect_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        layout.addStretch(1)

    def _add_row(
        self, grid: QGridLayout, row: int, slot: int, tensor: str, proto: onnx.TensorProto | None
    ) -> None:
        grid.addWidget(QLabel(self.slot_label(slot)), row, 0)
        combo = QComboBox()
        combo.setEditable(True)
        combo.addItems(self.initializers)
        combo.setCurrentText(tensor)
        combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        completer = QCompleter(self.initializers, combo)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        combo.setCompleter(completer)
        combo.setToolTip("Type to filter; choose another initializer for this terminal")
        combo.activated.connect(lambda _i, s=slot, c=combo: self.switch(s, c.currentText()))
        line = combo.lineEdit()
        assert line is not None
        line.editingFinished.connect(lambda s=slot, c=combo: self.switch(s, c.currentText()))
        self.combos[slot] = combo
        grid.addWidget(combo, row, 1)
        cross = tool_button("✕", "Disconnect this terminal (the initializer stays)")
        cross.clicked.connect(lambda _c=False, s=slot: self.disconnect_slot(s))
        arrow = tool_button("↑", "Edit the values in the Tensor Editor")
        arrow.clicked.connect(lambda _c=False, n=tensor: self.edit_tensor(n))
        grid.addWidget(cross, row, 2)
        grid.addWidget(arrow, row, 3)
        text = preview(self.session, proto) if proto is not None else ""
        if proto is not None:
            where = " external" if is_external(proto) else ""
            kind = f"{onnx.TensorProto.DataType.Name(proto.data_type)}{list(proto.dims)}{where}"
            text = f"{kind}  {text}"
        value = QLabel(text)
        value.setStyleSheet("color:#555;")
        value.setWordWrap(True)
        value.setToolTip(text)
        value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        error = ErrorLabel()
        self.errors[slot] = error
        box = QWidget()
        box_layout = QVBoxLayout(box)
        box_layout.setContentsMargins(0, 0, 0, 4)
        box_layout.addWidget(value)
        box_layout.addWidget(error)
        grid.addWidget(box, row + 1, 1, 1, 3)

    # --- terminals -----------------------------------------------------------------------
    def slot_label(self, slot: int) -> str:
        param = self.schema.input_param(slot) if self.schema is not None else None
        return f"{param.name}" if param is not None else f"input {slot}"

    def free_slots(self) -> list[int]:
        """Input terminals with nothing connected: empty names, and positions past the
        node's inputs that its schema still allows."""
        inputs = list(self.node.input)
        free = [i for i, t in enumerate(inputs) if not t]
        if self.schema is not None:
            params = self.schema.inputs
            fixed = len(params)
            variadic = bool(params) and params[-1].option == "variadic"
            end = min(self.schema.max_input, max(len(inputs), fixed) + (1 if variadic else 0))
            free.extend(range(len(inputs), max(len(inputs), end)))
        return free

    def _type_hint(self, slot: int) -> int:
        param = self.schema.input_param(slot) if self.schema is not None else None
        if param is not None and len(param.allowed_types) == 1:
            return _SINGLE_TYPES.get(param.allowed_types[0], onnx.TensorProto.FLOAT)
        return onnx.TensorProto.FLOAT

    def switch(self, slot: int, name: str) -> None:
        name = name.strip()
        if slot >= len(self.node.input) or name == self.node.input[slot]:
            return
        if name not in self.initializers:
            self.errors[slot].show_message(f"no initializer named '{name}' in this graph")
            return
        self.errors[slot].show_message("")
        self.session.push(SetNodeInput(self.scope_id, self.key, slot, name))

    def disconnect_slot(self, slot: int) -> None:
        self.session.push(SetNodeInput(self.scope_id, self.key, slot, ""))

    def connect_existing(self, slot: int, name: str) -> None:
        edit = SetNodeInput(self.scope_id, self.key, slot, name)
        edit.label = f"Connect initializer {name}"
        self.session.push(edit)

    def connect_new(self, slot: int) -> None:
        taken = self.session.doc.scope(self.scope_id).defined_names()
        base = f"{self.node.name or self.node.op_type}_{self.slot_label(slot)}"
        tensor = create_initializer.ask_new_initializer(
            self, self.session.doc, self.scope_id, unique_name(base, taken), self._type_hint(slot)
        )
        if tensor is None:
            return
        edits = [
            AddInitializer(self.scope_id, tensor),
            SetNodeInput(self.scope_id, self.key, slot, tensor.name),
        ]
        self.session.push(CompoundEdit(f"Connect initializer {tensor.name}", edits))
