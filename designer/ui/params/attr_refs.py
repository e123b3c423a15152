"""Attribute references inside local function bodies (SPEC G-5): a node attribute there can
take its value from one of the function's attributes (``ref_attr_name``). The Parameters
window shows such an attribute as ``→ @name`` and offers the choice on a small "ƒ" menu."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import onnx
from PySide6.QtWidgets import QLabel, QMenu, QToolButton

from designer.ui.params.fields import tool_button

A = onnx.AttributeProto

#: Attribute types that may refer to a function attribute (graphs are edited as subgraphs).
REFERABLE_TYPES = (
    A.INT,
    A.FLOAT,
    A.STRING,
    A.INTS,
    A.FLOATS,
    A.STRINGS,
    A.TENSOR,
    A.SPARSE_TENSOR,
    A.TYPE_PROTO,
    A.TYPE_PROTOS,
)


def reference_of(attr: A | None) -> str:
    """The function attribute ``attr`` refers to, or "" for a plain value."""
    return attr.ref_attr_name if attr is not None else ""


def reference_attribute(name: str, attr_type: int, ref: str) -> A:
    """The AttributeProto making node attribute ``name`` (of ``attr_type``) refer to the
    function attribute ``ref``: ONNX requires the referencing attribute's own type."""
    attr = A(name=name, ref_attr_name=ref)
    attr.type = attr_type  # type: ignore[assignment]  # an AttributeType value
    return attr


def reference_label(ref: str) -> QLabel:
    """What a referencing attribute shows instead of its value editor."""
    label = QLabel(f"→ @{ref}")
    label.setObjectName("attributeReference")
    label.setStyleSheet("color:#1a5fb4; font-style: italic;")
    label.setToolTip(
        f"Takes its value from the function attribute '{ref}' at each call site; use ƒ to change"
    )
    return label


def _type_name(attr_type: int) -> str:
    return str(A.AttributeType.Name(attr_type))


def reference_button(
    attr_type: int,
    current: str,
    refs: Mapping[str, int],
    chosen: Callable[[str], None],
) -> QToolButton:
    """The "ƒ" button: "Value" (no reference) or one of the function's attributes ``refs``
    (name → type; UNDEFINED for a required one). A function attribute whose default has
    another type is listed but disabled, with the reason, since ONNX would reject it."""
    button = tool_button("ƒ", "Use a value, or a reference to an attribute of this function")
    button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
    if current:
        button.setStyleSheet("QToolButton { color:#1a5fb4; font-weight: bold; }")
    menu = QMenu(button)
    value = menu.addAction("Value (no reference)")
    value.setCheckable(True)
    value.setChecked(not current)
    value.triggered.connect(lambda _c=False: chosen(""))
    menu.addSeparator()
    if not refs:
        empty = menu.addAction("(this function has no attributes)")
        empty.setEnabled(False)
    for name, ref_type in refs.items():
        action = menu.addAction(f"@{name}")
        action.setCheckable(True)
        action.setChecked(name == current)
        if ref_type not in (A.UNDEFINED, attr_type):
            action.setEnabled(False)
            action.setToolTip(
                f"'{name}' is {_type_name(ref_type)}; this attribute is {_type_name(attr_type)}"
            )
        action.triggered.connect(lambda _c=False, n=name: chosen(n))
    menu.setToolTipsVisible(True)
    button.setMenu(menu)
    return button


def is_referable(attr_type: int) -> bool:
    return attr_type in REFERABLE_TYPES
