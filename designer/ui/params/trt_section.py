"""The Parameters window's TensorRT section: the layer precision and output types of the
selected nodes (editable, one undo step for the selection), and the optimization profiles of
a selected graph input (with a button to the profile dialog).

A stored value the engine build refuses (hand-edited, or left behind when a node's outputs
changed) is shown as stored, with the reason in red beside it, never as "No Constraint" or
as a valid profile: the user sees what blocks the build where it can be fixed."""

from __future__ import annotations

import html

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QWidget

from designer.core.edits.trt import SetLayerOutputTypes, SetLayerPrecision
from designer.core.scope import ScopeId
from designer.core.trt.settings import (
    NO_CONSTRAINT,
    PRECISIONS,
    TrtSettingsError,
    format_dims,
    inputs_without_profile,
    node_output_types_problem,
    node_precision_problem,
    read_profiles,
    stored_output_types,
    validate_shapes,
)
from designer.ui.canvas.precision_menu import MAIN_ONLY, current_precision, is_invalid_precision
from designer.ui.params.attribute_row import LABEL_WIDTH
from designer.ui.params.fields import CommitLineEdit, Section
from designer.ui.session import DocumentSession
from designer.ui.widgets.error_label import ERROR_STYLE, ErrorLabel

MIXED = "(mixed)"
#: The combo entry's data for a stored value that is no precision (choosing it changes nothing).
INVALID = "invalid"
BLOCKS_BUILD = "An engine build refuses the model until this is fixed."


class NodeTrtSection(Section):
    """Layer precision (a combo box) and, for one node, per-output types (``fp16,fp32``)."""

    def __init__(self, session: DocumentSession, scope_id: ScopeId, keys: list[int]) -> None:
        super().__init__("TensorRT")
        self.session = session
        self.scope_id = scope_id
        self.keys = keys
        if not scope_id.is_main:
            note = QLabel(MAIN_ONLY + ".")
            note.setWordWrap(True)
            self.add(note)
            return
        self.precision = QComboBox()
        self.precision.setObjectName("trt_precision")
        self.precision.setToolTip(
            "TensorRT layer precision constraint; honoured with typing mode Obey or Prefer"
        )
        current = current_precision(session, scope_id, keys)
        if current == "mixed":
            self.precision.addItem(MIXED, "mixed")
        elif is_invalid_precision(current):
            self.precision.addItem(f"{current} (not a precision)", INVALID)
        self.precision.addItem(NO_CONSTRAINT, "")
        for p in PRECISIONS:
            self.precision.addItem(p, p)
        self.precision.setCurrentIndex(
            self.precision.findData(INVALID if is_invalid_precision(current) else current)
        )
        self.precision.activated.connect(lambda _i: self._set_precision())
        self.error = ErrorLabel()
        #: what is wrong with the stored values (recomputed when the panel is rebuilt)
        self.stored_error = ErrorLabel()
        self.stored_error.setObjectName("trt_stored_error")
        self.stored_error.setText(self._stored_problems())
        self.add(_row("Layer precision", self.precision))
        if len(keys) == 1:
            node = session.doc.scope(scope_id).node(keys[0])
            self.types = CommitLineEdit(stored_output_types(node) or "")
            self.types.setObjectName("trt_output_types")
            self.types.setPlaceholderText("No Constraint")
            self.types.setToolTip(
                f"One type per output ({len(node.output)}), comma separated, e.g. fp16; "
                "empty clears"
            )
            self.types.committed.connect(self._set_types)
            self.add(_row("Output types", self.types))
        self.add(self.stored_error)
        self.add(self.error)

    def _stored_problems(self) -> str:
        """Why the build refuses the selected nodes' stored values ("" when it does not)."""
        scope = self.session.doc.scope(self.scope_id)
        nodes = [scope.node(k) for k in self.keys if scope.has_node(k)]
        if len(nodes) != 1:
            bad = sum(1 for n in nodes if node_precision_problem(n) or node_output_types_problem(n))
            if not bad:
                return ""
            return (
                f"{bad} of the selected nodes store a TensorRT precision or output types the"
                f" build refuses (select one to see why). {BLOCKS_BUILD}"
            )
        lines = []
        precision = node_precision_problem(nodes[0])
        if precision is not None:
            lines.append(f"Stored precision: {precision}, or {NO_CONSTRAINT} to clear it.")
        types = node_output_types_problem(nodes[0])
        if types is not None:
            lines.append(
                f"Stored output types: {types}. Correct them, or empty the field to clear them."
            )
        return "\n".join([*lines, BLOCKS_BUILD]) if lines else ""

    def _set_precision(self) -> None:
        value = self.precision.currentData()
        if value in ("mixed", INVALID):
            return
        reason = self.session.try_push(SetLayerPrecision(self.scope_id, self.keys, value or None))
        self.error.show_message(reason or "")

    def _set_types(self, text: str) -> None:
        types = [t for t in (p.strip() for p in text.split(",")) if t] or None
        node = self.session.doc.scope(self.scope_id).node(self.keys[0])
        if types is None and stored_output_types(node) is None:  # nothing stored to clear
            self.error.show_message("")
            return
        reason = self.session.try_push(SetLayerOutputTypes(self.scope_id, self.keys, types))
        self.error.show_message(reason or "")


class InputTrtSection(Section):
    """The stored optimization profiles' shapes of top-level input ``name``."""

    def __init__(self, session: DocumentSession, name: str) -> None:
        super().__init__("TensorRT optimization profiles")
        model = session.doc.model
        try:
            profiles = read_profiles(model)
        except TrtSettingsError as exc:
            profiles = ()
            self.add(_wrapped(f"<span style='{ERROR_STYLE}'>{html.escape(str(exc))}</span>"))
        lines = []
        #: why stored profile entries of this input are refused by the build, one per entry
        self.problems: list[str] = []
        for i, profile in enumerate(profiles):
            s = profile.shapes.get(name)
            if s is None:
                lines.append(f"Profile {i}: <i>not set</i>")
                continue
            line = (
                f"Profile {i}: min {format_dims(s.min)}, opt {format_dims(s.opt)}, "
                f"max {format_dims(s.max)}"
            )
            problem = validate_shapes(model, name, s)
            if problem is not None:
                self.problems.append(f"profile {i}: {problem}")
                line += f" <span style='{ERROR_STYLE}'>— invalid: {html.escape(problem)}</span>"
            lines.append(line)
        if self.problems:
            lines.append(
                f"<span style='{ERROR_STYLE}'>{BLOCKS_BUILD} Set TensorRT Optimization"
                " Profile… to correct it.</span>"
            )
        if name in inputs_without_profile(model, profiles):
            lines.append("<i>A dynamic input: an engine build needs min/opt/max shapes.</i>")
        self.text = _wrapped("<br>".join(lines) or "No profile (static shape).")
        self.text.setObjectName("trt_profiles")
        self.add(self.text)
        self.button = QPushButton("Set TensorRT Optimization Profile…")
        self.button.clicked.connect(lambda _c=False: self._open(session, name))
        self.add(self.button)

    def _open(self, session: DocumentSession, name: str) -> None:
        from designer.ui.tools.trt_settings import open_profile_dialog

        open_profile_dialog(session, name, self.window())


def _row(text: str, field: QWidget) -> QWidget:
    box = QWidget()
    layout = QHBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    label = QLabel(text)
    label.setFixedWidth(LABEL_WIDTH)
    layout.addWidget(label)
    layout.addWidget(field, 1)
    return box


def _wrapped(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    return label
