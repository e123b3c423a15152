"""Tools > Global Model Modification > Sanitize Graph (M-2): constant folding (evaluated with
ONNX Runtime) and removal of unused nodes, initializers and value_info."""

from __future__ import annotations

import importlib.util

from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QGroupBox,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from designer.activities.fold_eval import has_symbolic_shapes, ort_evaluator, ort_symbolic_shapes
from designer.core.transforms import (
    ConstantEvaluator,
    SanitizeOptions,
    count_nodes,
    model_size,
    sanitize,
)
from designer.ui.dialogs.transform_runner import TransformDialog, TransformOutcome, TransformWork
from designer.ui.jobs import IsCancelled, Report
from designer.ui.session import DocumentSession

#: QSpinBox holds a C int; larger thresholds are the same as no threshold for one tensor.
MAX_THRESHOLD = 2**31 - 1
#: how sanitize's log warns of a result the type checker rejects (from an invalid input)
_RESULT_INVALID = "the result does not pass the model check"


def has_onnxruntime() -> bool:
    return importlib.util.find_spec("onnxruntime") is not None


class SanitizeDialog(TransformDialog):
    checks_result = False  # sanitize refuses an invalid result of a valid input itself

    def __init__(self, session: DocumentSession, parent: QWidget | None = None) -> None:
        super().__init__(session, "Sanitize Graph", "Sanitize", "sanitized", parent)
        model = session.doc.model
        about = QLabel(
            f"The model has {count_nodes(model):,} node(s) in all graphs and functions, "
            f"{model_size(model):,} bytes."
        )
        self.body.addWidget(about)

        folding = QGroupBox("Constant folding")
        grid = QGridLayout(folding)
        self.fold_constants = QCheckBox("Fold constant subgraphs (evaluated with ONNX Runtime)")
        self.fold_constants.setChecked(True)
        self.fold_shapes = QCheckBox(
            "Fold shape computations (Shape, Gather, Concat, Unsqueeze chains)"
        )
        self.fold_shapes.setChecked(True)
        self.symbolic = QCheckBox(
            "Use ONNX Runtime's symbolic shape inference (as Polygraphy does: more shapes fold)"
        )
        self.symbolic.setChecked(True)
        grid.addWidget(self.fold_constants, 0, 0, 1, 3)
        grid.addWidget(self.fold_shapes, 1, 0, 1, 3)
        grid.addWidget(self.symbolic, 4, 0, 1, 3)
        self.limit_size = QCheckBox("Fold size threshold:")
        self.limit_size.setToolTip("Results larger than this are not folded (unchecked: no limit)")
        self.threshold = QSpinBox()
        self.threshold.setRange(0, MAX_THRESHOLD)
        self.threshold.setValue(1024 * 1024)
        self.threshold.setSuffix(" bytes")
        self.threshold.setGroupSeparatorShown(True)
        grid.addWidget(self.limit_size, 2, 0)
        grid.addWidget(self.threshold, 2, 1)
        self.limit_passes = QCheckBox("Folding passes:")
        self.limit_passes.setToolTip(
            "Unchecked: automatic, repeat until nothing changes. 0 only removes unused parts"
        )
        self.passes = QSpinBox()
        self.passes.setRange(0, 1000)
        self.passes.setValue(1)
        self.auto_note = QLabel()
        grid.addWidget(self.limit_passes, 3, 0)
        grid.addWidget(self.passes, 3, 1)
        grid.addWidget(self.auto_note, 3, 2)
        grid.setColumnStretch(2, 1)
        self.body.addWidget(folding)

        cleanup = QGroupBox("Clean-up")
        column = QVBoxLayout(cleanup)
        self.remove_unused = QCheckBox("Remove unused nodes, initializers and value_info")
        self.remove_unused.setChecked(True)
        column.addWidget(self.remove_unused)
        column.addWidget(
            QLabel(
                "Graph outputs are always kept. Subgraphs and local functions are sanitized too."
            )
        )
        self.body.addWidget(cleanup)
        self.body.addStretch(1)

        self.ort = has_onnxruntime()
        if not self.ort:
            self.fold_constants.setChecked(False)
            self.fold_constants.setEnabled(False)
            self.fold_constants.setToolTip(
                "onnxruntime is not installed: only shape computations can be folded"
            )
        self.symbolic_available = self.ort and has_symbolic_shapes()
        if not self.symbolic_available:
            self.symbolic.setChecked(False)
            self.symbolic.setEnabled(False)
            self.symbolic.setToolTip(
                "onnxruntime.tools.symbolic_shape_infer cannot be imported (it needs sympy): "
                "only onnx's shape inference is used"
            )
        self.limit_size.toggled.connect(self._sync)
        self.limit_passes.toggled.connect(self._sync)
        self.fold_constants.toggled.connect(self._sync)
        self.fold_shapes.toggled.connect(self._sync)
        self._sync()
        self.resize(620, 420)

    def _sync(self) -> None:
        self.threshold.setEnabled(self.limit_size.isChecked())
        self.passes.setEnabled(self.limit_passes.isChecked())
        self.auto_note.setText(
            "" if self.limit_passes.isChecked() else "automatic (until nothing changes)"
        )
        folding = self.fold_constants.isChecked() or self.fold_shapes.isChecked()
        self.limit_size.setEnabled(folding)
        self.limit_passes.setEnabled(folding)
        self.symbolic.setEnabled(self.symbolic_available and self.fold_shapes.isChecked())

    def options_now(self) -> SanitizeOptions | str:
        folding = self.fold_constants.isChecked() or self.fold_shapes.isChecked()
        if not folding and not self.remove_unused.isChecked():
            return "Choose at least one thing to do: folding or removing unused parts."
        return SanitizeOptions(
            fold_constants=self.fold_constants.isChecked(),
            fold_size_threshold=self.threshold.value() if self.limit_size.isChecked() else None,
            passes=self.passes.value() if self.limit_passes.isChecked() else None,
            fold_shapes=self.fold_shapes.isChecked(),
            remove_unused=self.remove_unused.isChecked(),
        )

    def prepare(self) -> TransformWork | str:
        options = self.options_now()
        if isinstance(options, str):
            return options
        model, base_dir = self.session.doc.model, self.session.doc.base_dir
        evaluator: ConstantEvaluator | None = (
            ort_evaluator if options.fold_constants and self.ort else None
        )

        symbolic = self.symbolic.isEnabled() and self.symbolic.isChecked()
        shapes = ort_symbolic_shapes if symbolic else None

        def work(report: Report, cancelled: IsCancelled) -> TransformOutcome:
            result = sanitize(
                model,
                options,
                base_dir,
                evaluator,
                shapes=shapes,
                cancel=cancelled,
                progress=report,
            )
            counts = result.log.counts
            summary = [
                f"Nodes {counts.get('nodes_before', 0):,} → {counts.get('nodes_after', 0):,}; "
                f"size {counts.get('size_before', 0):,} → {counts.get('size_after', 0):,} bytes."
            ]
            failed = [w for w in result.log.warnings if w.startswith(_RESULT_INVALID)]
            warning = f"{failed[0][0].upper()}{failed[0][1:]}." if failed else None
            return TransformOutcome(result.model, result.log, result.log.title, summary, warning)

        return work
