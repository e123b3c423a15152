"""Edit > Show Changes of Last Step: the Compare view of the model before and after the
last model-wide step (a global modification, Group into Local Function, Inline Function
Call) while the document is still as that step left it.

Global modifications remember the old model object (their undo step keeps it anyway).
Group and Inline change the model in place, so :func:`before` takes a structural copy
first (:func:`designer.core.diff.skeleton.skeleton`: nodes and small tensors; large
initializers by name, type and shape — those steps do not change weight values)."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction

from designer.core.diff.skeleton import skeleton
from designer.ui.diff.show_changes import Snapshot, show_changes
from designer.ui.session import DocumentSession

if TYPE_CHECKING:
    from designer.ui.diff.tab import DiffTab
    from designer.ui.main_window import MainWindow

ACTION = "show_last_changes"


@dataclass
class _Step:
    session: weakref.ref[DocumentSession]
    revision: int
    what: str
    before: Snapshot
    after: Snapshot | None  # None: the session's model as it is now


_STEPS: weakref.WeakKeyDictionary[MainWindow, _Step] = weakref.WeakKeyDictionary()


def label(session: DocumentSession, when: str) -> str:
    path = session.doc.path
    return f"{path.name if path is not None else 'Untitled'} ({when})"


def before(session: DocumentSession) -> Snapshot:
    """A structural copy of the session's model, taken now (before an in-place step)."""
    return Snapshot(
        label(session, "before"), skeleton(session.doc.model), session.doc.base_dir, private=True
    )


def remember(
    window: MainWindow,
    session: DocumentSession,
    what: str,
    before: Snapshot,
    after: Snapshot | None = None,
) -> None:
    """Record the step that just ended; ``after`` None means the document as it is now."""
    _STEPS[window] = _Step(
        weakref.ref(session), session.doc.undo_stack.revision, what, before, after
    )
    update(window)


def current(window: MainWindow) -> _Step | None:
    """The remembered step while its document is unchanged since, else None."""
    step = _STEPS.get(window)
    if step is None:
        return None
    session = step.session()
    if session is None or session.doc.undo_stack.revision != step.revision:
        return None
    if step.after is None and session not in [t.session for t in window.document_tabs()]:
        return None
    return step


def show_last(window: MainWindow) -> DiffTab | None:
    step = current(window)
    if step is None:
        window.statusBar().showMessage(
            "No model-wide step to show: the document changed since the last one", 8000
        )
        return None
    session = step.session()
    assert session is not None
    after = step.after or Snapshot(label(session, "after"), session.doc.model, session.doc.base_dir)
    return show_changes(window, step.what, step.before, after)


def update(window: MainWindow) -> None:
    action = window.actions_by_name.get(ACTION)
    if action is None:
        return
    step = current(window)
    action.setEnabled(step is not None)
    action.setText(
        f"Show Changes of Last Step ({step.what})" if step else "Show Changes of Last Step"
    )


def install(window: MainWindow) -> None:
    """Add the action to the Edit menu (after Undo/Redo); kept up to date on opening."""
    menu = window.menus["Edit"]
    action = QAction("Show Changes of Last Step", window)
    action.setStatusTip(
        "Compare the model before and after the last model-wide step (FP16, sanitize, cast, "
        "group, inline), side by side"
    )
    action.triggered.connect(lambda _c=False: show_last(window))
    actions = menu.actions()
    redo = window.actions_by_name.get("redo")
    if redo is not None and redo in actions and actions.index(redo) + 1 < len(actions):
        menu.insertAction(actions[actions.index(redo) + 1], action)
    else:
        menu.addAction(action)
    window.actions_by_name[ACTION] = action
    menu.aboutToShow.connect(lambda: update(window))
    update(window)
