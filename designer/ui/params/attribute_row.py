"""One attribute in the Parameters window: name, an editor fitting its type, restore-default
(round arrow, on hover), open-in-Tensor-Editor (up arrow) and an inline error line."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import onnx
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from designer.ui.params.attr_refs import (
    is_referable,
    reference_button,
    reference_label,
    reference_of,
)
from designer.ui.params.attr_text import (
    TABLE_TYPES,
    TEXT_TYPES,
    AttributeTextError,
    attribute_text,
    is_preview,
    parse_attribute,
)
from designer.ui.params.fields import CommitLineEdit, HoverWidget, tool_button
from designer.ui.widgets.error_label import ErrorLabel

A = onnx.AttributeProto
LABEL_WIDTH = 130


@dataclass
class AttributeState:
    """What a row shows: the schema's view of one attribute and its current value.

    ``value`` is None when the attribute is unset (the row then shows ``default``);
    ``mixed`` is True when a multi-selection holds different values.
    """

    name: str
    type: int
    description: str = ""
    required: bool = False
    default: A | None = None
    allowed: tuple[str, ...] = ()
    value: A | None = None
    mixed: bool = False

    @property
    def shown(self) -> A | None:
        return self.value if self.value is not None else self.default

    @property
    def elem_type(self) -> int:
        shown = self.shown
        return shown.t.data_type if shown is not None and shown.type == A.TENSOR else 1


class AttributeRow(HoverWidget):
    """Signals carry plain values; the panel turns them into edits.

    ``refs`` (name → type) are the attributes of the local function whose body holds the
    node; given, the row offers a reference to one of them ("ƒ"). ``can_create`` offers
    "Create…" for an unset GRAPH attribute (one node selected)."""

    committed = Signal(str, object)  # attribute name, AttributeProto
    resetRequested = Signal(str)
    tensorRequested = Signal(str)
    graphRequested = Signal(str, int)  # attribute name, index (-1 for GRAPH)
    createGraphRequested = Signal(str)  # attribute name
    referenceRequested = Signal(str, str)  # attribute name, function attribute ("": a value)

    def __init__(
        self,
        state: AttributeState,
        parent: QWidget | None = None,
        *,
        refs: Mapping[str, int] | None = None,
        can_create: bool = False,
    ) -> None:
        super().__init__(parent)
        self.state = state
        self.can_create = can_create
        self.reference = reference_of(state.value)
        self.line: CommitLineEdit | None = None
        self.combo: QComboBox | None = None
        self.create_link: QLabel | None = None
        self.reference_label: QLabel | None = None
        self.reference_button: QToolButton | None = None
        self.error = ErrorLabel()
        type_name = A.AttributeType.Name(state.type)
        self.label = QLabel(state.name + (" *" if state.required else ""))
        self.label.setFixedWidth(LABEL_WIDTH)
        self.label.setToolTip(f"{state.name} ({type_name})\n\n{state.description}".strip())
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(2)
        row.addWidget(self.label)
        row.addWidget(self._editor(), 1)
        if refs is not None and is_referable(state.type):
            self.reference_button = reference_button(
                state.type,
                self.reference,
                refs,
                lambda ref: self.referenceRequested.emit(state.name, ref),
            )
            row.addWidget(self.reference_button)
        self.tensor_button = tool_button("↑", "Open in the Tensor Editor")
        self.tensor_button.clicked.connect(lambda: self.tensorRequested.emit(state.name))
        self.reset_button = tool_button("⟲", "Restore the schema default (unset the attribute)")
        self.reset_button.clicked.connect(lambda: self.resetRequested.emit(state.name))
        for button in (self.tensor_button, self.reset_button):
            policy = button.sizePolicy()
            policy.setRetainSizeWhenHidden(True)
            button.setSizePolicy(policy)
            row.addWidget(button)
        self.tensor_button.setVisible(state.type in TABLE_TYPES and not self.reference)
        self.reset_button.setVisible(False)
        if state.value is not None:
            self.hover_buttons.append(self.reset_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 1, 0, 1)
        layout.setSpacing(0)
        layout.addLayout(row)
        layout.addWidget(self.error)

    def _editor(self) -> QWidget:
        state = self.state
        shown = state.shown
        if self.reference:
            self.reference_label = reference_label(self.reference)
            return self.reference_label
        if state.type in (A.GRAPH, A.GRAPHS):
            return self._graph_links()
        if state.type == A.STRING and state.allowed:
            combo = QComboBox()
            current = shown.s.decode("utf-8", "replace") if shown is not None else ""
            values = list(state.allowed)
            if current and current not in values:
                values.append(current)
            combo.addItems(values)
            combo.setCurrentIndex(values.index(current) if current in values else -1)
            combo.setToolTip("Values this attribute accepts (from the operator's documentation)")
            combo.activated.connect(self._combo_chosen)
            self.combo = combo
            return combo
        line = CommitLineEdit(attribute_text(shown) if shown is not None else "")
        line.setCursorPosition(0)
        if state.mixed:
            line.set_value("")
            line.setPlaceholderText("(differs between the selected nodes)")
        elif shown is None:
            line.setPlaceholderText("(required)" if state.required else "(no default)")
        if state.type not in TEXT_TYPES or (shown is not None and is_preview(shown)):
            line.setReadOnly(True)
            why = "too large to type here; use the Tensor Editor (↑)"
            line.setToolTip(why if state.type in TABLE_TYPES else "cannot be edited as text")
        else:
            line.setToolTip(_syntax_hint(state.type))
        line.committed.connect(self._text_committed)
        self.line = line
        return line

    def _graph_links(self) -> QWidget:
        box = QWidget()
        layout = QHBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        shown = self.state.shown
        graphs: list[tuple[int, onnx.GraphProto]] = []
        if shown is not None and shown.type == A.GRAPH:
            graphs = [(-1, shown.g)]
        elif shown is not None:
            graphs = list(enumerate(shown.graphs))
        for index, graph in graphs:
            title = graph.name or (self.state.name if index < 0 else f"{self.state.name}[{index}]")
            link = QLabel(f'<a href="{index}">{title}</a> ({len(graph.node)} nodes)')
            link.setToolTip("Open this subgraph")
            link.linkActivated.connect(
                lambda href, name=self.state.name: self.graphRequested.emit(name, int(href))
            )
            layout.addWidget(link)
        if not graphs:
            layout.addWidget(QLabel("(no graph)"))
            if self.can_create and self.state.type == A.GRAPH and not self.state.mixed:
                self.create_link = QLabel('<a href="create">Create…</a>')
                self.create_link.setToolTip(
                    "Create this subgraph with the inputs and outputs its operator requires"
                )
                self.create_link.linkActivated.connect(
                    lambda _href: self.createGraphRequested.emit(self.state.name)
                )
                layout.addWidget(self.create_link)
        layout.addStretch(1)
        box.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        return box

    def _text_committed(self, text: str) -> None:
        try:
            attr = parse_attribute(self.state.name, self.state.type, text, self.state.elem_type)
        except AttributeTextError as exc:
            self.show_error(str(exc))
            return
        self.show_error("")
        self.committed.emit(self.state.name, attr)

    def _combo_chosen(self, index: int) -> None:
        assert self.combo is not None
        value = self.combo.itemText(index)
        attr = onnx.helper.make_attribute(self.state.name, value, attr_type=A.STRING)
        self.committed.emit(self.state.name, attr)

    def show_error(self, message: str) -> None:
        self.error.show_message(message)
        if self.line is not None:
            self.line.setStyleSheet("border: 1px solid #b00020;" if message else "")


def _syntax_hint(attr_type: int) -> str:
    hints: dict[int, str] = {
        A.INT: "An integer, e.g. 1; Enter applies",
        A.FLOAT: "A number, e.g. 0.5; Enter applies",
        A.STRING: "A string in single quotes, e.g. 'NOTSET'; Enter applies",
        A.INTS: "A list of integers, e.g. [1, 1]; Enter applies",
        A.FLOATS: "A list of numbers, e.g. [0.5, 1.0]; Enter applies",
        A.STRINGS: "A list of quoted strings, e.g. ['a', 'b']; Enter applies",
        A.TENSOR: "Nested lists, e.g. [[1, 2], [3, 4]]; Enter applies",
    }
    return hints.get(attr_type, "")
