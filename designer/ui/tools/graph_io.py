"""Graph inputs and outputs from the GUI: Edit > Add Graph Input… (name, element type,
shape) and Edit > Make Graph Outputs (the selected nodes' outputs); both also in the canvas
context menu. Removing one is Delete on its node on the canvas."""

from __future__ import annotations

from typing import TYPE_CHECKING

import onnx
from PySide6.QtCore import QPointF
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QMenu,
    QWidget,
)

from designer.core.edits import AddGraphIO, CompoundEdit, Edit, MoveNodes
from designer.core.errors import DesignerError, ValueSyntaxError
from designer.core.names import identifier_problem
from designer.core.values import parse_value
from designer.ui.canvas.view import CanvasView
from designer.ui.widgets.error_label import ErrorLabel

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow

#: Element types offered for a new input, most used first.
ELEM_TYPES = (
    "FLOAT",
    "FLOAT16",
    "BFLOAT16",
    "DOUBLE",
    "INT64",
    "INT32",
    "INT8",
    "UINT8",
    "BOOL",
    "STRING",
)


def parse_shape(text: str) -> list[int | str] | None:
    """``[1, 'batch', 3]`` → dims (ints or named); empty text → None (rank unknown)."""
    if not text.strip():
        return None
    value = parse_value(text)
    expected = "a list of sizes ≥ 0 or 'names', e.g. [1, 'batch', 224]"
    if not isinstance(value, list):
        raise ValueSyntaxError(text, 0, expected)
    for index, d in enumerate(value):
        if isinstance(d, bool) or not isinstance(d, int | str) or (isinstance(d, int) and d < 0):
            # at the wrong size itself, not at the bracket ([1, 3, 32, -5] said position 0)
            where = _item_position(text, index)
            raise ValueSyntaxError(text, where, f"a size ≥ 0 or a 'name' (item {index + 1})")
    return [d for d in value if isinstance(d, int | str)]  # every item is one (checked)


def _item_position(text: str, index: int) -> int:
    """Where item ``index`` of the list ``text`` starts (top-level commas outside quotes)."""
    depth, quoted, escaped, item = 0, False, False, 0
    for i, ch in enumerate(text):
        if quoted:
            escaped, quoted = (False, True) if escaped else (ch == "\\", ch != "'")
        elif ch == "'":
            quoted = True
        elif ch in "[(":
            depth += 1
            if depth == 1 and item == index:
                return _skip_space(text, i + 1)
        elif ch in "])":
            depth -= 1
        elif ch == "," and depth == 1:
            item += 1
            if item == index:
                return _skip_space(text, i + 1)
    return 0


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def add_input_edit(
    view: CanvasView, name: str, elem_type: int, shape: list[int | str] | None, at: QPointF
) -> Edit:
    """One undo step: the new graph input, placed at scene point ``at``."""
    problem = identifier_problem(name)
    if problem is not None:
        raise DesignerError(f"invalid input name: {problem}")
    value = onnx.helper.make_tensor_value_info(name, elem_type, shape)
    key = view.session.doc.io_key(view.scope_id, "input", name)
    return CompoundEdit(
        f"Add graph input {name}",
        [
            AddGraphIO(view.scope_id, "input", value),
            MoveNodes(view.scope_id, {key: (at.x(), at.y())}),
        ],
    )


def output_edit(view: CanvasView) -> Edit | None:
    """One undo step making every output of the selected nodes a graph output (typed from
    the last check where known); None when there is nothing to add."""
    doc = view.session.doc
    scope = doc.scope(view.scope_id)
    existing = set(scope.output_names())
    result = view.session.check_result
    edits: list[Edit] = []
    for key in view.selected_keys():
        if not scope.has_node(key):
            continue
        for name in scope.node(key).output:
            if not name or name in existing:
                continue
            value = onnx.ValueInfoProto(name=name)
            inferred = result.type_of(view.scope_id, name) if result is not None else None
            if inferred is not None:
                value.type.CopyFrom(inferred)
            edits.append(AddGraphIO(view.scope_id, "output", value))
            existing.add(name)
    if not edits:
        return None
    return CompoundEdit(f"Make {len(edits)} graph output(s)", edits)


