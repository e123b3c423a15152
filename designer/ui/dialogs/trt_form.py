"""The options of a TensorRT engine build (SPEC X-3) and profiling run (X-4) as a tabbed form.

:meth:`TrtForm.build_options` / :meth:`TrtForm.profile_options` give E1's option dataclasses
with host paths, exactly what ``onnx-designer trt build`` / ``profile trt`` make from the same
choices. :meth:`TrtForm.set_version` disables, with the reason as tooltip, every option the
target's TensorRT refuses: each one is tried through the real command-line builder
(:func:`designer.activities.trt.command.trtexec_argv`), so the form and the CLI agree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from designer.activities.trt.options import (
    HARDWARE_COMPATIBILITY,
    TACTIC_SOURCES,
    TrtBuildOptions,
    TrtOptionError,
    TrtProfileOptions,
)
from designer.activities.trt.run import default_engine_path
from designer.activities.trt.version import TrtVersion
from designer.core.errors import DesignerError
from designer.ui.dialogs import trt_form_pickers as pickers

TYPING_LABELS = {
    "default": "TensorRT defaults",
    "strong": "Strongly typed",
    "obey": "Obey precision constraints",
    "prefer": "Prefer precision constraints",
}
WEIGHTS_LABELS = {
    "none": "Not refittable",
    "refit": "Refittable",
    "strip": "Refittable, weights stripped",
}
VERBOSITY_LABELS = {
    "detailed": "Detailed (layer JSON with tactics and ONNX nodes)",
    "layer_names_only": "Layer names only",
    "none": "None",
}
SOURCES = {
    "auto": "Automatic (system or JetPack, PATH, deployed wheels)",
    "system": "System (JetPack, /usr/src/tensorrt, PATH)",
    "deployed": "Deployed (tensorrt wheels in the deployment venv, x86_64)",
    "custom": "Custom trtexec path on the target",
}
HINT_STYLE = "color:#5c6370"
TACTIC_TIP = "partially checked: TensorRT's default; checked: on; empty: off"
FREE_DIMS_LABEL = "Use 1 for free dimensions of inputs without a profile"
IGNORE_LABEL = "Ignore the layer precisions stored in the model"
NOT_CHECKED = "TensorRT version: not checked yet (press Check)."
# The versions Show Command can preview where the target has no TensorRT (as
# ``trt build --print-command --trt-version``): those the tests check against sampleOptions.
PREVIEW_VERSIONS = (TrtVersion(10, 16), TrtVersion(11, 1))
# Where "Open the metadata as a graph document" writes the layer JSON when no Metadata output
# is given: TREx's name for it, so the engine explorer finds its siblings and names it.
GRAPH_SUFFIX = ".graph.json"


def default_layer_info_path(engine: Path) -> Path:
    """``a.engine`` → ``a.engine.graph.json`` beside it (TREx's layer JSON name)."""
    return engine.with_name(engine.name + GRAPH_SUFFIX)


def window_wording(message: str) -> str:
    """A message of the shared build code (:mod:`designer.activities.trt.model_settings`,
    whose wording is the command line's) with the window's controls named instead of CLI
    verbs: the window user has no ``trt set-profile`` to run."""
    from designer.ui.tools.trt_settings import PROFILE_ACTION

    return message.replace(
        "(trt set-profile) or use 1 for free dims",
        f"(right-click the input > {PROFILE_ACTION}) or tick “{FREE_DIMS_LABEL}” (General)",
    )


def window_shapes_note(note: str) -> str:
    """:func:`~designer.activities.trt.model_settings.prebuilt_engine_shapes_note` for the
    window, which has no field for the shapes to run a prebuilt engine with: it says what
    trtexec will use, and where other shapes can be given (the CLI's ``--shape``)."""
    return note.replace(
        "; give their shapes to run others",
        "; this window has no field for the shapes to run, so trtexec uses those 1s"
        " (profile trt --use-engine ENGINE --shape NAME:DIMS runs others)",
    )


def _path_row(edit: QLineEdit, pick: Callable[[], None]) -> QHBoxLayout:
    browse = QPushButton("Browse…")
    browse.clicked.connect(pick)
    row = QHBoxLayout()
    row.addWidget(edit, 1)
    row.addWidget(browse)
    return row


def _combo(labels: dict[str, str]) -> QComboBox:
    box = QComboBox()
    for key, label in labels.items():
        box.addItem(label, key)
    return box


def _spin(low: int, high: int, default_text: str | None = None) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    if default_text is not None:
        spin.setSpecialValueText(default_text)
        spin.setValue(low)
    return spin


def _optional(spin: QSpinBox) -> int | None:
    return None if spin.value() == spin.minimum() and spin.specialValueText() else spin.value()


def _text(edit: QLineEdit) -> str | None:
    return edit.text().strip() or None


def _paths(text: str) -> list[str]:
    return [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]


def _tactic_off(name: str) -> Callable[[TrtBuildOptions], TrtBuildOptions]:
    """The probe of one tactic-source box: the options with that source turned off."""
    return lambda o: dataclasses.replace(o, tactic_sources={name: False})


class ElidedLabel(QLabel):
    """One line that ends in "…" where it does not fit, the whole text as its tooltip: the
    dialog has no height to spare for a long reason the dependency panel shows in full."""

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        rect = self.contentsRect()
        text = self.fontMetrics().elidedText(
            self.text(), Qt.TextElideMode.ElideMiddle, rect.width()
        )
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(
            rect, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), text
        )

    def minimumSizeHint(self) -> QSize:
        return QSize(40, super().minimumSizeHint().height())


