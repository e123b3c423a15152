"""Tools > Global Model Modification: Convert to FP16, Sanitize Graph, Batch Tensor Cast
(M-1..M-3) on the current document."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QWidget

from designer.ui.dialogs.status_dialog import RunState
from designer.ui.dialogs.transform_runner import TransformDialog
from designer.ui.diff.last_step import label, remember, show_last
from designer.ui.diff.show_changes import Snapshot
from designer.ui.session import DocumentSession

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow

DialogFactory = Callable[[DocumentSession, QWidget], TransformDialog]


def _fp16(session: DocumentSession, parent: QWidget) -> TransformDialog:
    from designer.ui.dialogs.fp16_dialog import FP16Dialog

    return FP16Dialog(session, parent)


def _sanitize(session: DocumentSession, parent: QWidget) -> TransformDialog:
    from designer.ui.dialogs.sanitize_dialog import SanitizeDialog

    return SanitizeDialog(session, parent)


def _cast(session: DocumentSession, parent: QWidget) -> TransformDialog:
    from designer.ui.dialogs.cast_dialog import CastDialog

    return CastDialog(session, parent)


#: (action name, menu text, tooltip, factory)
ENTRIES: list[tuple[str, str, str, DialogFactory]] = [
    (
        "convert_fp16",
        "Convert to &FP16…",
        "Weights and computation to float16 or bfloat16, checked against the original",
        _fp16,
    ),
    (
        "sanitize_graph",
        "&Sanitize Graph…",
        "Fold constants and remove unused nodes, initializers and value_info",
        _sanitize,
    ),
    (
        "batch_tensor_cast",
        "Batch Tensor &Cast…",
        "Cast chosen initializers and tensor attributes to one data type",
        _cast,
    ),
]


def open_dialog(window: MainWindow, factory: DialogFactory) -> TransformDialog | None:
    """Show a transform dialog for the current document (window-modal, non-blocking); from a
    subgraph or function tab, for its model (refused while the model is read-only)."""
    tab = window.tab()
    if tab is None:
        return None
    session = tab.session.root()  # from a subgraph/function tab: transform its model
    blocker = session.blocking_session()
    if blocker is not None:
        window.show_error(
            "Model is read-only",
            f"{blocker.title.rstrip('*')} has unconfirmed edits: confirm or discard them "
            "before transforming the model.",
        )
        return None
    dialog = factory(session, window)
    before = Snapshot(label(session, "before"), session.doc.model, session.doc.base_dir)
    dialog.runEnded.connect(lambda state: offer_changes(window, dialog, before, state))
    dialog.finished.connect(lambda _code: dialog.deleteLater())
    dialog.open()
    return dialog


def offer_changes(
    window: MainWindow, dialog: TransformDialog, before: Snapshot, state: RunState
) -> bool:
    """After a run that changed something (the document, or a new file that differs from
    it), give its status dialog a Show Changes button: the Compare view of the model before
    and after (also remembered for Edit > Show Changes of Last Step)."""
    status = dialog.status
    if status is None or state not in (RunState.SUCCESS, RunState.WARNING) or dialog.unchanged:
        return False  # nothing to compare: the run changed nothing
    target = dialog.destination.target()
    session = dialog.session
    if target is not None:
        after: Snapshot | None = Snapshot(f"{target.name} (written)", path=target)
    elif session.doc.model is not before.model:
        after = None  # the document as it is now
    else:
        return False
    what = dialog.what
    remember(window, session, what, before, after)
    status.offer_changes(lambda: show_last(window))
    return True


def install(window: MainWindow) -> None:
    tools: QMenu = window.menus["Tools"]
    menu = QMenu("&Global Model Modification", window)
    actions: list[QAction] = []
    for name, text, tip, factory in ENTRIES:
        action = QAction(text, window)
        action.setStatusTip(tip)
        action.setToolTip(tip)
        action.triggered.connect(lambda _c=False, f=factory: open_dialog(window, f))
        menu.addAction(action)
        window.actions_by_name[name] = action
        actions.append(action)
    options = window.actions_by_name.get("options")
    if options is not None:
        tools.insertMenu(options, menu)
        tools.insertSeparator(options)
    else:
        tools.addMenu(menu)

    def update(tab: object) -> None:
        for action in actions:
            action.setEnabled(tab is not None)
            action.setToolTip(action.statusTip() if tab is not None else "Open a model first")

    window.currentTabChanged.connect(update)
    update(window.tab())
