"""The Parameters window for one selected graph input, graph output or outer-scope value:
its name (editable for inputs and outputs: a rename updates every reference, one undo step),
its element type and shape (editable for the inputs and outputs of a graph: one
:class:`SetValueType` undo step each; the shape in the Add Graph Input dialog's syntax
``[1, 'seq']``, ``?`` for an unknown size, empty for an unknown rank), its type as the type
checker sees it, and what reads or produces it."""

from __future__ import annotations

import html
from collections.abc import Callable

import onnx
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QVBoxLayout, QWidget

from designer.core.edits import RenameTensor, SetValueType
from designer.core.errors import DesignerError, ValueSyntaxError
from designer.core.scope import ScopeId
from designer.core.summary import type_text
from designer.core.values import format_value
from designer.core.viewgraph import outer_values
from designer.ui.params.fields import ERROR_FIELD_STYLE, CommitLineEdit
from designer.ui.params.trt_section import InputTrtSection
from designer.ui.session import DocumentSession
from designer.ui.tools.graph_io import ELEM_TYPES, parse_shape
from designer.ui.widgets.error_label import ErrorLabel

Dims = list[int | str | None]  # None: a size nobody knows ("?")

_KINDS = {"input": "Graph input", "output": "Graph output", "outer": "Outer-scope value"}


class IOPanel(QWidget):
    """``kind`` is "input", "output" or "outer" (read-only: it is defined further out)."""

    def __init__(
        self,
        session: DocumentSession,
        scope_id: ScopeId,
        kind: str,
        name: str,
        select: Callable[[str, str], None] | None = None,
    ) -> None:
        super().__init__()
        self.select = select  # select(kind, name): show the renamed node selected
        self.session = session
        self.scope_id = scope_id
        self.kind = kind
        self.name = name
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        heading = QLabel(f"<b>{_KINDS.get(kind, kind)}</b> — {html.escape(name)}")
        heading.setWordWrap(True)
        layout.addWidget(heading)
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        self.name_edit = CommitLineEdit(name)
        self.name_error = ErrorLabel()
        if kind == "outer":
            self.name_edit.setReadOnly(True)
            self.name_edit.setToolTip("Defined in an enclosing graph: rename it there")
        else:
            self.name_edit.setToolTip("A C identifier not used in this graph; Enter applies")
            self.name_edit.committed.connect(self._rename)
        form.addRow("Name", self.name_edit)
        form.addRow("", self.name_error)
        result = session.check_result
        proto = result.type_of(scope_id, name) if result is not None else None
        self.base_type = self._editable_type(proto)
        if self.base_type is not None:
            self._add_type_fields(form, self.base_type)
        self.checked_label = QLabel(self._checked_text())
        form.addRow("Checked type" if self.base_type is not None else "Type", self.checked_label)
        form.addRow("Used by", _wrapped(self._users()))
        if kind == "outer":
            value = outer_values(session.doc, scope_id).get(name)
            form.addRow("Defined as", _wrapped(value.describe() if value else "(no longer)"))
        layout.addLayout(form)
        if kind == "input" and scope_id.is_main:
            self.trt_section = InputTrtSection(session, name)
            layout.addWidget(self.trt_section)
        layout.addStretch(1)

    def _checked_text(self) -> str:
        result = self.session.check_result
        proto = result.type_of(self.scope_id, self.name) if result is not None else None
        return type_text(proto) if proto is not None else "? (not inferred)"

    def refresh_types(self) -> None:
        """Show the type of the latest check (it arrives after an edit of this value's
        shape: the panel, built at once on the edit, showed the old one)."""
        self.checked_label.setText(self._checked_text())

    def _editable_type(self, inferred: onnx.TypeProto | None) -> onnx.TypeProto | None:
        """The tensor type the element type and shape fields start from: the declared one,
        else the inferred one; None where the fields are not offered (an outer-scope or
        function value, a non-tensor type, nothing known)."""
        graph = self.session.doc.scope(self.scope_id).proto
        if self.kind not in ("input", "output") or not isinstance(graph, onnx.GraphProto):
            return None
        values = graph.input if self.kind == "input" else graph.output
        declared = next((v.type for v in values if v.name == self.name), None)
        for candidate in (declared, inferred):
            if candidate is not None and candidate.WhichOneof("value") == "tensor_type":
                return candidate
        return None

    def _add_type_fields(self, form: QFormLayout, base: onnx.TypeProto) -> None:
        current = onnx.TensorProto.DataType.Name(base.tensor_type.elem_type)
        self.elem_combo = QComboBox()
        self.elem_combo.addItems([*ELEM_TYPES, *([] if current in ELEM_TYPES else [current])])
        self.elem_combo.setCurrentText(current)
        self.elem_combo.setToolTip("The element type; choosing one applies it")
        self.shape_edit = CommitLineEdit(shape_text(base))
        self.elem_combo.activated.connect(lambda _index: self._apply_type(self.shape_edit.text()))
        self.shape_edit.setCursorPosition(0)
        self.shape_edit.setToolTip(
            "Sizes, or 'names' for dynamic dimensions, ? for an unknown size, e.g. "
            "[1, 'seq']; empty: rank unknown. Enter applies"
        )
        self.shape_edit.committed.connect(self._apply_type)
        self.type_error = ErrorLabel()
        form.addRow("Element type", self.elem_combo)
        form.addRow("Shape", self.shape_edit)
        form.addRow("", self.type_error)

    def _apply_type(self, text: str) -> None:
        """Push one SetValueType for the chosen element type and shape ``text``; bad text
        gets a message at the field and leaves the document as it is."""
        assert self.base_type is not None
        try:
            dims = parse_dims(text)
        except DesignerError as exc:
            problem: str | None = str(exc)
        else:
            elem = onnx.TensorProto.DataType.Value(self.elem_combo.currentText())
            new = with_tensor_type(self.base_type, elem, dims)
            same = new.SerializeToString() == self.base_type.SerializeToString()
            edit = SetValueType(self.scope_id, self.name, new)
            problem = None if same else self.session.try_push(edit)
        self.type_error.show_message(problem or "")
        self.shape_edit.setStyleSheet(ERROR_FIELD_STYLE if problem else "")

    def _users(self) -> str:
        scope = self.session.doc.scope(self.scope_id)
        readers = [n.name or n.op_type for n in scope.proto.node if self.name in n.input]
        producers = [n.name or n.op_type for n in scope.proto.node if self.name in n.output]
        parts = []
        if producers:
            parts.append("produced by " + ", ".join(producers))
        if readers:
            shown = ", ".join(readers[:8]) + (
                f" and {len(readers) - 8} more" if len(readers) > 8 else ""
            )
            parts.append("read by " + shown)
        return "; ".join(parts) or "nothing in this graph"

    def _rename(self, text: str) -> None:
        new = text.strip()
        problem = self.session.try_push(RenameTensor(self.scope_id, self.name, new))
        self.name_error.show_message(problem or "")
        self.name_edit.setStyleSheet("border: 1px solid #b00020;" if problem else "")
        if problem is None and self.select is not None:
            self.select(self.kind, new)