class TrtForm(QWidget):
    convertRequested = Signal()  # the user asks for the FP16 conversion (strongly typed TRT)
    """Tabs General / Precision & Tactics / Optimizer (/ Profiler when ``profile``)."""

    def __init__(self, profile: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.profile_mode = profile
        self.version: Any = None
        self.clocks_reason = "Check the target first: clocks can be locked on a Jetson only"
        self.tabs = QTabWidget()
        self.tabs.addTab(self._general(), "General")
        self.tabs.addTab(self._tactics(), "Precision && Tactics")
        self.tabs.addTab(self._optimizer(), "Optimizer")
        if profile:
            self.tabs.addTab(self._profiler(), "Profiler")
        self.missing_reason: str | None = None  # the last Check found no TensorRT: why
        # What trtexec runs a prebuilt engine's unshaped dynamic inputs with (set by
        # profile_options; None when every dynamic input has a shape or no engine is loaded).
        self.shapes_note: str | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        layout.addLayout(self._version_row())
        self._sync()

    def _version_row(self) -> QHBoxLayout:
        """The version line, and the preview version offered where no TensorRT was found."""
        self.version_note = ElidedLabel(NOT_CHECKED)
        self.version_note.setStyleSheet(HINT_STYLE)
        self.preview_version = QComboBox()
        for version in PREVIEW_VERSIONS:
            self.preview_version.addItem(f"TensorRT {version.short}", version)
        self.preview_version.setToolTip(
            "No TensorRT on this target: Show Command prints the line for this version"
            " (as trt build --print-command --trt-version); Build needs TensorRT on the target"
        )
        self.preview_version.currentIndexChanged.connect(lambda _i: self._sync())
        row = QHBoxLayout()
        row.addWidget(self.version_note, 1)
        row.addWidget(self.preview_version)
        self._show_preview(False)
        return row

    def _show_preview(self, on: bool) -> None:
        self.preview_version.setVisible(on)
        if not on:
            self.version_note.setToolTip("")

    # --- tabs ------------------------------------------------------------------------------
    def _general(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.source = _combo(SOURCES)
        self.custom = QLineEdit()
        self.custom.setPlaceholderText("trtexec on the target (relative: in the deployment folder)")
        self.source.currentIndexChanged.connect(lambda _i: self._sync())
        row = QHBoxLayout()
        row.addWidget(self.source)
        row.addWidget(self.custom, 1)
        form.addRow("TensorRT:", row)
        self.model = QLineEdit()
        self.model.setPlaceholderText("the .onnx file")
        self.model.editingFinished.connect(self._model_changed)
        form.addRow("ONNX model:", _path_row(self.model, lambda: pickers.browse_model(self)))
        self.free_dims = QCheckBox(FREE_DIMS_LABEL)
        self.free_dims.setToolTip(
            "Optimization profiles and layer precisions stored in the model always apply"
        )
        form.addRow("", self.free_dims)
        self.engine = QLineEdit()
        form.addRow("Engine output:", _path_row(self.engine, lambda: pickers.browse_engine(self)))
        self.verbosity = _combo(VERBOSITY_LABELS)
        self.verbosity.currentIndexChanged.connect(lambda _i: self._sync())
        form.addRow("Save engine metadata:", self.verbosity)
        self.layer_info = QLineEdit()
        self.layer_info.setPlaceholderText("optional: engine inspector JSON (layer information)")
        form.addRow(
            "Metadata output:", _path_row(self.layer_info, lambda: pickers.browse_layer_info(self))
        )
        self.open_graph = QCheckBox("Open the metadata as a graph document")
        self.open_graph.toggled.connect(lambda _on: self._sync())
        self.graph_available, self.graph_reason = False, ""
        form.addRow("", self.open_graph)
        self.engine.textChanged.connect(lambda _t: self._layer_info_hint())
        self.device = _spin(0, 64)
        self.trt_verbose = QCheckBox("Verbose trtexec log (--verbose)")
        self.trt_verbose.setToolTip(
            "trtexec logs every step (as --trt-verbose on the command line)"
        )
        row = QHBoxLayout()
        row.addWidget(self.device)
        row.addSpacing(24)
        row.addWidget(self.trt_verbose)
        row.addStretch(1)
        form.addRow("Device index:", row)
        self.plugins = QLineEdit()
        self.plugins.setPlaceholderText("libA.so, libB.so (paths on the target)")
        form.addRow("Plugin libraries:", self.plugins)
        self.dynamic_plugins = QLineEdit()
        self.dynamic_plugins.setPlaceholderText("loaded at run time, not serialized")
        form.addRow("Dynamic plugins:", self.dynamic_plugins)
        return page

    def _tactics(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.typing = _combo(TYPING_LABELS)
        self.typing.currentIndexChanged.connect(lambda _i: self._sync())
        form.addRow("Typing mode:", self.typing)
        grid = QGridLayout()
        self.tf32 = QCheckBox("TF32")
        self.tf32.setChecked(True)
        self.fp16, self.bf16 = QCheckBox("FP16"), QCheckBox("BF16")
        self.int8 = QCheckBox("INT8 (placeholder ranges without a calibration cache)")
        self.fp8 = QCheckBox("FP8 (not with INT8)")
        self.int8.toggled.connect(lambda on: self._exclusive(on, self.fp8))
        self.fp8.toggled.connect(lambda on: self._exclusive(on, self.int8))
        for i, box in enumerate((self.tf32, self.fp16, self.bf16, self.int8, self.fp8)):
            grid.addWidget(box, i // 3, i % 3)
        form.addRow("Allow:", grid)
        self.sparsity = QCheckBox("Use structured sparsity where weights allow (2:4)")
        form.addRow("Sparsity:", self.sparsity)
        sources = QGridLayout()
        self.tactic_boxes: dict[str, QCheckBox] = {}
        for i, name in enumerate(TACTIC_SOURCES):
            box = QCheckBox(name)
            box.setTristate(True)
            box.setCheckState(Qt.CheckState.PartiallyChecked)
            box.setToolTip(TACTIC_TIP)
            sources.addWidget(box, i // 3, i % 3)
            self.tactic_boxes[name] = box
        form.addRow("Tactic sources:", sources)
        self.native_norm = QCheckBox("Native instance normalization (else the plugin)")
        self.native_norm.setChecked(True)
        form.addRow("", self.native_norm)
        self.precision_note = QLabel(
            "Layer precisions stored in the model are honoured with Obey/Prefer only."
        )
        self.precision_note.setStyleSheet(HINT_STYLE)
        form.addRow("", self.precision_note)
        self.ignore_precisions = QCheckBox(IGNORE_LABEL)
        self.ignore_precisions.setToolTip(
            "Build without the layer precisions and output types the model stores (as"
            " --ignore-layer-precisions on the command line); the model is not changed"
        )
        form.addRow("", self.ignore_precisions)
        self.convert_button = QPushButton("Convert the Model to FP16…")
        self.convert_button.setToolTip(
            "This TensorRT builds strongly typed networks only: the precision is the model's "
            "own. Convert its weights and computation to float16 (one undoable step, checked "
            "with ONNX Runtime), save, then build."
        )
        self.convert_button.setVisible(False)
        self.convert_button.clicked.connect(self.convertRequested)
        form.addRow("", self.convert_button)
        return page

    def _optimizer(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.opt_level = _spin(-1, 5, "default (3)")
        form.addRow("Builder optimization level:", self.opt_level)
        self.aux_streams = _spin(-1, 64, "default")
        form.addRow("Max auxiliary streams:", self.aux_streams)
        self.hardware = QComboBox()
        for key in HARDWARE_COMPATIBILITY:
            self.hardware.addItem(key, key)
        form.addRow("Hardware compatible:", self.hardware)
        self.workspace = _spin(0, 1 << 22, "no limit")
        self.workspace.setSuffix(" MiB")
        form.addRow("Workspace pool limit:", self.workspace)
        self.calib = QLineEdit()
        self.calib.setPlaceholderText("INT8 calibration cache (copied to the target)")
        form.addRow("Calibration cache:", _path_row(self.calib, lambda: pickers.browse_calib(self)))
        self.weights = _combo(WEIGHTS_LABELS)
        form.addRow("Weights refitting:", self.weights)
        self.version_compatible = QCheckBox("Version compatible engine")
        form.addRow("", self.version_compatible)
        return page

    def _profiler(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.use_engine = QCheckBox("Use a prebuilt engine:")
        self.prebuilt = QLineEdit()
        self.use_engine.toggled.connect(lambda _on: self._sync())
        row = _path_row(self.prebuilt, lambda: pickers.browse_prebuilt(self))
        row.insertWidget(0, self.use_engine)
        form.addRow("Engine:", row)
        self.passes = _spin(1, 100)
        self.passes.setToolTip("Each pass measures the engine again; min/max come from them")
        form.addRow("Measurement passes:", self.passes)
        self.iterations = _spin(0, 10_000_000, "default (10)")
        form.addRow("Iterations:", self.iterations)
        self.duration = QDoubleSpinBox()
        self.duration.setRange(-1, 3600)
        self.duration.setSpecialValueText("default (3 s)")
        self.duration.setValue(-1)
        self.duration.setSuffix(" s")
        form.addRow("Duration (at least):", self.duration)
        self.warmup = _spin(-1, 600_000, "default (200 ms)")
        self.warmup.setSuffix(" ms")
        form.addRow("Warm-up:", self.warmup)
        self.avg_runs = _spin(0, 100_000, "default (10)")
        form.addRow("Averaging runs:", self.avg_runs)
        self.lock_clocks = QCheckBox("Lock GPU clocks (where the target permits it)")
        self.hide_non_compute = QCheckBox("Hide non-compute operations (no host/device copies)")
        self.hide_non_compute.setChecked(True)
        self.separate = QCheckBox("Profile layers in a separate run (end-to-end timing too)")
        # Off by default, as profile trt's --spin-wait / --cuda-graph: on TensorRT 11 (whose
        # defaults are on) that is --noSpinWait / --noCudaGraph.
        self.spin_wait = QCheckBox("Spin wait")
        self.spin_wait.setToolTip(
            "Busy-wait for the GPU (steadier latencies, one CPU core busy): --useSpinWait on"
            " TensorRT 10; unticked, --noSpinWait on TensorRT 11 (where it is the default)"
        )
        self.cuda_graph = QCheckBox("CUDA graph")
        self.cuda_graph.setToolTip(
            "Launch the inference through a CUDA graph (less launch overhead): --useCudaGraph"
            " on TensorRT 10; unticked, --noCudaGraph on TensorRT 11 (where it is the default)"
        )
        # Two lines for five switches: this tab must not be the dialog's tallest (the dialog
        # fits a 768-pixel screen).
        for boxes in (
            (self.lock_clocks, self.hide_non_compute),
            (self.separate, self.spin_wait, self.cuda_graph),
        ):
            row = QHBoxLayout()
            for box in boxes:
                row.addWidget(box)
                row.addSpacing(16)
            row.addStretch(1)
            form.addRow("Measurement:" if box is self.hide_non_compute else "", row)
        self.profile_out = QLineEdit()
        form.addRow(
            "Profile output:", _path_row(self.profile_out, lambda: pickers.browse_profile(self))
        )
        return page

    @staticmethod
    def _exclusive(on: bool, other: QCheckBox) -> None:
        """FP8 and INT8 cannot both be on: turning one on turns the other off."""
        if on:
            other.setChecked(False)

    # --- state -----------------------------------------------------------------------------
    def set_model(self, path: Path) -> None:
        self.model.setText(str(path))
        self._model_changed()

    def model_path(self) -> Path | None:
        text = self.model.text().strip()
        return Path(text).expanduser() if text else None

    def _model_changed(self) -> None:
        path = self.model_path()
        self.engine.setPlaceholderText(str(default_engine_path(path)) if path else "")
        if self.profile_mode and path is not None:
            self.profile_out.setPlaceholderText(
                str(path.with_name(f"{path.stem}.trt-profile.json"))
            )
        self._layer_info_hint()

    def engine_path(self) -> Path | None:
        """The engine output (its default beside the model when the field is empty)."""
        text = _text(self.engine)
        if text:
            return Path(text).expanduser()
        model = self.model_path()
        return default_engine_path(model) if model else None

    def _graph_layer_info(self) -> Path | None:
        """The layer JSON written only because "open as a graph" is ticked (no path given)."""
        if not (self.open_graph.isEnabled() and self.open_graph.isChecked()):
            return None
        engine = self.engine_path()
        return default_layer_info_path(engine) if engine else None

    def _layer_info_hint(self) -> None:
        """The Metadata output's placeholder: where the graph's layer JSON goes by default."""
        default = self._graph_layer_info()
        self.layer_info.setPlaceholderText(
            f"default for the graph: {default}"
            if default
            else "optional: engine inspector JSON (layer information)"
        )

    def set_graph_opener(self, available: bool, reason: str) -> None:
        """Enable "open metadata as a graph" only where an engine explorer exists."""
        self.graph_available, self.graph_reason = available, reason
        if not available:
            self.open_graph.setChecked(False)
        self._sync()

    def set_clocks(self, available: bool, reason: str) -> None:
        if not self.profile_mode:
            return
        self.clocks_reason = reason
        self.lock_clocks.setEnabled(available)
        if not available:
            self.lock_clocks.setChecked(False)
        self.lock_clocks.setToolTip(reason)

    def _sync(self) -> None:
        self.custom.setEnabled(self.source.currentData() == "custom")
        detailed = self.verbosity.currentData() == "detailed"
        self.layer_info.setEnabled(detailed)
        if not detailed:
            self.layer_info.setToolTip("needs detailed engine metadata")
        self.open_graph.setEnabled(self.graph_available and detailed)
        self.open_graph.setToolTip(
            self.graph_reason if detailed or not self.graph_available
            else "needs detailed engine metadata (the layer JSON)"
        )  # fmt: skip
        self._layer_info_hint()
        if self.profile_mode:
            prebuilt = self.use_engine.isChecked()
            self.prebuilt.setEnabled(prebuilt)
            for tab in (1, 2):
                self.tabs.setTabEnabled(tab, not prebuilt)
            if not self.lock_clocks.isEnabled():
                self.lock_clocks.setToolTip(self.clocks_reason)
        if self.effective_version() is not None:
            self._apply_version()

    # --- version awareness -----------------------------------------------------------------
    def _probes(self) -> list[tuple[QWidget, Callable[[TrtBuildOptions], TrtBuildOptions]]]:
        r = dataclasses.replace
        probes: list[tuple[QWidget, Callable[[TrtBuildOptions], TrtBuildOptions]]] = [
            (self.fp16, lambda o: r(o, fp16=True)),
            (self.bf16, lambda o: r(o, bf16=True)),
            (self.int8, lambda o: r(o, int8=True)),
            (self.fp8, lambda o: r(o, fp8=True)),
            (self.tf32, lambda o: r(o, tf32=False)),
            (self.sparsity, lambda o: r(o, sparsity=True)),
            (self.calib, lambda o: r(o, int8=True, calibration_cache="calib.cache")),
            (self.version_compatible, lambda o: r(o, version_compatible=True)),
            (self.native_norm, lambda o: r(o, native_instance_norm=False)),
        ]
        # A tactic source the version lacks is refused whether turned on or off.
        for name, box in self.tactic_boxes.items():
            probes.append((box, _tactic_off(name)))
        return probes

    def set_version(self, version: Any) -> None:
        """The target's TensorRT version (a TrtVersion): disable what it lacks, with why."""
        self.version = version
        self.missing_reason = None
        self._show_preview(False)
        self.version_note.setText(
            f"TensorRT {version} on the target: options it lacks are disabled (hover for why)."
        )
        self._apply_version()

    def set_missing(self, reason: str) -> None:
        """A Check found no TensorRT (``reason``, the probe's why): say so, and offer the
        version whose command line Show Command previews instead (its options apply)."""
        self.version = None
        self.missing_reason = reason
        self._show_preview(True)
        # One line, the advice left to the dependency panel below (and the tooltip here).
        what = reason.split(": ", 1)[0]
        self.version_note.setText(f"No TensorRT on this target: {what}. Show Command previews:")
        self.version_note.setToolTip(f"No TensorRT on this target: {reason}")
        self._apply_version()

    def clear_version(self) -> None:
        """Nothing is known about the (new) target's TensorRT yet."""
        self.version = None
        self.missing_reason = None
        self._show_preview(False)
        self.version_note.setText(NOT_CHECKED)

    def chosen_preview(self) -> TrtVersion:
        """The version a preview is made for where the target has none."""
        version = self.preview_version.currentData()
        assert isinstance(version, TrtVersion)
        return version

    def effective_version(self) -> Any:
        """The version the options are made for: the target's, else (no TensorRT found
        there) the preview's, else None (not checked)."""
        if self.version is not None:
            return self.version
        return self.chosen_preview() if self.missing_reason is not None else None

    def _refusal(self, options: TrtBuildOptions) -> str | None:
        from designer.activities.trt.command import trtexec_argv

        try:
            trtexec_argv(options, self.effective_version())
        except TrtOptionError as exc:
            return str(exc)
        return None

    def _apply_version(self) -> None:
        base = TrtBuildOptions(model="model.onnx")
        tactics = set(self.tactic_boxes.values())
        for widget, change in self._probes():
            reason = self._refusal(change(base))
            widget.setEnabled(reason is None)
            widget.setToolTip(reason or (TACTIC_TIP if widget in tactics else ""))
            if reason is None or not isinstance(widget, QCheckBox):
                continue
            if widget in tactics:  # back to TensorRT's default: no --tacticSources for it
                widget.setCheckState(Qt.CheckState.PartiallyChecked)
            else:
                widget.setChecked(widget is self.native_norm or widget is self.tf32)
        # Precision flags refused (TensorRT 11): offer the conversion that works there.
        self.convert_button.setVisible(not self.fp16.isEnabled())
        self.precision_note.setText(
            "Layer precisions stored in the model are honoured with Obey/Prefer only."
            if self.fp16.isEnabled()
            else "This TensorRT has no layer precisions: ignore any stored in the model, or"
            " convert the model."
        )
        for i in range(self.typing.count()):
            key = self.typing.itemData(i)
            reason = self._refusal(dataclasses.replace(base, typing=key))
            item = self.typing.model().item(i)  # type: ignore[attr-defined]
            item.setEnabled(reason is None)
            item.setToolTip(reason or TYPING_LABELS[key])
            if reason is not None and self.typing.currentIndex() == i:
                self.typing.setCurrentIndex(self.typing.findData("strong"))

    # --- results ---------------------------------------------------------------------------
    def trt_source(self) -> str | None:
        """The TensorRT source the user chose (None: automatic)."""
        key = self.source.currentData()
        return None if key == "auto" else str(key)

    def custom_trtexec(self) -> str | None:
        if self.source.currentData() != "custom":
            return None
        text = self.custom.text().strip()
        if not text:
            raise DesignerError("give the custom trtexec path (or let the designer find it)")
        return text

    def build_options(self) -> TrtBuildOptions:
        """The build options (host paths); DesignerError naming the field when wrong."""
        return self._build_options(self.ignore_precisions.isChecked())

    def _build_options(
        self, ignore_precisions: bool, prebuilt_engine: bool = False
    ) -> TrtBuildOptions:
        """:meth:`build_options`, the stored layer precisions left out when
        ``ignore_precisions``. ``prebuilt_engine``: for profiling an engine built before
        (as ``profile trt --use-engine``), which holds its own profiles and precisions, so
        nothing stored is used or required and only the shapes the user gave (the free-dims
        box's 1s) are sent; :attr:`shapes_note` then says what trtexec uses for the rest."""
        model = self.model_path()
        if model is None:
            raise DesignerError("choose the ONNX model")
        if not model.is_file():
            raise DesignerError(f"the model {model} does not exist")
        tactics = {
            name: box.checkState() == Qt.CheckState.Checked
            for name, box in self.tactic_boxes.items()
            if box.checkState() != Qt.CheckState.PartiallyChecked
        }
        engine = _text(self.engine) or str(default_engine_path(model))
        layer_info = _text(self.layer_info) if self.layer_info.isEnabled() else None
        graph_json = self._graph_layer_info()
        if layer_info is None and graph_json is not None:
            layer_info = str(graph_json)  # the graph to open needs the layer JSON
        options = TrtBuildOptions(
            model=str(model),
            engine=engine,
            typing=self.typing.currentData(),
            tf32=self.tf32.isChecked(),
            fp16=self.fp16.isChecked(),
            bf16=self.bf16.isChecked(),
            int8=self.int8.isChecked(),
            fp8=self.fp8.isChecked(),
            sparsity=self.sparsity.isChecked(),
            tactic_sources=tactics,
            native_instance_norm=self.native_norm.isChecked(),
            builder_optimization_level=_optional(self.opt_level),
            max_aux_streams=_optional(self.aux_streams),
            hardware_compatibility=self.hardware.currentData(),
            version_compatible=self.version_compatible.isChecked(),
            workspace_mib=_optional(self.workspace),
            calibration_cache=_text(self.calib) if self.calib.isEnabled() else None,
            weights=self.weights.currentData(),
            profiling_verbosity=self.verbosity.currentData(),
            layer_info=layer_info,
            device=self.device.value(),
            plugins=_paths(self.plugins.text()),
            dynamic_plugins=_paths(self.dynamic_plugins.text()),
            verbose=self.trt_verbose.isChecked(),
        )
        options.validate()
        from designer.activities.trt.model_settings import with_model_settings
        from designer.core.io import read_model

        proto = read_model(model)
        try:
            merged = with_model_settings(
                options,
                proto,
                free_dims_as_one=self.free_dims.isChecked(),
                ignore_stored_precisions=ignore_precisions,
                prebuilt_engine=prebuilt_engine,
            )
        except TrtOptionError as exc:
            raise TrtOptionError(window_wording(str(exc))) from None
        self._check_precisions(merged)
        self.shapes_note = self._engine_shapes_note(proto, merged) if prebuilt_engine else None
        return merged

    @staticmethod
    def _engine_shapes_note(proto: Any, options: TrtBuildOptions) -> str | None:
        """The window's wording of what trtexec runs a prebuilt engine's dynamic inputs
        without a shape with (where ``profile trt --use-engine`` prints its note)."""
        from designer.activities.trt.model_settings import prebuilt_engine_shapes_note

        note = prebuilt_engine_shapes_note(proto, options.profiles[0] if options.profiles else {})
        return window_shapes_note(note) if note is not None else None

    def _check_precisions(self, options: TrtBuildOptions) -> None:
        """Refuse layer precisions the chosen TensorRT cannot use, naming this form's way
        out (the Ignore box, the typing mode, the canvas menu) rather than CLI flags."""
        from designer.ui.canvas.precision_menu import TITLE

        problem = options.precision_problem(
            self.effective_version(),
            ignore=f"tick “{IGNORE_LABEL}” (Precision & Tactics)",
            clear=f"clear them (right-click the nodes > {TITLE})",
        )
        if problem:
            raise TrtOptionError(problem)

    def profile_options(self) -> TrtProfileOptions:
        prebuilt = None
        if self.use_engine.isChecked():
            prebuilt = self.prebuilt.text().strip()
            if not prebuilt:
                raise DesignerError("choose the prebuilt engine (or build one)")
            if not Path(prebuilt).expanduser().is_file():
                raise DesignerError(f"the engine {prebuilt} does not exist")
        self.shapes_note = None
        build = self._build_options(
            prebuilt is not None or self.ignore_precisions.isChecked(),
            prebuilt_engine=prebuilt is not None,
        )
        options = TrtProfileOptions(
            build=dataclasses.replace(
                build, engine=build.engine if prebuilt is None else None, layer_info=None
            ),
            use_engine=prebuilt,
            export_layer_info=build.layer_info,
            iterations=_optional(self.iterations),
            duration_s=None if self.duration.value() < 0 else self.duration.value(),
            warmup_ms=_optional(self.warmup),
            avg_runs=_optional(self.avg_runs),
            hide_non_compute=self.hide_non_compute.isChecked(),
            spin_wait=self.spin_wait.isChecked(),
            cuda_graph=self.cuda_graph.isChecked(),
            separate_profile_run=self.separate.isChecked(),
            lock_clocks=self.lock_clocks.isChecked(),
            export_profile=self.profile_out.text().strip() or None,
        )
        options.validate()
        return options

    def options(self) -> TrtBuildOptions | TrtProfileOptions:
        return self.profile_options() if self.profile_mode else self.build_options()
