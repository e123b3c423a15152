"""The unknown-host-key question (SPEC A-2): the SHA256 fingerprint with Accept once /
Accept always / Refuse, and a decider that asks it from any thread.

A changed host key never reaches this dialog: the SSH target refuses it with a warning.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QThread, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from designer.activities.targets.hostkeys import HostKeyDecision, HostKeyInfo, known_hosts_name


class HostKeyDialog(QDialog):
    """Shows one unknown host key; ``decision`` holds the answer (Refuse when closed)."""

    def __init__(self, info: HostKeyInfo, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Unknown Host Key")
        self.decision = HostKeyDecision.REFUSE
        host = known_hosts_name(info.host, info.port)
        icon = QLabel()
        icon.setPixmap(
            self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning).pixmap(40)
        )
        text = QLabel(
            f"<b>The authenticity of host {host} cannot be established.</b><br><br>"
            f"Its {info.key_type} key fingerprint is:"
        )
        text.setWordWrap(True)
        self.fingerprint = QLabel(info.fingerprint)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.fingerprint.setFont(mono)
        self.fingerprint.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.fingerprint.setStyleSheet("background:#f4f5f7;padding:6px;border:1px solid #d3d7de")
        advice = QLabel(
            "Compare it with the key on the machine itself (ssh-keygen -lf "
            "/etc/ssh/ssh_host_*_key.pub) before you trust it. <i>Accept always</i> adds it to "
            f"{info.known_hosts}."
        )
        advice.setWordWrap(True)
        self.once = QPushButton("Accept Once")
        self.always = QPushButton("Accept Always")
        self.refuse = QPushButton("Refuse")
        self.refuse.setDefault(True)
        self.once.clicked.connect(lambda: self._answer(HostKeyDecision.ACCEPT_ONCE))
        self.always.clicked.connect(lambda: self._answer(HostKeyDecision.ACCEPT_ALWAYS))
        self.refuse.clicked.connect(lambda: self._answer(HostKeyDecision.REFUSE))
        body = QVBoxLayout()
        body.addWidget(text)
        body.addWidget(self.fingerprint)
        body.addWidget(advice)
        top = QHBoxLayout()
        top.addWidget(icon, 0)
        top.addLayout(body, 1)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.once, self.always, self.refuse):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(buttons)
        self.setMinimumWidth(520)

    def _answer(self, decision: HostKeyDecision) -> None:
        self.decision = decision
        if decision is HostKeyDecision.REFUSE:
            self.reject()
        else:
            self.accept()


def ask_host_key(info: HostKeyInfo, parent: QWidget | None = None) -> HostKeyDecision:
    """Show :class:`HostKeyDialog` modally and return the answer (tests replace this)."""
    dialog = HostKeyDialog(info, parent)
    dialog.exec()
    return dialog.decision


class GuiHostKeyDecider(QObject):
    """A HostKeyDecider usable from a worker thread: the question is asked on the GUI thread
    (through a queued signal) while the worker waits for the answer. Create it on the GUI
    thread. ``ask`` defaults to :func:`ask_host_key`."""

    _asked = Signal(object, object)  # HostKeyInfo, a one-element list + Event

    def __init__(
        self,
        parent: QWidget | None = None,
        ask: Callable[[HostKeyInfo, QWidget | None], HostKeyDecision] | None = None,
    ) -> None:
        super().__init__(parent)
        self.parent_widget = parent
        self.ask = ask
        self.seen: list[HostKeyInfo] = []
        self._asked.connect(self._on_asked)

    def __call__(self, info: HostKeyInfo) -> HostKeyDecision:
        if QThread.currentThread() is self.thread():
            return self._decide(info)
        box: list[HostKeyDecision] = []
        done = threading.Event()
        self._asked.emit(info, (box, done))
        done.wait(900)  # nobody answered in 15 minutes (window gone): refuse
        return box[0] if box else HostKeyDecision.REFUSE

    def _on_asked(
        self, info: HostKeyInfo, reply: tuple[list[HostKeyDecision], threading.Event]
    ) -> None:
        box, done = reply
        try:
            box.append(self._decide(info))
        finally:
            done.set()

    def _decide(self, info: HostKeyInfo) -> HostKeyDecision:
        self.seen.append(info)
        ask = self.ask or ask_host_key
        return ask(info, self.parent_widget)
