"""The main window: document tabs, menus, docks, undo history, autosave and recovery."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QByteArray, QPoint, QPointF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QGuiApplication,
)
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QStackedWidget,
    QTabWidget,
    QToolBar,
)

from designer.core.document import Document
from designer.core.errors import DesignerError
from designer.core.new_model import new_model
from designer.core.scope import MAIN_SCOPE, ScopeId
from designer.logs import setup_logging
from designer.ui import recovery
from designer.ui.canvas.settings import CanvasSettings
from designer.ui.canvas.view import CanvasView
from designer.ui.document_tab import DocumentTab
from designer.ui.history import HistoryGroup, HistoryView
from designer.ui.menus import build_menus
from designer.ui.plugins import arrange_docks, install_dock_plugins, install_plugins, tidy_tab_bars
from designer.ui.scope_tabs import ScopeTabs
from designer.ui.session import DocumentSession
from designer.ui.settings import Settings
from designer.ui.welcome import WelcomePage

MODEL_FILTER = "ONNX models (*.onnx);;All files (*)"
OPEN_FILTER = (
    "ONNX models (*.onnx);;TensorRT engine layer information (*.json *.log);;All files (*)"
)


def default_window_size(width: int = 1400, height: int = 900) -> QSize:
    """``width`` x ``height``, shrunk to the primary screen's free area (a 1366x768 laptop)."""
    wanted = QSize(width, height)
    screen = QGuiApplication.primaryScreen()
    if screen is None:
        return wanted
    return wanted.boundedTo(screen.availableGeometry().size())


