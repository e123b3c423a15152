"""The Parameters window with nothing selected in a subgraph or local-function tab: what the
scope is, its inputs and outputs with their inferred types, the outer-scope values it reads
(subgraphs) or its attributes and call sites (functions), and how its edits reach the model.

The model's own properties are not shown there: a tab edits only its scope, so they could
not be changed from it anyway.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import onnx
from PySide6.QtWidgets import QFormLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from designer.core.functions import call_sites
from designer.core.scope import Scope, ScopeId
from designer.core.summary import type_text
from designer.core.viewgraph import outer_values
from designer.ui.params.fields import Section
from designer.ui.session import DocumentSession


class ScopePanel(QWidget):
    """Read-only facts about ``scope_id``; ``open_settings`` (functions) opens the Local
    Function Settings dialog."""

    def __init__(
        self,
        session: DocumentSession,
        scope_id: ScopeId,
        open_settings: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.scope_id = scope_id
        doc = session.doc
        scope = doc.scope(scope_id)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        kind = "Local function" if scope.is_function else "Subgraph"
        title = session.title.rstrip("*")
        layout.addWidget(_wrapped(f"<b>{kind}</b> — {html.escape(title)}"))

        info = Section("Scope information")
        box = QWidget()
        form = QFormLayout(box)
        form.setContentsMargins(0, 0, 0, 0)
        if isinstance(scope.proto, onnx.FunctionProto):
            fn = scope.proto
            form.addRow("Function", QLabel(html.escape(fn.name)))
            form.addRow("Domain", QLabel(html.escape(fn.domain)))
            if fn.overload:
                form.addRow("Overload", QLabel(html.escape(fn.overload)))
            imports = ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in fn.opset_import)
            form.addRow("Opset imports", _wrapped(imports or "(none)"))
            assert scope_id.function is not None
            sites = len(call_sites(doc, scope_id.function))
            form.addRow("Call sites", QLabel(str(sites)))
        else:
            form.addRow("Graph", QLabel(html.escape(scope.name or "(unnamed)")))
            form.addRow("Nodes", QLabel(str(len(scope))))
        info.add(box)
        layout.addWidget(info)

        layout.addWidget(self._tensors("Inputs", scope, scope.input_names()))
        layout.addWidget(self._tensors("Outputs", scope, scope.output_names()))
        if isinstance(scope.proto, onnx.FunctionProto):
            layout.addWidget(self._attributes(scope.proto, open_settings))
        else:
            layout.addWidget(self._outer(scope))
        parent = getattr(session, "parent_session", None)
        into = parent.title.rstrip("*") if parent is not None else "the model"
        hint = _wrapped(
            "Edits here stay in this tab until Edit > Confirm writes them into "
            f"{html.escape(into)} as one undo step."
        )
        hint.setStyleSheet("color:#555;")
        layout.addWidget(hint)
        layout.addStretch(1)

    def _tensors(self, heading: str, scope: Scope, names: list[str]) -> Section:
        section = Section(f"{heading} ({len(names)})")
        result = self.session.check_result
        lines = []
        for name in names:
            proto = result.type_of(self.scope_id, name) if result is not None else None
            text = type_text(proto) if proto is not None else "?"
            lines.append(f"<b>{html.escape(name)}</b>: <i>{html.escape(text)}</i>")
        section.add(_wrapped("<br>".join(lines) or "(none)"))
        return section

    def _outer(self, scope: Scope) -> Section:
        values = outer_values(self.session.doc, self.scope_id)
        read = {name for node in scope.proto.node for name in node.input if name in values}
        section = Section(f"Outer-scope values read ({len(read)} of {len(values)} visible)")
        lines = [
            f"<b>{html.escape(name)}</b>: {html.escape(values[name].describe())}"
            for name in sorted(read)
        ]
        lines.append("Canvas menu > Use Outer-Scope Value… shows the others.")
        section.add(_wrapped("<br>".join(lines)))
        return section

    def _attributes(
        self, fn: onnx.FunctionProto, open_settings: Callable[[], None] | None
    ) -> Section:
        section = Section(f"Attributes ({len(fn.attribute) + len(fn.attribute_proto)})")
        lines = [f"<b>{html.escape(a)}</b>: required at call sites" for a in fn.attribute]
        lines += [
            f"<b>{html.escape(a.name)}</b>: default "
            f"{html.escape(str(onnx.helper.get_attribute_value(a)))}"
            for a in fn.attribute_proto
        ]
        section.add(_wrapped("<br>".join(lines) or "(none)"))
        if open_settings is not None:
            button = QPushButton("Settings…")
            button.setToolTip("Add or remove the function's attributes")
            button.clicked.connect(open_settings)
            section.add(button)
        return section


def _wrapped(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    return label
