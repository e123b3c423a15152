"""The Parameters window for an engine tab: the selected layer's full record (kind,
implementation, tactic, precision, formats, kernel, weights, latency, the ONNX nodes it came
from, with a link that selects them in the ONNX model's tab), an engine input/output with its
shape profiles, or the engine's summary when nothing is selected. Read-only."""

from __future__ import annotations

import html
import json
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from designer.activities.reports.engine_bundle import EngineBundle
from designer.activities.reports.engine_view import EngineNodeInfo, dims_text
from designer.activities.reports.trt_engine import EngineLayer, EngineTensor

#: select_onnx(names) -> (tab title, count) of the nodes selected there, or None when no open
#: model has them; has_onnx(names) tells (without selecting) which model tab would be used.
SelectOnnx = Callable[[tuple[str, ...]], str]
FindOnnx = Callable[[tuple[str, ...]], str | None]

_NOT = "<i>not recorded</i>"


_BREAK_AFTER = str.maketrans({c: c + "\u200b" for c in "_/,.+:"})


def _e(value: object) -> str:
    """Escaped text that word wrap may break after ``_ / , . + :`` (long tactic names and
    format strings would otherwise widen the Parameters window beyond the screen); the full
    record below keeps the exact text for copying."""
    if value is None or value == "":
        return _NOT
    return html.escape(str(value).translate(_BREAK_AFTER))


def _label(text: str, *, select: bool = True) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    if select:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
    return label


def _tensor_html(tensor: EngineTensor) -> str:
    parts = [f"<b>{_e(tensor.name)}</b>"]
    parts.append(f"{_e(tensor.precision)} {dims_text(tensor.dims)}")
    if tensor.layout:
        parts.append(html.escape(tensor.layout))
    text = " · ".join(parts)
    if tensor.format:
        text += f"<br><span style='color:#5c6370'>{_e(tensor.format)}</span>"
    return text


def _ms(value: float | None) -> str:
    return _NOT if value is None else f"{value:.4f} ms"


class LayerPanel(QWidget):
    """One layer's record. ``find_onnx``/``select_onnx`` link its ONNX nodes to an open model."""

    def __init__(
        self,
        info: EngineNodeInfo,
        find_onnx: FindOnnx,
        select_onnx: SelectOnnx,
    ) -> None:
        super().__init__()
        layer = info.layer
        assert layer is not None
        self.layer = layer
        self.select_onnx = select_onnx
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        mark = " ⇄ reformat" if info.is_reformat else ""
        layout.addWidget(_label(f"<b>Engine layer</b> — {_e(layer.name)}{mark}"))
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Kind", _label(_e(layer.kind)))
        form.addRow("Implementation", _label(_e(layer.layer_type)))
        form.addRow("Tactic", _label(_e(layer.tactic_name)))
        if layer.tactic_value and layer.tactic_name:
            form.addRow("Tactic value", _label(_e(layer.tactic_value)))
        form.addRow("Precision", _label(_e(layer.precision)))
        form.addRow("Latency", _label(self._latency(info)))
        form.addRow("Inputs", _label("<br>".join(map(_tensor_html, layer.inputs)) or _NOT))
        form.addRow("Outputs", _label("<br>".join(map(_tensor_html, layer.outputs)) or _NOT))
        form.addRow(
            "Kernel", _label(_e(dims_text(layer.kernel_shape) if layer.kernel_shape else None))
        )
        form.addRow("Weights", _label(self._weights(layer)))
        if layer.stream_id is not None:
            form.addRow("Stream", _label(str(layer.stream_id)))
        if layer.origin:
            form.addRow("Origin", _label(_e(layer.origin)))
        self.onnx_label = _label(self._onnx_html(layer, find_onnx))
        self.onnx_label.linkActivated.connect(self._link)
        form.addRow("ONNX nodes", self.onnx_label)
        layout.addLayout(form)
        layout.addWidget(_label("<b>Full record</b> (as written by TensorRT)"))
        self.record = QPlainTextEdit(json.dumps(dict(layer.raw), indent=1, ensure_ascii=False))
        self.record.setReadOnly(True)
        self.record.setMinimumHeight(160)
        layout.addWidget(self.record, 1)
        self.message = _label("", select=False)
        self.message.setStyleSheet("color:#5c6370")
        layout.addWidget(self.message)

    @staticmethod
    def _latency(info: EngineNodeInfo) -> str:
        if info.ms is None or info.share is None:
            return "<i>no profile loaded</i>"
        return f"{info.ms:.4f} ms — {100.0 * info.share:.2f} % of the layers' total"

    @staticmethod
    def _weights(layer: EngineLayer) -> str:
        if layer.weights_count is None and layer.bias_count is None:
            return _NOT
        parts = []
        if layer.weights_count is not None:
            parts.append(f"{layer.weights_count:,} {_e(layer.weights_type)}")
        if layer.bias_count is not None:
            parts.append(f"bias {layer.bias_count:,} {_e(layer.bias_type)}")
        if layer.weights_bytes is not None:
            parts.append(f"{layer.weights_bytes:,} bytes")
        return " · ".join(parts)

    @staticmethod
    def _onnx_html(layer: EngineLayer, find_onnx: FindOnnx) -> str:
        if not layer.onnx_nodes:
            return "<i>none recorded</i>" + (
                " (a reformat TensorRT inserted)" if layer.is_reformat else ""
            )
        names = ", ".join(_e(n) for n in layer.onnx_nodes)
        how = (
            " <span style='color:#5c6370'>(from the layer name)</span>"
            if (layer.onnx_nodes_source == "name")
            else ""
        )
        tab = find_onnx(layer.onnx_nodes)
        if tab is None:
            link = (
                "<br><span style='color:#5c6370'>Open the ONNX model to select them there.</span>"
            )
        else:
            link = f"<br><a href='select'>Select in {html.escape(tab)}</a>"
        return names + how + link

    def _link(self, _href: str) -> None:
        self.message.setText(self.select_onnx(self.layer.onnx_nodes))


