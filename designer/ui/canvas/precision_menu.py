"""The "Set Layer Precision" menu (X-2, C-8): the same entries in the canvas and Layer
Explorer context menus (as a submenu) and behind a node's precision badge (as a quick menu).

Choosing an entry pushes one :class:`~designer.core.edits.trt.SetLayerPrecision` for every
target node: one undo step for a whole selection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QActionGroup, QColor
from PySide6.QtWidgets import QMenu, QWidget

from designer.core.edits.trt import SetLayerPrecision
from designer.core.scope import ScopeId
from designer.core.trt.settings import NO_CONSTRAINT, PRECISIONS, stored_precision

if TYPE_CHECKING:
    from designer.ui.session import DocumentSession

TITLE = "Set Layer Precision"
MAIN_ONLY = "TensorRT layer precisions are set on nodes of the main graph"

#: Badge colours per precision (floating point warm, integer cool, bool grey).
BADGE_COLORS: dict[str, QColor] = {
    "fp32": QColor("#4a6fa5"),
    "fp16": QColor("#d9480f"),
    "bf16": QColor("#c2255c"),
    "fp8": QColor("#9c36b5"),
    "int64": QColor("#2b8a3e"),
    "int32": QColor("#2f9e44"),
    "int8": QColor("#1971c2"),
    "int4": QColor("#0c8599"),
    "uint8": QColor("#5c7cfa"),
    "bool": QColor("#616975"),
}


MIXED = "mixed"


def current_precision(session: DocumentSession, scope_id: ScopeId, keys: Sequence[int]) -> str:
    """The precision all ``keys`` share, "" when none has one, "mixed" when they differ.

    A stored value that is no TensorRT precision (hand-edited: ``half``) is returned as
    stored, not as "": the node is not unconstrained, its build is refused (see
    :func:`is_invalid_precision`)."""
    scope = session.doc.scope(scope_id)
    found = {stored_precision(scope.node(k)) or "" for k in keys if scope.has_node(k)}
    if len(found) > 1:
        return MIXED
    return found.pop() if found else ""


def is_invalid_precision(current: str) -> bool:
    """True when :func:`current_precision` gave a stored value that is no precision."""
    return current not in ("", MIXED, *PRECISIONS)


def fill_precision_menu(
    menu: QMenu, session: DocumentSession, scope_id: ScopeId, keys: Sequence[int]
) -> None:
    """Add one checkable entry per precision plus No Constraint; the shared current one is
    checked. Disabled (with the reason) outside the main graph or without nodes."""
    targets = list(keys)
    if not scope_id.is_main or not targets:
        reason = MAIN_ONLY if not scope_id.is_main else "Select nodes first"
        entry = menu.addAction(reason)
        entry.setEnabled(False)
        menu.setToolTipsVisible(True)
        return
    current = current_precision(session, scope_id, targets)
    if is_invalid_precision(current):  # nothing is checked then: say what is stored
        stored = menu.addAction(f"Stored '{current}' is not a TensorRT precision")
        stored.setEnabled(False)
        menu.addSeparator()
    group = QActionGroup(menu)
    group.setExclusive(True)
    for precision in (*PRECISIONS, None):
        label = precision if precision is not None else NO_CONSTRAINT
        action = menu.addAction(label)
        action.setCheckable(True)
        action.setChecked((precision or "") == current)
        group.addAction(action)
        if precision is None:
            menu.insertSeparator(action)
        action.triggered.connect(
            lambda _c=False, p=precision: session.push(SetLayerPrecision(scope_id, targets, p))
        )


def add_precision_submenu(
    menu: QMenu, session: DocumentSession, scope_id: ScopeId, keys: Sequence[int]
) -> QMenu:
    """``Set Layer Precision ▸`` with :func:`fill_precision_menu`'s entries."""
    count = len(keys)
    title = TITLE if count <= 1 else f"{TITLE} ({count} nodes)"
    sub = menu.addMenu(title)
    sub.setObjectName("set_layer_precision")
    fill_precision_menu(sub, session, scope_id, keys)
    return sub


def popup_precision_menu(
    parent: QWidget,
    session: DocumentSession,
    scope_id: ScopeId,
    keys: Sequence[int],
    global_pos: QPoint,
) -> QMenu:
    """The badge's quick menu: change or clear the precision (deleted when closed)."""
    menu = QMenu(parent)
    menu.setObjectName("precision_quick_menu")
    menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # one menu per click, not kept
    header = menu.addAction(TITLE)
    header.setEnabled(False)
    menu.addSeparator()
    fill_precision_menu(menu, session, scope_id, keys)
    menu.popup(global_pos)
    return menu
