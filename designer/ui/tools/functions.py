"""Edit > Group into Local Function… and Edit > Inline Function Call (G-4), also in the
canvas context menu. Grouping turns the selected nodes of the current canvas into the body
of a new local function and puts one call node in their place; inlining replaces a call
node by the function's body. Both are one undo step each (the core edits do the work)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QWidget,
)

from designer.core.document import Document
from designer.core.edits import Edit
from designer.core.edits.functions import GroupIntoFunction, InlineFunctionCall
from designer.core.functions import called_function
from designer.core.names import identifier_problem, unique_name
from designer.core.view_groups import constants_feeding_only
from designer.ui.canvas.view import CanvasView
from designer.ui.dialogs.new_function import DEFAULT_DOMAIN, domain_problem
from designer.ui.diff import last_step
from designer.ui.widgets.error_label import ErrorLabel

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow
    from designer.ui.session import DocumentSession

FunctionId = tuple[str, str, str]


class GroupDialog(QDialog):
    """Name and domain of the function the selection becomes; errors show inline."""

    def __init__(self, doc: Document, count: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Group into Local Function")
        self.taken = {(f.domain, f.name) for f in doc.model.functions}
        in_domain = {n for d, n in self.taken if d == DEFAULT_DOMAIN}
        self.name_edit = QLineEdit(unique_name("Group", in_domain))
        self.domain_edit = QLineEdit(DEFAULT_DOMAIN)
        self.error = ErrorLabel()
        form = QFormLayout(self)
        intro = QLabel(
            f"The {count} selected node(s) become the body of a new local function and are "
            "replaced by one call node."
        )
        intro.setWordWrap(True)
        form.addRow(intro)
        form.addRow("Function name:", self.name_edit)
        form.addRow("Domain:", self.domain_edit)
        form.addRow(self.error)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def problem(self) -> str | None:
        name, domain = self.name_edit.text().strip(), self.domain_edit.text().strip()
        name_problem = identifier_problem(name)
        if name_problem is not None:
            return f"invalid function name: {name_problem}"
        domain_error = domain_problem(domain)
        if domain_error is not None:
            return domain_error
        if (domain, name) in self.taken:
            return f"a local function {domain}:{name} already exists"
        return None

    def accept(self) -> None:
        problem = self.problem()
        if problem is not None:
            self.error.setText(problem)
            return
        super().accept()


def ask_group_names(parent: QWidget, doc: Document, count: int) -> tuple[str, str] | None:
    """(name, domain) for the new function, or None when cancelled."""
    dialog = GroupDialog(doc, count, parent)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return None
    return dialog.name_edit.text().strip(), dialog.domain_edit.text().strip()


def selected_nodes(view: CanvasView) -> list[int]:
    """Keys of the selected operator nodes (graph input/output pseudo-nodes left out)."""
    scope = view.session.doc.scope(view.scope_id)
    return [k for k in view.selected_keys() if scope.has_node(k)]


def selected_call(view: CanvasView) -> tuple[int, FunctionId] | None:
    """(key, function) when exactly one node is selected and it calls a local function."""
    keys = selected_nodes(view)
    if len(keys) != 1:
        return None
    node = view.session.doc.scope(view.scope_id).node(keys[0])
    fid = called_function(view.session.doc, node)
    return (keys[0], fid) if fid is not None else None


def push_on_model(view: CanvasView, edit: Edit) -> str | None:
    """Push ``edit`` (which changes the model's function list) on the model's own session;
    None when applied, else the reason. In a subgraph or function tab the working copy
    could not confirm a change outside its scope, so the edit goes to the model (refused,
    with the reason, while a tab has unconfirmed edits) and the copies down to this tab
    become fresh copies of it at once (they had nothing unconfirmed to lose). Syncing them
    first too hands their layout to the model, so the edit moves those positions along."""
    session = view.session
    target = session.root()
    chain: list[DocumentSession] = []
    current = session
    while current is not target:
        chain.append(current)
        current = current.parent_session  # type: ignore[attr-defined]
    unlocked = target.blocking_session() is None
    if unlocked:
        for copy in reversed(chain):
            copy.sync()  # type: ignore[attr-defined]
    message = target.try_push(edit)
    if message is None:
        for copy in reversed(chain):
            copy.sync()  # type: ignore[attr-defined]
    return message


def group_selection(window: MainWindow, view: CanvasView | None = None) -> int | None:
    """Group the selected nodes of ``view`` (the current canvas by default); returns the
    key of the new call node, which ends up selected, or None."""
    view = view or window.current_view()
    if view is None:
        return None
    view.flush()
    keys = selected_nodes(view)
    if not keys:
        window.statusBar().showMessage("Select the nodes to group into a function", 5000)
        return None
    # the Constants only these nodes read go in too, drawn or hidden: left out, each became
    # an input of the function, and the result depended on "Show All Constants"
    keys += constants_feeding_only(view.session.doc, view.scope_id, keys)
    names = ask_group_names(window, view.session.doc, len(keys))
    if names is None:
        return None
    name, domain = names
    edit = GroupIntoFunction(view.scope_id, keys, name, domain)
    before = last_step.before(view.session.root())
    message = push_on_model(view, edit)
    if message is not None:
        window.show_error("Cannot group into a local function", message)
        return None
    last_step.remember(window, view.session.root(), "Group into Local Function", before)
    call_key: int | None = edit.call_key
    view.flush()  # the edit's change event is pending: show the call node now
    if call_key is not None:
        view.select_keys([call_key])
    window.statusBar().showMessage(
        f"Grouped {len(keys)} node(s) into local function {domain}:{name} "
        "(Edit > Show Changes of Last Step compares)",
        8000,
    )
    return call_key


def inline_selection(window: MainWindow, view: CanvasView | None = None) -> bool:
    """Replace the selected call node by its function's body; the body's nodes end up
    selected. True when done."""
    view = view or window.current_view()
    if view is None:
        return False
    view.flush()
    call = selected_call(view)
    if call is None:
        window.statusBar().showMessage("Select one node that calls a local function", 5000)
        return False
    key, fid = call
    edit = InlineFunctionCall(view.scope_id, key)
    before = last_step.before(view.session.root())
    message = push_on_model(view, edit)
    if message is not None:
        window.show_error("Cannot inline the function call", message)
        return False
    last_step.remember(window, view.session.root(), "Inline Function Call", before)
    view.flush()
    view.select_keys(edit.new_keys or [])
    window.statusBar().showMessage(
        f"Inlined {fid[0]}:{fid[1]} (Edit > Show Changes of Last Step compares)", 8000
    )
    return True


def install(window: MainWindow) -> None:
    group = QAction("&Group into Local Function…", window)
    group.setToolTip("Replace the selected nodes by one call of a new local function")
    group.triggered.connect(lambda _checked=False: group_selection(window))
    inline = QAction("&Inline Function Call", window)
    inline.setToolTip("Replace the selected call node by the body of its local function")
    inline.triggered.connect(lambda _checked=False: inline_selection(window))
    edit_menu = window.menus["Edit"]
    edit_menu.addSeparator()
    edit_menu.addAction(group)
    edit_menu.addAction(inline)
    window.actions_by_name["group_into_function"] = group
    window.actions_by_name["inline_function_call"] = inline

    def update(*_args: object) -> None:
        view = window.current_view()
        try:
            nodes = selected_nodes(view) if view is not None else []
            call = selected_call(view) if view is not None and len(nodes) == 1 else None
        except KeyError:  # the scope is going away with its tab
            nodes, call = [], None
        group.setEnabled(bool(nodes))
        group.setStatusTip(
            group.toolTip() if nodes else "Select one or more nodes on the canvas first"
        )
        inline.setEnabled(call is not None)
        inline.setStatusTip(
            inline.toolTip() if call is not None else "Select one node that calls a local function"
        )

    window.selectionChanged.connect(update)
    window.currentTabChanged.connect(update)
    edit_menu.aboutToShow.connect(update)
    update()

    def hook(menu: QMenu, view: CanvasView, scene_pos: QPointF) -> None:
        update()
        menu.addSeparator()
        menu.addAction(group)
        menu.addAction(inline)

    window.canvas_menu_hooks.append(hook)
