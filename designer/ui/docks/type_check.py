"""Type Checking window (T-1): the live diagnostics of the current document (the session
re-checks off the GUI thread after each edit), with severity icons, filters by severity and
text, and a double-click that shows the node on the canvas. The title counts them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from designer.core.analysis import CheckResult, Diagnostic, Severity
from designer.core.scope import ScopeId
from designer.ui.qtmodels.diagnostics_model import (
    MESSAGE_COLUMN,
    DiagnosticsFilter,
    DiagnosticsModel,
    severity_icon,
)
from designer.ui.widgets.filter_line import FilterLineEdit

if TYPE_CHECKING:
    from designer.ui.document_tab import DocumentTab
    from designer.ui.main_window import MainWindow
    from designer.ui.session import DocumentSession

TITLE = "Type Checking"
_PLURAL = {Severity.ERROR: "Errors", Severity.WARNING: "Warnings", Severity.INFO: "Info"}


class TypeCheckPanel(QWidget):
    def __init__(self, window: MainWindow, dock: QDockWidget) -> None:
        super().__init__()
        self.window_ = window
        self.dock = dock
        self.tab: DocumentTab | None = None
        self.model = DiagnosticsModel(self)
        self.proxy = DiagnosticsFilter(self)
        self.proxy.setSourceModel(self.model)
        self.buttons: dict[Severity, QToolButton] = {}
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        for severity in (Severity.ERROR, Severity.WARNING, Severity.INFO):
            button = QToolButton()
            button.setCheckable(True)
            button.setChecked(True)
            button.setIcon(severity_icon(severity))
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            button.setToolTip(f"Show {_PLURAL[severity].lower()}")
            button.toggled.connect(lambda on, s=severity: self.proxy.set_severity(s, on))
            self.buttons[severity] = button
            top.addWidget(button)
        self.scope_only = QToolButton()
        self.scope_only.setText("This scope only")
        self.scope_only.setCheckable(True)
        self.scope_only.setChecked(True)
        self.scope_only.setToolTip(
            "In a subgraph or function tab: show only the problems inside that scope"
        )
        self.scope_only.toggled.connect(lambda _on: self._apply_scope())
        top.addWidget(self.scope_only)
        self.search = FilterLineEdit("Filter problems")
        self.search.filterChanged.connect(self.proxy.set_text)
        top.addWidget(self.search, 1)

        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        self.table.setMinimumHeight(40)  # many docks share the right side
        self.table.setAlternatingRowColors(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(MESSAGE_COLUMN, QHeaderView.ResizeMode.Stretch)
        for column, width in ((0, 78), (2, 120), (3, 110), (4, 100)):
            header.resizeSection(column, width)
        self.table.doubleClicked.connect(self._double_clicked)
        self.status = QLabel()
        self.status.setStyleSheet("color: palette(mid); padding: 2px;")
        self.status.setWordWrap(True)  # a long idle text must not widen the window
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        window.currentTabChanged.connect(self.follow)
        self.follow(window.tab())

    # --- following the document --------------------------------------------------------------
    def follow(self, tab: DocumentTab | None) -> None:
        self.tab = tab
        self._apply_scope()
        if tab is not None:
            session = tab.session
            if not session.property("typecheck_follows"):  # connected once per session
                session.setProperty("typecheck_follows", True)
                session.checked.connect(lambda result, s=session: self._on_checked(s, result))
            self.show_result(session.check_result)
        else:
            self.show_result(None)

    def _apply_scope(self) -> None:
        """A subgraph or function tab lists its own scope's problems unless asked not to
        (its working copy is checked as a whole model)."""
        scope = self.tab.scope_id if self.tab is not None else None
        in_scope_tab = scope is not None and not scope.is_main
        self.scope_only.setVisible(in_scope_tab)
        self.proxy.set_scope(scope if in_scope_tab and self.scope_only.isChecked() else None)
        if self.tab is not None:
            self.show_result(self.tab.session.check_result)

    def _on_checked(self, session: DocumentSession, result: CheckResult) -> None:
        if self.tab is not None and session is self.tab.session:
            self.show_result(result)

    def show_result(self, result: CheckResult | None) -> None:
        self.model.set_result(result)
        for severity, button in self.buttons.items():
            button.setText(f"{_PLURAL[severity]} ({self.model.count(severity)})")
        total = len(self.model.diagnostics)
        self.dock.setWindowTitle(f"{TITLE} ({total})" if result is not None else TITLE)
        if self.tab is None:
            self.status.setText(self.window_.idle_text("see its problems"))
        elif result is None:
            self.status.setText("Checking…")
        else:
            hint = "Double-click a problem to show its node"
            shown = self.proxy.rowCount()
            if self.proxy.scope is not None and shown < total:
                hint = f"{total - shown} more elsewhere in the model; {hint[0].lower()}{hint[1:]}"
                if not shown:
                    hint = f"No problems in this scope ({total} elsewhere in the model)"
            self.status.setText(hint if total else "No problems found")

    # --- jumping -----------------------------------------------------------------------------
    def _double_clicked(self, index: QModelIndex) -> None:
        source = self.proxy.mapToSource(index)
        diagnostic = self.model.diagnostic(source)
        if diagnostic is not None:
            self.jump_to(diagnostic)

    def jump_to(self, diagnostic: Diagnostic) -> bool:
        """Select and centre the diagnostic's node (for a node inside a subgraph, its
        enclosing top-level node, or the subgraph's own tab when the window can open it).
        False with a status message when there is nothing to show."""
        if self.tab is None:
            return False
        view = self.tab.view
        key = diagnostic.node_key
        if key is None:
            self.window_.statusBar().showMessage(
                f"'{diagnostic.message}' concerns the whole graph, not one node", 6000
            )
            return False
        scope = diagnostic.scope
        opener = getattr(self.window_, "open_scope", None)
        if scope != view.scope_id and callable(opener):
            opened = opener(self.tab.session, scope)
            view = getattr(opened, "view", view)
        if scope != view.scope_id:
            holder = _top_node(scope, view.scope_id)
            if holder is None:
                self.window_.statusBar().showMessage(
                    f"Node '{diagnostic.node_name}' is in {diagnostic.scope_name}, "
                    "which has no canvas open",
                    6000,
                )
                return False
            self.window_.statusBar().showMessage(
                f"Node '{diagnostic.node_name}' is inside {diagnostic.scope_name}; "
                "showing the node that holds it",
                6000,
            )
            key = holder
        view.select_keys([key])
        view.center_on(key)
        return True


def _top_node(scope: ScopeId, shown: ScopeId) -> int | None:
    """Key of the node of scope ``shown`` that (transitively) holds subgraph ``scope``."""
    if scope.function != shown.function or not scope.is_within(shown) or scope == shown:
        return None
    return scope.steps[len(shown.steps)].node_key


def create_dock(window: MainWindow) -> QDockWidget:
    dock = QDockWidget(TITLE, window)
    dock.setObjectName("dock_type_check")
    dock.setWidget(TypeCheckPanel(window, dock))
    return dock
