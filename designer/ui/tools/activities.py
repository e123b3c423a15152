"""Activities in the main window: Tools > Remote Connections…, Tools > Profile Model…,
File > Open Profile…, and the welcome page's "Start Activity…" (SPEC A, R, D-7)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMessageBox

from designer.ui.dialogs.activity_dialog import ActivityDialog
from designer.ui.dialogs.connections_dialog import ConnectionsDialog

if TYPE_CHECKING:
    from designer.ui.document_tab import DocumentTab
    from designer.ui.jobs import Job
    from designer.ui.main_window import MainWindow

PROFILE_FILTER = (
    "Profiles (*.json *.log *.txt);;ONNX Runtime / TensorRT profile JSON (*.json);;"
    "trtexec logs with --dumpProfile (*.log *.txt);;All files (*)"
)


def ask_save_before_profile(window: MainWindow, tab: DocumentTab) -> str:
    """'save', 'saved' (profile the file as it is on disk) or 'cancel' for a document with
    unsaved changes; a never-saved document offers only 'save' or 'cancel'."""
    title = tab.session.title.rstrip("*")
    if tab.session.doc.path is None:
        answer = QMessageBox.question(
            window,
            "Profile Model",
            f"{title} has never been saved. Profiling runs on a file: save it now?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Cancel,
        )
        return "save" if answer == QMessageBox.StandardButton.Save else "cancel"
    box = QMessageBox(
        QMessageBox.Icon.Question,
        "Profile Model",
        f"{title} has unsaved changes. Profile the changed model (save it first) or the "
        "file as it is on disk?",
        QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Cancel,
        window,
    )
    disk = box.addButton("Use Saved File", QMessageBox.ButtonRole.AcceptRole)
    box.exec()
    clicked = box.clickedButton()
    if clicked is disk:
        return "saved"
    return "save" if clicked is box.button(QMessageBox.StandardButton.Save) else "cancel"


def model_for_activity(window: MainWindow) -> tuple[bool, Path | None]:
    """(go on?, model path) from the current document, asking about unsaved changes."""
    tab = window.tab()
    if tab is None:
        return True, None
    if tab.session.modified or tab.session.doc.path is None:
        answer = ask_save_before_profile(window, tab)
        if answer == "cancel" or (answer == "save" and not window.save(tab)):
            window.statusBar().showMessage(
                "Not profiled: the model must be saved to a file first", 8000
            )
            return False, None
    return True, tab.session.doc.path


def profile_model(window: MainWindow, use_current: bool = True) -> ActivityDialog | None:
    """Open the "Profile with ONNX Runtime" dialog (non-modal), on the current document's
    file when ``use_current``; None when the user cancelled saving it."""
    model = None
    if use_current:
        go_on, model = model_for_activity(window)
        if not go_on:
            return None
    dialog = ActivityDialog(window, model)
    dialog.show()
    return dialog


def manage_connections(window: MainWindow) -> ConnectionsDialog:
    dialog = ConnectionsDialog(window)
    dialog.show()
    return dialog


def ask_profile_path(window: MainWindow) -> Path | None:
    name, _ = QFileDialog.getOpenFileName(window, "Open Profile", "", PROFILE_FILTER)
    return Path(name) if name else None


def open_profile_dialog(window: MainWindow) -> Job | None:
    from designer.ui.reports.report_tab import open_profile

    path = ask_profile_path(window)
    return open_profile(window, path) if path is not None else None


def install(window: MainWindow) -> None:
    tools = window.menus["Tools"]
    tools.addSeparator()
    for name, text, slot in (
        ("profile_model", "&Profile Model…", lambda: profile_model(window)),
        ("remote_connections", "Remote &Connections…", lambda: manage_connections(window)),
    ):
        action = QAction(text, window)
        action.triggered.connect(lambda _c=False, s=slot: s())
        tools.addAction(action)
        window.actions_by_name[name] = action
    open_profile = QAction("Open &Profile…", window)
    open_profile.setToolTip(
        "Open an ONNX Runtime profile, a TensorRT profile JSON or a trtexec --dumpProfile log "
        "as a report"
    )
    open_profile.triggered.connect(lambda _c=False: open_profile_dialog(window))
    file_menu = window.menus["File"]
    actions = file_menu.actions()
    anchor = window.actions_by_name.get("open")
    index = actions.index(anchor) if anchor in actions else -1
    before = actions[index + 1] if 0 <= index < len(actions) - 1 else None
    if before is not None:
        file_menu.insertAction(before, open_profile)
    else:
        file_menu.addAction(open_profile)
    window.actions_by_name["open_profile"] = open_profile
    window.welcome.startActivityRequested.connect(lambda: profile_model(window, False))