class AddInputDialog(QDialog):
    """Name, element type and shape of a new graph input; errors show inline."""

    def __init__(self, view: CanvasView, at: QPointF, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self.at = at
        self.setWindowTitle("Add Graph Input")
        form = QFormLayout(self)
        taken = set(view.session.doc.scope(view.scope_id).input_names())
        default, n = "input", 1
        while default in taken:
            default, n = f"input_{n}", n + 1
        self.name = QLineEdit(default)
        self.elem_type = QComboBox()
        self.elem_type.addItems(list(ELEM_TYPES))
        self.shape = QLineEdit("[1, 3, 224, 224]")
        self.shape.setToolTip("Sizes, or 'names' for dynamic dimensions; empty: rank unknown")
        self.error = ErrorLabel()
        form.addRow("Name:", self.name)
        form.addRow("Element type:", self.elem_type)
        form.addRow("Shape:", self.shape)
        form.addRow(self.error)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def accept(self) -> None:
        try:
            elem = onnx.TensorProto.DataType.Value(self.elem_type.currentText())
            edit = add_input_edit(
                self.view, self.name.text().strip(), elem, parse_shape(self.shape.text()), self.at
            )
        except DesignerError as exc:
            self.error.setText(str(exc))
            return
        if not self.view.session.push(edit):
            self.error.setText("the input was refused; see the status bar")
            return
        super().accept()


def _scene_point(view: CanvasView) -> QPointF:
    return free_scene_point(view, view.mapToScene(view.viewport().rect().center()))


def free_scene_point(
    view: CanvasView, at: QPointF, width: float = 120.0, height: float = 40.0
) -> QPointF:
    """The top-left corner for a new box centred near ``at``, moved right until it covers
    no drawn node on its row (a new input or node at the view's centre landed on whatever
    node was there)."""
    from designer.ui.canvas.placement import free_spot

    items = view.canvas.node_items
    placed = {k: (i.pos().x(), i.pos().y()) for k, i in items.items()}
    sizes = {k: (i.width, i.height) for k, i in items.items()}
    x, y = free_spot(at.x() - width / 2, at.y() - height / 2, width, height, placed, sizes)
    return QPointF(x, y)


def add_input(window: MainWindow, at: QPointF | None = None) -> None:
    view = window.current_view()
    if view is not None:
        AddInputDialog(view, at if at is not None else _scene_point(view), window).exec()


def make_outputs(window: MainWindow) -> None:
    view = window.current_view()
    if view is None:
        return
    edit = output_edit(view)
    if edit is None:
        window.statusBar().showMessage("Select nodes whose outputs are not graph outputs yet", 5000)
    elif view.session.push(edit):
        window.statusBar().showMessage(edit.label, 5000)


def install(window: MainWindow) -> None:
    edit_menu = window.menus["Edit"]
    edit_menu.addSeparator()
    add = QAction("Add Graph &Input…", window)
    add.triggered.connect(lambda _checked=False: add_input(window))
    outputs = QAction("Make Graph &Outputs", window)
    outputs.setToolTip("Make the outputs of the selected nodes outputs of the graph")
    outputs.triggered.connect(lambda _checked=False: make_outputs(window))
    for action in (add, outputs):
        edit_menu.addAction(action)
    window.actions_by_name["add_graph_input"] = add
    window.actions_by_name["make_graph_outputs"] = outputs

    def hook(menu: QMenu, view: CanvasView, scene_pos: QPointF) -> None:
        menu.addSeparator()
        entry = menu.addAction("Add Graph Input Here…")
        entry.triggered.connect(lambda _checked=False: add_input(window, scene_pos))
        menu.addAction(outputs)

    window.canvas_menu_hooks.append(hook)
