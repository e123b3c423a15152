"""A document tab of the main window: one canvas (of a model, or of a subgraph or function
body of one), the canvas-settings button, and banners for warnings and for being read-only."""

from __future__ import annotations

import uuid

from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from designer.core.scope import MAIN_SCOPE, ScopeId
from designer.ui.canvas.settings import CanvasSettings
from designer.ui.canvas.view import CanvasView
from designer.ui.session import DocumentSession


class DocumentTab(QWidget):
    """One open document: its canvas of ``scope_id`` (MAIN_SCOPE for a model; a subgraph or
    function body for a working copy), with banners for warnings and for being read-only."""

    def __init__(
        self,
        session: DocumentSession,
        canvas_settings: CanvasSettings,
        scope_id: ScopeId = MAIN_SCOPE,
    ) -> None:
        super().__init__()
        self.session = session
        self.scope_id = scope_id
        self.recovery_id = uuid.uuid4().hex
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.banner = QLabel()
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet("background:#fff4ce;color:#5c4400;padding:6px;")
        self.banner.setVisible(False)
        layout.addWidget(self.banner)
        self.lock_banner = QLabel()
        self.lock_banner.setWordWrap(True)
        self.lock_banner.setStyleSheet("background:#e8e0f5;color:#3b2a5c;padding:6px;")
        self.lock_banner.setVisible(False)
        layout.addWidget(self.lock_banner)
        self.view = CanvasView(session, scope_id, settings=canvas_settings)
        self.toolbar = QHBoxLayout()
        self.toolbar.setContentsMargins(4, 2, 4, 2)
        self.controls = QToolButton()
        self.controls.setText("Canvas ▾")
        self.controls.setToolTip("Canvas settings and the list of navigation controls")
        self.controls.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.toolbar.addWidget(self.controls)
        self.toolbar.addStretch(1)
        layout.addLayout(self.toolbar)
        layout.addWidget(self.view, 1)

    def show_banner(self, text: str) -> None:
        self.banner.setText(text)
        self.banner.setVisible(True)
