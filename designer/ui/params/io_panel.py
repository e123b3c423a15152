"""The Parameters window for one selected graph input, graph output or outer-scope value:
its name (editable for inputs and outputs: a rename updates every reference, one undo step),
its type and shape as the type checker sees them, and what reads or produces it."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtWidgets import QFormLayout, QLabel, QVBoxLayout, QWidget

from designer.core.edits import RenameTensor
from designer.core.scope import ScopeId
from designer.core.summary import type_text
from designer.core.viewgraph import outer_values
from designer.ui.params.fields import CommitLineEdit
from designer.ui.params.trt_section import InputTrtSection
from designer.ui.session import DocumentSession
from designer.ui.widgets.error_label import ErrorLabel

_KINDS = {"input": "Graph input", "output": "Graph output", "outer": "Outer-scope value"}


class IOPanel(QWidget):
    """``kind`` is "input", "output" or "outer" (read-only: it is defined further out)."""

    def __init__(
        self,
        session: DocumentSession,
        scope_id: ScopeId,
        kind: str,
        name: str,
        select: Callable[[str, str], None] | None = None,
    ) -> None:
        super().__init__()
        self.select = select  # select(kind, name): show the renamed node selected
        self.session = session
        self.scope_id = scope_id
        self.kind = kind
        self.name = name
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        heading = QLabel(f"<b>{_KINDS.get(kind, kind)}</b> — {html.escape(name)}")
        heading.setWordWrap(True)
        layout.addWidget(heading)
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        self.name_edit = CommitLineEdit(name)
        self.name_error = ErrorLabel()
        if kind == "outer":
            self.name_edit.setReadOnly(True)
            self.name_edit.setToolTip("Defined in an enclosing graph: rename it there")
        else:
            self.name_edit.setToolTip("A C identifier not used in this graph; Enter applies")
            self.name_edit.committed.connect(self._rename)
        form.addRow("Name", self.name_edit)
        form.addRow("", self.name_error)
        result = session.check_result
        proto = result.type_of(scope_id, name) if result is not None else None
        form.addRow("Type", QLabel(type_text(proto) if proto is not None else "? (not inferred)"))
        form.addRow("Used by", _wrapped(self._users()))
        if kind == "outer":
            value = outer_values(session.doc, scope_id).get(name)
            form.addRow("Defined as", _wrapped(value.describe() if value else "(no longer)"))
        layout.addLayout(form)
        if kind == "input" and scope_id.is_main:
            self.trt_section = InputTrtSection(session, name)
            layout.addWidget(self.trt_section)
        layout.addStretch(1)

    def _users(self) -> str:
        scope = self.session.doc.scope(self.scope_id)
        readers = [n.name or n.op_type for n in scope.proto.node if self.name in n.input]
        producers = [n.name or n.op_type for n in scope.proto.node if self.name in n.output]
        parts = []
        if producers:
            parts.append("produced by " + ", ".join(producers))
        if readers:
            shown = ", ".join(readers[:8]) + (
                f" and {len(readers) - 8} more" if len(readers) > 8 else ""
            )
            parts.append("read by " + shown)
        return "; ".join(parts) or "nothing in this graph"

    def _rename(self, text: str) -> None:
        new = text.strip()
        problem = self.session.try_push(RenameTensor(self.scope_id, self.name, new))
        self.name_error.show_message(problem or "")
        self.name_edit.setStyleSheet("border: 1px solid #b00020;" if problem else "")
        if problem is None and self.select is not None:
            self.select(self.kind, new)


def _wrapped(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    return label
