"""The Qt face of a document's one undo history (``Document.undo_stack``).

The core :class:`~designer.core.edits.stack.UndoStack` is the only record of edits, of the
current step and of the saved state. :class:`History` adapts it for widgets: Qt signals when
any of those change, and the method names of ``QUndoStack`` (``count``, ``index``, ``text``,
``undo``, ``setClean`` …) so that code and tests read like Qt code, but every call goes to
the core history and every answer comes from it. :class:`HistoryGroup` (the window's active
history, its Undo/Redo actions) and :class:`HistoryView` (the History window) replace
``QUndoGroup``/``QUndoView``, which can only show a ``QUndoStack``.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QColor, QIcon, QPalette
from PySide6.QtWidgets import QAbstractItemView, QListView, QStyle, QWidget

from designer.core.edits.stack import UndoStack
from designer.core.errors import DesignerError


@dataclass(frozen=True)
class _State:
    count: int
    index: int
    clean: bool
    undo_text: str
    redo_text: str


class History(QObject):
    """Signals and ``QUndoStack``-style calls for one core history (stores nothing)."""

    changed = Signal()  # any change (steps, index, labels, clean state)
    indexChanged = Signal(int)
    cleanChanged = Signal(bool)
    canUndoChanged = Signal(bool)
    canRedoChanged = Signal(bool)
    undoTextChanged = Signal(str)
    redoTextChanged = Signal(str)
    failed = Signal(str)  # an undo/redo refused by the document (EditError)

    def __init__(self, stack: UndoStack, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.stack = stack
        self._state = self._read()
        self._unsubscribe = stack.on_change(self._on_change)

    def close(self) -> None:
        """Stop following the core history (the session is going away)."""
        self._unsubscribe()

    def _read(self) -> _State:
        s = self.stack
        undo = s.label(s.index - 1) if s.can_undo else ""
        redo = s.label(s.index) if s.can_redo else ""
        return _State(len(s), s.index, s.is_clean, undo, redo)

    def _on_change(self) -> None:
        old, new = self._state, self._read()
        self._state = new
        if new.index != old.index:
            self.indexChanged.emit(new.index)
        if new.clean != old.clean:
            self.cleanChanged.emit(new.clean)
        if (new.index > 0) != (old.index > 0):
            self.canUndoChanged.emit(new.index > 0)
        if (new.index < new.count) != (old.index < old.count):
            self.canRedoChanged.emit(new.index < new.count)
        if new.undo_text != old.undo_text:
            self.undoTextChanged.emit(new.undo_text)
        if new.redo_text != old.redo_text:
            self.redoTextChanged.emit(new.redo_text)
        self.changed.emit()

    # --- QUndoStack-style reading ----------------------------------------------------------
    def count(self) -> int:
        return len(self.stack)

    def index(self) -> int:
        return self.stack.index

    def text(self, index: int) -> str:
        return self.stack.label(index) if 0 <= index < len(self.stack) else ""

    def canUndo(self) -> bool:
        return self.stack.can_undo

    def canRedo(self) -> bool:
        return self.stack.can_redo

    def undoText(self) -> str:
        return self._read().undo_text

    def redoText(self) -> str:
        return self._read().redo_text

    def isClean(self) -> bool:
        return self.stack.is_clean

    def cleanIndex(self) -> int:
        """The step count of the saved state; -1 when no reachable state is saved."""
        index = self.stack.clean_index
        return -1 if index is None else index

    # --- QUndoStack-style changing ---------------------------------------------------------
    def _run(self, step: str, index: int | None = None) -> None:
        try:
            if step == "undo":
                self.stack.undo()
            elif step == "redo":
                self.stack.redo()
            else:
                assert index is not None
                self.stack.set_index(index)
        except DesignerError as exc:  # the document refused a step: the history stays put
            self.failed.emit(f"cannot {step}: {exc}")

    def undo(self) -> None:
        self._run("undo")

    def redo(self) -> None:
        self._run("redo")

    def setIndex(self, index: int) -> None:
        self._run("go to a step", index)

    def setClean(self) -> None:
        self.stack.set_clean()

    def resetClean(self) -> None:
        self.stack.reset_clean()

    def clear(self) -> None:
        self.stack.clear()


def _prefixed(prefix: str, text: str) -> str:
    return f"{prefix} {text}" if text else prefix


class HistoryGroup(QObject):
    """The history the Edit menu and the History window act on: the current tab's, or none
    (a read-only document has no undo at all)."""

    activeStackChanged = Signal(object)  # History or None
    changed = Signal()  # the active history changed in any way, or another became active

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._stacks: list[History] = []
        self._active: History | None = None

    def addStack(self, stack: History) -> None:
        if stack not in self._stacks:
            self._stacks.append(stack)

    def removeStack(self, stack: History) -> None:
        if stack in self._stacks:
            self._stacks.remove(stack)
        if stack is self._active:
            self.setActiveStack(None)

    def stacks(self) -> list[History]:
        return list(self._stacks)

    def activeStack(self) -> History | None:
        return self._active

    def setActiveStack(self, stack: History | None) -> None:
        if stack is self._active:
            return
        if self._active is not None:
            self._active.changed.disconnect(self.changed)
        self._active = stack
        if stack is not None:
            self.addStack(stack)
            stack.changed.connect(self.changed)
        self.activeStackChanged.emit(stack)
        self.changed.emit()

    def undo(self) -> None:
        if self._active is not None:
            self._active.undo()

    def redo(self) -> None:
        if self._active is not None:
            self._active.redo()

    def createUndoAction(self, parent: QObject, prefix: str = "Undo") -> QAction:
        return self._action(parent, prefix, undo=True)

    def createRedoAction(self, parent: QObject, prefix: str = "Redo") -> QAction:
        return self._action(parent, prefix, undo=False)

    def _action(self, parent: QObject, prefix: str, *, undo: bool) -> QAction:
        action = QAction(prefix, parent)

        def update() -> None:
            stack = self._active
            if stack is None:
                action.setEnabled(False)
                action.setText(prefix)
                return
            action.setEnabled(stack.canUndo() if undo else stack.canRedo())
            action.setText(_prefixed(prefix, stack.undoText() if undo else stack.redoText()))

        action.triggered.connect(self.undo if undo else self.redo)
        self.changed.connect(update)
        update()
        return action


class _HistoryModel(QAbstractListModel):
    """Rows of the active history: ``<empty>`` (nothing applied), then one per step."""

    def __init__(self, group: HistoryGroup, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.group = group
        self.clean_icon: QIcon | None = None  # marks the saved state
        self.redo_color: QColor | None = None  # steps that are undone (can be redone)
        group.changed.connect(self._reset)

    def _reset(self) -> None:
        self.beginResetModel()
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        stack = self.group.activeStack()
        return 0 if stack is None or parent.isValid() else stack.count() + 1

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        stack = self.group.activeStack()
        if stack is None or not index.isValid():
            return None
        row = index.row()
        if role == Qt.ItemDataRole.DisplayRole:
            return "<empty>" if row == 0 else stack.text(row - 1)
        if role == Qt.ItemDataRole.DecorationRole and row == stack.cleanIndex():
            return self.clean_icon
        if role == Qt.ItemDataRole.ForegroundRole and row > stack.index():
            return self.redo_color
        if role == Qt.ItemDataRole.ToolTipRole and row == stack.cleanIndex():
            return "the saved state"
        return None


class HistoryView(QListView):
    """The History window: every step of the active history, the current one selected, the
    saved one marked; clicking a row undoes or redoes to it."""

    def __init__(self, group: HistoryGroup, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.group = group
        self._model = _HistoryModel(group, self)
        self.setModel(self._model)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self._model.clean_icon = self.style().standardIcon(
            QStyle.StandardPixmap.SP_DialogSaveButton
        )
        self._model.redo_color = self.palette().color(
            QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text
        )
        self.setIconSize(QSize(14, 14))
        self.setUniformItemSizes(True)
        self._model.modelReset.connect(self._select_current)
        self.clicked.connect(self._go_to)

    def _select_current(self) -> None:
        stack = self.group.activeStack()
        if stack is not None:
            self.setCurrentIndex(self._model.index(stack.index(), 0))

    def _go_to(self, index: QModelIndex) -> None:
        stack = self.group.activeStack()
        if stack is not None and index.isValid():
            stack.setIndex(index.row())
