"""Tools > Global Model Modification > Convert to FP16 (M-1): every option of
:class:`FP16Options` and of the numerical check (:class:`CheckOptions`)."""

from __future__ import annotations

import importlib.util
import math
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import onnx
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QCompleter,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from designer.activities.fp16_check import clear_labels, label_unnamed_nodes
from designer.activities.fp16_metrics import DEFAULT_LIMITS, DEFAULT_MIN_TOPK, DEFAULT_TOP_K
from designer.activities.numerics import CheckOptions, convert_and_check
from designer.core.transforms import DEFAULT_BLOCK_OPS, FP16Options
from designer.core.walk import iter_nodes
from designer.ui.dialogs.fp16_check_view import (
    BACKEND_CHOICES,
    check_summary,
    check_warning,
    parse_dims,
    symbolic_dims,
)
from designer.ui.dialogs.transform_runner import (
    TransformDialog,
    TransformOutcome,
    TransformWork,
    keep_enter,
    plain_button,
)
from designer.ui.jobs import IsCancelled, Report
from designer.ui.session import DocumentSession

_NAME = re.compile(r"^\S+$")


def node_names(model: onnx.ModelProto) -> list[str]:
    """Names of every node of the model (subgraphs and local functions too), sorted."""
    return sorted({node.name for node in iter_nodes(model) if node.name})


def operator_names() -> list[str]:
    """Operator types of the default ONNX domain (for completion)."""
    return sorted({s.name for s in onnx.defs.get_all_schemas() if s.domain in ("", "ai.onnx")})