class IOPanel(QWidget):
    """An engine input or output: type, shape, format, location and shape profiles."""

    def __init__(self, info: EngineNodeInfo) -> None:
        super().__init__()
        io = info.io
        assert io is not None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        what = f"Engine {(io.mode or 'I/O').lower()}"
        layout.addWidget(_label(f"<b>{what}</b> — {html.escape(io.name)}"))
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Data type", _label(_e(io.datatype or io.precision)))
        form.addRow("Shape", _label(dims_text(io.dims)))
        form.addRow("Format", _label(_e(io.format)))
        form.addRow("Location", _label(_e(io.location)))
        if io.is_shape_io is not None:
            form.addRow("Shape tensor", _label("yes" if io.is_shape_io else "no"))
        rows = [
            f"{i}: min {dims_text(p.min_shape)} · opt {dims_text(p.opt_shape)} · "
            f"max {dims_text(p.max_shape)}"
            for i, p in enumerate(io.profiles)
        ]
        form.addRow("Profiles", _label("<br>".join(rows) or "<i>not recorded (static shapes)</i>"))
        layout.addLayout(form)
        layout.addStretch(1)


def summary_panel(bundle: EngineBundle) -> QWidget:
    """The engine itself (nothing selected): files, version, device, layers, latency."""
    graph = bundle.graph
    device = bundle.device
    perf = bundle.performance
    rows = [
        ("Engine", _e(bundle.name)),
        ("Schema", _e(bundle.version_family)),
        ("TensorRT", _e(bundle.trt_version)),
        ("Device", _e(device.name if device else None)),
        (
            "Layers",
            f"{len(graph.layers)} ({sum(1 for x in graph.layers if x.is_reformat)} reformat)",
        ),
        ("Inputs/outputs", ", ".join(html.escape(t.name) for t in graph.io_tensors) or _NOT),
    ]
    if perf is not None and perf.latency is not None:
        rows.append(("Latency (median)", _ms(perf.latency.median)))
    if perf is not None and perf.throughput_qps is not None:
        rows.append(("Throughput", f"{perf.throughput_qps:,.1f} /s"))
    if bundle.profile is not None:
        rows.append(("Sum of layer times", _ms(bundle.profile.sum_average_ms)))
    files = "<br>".join(
        f"{html.escape(kind)}: {_e(p.name)}"
        for kind, paths in bundle.sources.items()
        for p in paths
    )
    rows.append(("Files", files or _NOT))
    widget = QWidget()
    layout = QVBoxLayout(widget)
    layout.setContentsMargins(6, 6, 6, 6)
    layout.addWidget(
        _label("<b>TensorRT engine</b> (read-only) — select a layer to see its record")
    )
    form = QFormLayout()
    for key, value in rows:
        form.addRow(key, _label(value))
    layout.addLayout(form)
    layout.addStretch(1)
    return widget