def shape_text(type_proto: onnx.TypeProto) -> str:
    """``[1, 'seq', ?]``: the shape of a tensor type as the shape field shows it ("" when
    the rank is unknown); :func:`parse_dims` reads it back."""
    tensor = type_proto.tensor_type
    if not tensor.HasField("shape"):
        return ""
    return "[" + ", ".join(_dim_text(d) for d in tensor.shape.dim) + "]"


def _dim_text(dim: onnx.TensorShapeProto.Dimension) -> str:
    if dim.HasField("dim_value"):
        return str(dim.dim_value)
    return format_value(dim.dim_param) if dim.dim_param else "?"


def parse_dims(text: str) -> Dims | None:
    """The Add Graph Input dialog's shape syntax (:func:`parse_shape`), plus ``?`` for a
    size nobody knows; empty text → None (rank unknown). ValueSyntaxError for bad text
    (its position counted in ``text``)."""
    quoted, origin = _quote_unknown(text)
    try:
        dims = parse_shape(quoted)
    except ValueSyntaxError as exc:
        raise ValueSyntaxError(text, origin[exc.position], exc.expected) from None
    if dims is None:
        return None
    return [None if d == "?" else d for d in dims]


def _quote_unknown(text: str) -> tuple[str, list[int]]:
    """Each ``?`` outside quotes becomes the name ``'?'`` that :func:`parse_dims` maps back;
    also, for each character of the result (and its end), where it came from in ``text``."""
    out: list[str] = []
    origin: list[int] = []
    quoted = escaped = False
    for i, ch in enumerate(text):
        if quoted:
            escaped, quoted = (False, True) if escaped else (ch == "\\", ch != "'")
        elif ch == "'":
            quoted = True
        elif ch == "?":
            ch = "'?'"
        out.append(ch)
        origin.extend([i] * len(ch))
    origin.append(len(text))
    return "".join(out), origin


def with_tensor_type(base: onnx.TypeProto, elem_type: int, dims: Dims | None) -> onnx.TypeProto:
    """A copy of ``base`` with ``elem_type`` and, where they differ from its own, ``dims``
    (an unchanged shape keeps its dimensions' denotations)."""
    new = onnx.TypeProto()
    new.CopyFrom(base)
    tensor = new.tensor_type
    tensor.elem_type = elem_type
    if dims == parse_dims(shape_text(base)):
        return new
    tensor.ClearField("shape")
    if dims is not None:
        tensor.shape.SetInParent()
        for size in dims:
            dim = tensor.shape.dim.add()
            if isinstance(size, int):
                dim.dim_value = size
            elif size is not None:
                dim.dim_param = size
    return new


def _wrapped(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    return label