class NameList(QWidget):
    """An editable list of names: type (with completion) and Add, select and Remove;
    ``defaults`` adds a Restore Defaults button. ``check`` returns why a name is refused."""

    def __init__(
        self,
        title: str,
        choices: list[str],
        check: Callable[[str], str | None],
        defaults: Iterable[str] = (),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.check = check
        self.defaults = sorted(defaults)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        label = QLabel(title)
        label.setMinimumHeight(QPushButton("X").sizeHint().height())  # lists line up
        head.addWidget(label, 1)
        layout.addLayout(head)
        self.list = QListWidget()
        self.list.setSelectionMode(QListWidget.SelectionMode.ExtendedSelection)
        self.list.setSortingEnabled(True)
        layout.addWidget(self.list, 1)
        row = QHBoxLayout()
        self.entry = QLineEdit()
        self.entry.setPlaceholderText("name")
        completer = QCompleter(choices, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.entry.setCompleter(completer)
        keep_enter(self.entry, self.add_entry)
        self.add_button = plain_button("Add")
        self.add_button.clicked.connect(self.add_entry)
        self.remove_button = plain_button("Remove")
        self.remove_button.setToolTip("Remove the selected names")
        self.remove_button.clicked.connect(self.remove_selected)
        row.addWidget(self.entry, 1)
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        layout.addLayout(row)
        if self.defaults:
            restore = plain_button("Restore Defaults")
            restore.setToolTip("Back to: " + ", ".join(self.defaults))
            restore.clicked.connect(lambda: self.set_names(self.defaults))
            head.addWidget(restore)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color:#b42318;")
        self.message.setVisible(False)
        layout.addWidget(self.message)
        self.set_names(self.defaults)

    def names(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def set_names(self, names: Iterable[str]) -> None:
        self.list.clear()
        self.list.addItems(sorted(set(names)))

    def add_entry(self) -> bool:
        """Add the typed name; a refused name shows why and changes nothing."""
        name = self.entry.text().strip()
        problem = "Type a name first." if not name else self.check(name)
        if problem is None and name in self.names():
            problem = f"'{name}' is already in the list."
        self.message.setText(problem or "")
        self.message.setVisible(problem is not None)
        if problem is not None:
            return False
        self.list.addItem(name)
        self.entry.clear()
        return True

    def remove_selected(self) -> None:
        for item in self.list.selectedItems():
            self.list.takeItem(self.list.row(item))


def _float(text: str, what: str) -> float | str:
    try:
        value = float(text)
    except ValueError:
        return f"{what} must be a number such as 0.01 or 1e-3, not '{text}'."
    if not math.isfinite(value) or value < 0:
        return f"{what} must be a finite number of zero or more."
    return value


class FP16Dialog(TransformDialog):
    def __init__(self, session: DocumentSession, parent: QWidget | None = None) -> None:
        super().__init__(session, "Convert to FP16", "Convert", "fp16", parent)
        model = session.doc.model
        known_nodes = node_names(model)
        node_set = set(known_nodes)

        conversion = QGroupBox("Conversion")
        form = QVBoxLayout(conversion)
        self.keep_io = QCheckBox("Keep model inputs and outputs in float32")
        self.keep_io.setToolTip(
            "Casts are added at the model's edges; callers keep feeding float32"
        )
        self.bfloat16 = QCheckBox("Convert to bfloat16 instead of float16")
        self.clip = QCheckBox("Clip constants outside the target range to its largest value")
        self.clip.setToolTip("Unchecked, such weights become ±inf; the log counts them either way")
        self.clip.setChecked(True)
        for box in (self.keep_io, self.bfloat16, self.clip):
            form.addWidget(box)
        lists = QHBoxLayout()
        self.block_ops = NameList(
            "Operators kept in float32:",
            operator_names(),
            lambda n: None if _NAME.match(n) else "An operator type has no spaces.",
            DEFAULT_BLOCK_OPS,
        )
        self.block_nodes = NameList(
            "Nodes kept in float32:",
            known_nodes,
            lambda n: None if n in node_set else f"The model has no node named '{n}'.",
        )
        lists.addWidget(self.block_ops)
        lists.addWidget(self.block_nodes)
        form.addLayout(lists, 1)
        self.body.addWidget(conversion, 1)

        self.check = QGroupBox("Check numerically against the original (float16 semantics)")
        self.check.setCheckable(True)
        self.check.setChecked(True)
        check_form = QFormLayout(self.check)
        inputs = QVBoxLayout()
        random_row = QHBoxLayout()
        self.random_inputs = QRadioButton("Random inputs, seed")
        self.random_inputs.setChecked(True)
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        random_row.addWidget(self.random_inputs)
        random_row.addWidget(self.seed)
        random_row.addStretch(1)
        inputs.addLayout(random_row)
        folder_row = QHBoxLayout()
        self.folder_inputs = QRadioButton("Input folder")
        self.folder = QLineEdit()
        self.folder.setPlaceholderText("folder of TensorProto .pb files, one per model input")
        self.folder_browse = plain_button("Browse…")
        self.folder_browse.clicked.connect(self._browse_folder)
        folder_row.addWidget(self.folder_inputs)
        folder_row.addWidget(self.folder, 1)
        folder_row.addWidget(self.folder_browse)
        inputs.addLayout(folder_row)
        check_form.addRow("Inputs:", inputs)
        symbolic = symbolic_dims(model)
        self.dims = QLineEdit()
        self.dims.setPlaceholderText(
            "e.g. " + ", ".join(f"{n}=8" for n in symbolic[:3]) + " (unset: 1)"
            if symbolic
            else "the model's inputs have no symbolic dimensions"
        )
        self.dims.setEnabled(bool(symbolic))
        self.dims.setToolTip("Sizes of symbolic input dimensions for random inputs: NAME=N, …")
        check_form.addRow("Symbolic dims:", self.dims)
        self.backend = QComboBox()
        for label, key in BACKEND_CHOICES:
            self.backend.addItem(label, key)
        self.backend.setToolTip(
            "How the converted model is computed. ONNX Runtime alone computes in float32 "
            "where it lacks float16 kernels, which hides overflow; emulation rounds every "
            "float16 result to float16, as a float16 device stores it."
        )
        check_form.addRow("Converted side:", self.backend)
        limits = QHBoxLayout()
        self.max_rel_l2 = QLineEdit()
        self.min_cosine = QLineEdit()
        self.max_range_error = QLineEdit()
        for label, edit, tip in (
            ("rel L2 ≤", self.max_rel_l2, "‖converted − original‖₂ / ‖original‖₂"),
            ("cosine ≥", self.min_cosine, "cosine similarity of the whole output"),
            ("max abs ≤", self.max_range_error, "max |converted − original| / output range"),
        ):
            edit.setMaximumWidth(80)
            edit.setToolTip(tip + "; empty: the default for the target type")
            limits.addWidget(QLabel(label))
            limits.addWidget(edit)
        limits.addWidget(QLabel("of range"))
        limits.addStretch(1)
        check_form.addRow("Limits per output:", limits)
        topk = QHBoxLayout()
        self.top_k = QSpinBox()
        self.top_k.setRange(1, 1000)
        self.top_k.setValue(DEFAULT_TOP_K)
        self.min_topk = QLineEdit(f"{DEFAULT_MIN_TOPK:g}")
        self.min_topk.setMaximumWidth(80)
        self.min_topk.setToolTip("Share of the original's top-k classes the converted top-k keeps")
        topk.addWidget(QLabel("top-"))
        topk.addWidget(self.top_k)
        topk.addWidget(QLabel("agreement ≥"))
        topk.addWidget(self.min_topk)
        topk.addWidget(QLabel("(classifier-like outputs [N, C], C ≥ 10)"))
        topk.addStretch(1)
        check_form.addRow("Top-k:", topk)
        tolerances = QHBoxLayout()
        self.rtol = QLineEdit()
        self.atol = QLineEdit()
        for label, edit in (("rtol", self.rtol), ("atol", self.atol)):
            edit.setMaximumWidth(80)
            edit.setPlaceholderText("off")
            edit.setToolTip("|a − e| ≤ atol + rtol·|e| for every value; empty: not tested")
            tolerances.addWidget(QLabel(label))
            tolerances.addWidget(edit)
        tolerances.addStretch(1)
        check_form.addRow("Element-wise (optional):", tolerances)
        self.auto_block = QCheckBox(
            "Auto-block: keep in float32 the node that first went Inf/NaN, then bisect"
        )
        self.auto_block.setToolTip(
            "Each node named as the first to overflow is kept in float32 until none does; "
            "what still breaks the limits is found by bisection (each trial converts and runs)"
        )
        check_form.addRow(self.auto_block)
        self.bfloat16.toggled.connect(self._sync_limits)
        self._sync_limits()
        self.body.addWidget(self.check)
        self.random_inputs.toggled.connect(self._sync_inputs)
        self._sync_inputs()
        if importlib.util.find_spec("onnxruntime") is None:
            self.check.setChecked(False)
            self.check.setEnabled(False)
            self.check.setToolTip("onnxruntime is not installed, so the check cannot run")
        self.resize(760, 720)

    def _sync_limits(self) -> None:
        """Placeholders show the defaults of the chosen target type."""
        target = "bfloat16" if self.bfloat16.isChecked() else "float16"
        for edit, value in zip(
            (self.max_rel_l2, self.min_cosine, self.max_range_error),
            DEFAULT_LIMITS[target],
            strict=True,
        ):
            edit.setPlaceholderText(f"{value:g}")

    def _sync_inputs(self) -> None:
        random = self.random_inputs.isChecked()
        self.seed.setEnabled(random)
        self.folder.setEnabled(not random)
        self.folder_browse.setEnabled(not random)

    def _browse_folder(self) -> None:
        chosen = self.choose_folder(self.folder.text())
        if chosen:
            self.folder.setText(chosen)
            self.folder_inputs.setChecked(True)

    def choose_folder(self, start: str) -> str:
        """Ask for the input folder (a seam for tests)."""
        return QFileDialog.getExistingDirectory(self, "Input Folder", start)

    def options_now(self) -> tuple[FP16Options, CheckOptions] | str:
        """The options as chosen, or what is wrong with them."""
        values: dict[str, float | None] = {}
        for key, edit, what, high in (
            ("rtol", self.rtol, "rtol", math.inf),
            ("atol", self.atol, "atol", math.inf),
            ("max_rel_l2", self.max_rel_l2, "The rel L2 limit", math.inf),
            ("min_cosine", self.min_cosine, "The cosine limit", 1.0),
            ("max_range_error", self.max_range_error, "The max abs limit", math.inf),
            ("min_topk", self.min_topk, "The top-k agreement", 1.0),
        ):
            text = edit.text().strip()
            if not text:
                values[key] = DEFAULT_MIN_TOPK if key == "min_topk" else None
                continue
            value = _float(text, what)
            if isinstance(value, str):
                return value
            if value > high:
                return f"{what} must be at most {high:g}."
            values[key] = value
        dims = parse_dims(self.dims.text())
        if isinstance(dims, str):
            return dims
        input_dir: Path | None = None
        if self.check.isChecked() and self.folder_inputs.isChecked():
            text = self.folder.text().strip()
            if not text:
                return "Choose the input folder, or use random inputs."
            input_dir = Path(text).expanduser()
            if not input_dir.is_dir():
                return f"The input folder {input_dir} does not exist."
            if not any(input_dir.glob("*.pb")):
                return f"{input_dir} holds no .pb files (TensorProto, one per model input)."
        options = FP16Options(
            keep_io_types=self.keep_io.isChecked(),
            block_ops=frozenset(self.block_ops.names()),
            block_nodes=frozenset(self.block_nodes.names()),
            clip_constants=self.clip.isChecked(),
            bfloat16=self.bfloat16.isChecked(),
        )
        check = CheckOptions(
            enabled=self.check.isChecked(),
            seed=self.seed.value(),
            input_dir=input_dir,
            dims=dims,
            rtol=values["rtol"],
            atol=values["atol"],
            auto_block=self.auto_block.isChecked() and self.check.isChecked(),
            max_rel_l2=values["max_rel_l2"],
            min_cosine=values["min_cosine"],
            max_range_error=values["max_range_error"],
            top_k=self.top_k.value(),
            min_topk=values["min_topk"] or 0.0,
            backend=str(self.backend.currentData()),
        )
        return options, check

    def prepare(self) -> TransformWork | str:
        chosen = self.options_now()
        if isinstance(chosen, str):
            return chosen
        options, check = chosen
        model, base_dir = self.session.doc.model, self.session.doc.base_dir

        def work(report: Report, cancelled: IsCancelled) -> TransformOutcome:
            source, labels = _labelled(model) if check.enabled else (model, {})
            outcome = convert_and_check(
                source, options, base_dir, check, cancel=cancelled, progress=report
            )
            clear_labels(outcome.result.model, labels)  # the document's nodes stay unnamed
            log = outcome.result.log
            summary = check_summary(outcome)
            warning = check_warning(outcome, check, model)
            return TransformOutcome(outcome.result.model, log, log.title, summary, warning)

        return work


def _labelled(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict[str, int]]:
    """``model``, or a copy with its unnamed main-graph nodes labelled ('Exp #1 (unnamed)'),
    so that the check can blame them and auto-block keep them in float32
    (:func:`designer.activities.fp16_check.label_unnamed_nodes`). The document's own model
    is never changed; a model whose nodes all have names is not copied."""
    if all(node.name for node in model.graph.node):
        return model, {}
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return copy, label_unnamed_nodes(copy)
