"""A model summary (``onnx-designer info``): plain data, printable as text or JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import onnx

from designer.core.analysis.checker import scope_title
from designer.core.document import Document
from designer.core.io.external import is_external
from designer.core.tensor_sizes import tensor_nbytes


@dataclass
class ValueSummary:
    name: str
    type: str


@dataclass
class ModelSummary:
    path: str
    ir_version: int
    opset_imports: dict[str, int]
    producer: str
    graph_name: str
    nodes_per_scope: dict[str, int]
    node_count: int
    initializer_count: int
    initializer_bytes: int
    external_initializer_count: int
    functions: list[str]
    subgraph_count: int
    inputs: list[ValueSummary] = field(default_factory=list)
    outputs: list[ValueSummary] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def to_text(self) -> str:
        lines = [
            f"Model:        {self.path}",
            f"IR version:   {self.ir_version}",
            "Opsets:       "
            + ", ".join(f"{d or 'ai.onnx'} {v}" for d, v in sorted(self.opset_imports.items())),
            f"Producer:     {self.producer or '(none)'}",
            f"Graph:        {self.graph_name or '(unnamed)'}",
            f"Nodes:        {self.node_count} in {len(self.nodes_per_scope)} scope(s)",
        ]
        lines += [f"  {count:>8}  {scope}" for scope, count in self.nodes_per_scope.items()]
        lines += [
            f"Initializers: {self.initializer_count} ({_bytes(self.initializer_bytes)}"
            + (
                f", {self.external_initializer_count} external"
                if self.external_initializer_count
                else ""
            )
            + ")",
            f"Functions:    {len(self.functions)}"
            + (": " + ", ".join(self.functions) if self.functions else ""),
            f"Subgraphs:    {self.subgraph_count}",
            "Inputs:",
            *(f"  {v.name}: {v.type}" for v in self.inputs),
            "Outputs:",
            *(f"  {v.name}: {v.type}" for v in self.outputs),
        ]
        if self.metadata:
            lines.append("Metadata:")
            lines += [f"  {k} = {v}" for k, v in self.metadata.items()]
        return "\n".join(lines)


def _bytes(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{count} B"


def type_text(type_proto: onnx.TypeProto) -> str:
    """``float32[1, 3, 'H', ?]`` style text of a value type."""
    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type" or kind == "sparse_tensor_type":
        tensor = getattr(type_proto, kind)
        try:
            dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)).name
        except (KeyError, TypeError, ValueError):
            dtype = onnx.TensorProto.DataType.Name(tensor.elem_type).lower()
        if tensor.elem_type == onnx.TensorProto.STRING:
            dtype = "string"
        if not tensor.HasField("shape"):
            return f"{dtype}[?]" if kind == "tensor_type" else f"sparse {dtype}[?]"
        dims = [
            str(d.dim_value)
            if d.HasField("dim_value")
            else (repr(d.dim_param) if d.dim_param else "?")
            for d in tensor.shape.dim
        ]
        prefix = "sparse " if kind == "sparse_tensor_type" else ""
        return f"{prefix}{dtype}[{', '.join(dims)}]"
    if kind == "sequence_type":
        return f"seq({type_text(type_proto.sequence_type.elem_type)})"
    if kind == "optional_type":
        return f"optional({type_text(type_proto.optional_type.elem_type)})"
    if kind == "map_type":
        key = onnx.TensorProto.DataType.Name(type_proto.map_type.key_type).lower()
        return f"map({key}, {type_text(type_proto.map_type.value_type)})"
    return "?"


def summarize(doc: Document) -> ModelSummary:
    """Counts and types of ``doc`` (O(model); reads no external data)."""
    model = doc.model
    nodes_per_scope: dict[str, int] = {}
    subgraphs = 0
    initializers: list[onnx.TensorProto] = []
    for scope in doc.scopes():
        nodes_per_scope[scope_title(doc, scope)] = len(scope)
        if scope.id.steps:
            subgraphs += 1
        if isinstance(scope.proto, onnx.GraphProto):
            initializers.extend(scope.proto.initializer)
    graph = model.graph
    return ModelSummary(
        path=str(doc.path) if doc.path else "(unsaved)",
        ir_version=model.ir_version,
        opset_imports=doc.opset_imports,
        producer=" ".join(p for p in (model.producer_name, model.producer_version) if p),
        graph_name=graph.name,
        nodes_per_scope=nodes_per_scope,
        node_count=sum(nodes_per_scope.values()),
        initializer_count=len(initializers),
        initializer_bytes=sum(tensor_nbytes(t) for t in initializers),
        external_initializer_count=sum(1 for t in initializers if is_external(t)),
        functions=[f"{f.domain}:{f.name}" if f.domain else f.name for f in model.functions],
        subgraph_count=subgraphs,
        inputs=[ValueSummary(v.name, type_text(v.type)) for v in graph.input],
        outputs=[ValueSummary(v.name, type_text(v.type)) for v in graph.output],
        metadata={p.key: p.value for p in model.metadata_props},
    )
