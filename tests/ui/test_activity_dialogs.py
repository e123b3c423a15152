"""The activity dialog (local runs, cancel, failures, bad input), the dependency panel, the
connections dialog (add/edit/remove/test against a real sshd) and the host key dialog."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from helpers.loopback_sshd import loopback_server  # noqa: F401 (the fixture server)
from helpers.shots import save_screenshot
from pytestqt.qtbot import QtBot

from designer.activities.connections import ConnectionStore
from designer.activities.deploy import DependencyState, DependencyStatus
from designer.activities.targets.hostkeys import HostKeyDecision, HostKeyInfo
from designer.core.edits import MoveNodes
from designer.core.scope import MAIN_SCOPE
from designer.ui.dialogs.activity_dialog import ActivityDialog
from designer.ui.dialogs.connections_dialog import ConnectionsDialog
from designer.ui.dialogs.dependency_panel import DependencyPanel
from designer.ui.dialogs.host_key_dialog import GuiHostKeyDecider, HostKeyDialog
from designer.ui.jobs import start_job
from designer.ui.main_window import MainWindow
from designer.ui.reports.report_tab import ReportTab
from designer.ui.tools import activities as tools

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "tiny_cnn.onnx"
sys.path.append(str(ROOT / "tests" / "activities"))
import sshd  # noqa: E402


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "models" / "tiny cnn.onnx"
    path.parent.mkdir()
    shutil.copy(EXAMPLE, path)
    return path


def ready_dialog(window: MainWindow, qtbot: QtBot, model: Path | None) -> ActivityDialog:
    dialog = ActivityDialog(window, model)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.job is None and bool(dialog.deps.statuses), timeout=30_000)
    if model is not None:
        qtbot.waitUntil(lambda: dialog.form.dims.rowCount() > 0, timeout=10_000)
    return dialog


# --- activity dialog --------------------------------------------------------------------------
def test_local_run_opens_a_report_tab(window: MainWindow, qtbot: QtBot, model: Path) -> None:
    dialog = ready_dialog(window, qtbot, model)
    assert dialog.deps.state_of("venv") is DependencyState.CURRENT
    assert dialog.form.provider.itemText(0) == "CPUExecutionProvider"
    assert dialog.form.dim_values() == {"batch": 1}
    assert not dialog.deploy_button.isEnabled()  # nothing is deployed locally
    dialog.form.iterations.setValue(5)
    dialog.form.dims.cellWidget(0, 1).setValue(2)  # type: ignore[union-attr]
    assert dialog.run() is not None
    assert dialog.run() is None  # one run at a time
    qtbot.waitUntil(lambda: dialog.job is None, timeout=60_000)
    outcome = dialog.outcome
    assert outcome is not None and outcome.result.status == "ok", dialog.status.text()
    assert outcome.result.profile == model.with_name("tiny cnn.ort-profile.json")
    assert "iteration" in dialog.log.toPlainText()
    tab = window.tabs.currentWidget()
    assert isinstance(tab, ReportTab) and tab.model == model
    assert tab.node_table.model.rowCount() >= 5
    assert tab.report.summary.measured_runs == 5
    assert "[2," in tab.report.nodes[0].input_shapes  # batch = 2 was used
    save_screenshot(dialog, "activity_dialog.png")
    tabs = window.tabs.count()
    dialog.open_report()  # Open Report after the run opened it: the same tab, not a copy
    assert window.tabs.count() == tabs and window.tabs.currentWidget() is tab
    assert tab.title in window.windowTitle()


def test_docks_say_the_model_is_still_open_behind_a_report(
    window: MainWindow, qtbot: QtBot, model: Path
) -> None:
    from helpers.gui import open_model
    from helpers.shared import ORT_FIXTURES

    from designer.activities.reports import parse_ort_profile
    from designer.ui.reports.report_tab import add_report_tab

    open_model(window, model, qtbot)
    path = next(ORT_FIXTURES.glob("tiny_cnn_opt-disabled*.json"))
    add_report_tab(window, ReportTab(window, path, parse_ort_profile(path), None, 1, None))
    text = window.idle_text("see its parameters")
    assert "1 model open" in text and "not a model tab" in text
    assert "ONNX Designer" in window.windowTitle() and "profile" in window.windowTitle().lower()
    parameters = next(d for d in window.docks if d.objectName() == "dock_parameters")
    qtbot.waitUntil(lambda: "1 model open" in _texts(parameters.widget()), timeout=5_000)


def _texts(widget: object) -> str:
    from PySide6.QtWidgets import QLabel, QWidget

    assert isinstance(widget, QWidget)
    return " ".join(label.text() for label in widget.findChildren(QLabel))


def test_cancel_stops_the_run(window: MainWindow, qtbot: QtBot, model: Path) -> None:
    dialog = ready_dialog(window, qtbot, model)
    dialog.form.iterations.setValue(1_000_000)
    dialog.run()
    qtbot.waitUntil(lambda: "warm-up" in dialog.log.toPlainText(), timeout=30_000)
    dialog.reject()  # closing while it runs cancels first
    assert dialog.isVisible()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    assert dialog.outcome is not None and dialog.outcome.result.status == "cancelled"
    assert dialog.status.text().startswith("Cancelled")
    assert "loading" in dialog.log.toPlainText()  # the log is kept
    assert dialog.run_button.isEnabled() and not dialog.cancel_button.isEnabled()


def test_failing_run_keeps_the_log(window: MainWindow, qtbot: QtBot, tmp_path: Path) -> None:
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"\x08\x07garbage that is not a model")
    dialog = ready_dialog(window, qtbot, None)
    dialog.form.set_model(broken)
    dialog.run()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=60_000)
    assert dialog.outcome is not None and dialog.outcome.result.status == "failed"
    assert dialog.status.text().startswith("Failed:")
    assert "error:" in dialog.log.toPlainText()
    assert not isinstance(window.tabs.currentWidget(), ReportTab)


def test_bad_options_change_nothing(window: MainWindow, qtbot: QtBot, tmp_path: Path) -> None:
    dialog = ready_dialog(window, qtbot, None)
    assert dialog.run() is None
    assert "choose the ONNX model" in dialog.status.text()
    dialog.form.set_model(tmp_path / "missing.onnx")
    assert dialog.run() is None and "does not exist" in dialog.status.text()
    dialog.form.set_model(EXAMPLE)
    dialog.form.folder_choice.setChecked(True)
    assert dialog.run() is None and "input data folder" in dialog.status.text()
    assert dialog.log.toPlainText() == "" and dialog.job is None


def test_unsaved_document_is_saved_or_refused(
    window: MainWindow, qtbot: QtBot, model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window.open_files([model])
    tab = window.tab()
    assert tab is not None and tab.view.wait_for_layout(30_000)
    key = tab.session.doc.scope().keys[0]
    tab.session.push(MoveNodes(MAIN_SCOPE, {key: (400.0, 400.0)}))
    monkeypatch.setattr(tools, "ask_save_before_profile", lambda w, t: "cancel")
    assert tools.profile_model(window) is None
    assert "must be saved" in window.statusBar().currentMessage()
    monkeypatch.setattr(tools, "ask_save_before_profile", lambda w, t: "saved")
    dialog = tools.profile_model(window)
    assert dialog is not None and dialog.form.model_path() == model.resolve()
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    dialog.close()


def test_menus_and_welcome_button(window: MainWindow, qtbot: QtBot) -> None:
    for name in ("profile_model", "remote_connections", "open_profile"):
        assert name in window.actions_by_name
    assert window.actions_by_name["open_profile"] in window.menus["File"].actions()
    window.welcome.startActivityRequested.emit()
    dialogs = window.findChildren(ActivityDialog)
    assert len(dialogs) == 1 and dialogs[0].form.model_path() is None
    qtbot.waitUntil(lambda: dialogs[0].job is None, timeout=30_000)
    dialogs[0].close()


def test_dependency_panel_statuses(qtbot: QtBot) -> None:
    panel = DependencyPanel()
    qtbot.addWidget(panel)
    panel.set_busy("Checking…")
    panel.set_statuses(
        [
            DependencyStatus("python", "Python ≥ 3.9", DependencyState.CURRENT, "/usr/bin/python3"),
            DependencyStatus("venv", "Python packages", DependencyState.MISSING),
            DependencyStatus("runners", "Runner scripts", DependencyState.OUTDATED, "x.py"),
        ]
    )
    texts = [panel.tree.topLevelItem(i).text(1) for i in range(3)]
    assert texts == ["current", "missing", "outdated"]  # what is done: in the detail
    details = [panel.tree.topLevelItem(i).text(2) for i in range(3)]  # type: ignore[union-attr]
    assert details == ["/usr/bin/python3", "will be deployed", "x.py — will be deployed"]
    assert all(not panel.tree.topLevelItem(i).icon(1).isNull() for i in range(3))
    assert panel.needs_deploy() and panel.progress.value() == 3
    panel.set_status(2, 3, DependencyStatus("venv", "Python packages", DependencyState.CURRENT))
    assert panel.tree.topLevelItemCount() == 3 and panel.state_of("venv").value == "current"  # type: ignore[union-attr]


# --- connections and host keys ------------------------------------------------------------------
def fill(dialog: ConnectionsDialog, **fields: str) -> None:
    for name, value in fields.items():
        getattr(dialog, name).setText(value)


def test_connections_add_edit_remove(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = ConnectionsDialog()
    qtbot.addWidget(dialog)
    dialog.ask_confirm = lambda text: True  # type: ignore[method-assign]
    assert dialog.save_form() is None and "host and a user" in dialog.result_label.text()
    fill(dialog, host="jetson.local", user="nvidia")
    dialog.auth.setCurrentIndex(dialog.auth.findData("password"))
    dialog.password.setText("s3cret pw")
    conn = dialog.save_form()
    assert conn is not None and conn.name == "nvidia@jetson.local:22"
    store = ConnectionStore()
    assert [c.name for c in store.list()] == ["nvidia@jetson.local:22"]
    assert "s3cret" not in store.path.read_text()  # never in the file
    assert (
        "for this session" in dialog.result_label.text() or "keyring" in dialog.result_label.text()
    )
    dialog.port.setValue(2222)
    fill(dialog, name="jetson", deploy_dir="work/od")
    assert dialog.save_form() is not None
    saved = store.list()
    assert [(c.name, c.port, c.deploy_dir) for c in saved] == [("jetson", 2222, "work/od")]
    dialog.new_connection()
    fill(dialog, host="gpu", user="me", key_file=str(tmp_path / "no_key"))
    assert dialog.save_form() is None and "does not exist" in dialog.result_label.text()
    dialog.list.setCurrentRow(0)
    dialog.remove_selected()
    assert store.list() == []
    dialog.grab()


def test_host_key_dialog_buttons(qtbot: QtBot, tmp_path: Path) -> None:
    info = HostKeyInfo("10.0.0.5", 2222, "ssh-ed25519", "SHA256:abcdef", tmp_path / "kh")
    for button, expected in (
        ("once", HostKeyDecision.ACCEPT_ONCE),
        ("always", HostKeyDecision.ACCEPT_ALWAYS),
        ("refuse", HostKeyDecision.REFUSE),
    ):
        dialog = HostKeyDialog(info)
        qtbot.addWidget(dialog)
        assert dialog.fingerprint.text() == "SHA256:abcdef"
        getattr(dialog, button).click()
        assert dialog.decision is expected
    dialog = HostKeyDialog(info)
    qtbot.addWidget(dialog)
    dialog.resize(560, 220)
    save_screenshot(dialog, "connections_host_key.png")


def test_decider_asks_on_the_gui_thread(qtbot: QtBot, tmp_path: Path) -> None:
    info = HostKeyInfo("h", 22, "ssh-ed25519", "SHA256:x", tmp_path / "kh")
    decider = GuiHostKeyDecider(None, ask=lambda i, p: HostKeyDecision.ACCEPT_ONCE)
    job = start_job(lambda _r, _c: decider(info))
    qtbot.waitUntil(lambda: job.wait(0), timeout=10_000)
    assert decider.seen == [info]


def test_connection_test_with_host_key_decisions(
    qtbot: QtBot, tmp_path: Path, server: tuple[sshd.SshServer, Path, str]
) -> None:
    srv, key, user = server
    known = tmp_path / "known_hosts"
    answers: list[HostKeyDecision] = []
    dialog = ConnectionsDialog()
    qtbot.addWidget(dialog)
    dialog.decider.ask = lambda info, parent: answers.pop(0)
    fill(dialog, host="127.0.0.1", user=user, key_file=str(key), known_hosts=str(known))
    fill(dialog, ssh_config=str(tmp_path / "no_config"), deploy_dir=".designer-test/gui")
    dialog.port.setValue(srv.port)

    def test_once(answer: HostKeyDecision) -> str:
        answers.append(answer)
        assert dialog.test_form() is not None
        qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
        return dialog.result_label.text()

    assert "refused" in test_once(HostKeyDecision.REFUSE)
    assert dialog.decider.seen[-1].fingerprint.startswith("SHA256:")
    assert test_once(HostKeyDecision.ACCEPT_ONCE).startswith("OK")
    assert not known.exists()
    assert test_once(HostKeyDecision.ACCEPT_ALWAYS).startswith("OK")
    assert str(srv.port) in known.read_text()
    seen = len(dialog.decider.seen)
    assert dialog.test_form() is not None  # now known: no question
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    assert dialog.result_label.text().startswith("OK") and len(dialog.decider.seen) == seen
    fill(dialog, name="lab-server")
    assert dialog.save_form() is not None and dialog.list.count() == 1
    save_screenshot(dialog, "connections_dialog.png")
    other = sshd.keygen(tmp_path / "other")
    blob = Path(f"{other}.pub").read_text().split()[:2]
    known.write_text(f"[127.0.0.1]:{srv.port} {blob[0]} {blob[1]}\n")
    dialog.test_form()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    assert "CHANGED" in dialog.result_label.text() and dialog.result_label.text().startswith(
        "Failed"
    )
    assert len(dialog.decider.seen) == seen  # a changed key is never offered for acceptance


def test_profiling_dialog_fits_a_laptop_screen(
    window: MainWindow, qtbot: QtBot, model: Path
) -> None:
    dialog = ready_dialog(window, qtbot, model)
    save_screenshot(dialog, "ort_profile_dialog.png")
    frame = dialog.frameGeometry()
    assert frame.width() <= 1366 and frame.height() <= 740  # 1366×768 less a panel
    assert dialog.minimumSizeHint().height() <= 740
    dialog.close()