class MainWindow(QMainWindow):
    """Docks and tools plug in without editing this class: every module of
    ``designer.ui.docks`` with ``create_dock(window) -> QDockWidget`` adds a dock (listed in
    View > Windows), every module of ``designer.ui.tools`` with ``install(window)`` adds its
    actions to ``window.menus``. They follow the current document through
    ``currentTabChanged`` and the canvas selection through ``selectionChanged``."""

    currentTabChanged = Signal(object)  # DocumentTab or None
    selectionChanged = Signal(list)  # node keys selected on the current canvas

    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__()
        self.settings = settings or Settings()
        self.setWindowTitle("ONNX Designer")
        self.resize(default_window_size())
        self.setAcceptDrops(True)
        self.undo_group = HistoryGroup(self)  # the current tab's document history
        self.menus: dict[str, QMenu] = {}  # filled by build_menus: "File", "Edit", …
        self.main_toolbar: QToolBar | None = None  # filled by build_menus
        self.recent_menu: QMenu | None = None
        #: when a list: errors are kept here instead of shown in a message box (headless)
        self.headless_errors: list[str] | None = None
        self.windows_menu = QMenu("&Windows", self)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.setTabsClosable(True)
        self.tabs.setMovable(True)
        self.tabs.tabCloseRequested.connect(lambda i: self.close_tab(i))
        self.tabs.currentChanged.connect(self._on_current_changed)
        self.welcome = WelcomePage()
        self.welcome.openRequested.connect(lambda p: self.open_files([Path(p)]))
        self.welcome.newRequested.connect(self.new_document)
        self.welcome.openDialogRequested.connect(self.open_dialog)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.welcome)
        self.stack.addWidget(self.tabs)
        self.setCentralWidget(self.stack)

        self.history = QDockWidget("History", self)
        self.history.setObjectName("dock_history")
        self.history.setWidget(HistoryView(self.undo_group))
        self.docks: list[QDockWidget] = []
        #: Plug-ins add entries to the canvas context menu: f(menu, view, scene_pos).
        self.canvas_menu_hooks: list[Callable[[QMenu, CanvasView, QPointF], None]] = []

        self.problems = QLabel()
        self.statusBar().addPermanentWidget(self.problems)
        setup_logging()  # stderr and the Log window's recorder (idempotent)
        install_plugins(self, "designer.ui.docks", "create_dock")
        install_dock_plugins(self)  # entry-point group onnx_designer.docks
        self.docks.append(self.history)  # last: after Type Checking at the bottom
        arrange_docks(self)
        self.scope_tabs = ScopeTabs(self)  # subgraph and local-function tabs
        self.actions_by_name: dict[str, QAction] = build_menus(self)
        install_plugins(self, "designer.ui.tools", "install")
        self._default_state = self.saveState()
        self._refresh_recent()
        self._update_actions()

        self.autosave_timer = QTimer(self)
        self.autosave_timer.timeout.connect(self.autosave)
        self.autosave_timer.start(self.settings.autosave_seconds * 1000)

    # --- documents -----------------------------------------------------------------------
    def tab(self, index: int | None = None) -> DocumentTab | None:
        widget = self.tabs.currentWidget() if index is None else self.tabs.widget(index)
        return widget if isinstance(widget, DocumentTab) else None

    def idle_text(self, action: str) -> str:
        """What a dock shows while the current tab is no model: nothing is open yet, or a
        report or engine tab is in front of the models (which are still open)."""
        models = self.document_tabs()
        if not models:
            return f"Open a model to {action}."
        current = self.tabs.currentWidget()
        shown = getattr(current, "title", None) or self.tabs.tabText(self.tabs.currentIndex())
        count = f"{len(models)} model{'s' if len(models) != 1 else ''} open"
        return f"“{shown}” is not a model tab ({count}): switch to one to {action}."

    def document_tabs(self) -> list[DocumentTab]:
        return [t for i in range(self.tabs.count()) if (t := self.tab(i)) is not None]

    def current_view(self) -> CanvasView | None:
        tab = self.tab()
        return tab.view if tab is not None else None

    def add_session(
        self, session: DocumentSession, scope_id: ScopeId = MAIN_SCOPE, index: int = -1
    ) -> DocumentTab:
        canvas_settings = CanvasSettings(
            show_grid=self.settings.show_grid, show_constants=self.settings.show_constants
        )
        tab = DocumentTab(session, canvas_settings, scope_id)
        self.undo_group.addStack(session.undo_stack)
        index = self.tabs.insertTab(index, tab, session.title)
        self.tabs.setTabToolTip(index, session.location)
        session.titleChanged.connect(lambda _t, tab=tab: self._retitle(tab))
        session.editRejected.connect(lambda message: self.statusBar().showMessage(message, 8000))
        session.warning.connect(lambda message, tab=tab: tab.show_banner(message))
        session.checked.connect(lambda _r, tab=tab: self._show_problems(tab))
        tab.view.statusMessage.connect(lambda message: self.statusBar().showMessage(message, 8000))
        tab.view.contextMenuRequested.connect(
            lambda global_pos, scene_pos, tab=tab: self._popup(
                self.canvas_menu(tab, scene_pos), global_pos
            )
        )
        tab.controls.setMenu(self._controls_menu(tab))
        tab.view.selectionChanged.connect(
            lambda keys, tab=tab: self.selectionChanged.emit(keys) if tab is self.tab() else None
        )
        self.scope_tabs.connect_view(tab)
        if session.layout_warning:
            tab.show_banner(session.layout_warning)
        self.tabs.setCurrentIndex(index)
        self.stack.setCurrentWidget(self.tabs)
        self._check_when_drawn(tab)
        return tab

    def _check_when_drawn(self, tab: DocumentTab) -> None:
        """Run the type checker now, or, while a big model is laid out off the GUI thread,
        once it is drawn (and collapsed): the checker of a 100k-node model is seconds of
        Python on a pool thread, and sharing the interpreter with the layout, the drawing
        and the docks doubled their time (and made it vary by seconds)."""
        view, session = tab.view, tab.session
        if view.job is None:
            session.check_now()
            return

        def drawn(busy: bool) -> None:
            if not busy:
                view.layoutBusy.disconnect(drawn)
                # Two turns of the event loop: the first runs after what the finished
                # layout queued (a collapse of a big model), the second after the paints
                # and dock updates that caused.
                QTimer.singleShot(0, session, lambda: QTimer.singleShot(0, session, check))

        def check() -> None:
            if not session.closed:
                session.check_now()

        view.layoutBusy.connect(drawn)

    def canvas_menu(self, tab: DocumentTab, scene_pos: QPointF) -> QMenu:
        """The canvas context menu: editing, arrangement, every dock window, plug-in items."""
        menu = QMenu(tab.view)
        for name in ("cut", "copy", "paste", "delete", "select_all", None, "arrange", "fit"):
            if name is None:
                menu.addSeparator()
            else:
                menu.addAction(self.actions_by_name[name])
        for hook in self.canvas_menu_hooks:
            hook(menu, tab.view, scene_pos)
        menu.addSeparator()
        # A submenu of its own: adding the shared View > Windows menu would make this menu
        # its owner in PySide6, and deleting this one on close would delete that one too.
        windows = menu.addMenu(self.windows_menu.title())
        windows.addActions(self.windows_menu.actions())
        return menu

    @staticmethod
    def _popup(menu: QMenu, global_pos: QPoint) -> None:
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # one menu per click, not kept
        menu.popup(global_pos)

    def _controls_menu(self, tab: DocumentTab) -> QMenu:
        menu = QMenu(tab.controls)
        menu.addAction(self.actions_by_name["show_grid"])
        menu.addAction(self.actions_by_name["show_constants"])
        menu.addAction(self.actions_by_name["fit"])
        menu.addAction(self.actions_by_name["arrange"])
        menu.addSeparator()
        controls = menu.addMenu("Navigation controls")
        for line in tab.view.settings_help().splitlines():
            if line.strip() and not line.rstrip().endswith(":"):
                entry = controls.addAction(line.strip())
                entry.setEnabled(False)  # a reference list, not commands
        return menu

    def open_scope(self, session: DocumentSession, scope_id: ScopeId) -> DocumentTab | None:
        """Open (or focus) the tab editing subgraph/function ``scope_id`` of ``session``."""
        return self.scope_tabs.open_scope(session, scope_id)

    def ask_confirm_changes(self, tab: DocumentTab) -> str:
        """'confirm', 'discard' or 'cancel' for a subgraph/function tab being closed."""
        return self.scope_tabs.ask(tab)

    def open_files(self, paths: list[Path]) -> None:
        """Open each model in its own tab; a file that fails shows a message and the others
        (and every open document) are unaffected. A TensorRT engine's layer JSON opens as a
        read-only engine tab (designer.ui.engine)."""
        from designer.ui.engine import is_engine_file, open_engine_tab

        for path in paths:
            if is_engine_file(path):
                if open_engine_tab(self, path) is not None:
                    self.settings.add_recent(path.resolve())
                continue
            existing = next(
                (t for t in self.document_tabs() if t.session.doc.path == path.resolve()), None
            )
            if existing is not None:
                self.tabs.setCurrentWidget(existing)
                continue
            try:
                session = DocumentSession.open(path, self)
            except DesignerError as exc:
                self.show_error("Cannot open model", str(exc))
                continue
            self.add_session(session)
            self.settings.add_recent(path.resolve())
        self._refresh_recent()

    def new_document(self) -> None:
        from designer.ui.dialogs.new_model import NewModelDialog

        dialog = NewModelDialog(self.settings.default_opset, self)
        if dialog.exec() != NewModelDialog.DialogCode.Accepted:
            return
        model = new_model(dialog.chosen_opset, contrib=dialog.with_contrib)
        self.add_session(DocumentSession(Document(model), self))

    def open_dialog(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Open Model", "", OPEN_FILTER)
        self.open_files([Path(f) for f in files])

    def save(
        self, tab: DocumentTab | None = None, save_as: bool = False, closing: bool = False
    ) -> bool:
        """Save ``tab``'s model (asking for a name when it has none or ``save_as``); False
        when nothing was saved, or, ``closing``, when the layout file could not be written
        (the tab then stays open, and the user is told)."""
        tab = tab or self.tab()
        if tab is None:
            return False
        if tab.scope_id != MAIN_SCOPE:  # a working copy is saved with its model
            self.statusBar().showMessage(
                "A subgraph or function tab is saved with its model: confirm its edits, "
                "then save the model's tab",
                8000,
            )
            return False
        path = tab.session.doc.path
        if save_as or path is None:
            chosen = self.choose_save_path(tab, path)
            if chosen is None:
                return False
            other = self._open_elsewhere(tab, chosen)
            if other is not None:
                self.show_error(
                    "Cannot save model",
                    f"{chosen} is open in the tab {other.session.title.rstrip('*')}: saving "
                    "over it would replace that model and remove the external data it still "
                    "reads. Close that tab first, or choose another file name.",
                )
                return False
            path = chosen
        tab.banner.setVisible(False)  # what it said was about the document before this save
        layout_problems: list[str] = []
        tab.session.warning.connect(layout_problems.append)
        try:
            tab.session.save(path)
        except DesignerError as exc:
            self.show_error("Cannot save model", str(exc))
            return False
        finally:
            tab.session.warning.disconnect(layout_problems.append)
        recovery.remove_recovery(tab.recovery_id)
        if layout_problems and closing:  # the tab must not take the arrangement with it
            self.show_error(
                "Layout not saved",
                f"{layout_problems[-1]}.\n\nThe tab stays open: save it elsewhere (File > Save "
                "As) to keep the arrangement, or close it again to drop it.",
            )
            return False
        self.settings.add_recent(path.resolve())
        self._refresh_recent()
        self.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    def output_problem(self, target: Path, session: DocumentSession | None = None) -> str | None:
        """Why a file written from the window (an extraction, a composition) must not go
        to ``target``: one of ``session``'s own files (its model, external data, layout
        file), or the model file of a document open in a tab, whose tab would then show a
        model the file no longer holds. None when it may be written."""
        from designer.core.io.atomic import same_file
        from designer.core.io.model_files import refuse_model_files

        doc = session.doc if session is not None else None
        if doc is not None and doc.path is not None:
            try:
                refuse_model_files(target, doc.model, doc.path, doc.base_dir)
            except DesignerError as exc:
                return str(exc)
        for tab in self.document_tabs():
            path = tab.session.doc.path
            if tab.scope_id == MAIN_SCOPE and path is not None and same_file(path, target):
                return (
                    f"{target} is open in the tab {tab.session.title.rstrip('*')}: writing there "
                    "would replace the model that tab shows. Close that tab first, or choose "
                    "another file name."
                )
        return None

    def unsaved_tab(self, path: Path) -> DocumentTab | None:
        """The tab of ``path``'s model when it has unsaved changes (what reads the file,
        e.g. Compose, would not see them)."""
        from designer.core.io.atomic import same_file

        for tab in self.document_tabs():
            doc, where = tab.session.doc, tab.session.doc.path
            shown = tab.scope_id == MAIN_SCOPE and where is not None and doc.modified
            if shown and where is not None and same_file(where, path):
                return tab
        return None

    def _open_elsewhere(self, tab: DocumentTab, path: Path) -> DocumentTab | None:
        """The tab of another document whose model file is ``path``, if one is open."""
        target = path.resolve()
        for other in self.document_tabs():
            if other.session.root() is tab.session.root():
                continue
            if other.scope_id == MAIN_SCOPE and other.session.doc.path == target:
                return other
        return None

    def choose_save_path(self, tab: DocumentTab, current: Path | None) -> Path | None:
        start = str(current) if current else "model.onnx"
        name, _ = QFileDialog.getSaveFileName(self, "Save Model As", start, MODEL_FILTER)
        return Path(name) if name else None

    def close_tab(self, index: int | None = None) -> bool:
        """Close a document, asking about unsaved changes; False if the user cancelled."""
        i = self.tabs.currentIndex() if index is None else index
        tab = self.tab(i)
        if tab is None:  # another kind of tab (a report): let it stop its work, then close
            widget = self.tabs.widget(i)
            if widget is not None:
                getattr(widget, "close_tab_requested", lambda: None)()
                self.tabs.removeTab(i)
                widget.deleteLater()
            if self.tabs.count() == 0:
                self.stack.setCurrentWidget(self.welcome)
            return True
        if not self.scope_tabs.before_close(tab):
            return False
        i = self.tabs.indexOf(tab)
        if tab.scope_id == MAIN_SCOPE and tab.session.modified:
            answer = self.ask_save_changes(tab)
            if answer == "cancel":
                return False
            if answer in ("save", "save_as") and not self.save(
                tab, save_as=answer == "save_as", closing=True
            ):
                return False
        recovery.remove_recovery(tab.recovery_id)
        self.tabs.removeTab(i)
        self.undo_group.removeStack(tab.session.undo_stack)
        tab.view.cancel_layout()
        tab.session.close()
        tab.deleteLater()
        if self.tabs.count() == 0:  # report tabs count too
            self.stack.setCurrentWidget(self.welcome)
        self._update_actions()
        return True

    def ask_save_changes(self, tab: DocumentTab) -> str:
        """'save', 'save_as', 'discard' or 'cancel' for a modified document being closed
        (Save As… is there for a model whose folder cannot be written any more: Save
        fails there, and Cancel then Save As was the only way to keep the work)."""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Unsaved changes",
            f"{tab.session.title.rstrip('*')} has unsaved changes. Save them?",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            self,
        )
        save_as = box.addButton("Save As…", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        box.exec()
        clicked = box.clickedButton()
        if clicked is save_as:
            return "save_as"
        return {
            box.button(QMessageBox.StandardButton.Save): "save",
            box.button(QMessageBox.StandardButton.Discard): "discard",
        }.get(clicked, "cancel")

    def show_error(self, title: str, message: str) -> None:
        """A message box, or, where nobody can click one (``headless_errors`` set, as by
        ``onnx-designer screenshot``), the message kept in that list."""
        if self.headless_errors is not None:
            self.headless_errors.append(message)
            return
        QMessageBox.critical(self, title, message)

    # --- autosave and recovery -------------------------------------------------------------
    def autosave(self) -> None:
        """Write every modified model, with its layout, to its recovery entry (a restored
        tab to the entry it came from); the layout file beside the model is left alone
        until the user saves."""
        for tab in self.document_tabs():
            if tab.session.modified and tab.scope_id == MAIN_SCOPE:
                try:
                    recovery.write_recovery(
                        tab.session.doc,
                        tab.recovery_id,
                        lambda message: self.statusBar().showMessage(
                            f"Autosave: {message}; save the model to keep its layout", 8000
                        ),
                    )
                except (DesignerError, OSError) as exc:
                    self.statusBar().showMessage(
                        f"Autosave of {tab.session.title.rstrip('*')} failed: {exc}; "
                        "save the model to keep your changes",
                        8000,
                    )

    def offer_recovery(self) -> None:
        """Offer the work of sessions that did not exit cleanly; entries a running instance
        keeps are neither offered nor deleted. A restored tab takes over its entry: it
        stays on disk (a second crash loses nothing), autosave writes over it, and saving
        or closing the tab removes it. It shows the layout autosaved with the entry (an
        entry of an older version, without one, is arranged anew)."""
        try:
            entries = recovery.pending_recoveries()
        except OSError as exc:  # no safety net: the designer works all the same
            self.statusBar().showMessage(str(exc), 30000)
            return
        if not entries:
            return
        if not self.ask_restore(entries):
            for entry in entries:
                recovery.discard(entry)
            return
        for entry in entries:
            try:
                session = DocumentSession.open(entry.model, self, base_dir=entry.base_dir)
            except DesignerError as exc:
                self.show_error(
                    "Cannot restore document",
                    f"{exc}\n\nThe recovery copy stays in {entry.model.parent} and is offered "
                    f"again at the next start; answer No then, or delete "
                    f"{entry.model.name} and {entry.model.with_suffix('.json').name}, "
                    "to drop it.",
                )
                continue
            if not recovery.claim(entry):  # another instance restored it meanwhile
                session.close()
                continue
            try:
                placed = recovery.load_layout(entry, session.doc)
            except DesignerError as exc:  # the model is restored all the same
                session.layout_restored = False
                session.layout_warning = f"{exc}; the nodes were arranged anew"
            else:
                if placed is not None:  # the entry's layout replaces any other
                    session.layout_restored = placed > 0
                    session.layout_warning = None
            session.doc.path = entry.original
            if entry.original is not None and entry.base_dir is None:
                session.doc.base_dir = entry.model.parent
            session.undo_stack.resetClean()  # restored work is unsaved
            tab = self.add_session(session)
            tab.recovery_id = entry.entry_id
            banner = f"Restored unsaved changes from {entry.model.name}; save to keep them."
            if session.layout_warning:
                banner += f" {session.layout_warning}."
            tab.show_banner(banner)

    def ask_restore(self, entries: list[recovery.RecoveryEntry]) -> bool:
        names = "\n".join(str(e.original or "Untitled") for e in entries)
        answer = QMessageBox.question(
            self,
            "Restore unsaved work",
            f"ONNX Designer did not exit cleanly. Restore these documents?\n\n{names}",
        )
        return answer == QMessageBox.StandardButton.Yes

    # --- window layout -------------------------------------------------------------------
    def save_layout(self) -> None:
        self.settings.store.setValue("window/state", self.saveState())
        self.settings.store.setValue("window/geometry", self.saveGeometry())

    def apply_layout(self) -> None:
        state = self.settings.store.value("window/state")
        geometry = self.settings.store.value("window/geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        if isinstance(state, QByteArray):
            self.restoreState(state)
            tidy_tab_bars(self)

    def reset_layout(self) -> None:
        self.restoreState(self._default_state)
        for dock in self.docks:
            dock.setVisible(True)
        tidy_tab_bars(self)

    # --- events --------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [Path(u.toLocalFile()) for u in event.mimeData().urls() if u.isLocalFile()]
        event.acceptProposedAction()
        self.open_files(paths)

    def closeEvent(self, event: QCloseEvent) -> None:
        for tab in list(self.document_tabs()):
            if self.tabs.indexOf(tab) < 0:
                continue  # closed with the tab it belongs to
            self.tabs.setCurrentWidget(tab)
            if not self.close_tab(self.tabs.indexOf(tab)):
                event.ignore()
                return
        self.save_layout()
        self.autosave_timer.stop()
        event.accept()

    # --- helpers -------------------------------------------------------------------------
    def _retitle(self, tab: DocumentTab) -> None:
        index = self.tabs.indexOf(tab)
        if index >= 0:
            self.tabs.setTabText(index, tab.session.title)
            self.tabs.setTabToolTip(index, tab.session.location)
        if tab is self.tab():
            self.setWindowTitle(f"{tab.session.title} — ONNX Designer")

    def _on_current_changed(self, _index: int) -> None:
        tab = self.tab()
        self.currentTabChanged.emit(tab)
        if tab is not None:
            self.undo_group.setActiveStack(tab.session.undo_stack)
            self.setWindowTitle(f"{tab.session.title} — ONNX Designer")
            self._show_problems(tab)
        elif self.tabs.currentWidget() is not None:  # a report or engine tab
            self.setWindowTitle(f"{self.tabs.tabText(self.tabs.currentIndex())} — ONNX Designer")
        else:
            self.setWindowTitle("ONNX Designer")
            self.problems.clear()
        self.scope_tabs.current_changed(tab)
        self._update_actions()

    def _show_problems(self, tab: DocumentTab) -> None:
        if tab is not self.tab():
            return
        result = tab.session.check_result
        if result is None:
            self.problems.setText("checking…")
            return
        errors = len(result.errors)
        self.problems.setText(f"{errors} error(s)" if errors else "no errors")

    def _refresh_recent(self) -> None:
        files = self.settings.recent_files
        self.welcome.set_recent(files)
        menu = getattr(self, "recent_menu", None)
        if menu is None:
            return
        menu.clear()
        for path in files:
            action = menu.addAction(path)
            action.triggered.connect(lambda _c=False, p=path: self.open_files([Path(p)]))
        menu.setEnabled(bool(files))

    def _update_actions(self) -> None:
        has_doc = self.tab() is not None
        for name in (
            "save",
            "save_as",
            "close",
            "export_image",
            "arrange",
            "fit",
            "zoom_in",
            "zoom_out",
            "zoom_reset",
            "cut",
            "copy",
            "paste",
            "delete",
            "select_all",
        ):
            action = self.actions_by_name.get(name)
            if action is not None:
                action.setEnabled(has_doc)
        tab = self.tab()
        if tab is not None and tab.scope_id != MAIN_SCOPE:
            self.actions_by_name["save"].setEnabled(False)
            self.actions_by_name["save_as"].setEnabled(False)


def run_app(paths: list[Path]) -> int:
    """Start the designer with ``paths`` open (or the welcome page)."""
    instance = QApplication.instance()
    app = instance if isinstance(instance, QApplication) else QApplication([])
    app.setApplicationName("ONNX Designer")
    app.setDesktopFileName("io.github.onnx_designer.OnnxDesigner")  # packaging/*.desktop
    window = MainWindow()
    window.apply_layout()
    window.show()
    window.offer_recovery()
    if paths:
        window.open_files(paths)
    return int(app.exec())
