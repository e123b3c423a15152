"""Tools > Remote Connections (SPEC A-2): the saved SSH targets, edited in a form, tested off
the GUI thread. Passwords and passphrases go to the system keyring when there is one, else
they are kept in memory for this session only; they are never written to the file."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from designer.activities import secrets
from designer.activities.connections import (
    DEFAULT_DEPLOY_DIR,
    Connection,
    ConnectionStore,
    ConnectionTest,
    test_connection,
)
from designer.core.errors import DesignerError
from designer.ui.dialogs.host_key_dialog import GuiHostKeyDecider
from designer.ui.jobs import Job, start_job_with
from designer.ui.widgets.error_label import ERROR_STYLE

OK_STYLE = "color:#1e7b34"


def secrets_note() -> str:
    if secrets.keyring_available():
        return "Passwords and passphrases are kept in the system keyring, never in a file."
    return (
        "No system keyring here: passwords and passphrases are kept in memory for this "
        "session only (never in a file) and asked again next time."
    )


def _line(placeholder: str = "", password: bool = False) -> QLineEdit:
    edit = QLineEdit()
    edit.setPlaceholderText(placeholder)
    if password:
        edit.setEchoMode(QLineEdit.EchoMode.Password)
    return edit


class ConnectionsDialog(QDialog):
    """List, add (+), edit, remove (−) and test saved connections."""

    connectionsChanged = Signal()

    def __init__(self, parent: QWidget | None = None, store: ConnectionStore | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Remote Connections")
        self.store = store or ConnectionStore()
        self.decider = GuiHostKeyDecider(self)
        self.editing: str | None = None  # name of the saved connection in the form
        self.job: Job | None = None
        self.list = QListWidget()
        self.list.currentItemChanged.connect(self._selected)
        add = QPushButton("+")
        add.setToolTip("New connection")
        add.clicked.connect(self.new_connection)
        self.remove_button = QPushButton("−")
        self.remove_button.setToolTip("Delete the selected connection")
        self.remove_button.clicked.connect(self.remove_selected)
        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(self.remove_button)
        row.addStretch(1)
        left.addLayout(row)

        self.name = _line("user@host:port")
        self.host = _line("host name or IP address")
        self.user = _line("user name on the target")
        self.port = QSpinBox()
        self.port.setRange(1, 65535)
        self.port.setValue(22)
        self.auth = QComboBox()
        self.auth.addItem("Password", "password")
        self.auth.addItem("Private key", "key")
        self.auth.currentIndexChanged.connect(lambda _i: self._auth_changed())
        self.password = _line(password=True)
        self.key_file = _line("~/.ssh/id_ed25519")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_key)
        key_row = QHBoxLayout()
        key_row.addWidget(self.key_file, 1)
        key_row.addWidget(browse)
        self.passphrase = _line("empty when the key is not encrypted", password=True)
        self.deploy_dir = _line(DEFAULT_DEPLOY_DIR)
        self.deploy_dir.setToolTip("Relative paths start at the remote home; must be writable")
        self.known_hosts = _line("~/.ssh/known_hosts")
        self.ssh_config = _line("~/.ssh/config (ProxyJump / ProxyCommand)")
        form = QFormLayout()
        form.addRow("Name:", self.name)
        form.addRow("Host / IP:", self.host)
        form.addRow("User:", self.user)
        form.addRow("Port:", self.port)
        form.addRow("Authentication:", self.auth)
        form.addRow("Password:", self.password)
        form.addRow("Private key:", key_row)
        form.addRow("Passphrase:", self.passphrase)
        form.addRow("Deployment folder:", self.deploy_dir)
        form.addRow("known_hosts file:", self.known_hosts)
        form.addRow("OpenSSH config:", self.ssh_config)
        self.form = form
        note = QLabel(secrets_note())
        note.setWordWrap(True)
        note.setStyleSheet("color:#5c6370")
        self.note = note
        save = QPushButton("Save")
        save.clicked.connect(self.save_form)
        self.test_button = QPushButton("Test Connection")
        self.test_button.clicked.connect(self.test_form)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        self.busy.setVisible(False)
        actions = QHBoxLayout()
        actions.addWidget(save)
        actions.addWidget(self.test_button)
        actions.addWidget(self.busy)
        actions.addStretch(1)
        self.result_label = QLabel()
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        right = QVBoxLayout()
        right.addLayout(form)
        right.addWidget(note)
        right.addLayout(actions)
        right.addWidget(self.result_label)
        right.addStretch(1)
        body = QHBoxLayout()
        body.addLayout(left, 1)
        body.addLayout(right, 2)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(body, 1)
        layout.addWidget(close)
        self.resize(820, 520)
        self.reload()
        if self.list.count() == 0:
            self.new_connection()

    # --- list -------------------------------------------------------------------------------
    def reload(self, select: str | None = None) -> None:
        try:
            items = self.store.list()
        except DesignerError as exc:
            self.show_result(str(exc), ok=False)
            items = []
        self.list.blockSignals(True)
        self.list.clear()
        for conn in items:
            item = QListWidgetItem(conn.name)
            item.setData(Qt.ItemDataRole.UserRole, conn)
            item.setToolTip(f"{conn.user}@{conn.host}:{conn.port} — {conn.deploy_dir}")
            self.list.addItem(item)
        self.list.blockSignals(False)
        names = [c.name for c in items]
        if select in names:
            self.list.setCurrentRow(names.index(select))
        elif names:
            self.list.setCurrentRow(0)
        self.remove_button.setEnabled(bool(names))

    def _selected(self, item: QListWidgetItem | None, _previous: object = None) -> None:
        if item is not None:
            self.load_form(item.data(Qt.ItemDataRole.UserRole))

    def new_connection(self) -> None:
        self.list.clearSelection()
        self.list.setCurrentRow(-1)
        self.editing = None
        for edit in (self.name, self.host, self.user, self.password, self.key_file):
            edit.clear()
        for edit in (self.passphrase, self.deploy_dir, self.known_hosts, self.ssh_config):
            edit.clear()
        self.port.setValue(22)
        self.auth.setCurrentIndex(1)
        self.result_label.clear()
        self.host.setFocus()

    def load_form(self, conn: Connection) -> None:
        self.editing = conn.name
        self.name.setText(conn.name)
        self.host.setText(conn.host)
        self.user.setText(conn.user)
        self.port.setValue(int(conn.port))
        self.auth.setCurrentIndex(self.auth.findData(conn.auth))
        self.key_file.setText(conn.key_file or "")
        self.deploy_dir.setText(conn.deploy_dir)
        self.known_hosts.setText(conn.known_hosts or "")
        self.ssh_config.setText(conn.ssh_config or "")
        for edit, kind in ((self.password, "password"), (self.passphrase, "passphrase")):
            edit.clear()
            stored = secrets.get_secret(conn.secret_account(kind)) is not None
            edit.setPlaceholderText("(stored; type to change)" if stored else "")
        self.result_label.clear()
        self._auth_changed()

    def _auth_changed(self) -> None:
        key = self.auth.currentData() == "key"
        self.password.setEnabled(not key)
        self.key_file.setEnabled(key)
        self.passphrase.setEnabled(key)

    def _browse_key(self) -> None:
        start = self.key_file.text() or str(Path.home() / ".ssh")
        name, _ = QFileDialog.getOpenFileName(self, "Private Key", start, "All files (*)")
        if name:
            self.key_file.setText(name)

    # --- form → connection -------------------------------------------------------------------
    def form_connection(self) -> Connection:
        """The connection in the form; DesignerError with a clear message when incomplete."""
        host, user = self.host.text().strip(), self.user.text().strip()
        if not host or not user:
            raise DesignerError("a connection needs a host and a user")
        if any(c.isspace() for c in host + user):
            raise DesignerError("host and user cannot contain spaces")
        auth = self.auth.currentData()
        key_file = self.key_file.text().strip() or None
        if auth == "key" and key_file is None:
            raise DesignerError("choose the private key file (or use password authentication)")
        if key_file is not None and auth == "key":
            resolved = Path(key_file).expanduser()
            if not resolved.is_file():
                raise DesignerError(f"the private key {resolved} does not exist")
            key_file = str(resolved.resolve())
        return Connection(
            host=host,
            user=user,
            port=self.port.value(),
            auth=auth,
            key_file=key_file if auth == "key" else None,
            deploy_dir=self.deploy_dir.text().strip() or DEFAULT_DEPLOY_DIR,
            known_hosts=self.known_hosts.text().strip() or None,
            ssh_config=self.ssh_config.text().strip() or None,
            name=self.name.text().strip(),
        )

    def save_form(self) -> Connection | None:
        """Save the form (replacing the connection being edited); None when refused."""
        try:
            conn = self.form_connection()
            renamed = self.editing is not None and self.editing != conn.name
            self.store.add(conn, replace=self.editing == conn.name)
            if renamed:
                assert self.editing is not None
                self.store.remove(self.editing)
        except DesignerError as exc:
            self.show_result(f"Not saved: {exc}", ok=False)
            return None
        kept = []
        for edit, kind in ((self.password, "password"), (self.passphrase, "passphrase")):
            if edit.isEnabled() and edit.text():
                persisted = secrets.set_secret(conn.secret_account(kind), edit.text())
                kept.append(f"{kind} {'in the keyring' if persisted else 'for this session'}")
        self.reload(select=conn.name)
        extra = f" ({', '.join(kept)})" if kept else ""
        self.show_result(f"Saved {conn.name}{extra}.", ok=True)
        self.connectionsChanged.emit()
        return conn

    def ask_confirm(self, text: str) -> bool:
        answer = QMessageBox.question(self, "Remote Connections", text)
        return answer == QMessageBox.StandardButton.Yes

    def remove_selected(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        name = item.text()
        if not self.ask_confirm(f"Delete the connection {name}?"):
            return
        try:
            self.store.remove(name)
        except DesignerError as exc:
            self.show_result(str(exc), ok=False)
            return
        self.reload()
        if self.list.count() == 0:
            self.new_connection()
        self.show_result(f"Deleted {name}.", ok=True)
        self.connectionsChanged.emit()

    # --- test ---------------------------------------------------------------------------------
    def test_form(self) -> Job | None:
        """Connect with the form's settings off the GUI thread; the result shows below."""
        try:
            conn = self.form_connection()
        except DesignerError as exc:
            self.show_result(str(exc), ok=False)
            return None
        password = self.password.text() if self.password.isEnabled() else ""
        passphrase = self.passphrase.text() if self.passphrase.isEnabled() else ""
        stored = secrets.get_secret(conn.secret_account("password"))
        if conn.auth == "password" and not password and stored is None:
            self.show_result("Type the password to test the connection.", ok=False)
            return None
        decide = self.decider
        job = start_job_with(
            lambda _r, _c: test_connection(
                conn, password=password or None, passphrase=passphrase or None, decide=decide
            ),
            self,
            finished=self._tested,
            failed=lambda text: self._tested(None, text),
        )
        self.job = job
        self.test_button.setEnabled(False)
        self.busy.setVisible(True)
        self.show_result(f"Connecting to {conn.user}@{conn.host}:{conn.port}…", ok=True)
        return job

    def _tested(self, found: ConnectionTest | None, error: str = "") -> None:
        self.job = None
        self.test_button.setEnabled(True)
        self.busy.setVisible(False)
        if found is None:
            self.show_result(f"Failed: {error}", ok=False)
            return
        p = found.platform
        self.show_result(
            f"OK in {found.seconds:.1f} s: {p.describe()}; "
            f"deployment folder {found.deploy_dir} is writable.",
            ok=True,
        )

    def show_result(self, text: str, ok: bool) -> None:
        self.result_label.setStyleSheet(OK_STYLE if ok else ERROR_STYLE)
        self.result_label.setText(text)

    def reject(self) -> None:
        if self.job is not None:
            self.show_result("Wait for the connection test to end.", ok=False)
            return
        super().reject()
