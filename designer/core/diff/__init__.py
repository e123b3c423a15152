"""Model diff (SPEC B-2): what differs between two models — nodes matched by name, then by
structure; attributes; initializers (type, shape, largest value difference); graph inputs
and outputs; opsets; metadata; subgraphs and local functions. Qt-free plain records; the
CLI (``onnx-designer diff``) and the Compare Models view format them."""

from designer.core.diff.model import JSON_SCHEMA_VERSION, diff_files, diff_models
from designer.core.diff.records import (
    FieldChange,
    GraphDiff,
    ModelDiff,
    NodeChange,
    NodeInfo,
    TensorChange,
    TensorInfo,
)
from designer.core.diff.text import summary_text

__all__ = [
    "JSON_SCHEMA_VERSION",
    "FieldChange",
    "GraphDiff",
    "ModelDiff",
    "NodeChange",
    "NodeInfo",
    "TensorChange",
    "TensorInfo",
    "diff_files",
    "diff_models",
    "summary_text",
]
