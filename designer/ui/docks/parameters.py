"""The Parameters window (SPEC P-1..P-5): attributes of the selected nodes, or the model's
information when nothing is selected (the subgraph's or function's in their tabs). It follows
the current tab and its canvas selection and rebuilds after each change that concerns what it
shows."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QLabel, QScrollArea, QWidget

from designer.core.document import ChangeKind, DocumentEvent
from designer.core.summary import type_text
from designer.ui.params.io_panel import IOPanel
from designer.ui.params.model_panel import ModelPanel
from designer.ui.params.node_panel import NodePanel
from designer.ui.params.scope_panel import ScopePanel

if TYPE_CHECKING:
    from designer.ui.document_tab import DocumentTab
    from designer.ui.main_window import MainWindow


class ParametersDock(QDockWidget):
    def __init__(self, window: MainWindow) -> None:
        super().__init__("Parameters", window)
        self.setObjectName("dock_parameters")
        self.window_ = window
        self.tab: DocumentTab | None = None
        self.keys: list[int] = []
        self.panel: QWidget | None = None
        self.other: QWidget | None = None  # a current non-document tab with its own panel
        self.defaults_expanded = True
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.setWidget(self.scroll_area)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.rebuild)
        window.currentTabChanged.connect(self._tab_changed)
        window.selectionChanged.connect(self._selection_changed)
        self.rebuild()

    # --- following the window ------------------------------------------------------------
    def _tab_changed(self, tab: DocumentTab | None) -> None:
        if self.tab is not None:
            for signal, slot in (
                (self.tab.session.changed, self._doc_changed),
                (self.tab.session.checked, self._checked),
            ):
                with contextlib.suppress(RuntimeError, TypeError):  # session already gone
                    signal.disconnect(slot)
        self.tab = tab
        self._follow_other(self.window_.tabs.currentWidget() if tab is None else None)
        self.keys = list(tab.view.selected_keys()) if tab is not None else []
        if tab is not None:
            tab.session.changed.connect(self._doc_changed)
            tab.session.checked.connect(self._checked)
        self.rebuild()

    def _follow_other(self, widget: QWidget | None) -> None:
        """Another kind of tab (an engine graph) that offers ``parameters_panel()`` and a
        ``parametersChanged`` signal: shown while it is current."""
        if self.other is not None:
            with contextlib.suppress(RuntimeError, TypeError):  # tab already gone
                self.other.parametersChanged.disconnect(self._timer.start)  # type: ignore[attr-defined]
        self.other = widget if hasattr(widget, "parameters_panel") else None
        if self.other is not None:
            self.other.parametersChanged.connect(self._timer.start)  # type: ignore[attr-defined]

    def _selection_changed(self, keys: list[int]) -> None:
        self.keys = list(keys)
        self._timer.start()

    def _doc_changed(self, event: DocumentEvent) -> None:
        if event.kind in (ChangeKind.POSITIONS, ChangeKind.SAVED):
            return
        if event.kind == ChangeKind.NODE and self.keys and not (set(self.keys) & event.node_keys):
            return
        self._timer.start()  # rebuild after the signal, never inside a field's own handler

    def _checked(self, _result: object) -> None:
        if isinstance(self.panel, NodePanel | IOPanel):
            self.panel.refresh_types()
        elif isinstance(self.panel, ScopePanel):
            self._timer.start()  # its inputs and outputs show the new types

    # --- content -------------------------------------------------------------------------
    def rebuild(self) -> None:
        self._timer.stop()
        if isinstance(self.panel, NodePanel):
            self.defaults_expanded = self.panel.default_section.expanded
        tab = self.tab
        panel: QWidget
        if tab is None and self.other is not None:
            panel = self.other.parameters_panel()  # type: ignore[attr-defined]
        elif tab is None:
            panel = _message(self.window_.idle_text("see its parameters"))
        else:
            scope = tab.session.doc.scope(tab.view.scope_id)
            nodes = [k for k in self.keys if scope.has_node(k)]
            if nodes:
                panel = NodePanel(tab.view, nodes, self._status, self.defaults_expanded)
            elif self.keys:
                panel = self._io_panel(tab)
            elif tab.view.scope_id.is_main:
                panel = ModelPanel(tab.session)
            else:  # a subgraph or function tab edits only its scope: show that
                panel = ScopePanel(tab.session, tab.view.scope_id, self._settings_opener(tab))
        self.panel = panel
        old = self.scroll_area.takeWidget()
        self.scroll_area.setWidget(panel)
        if old is not None:
            old.deleteLater()

    def _io_panel(self, tab: DocumentTab) -> QWidget:
        doc = tab.session.doc
        entries = [e for k in self.keys if (e := doc.io_entry(k)) is not None]
        if len(entries) == 1 and entries[0][0] == tab.view.scope_id:
            _scope, kind, name = entries[0]
            return IOPanel(tab.session, tab.view.scope_id, kind, name, tab.view.select_io)
        lines = []
        result = tab.session.check_result
        for key in self.keys:
            entry = doc.io_entry(key)
            if entry is None:
                continue
            scope_id, kind, name = entry
            proto = result.type_of(scope_id, name) if result else None
            kind_text = type_text(proto) if proto is not None else "?"
            lines.append(f"Graph {kind} <b>{name}</b>: <i>{kind_text}</i>")
        return _message("<br>".join(lines) or "Nothing to show for this selection.")

    def _settings_opener(self, tab: DocumentTab) -> Callable[[], None] | None:
        fid = tab.view.scope_id.function
        if fid is None or not tab.view.scope_id.is_function:
            return None
        from designer.ui.dialogs.function_settings import FunctionSettingsDialog

        def open_settings() -> None:
            FunctionSettingsDialog(tab.session, fid, self.window_).exec()

        return open_settings

    def _status(self, message: str) -> None:
        self.window_.statusBar().showMessage(message, 8000)


def _message(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
    label.setContentsMargins(8, 8, 8, 8)
    return label


def create_dock(window: MainWindow) -> QDockWidget:
    return ParametersDock(window)
