"""New, empty models (D-2)."""

from __future__ import annotations

import onnx
from onnx import helper

from designer.core.errors import DesignerError

CONTRIB_DOMAIN = "com.microsoft"


def latest_opset() -> int:
    """The newest default-domain opset the installed onnx knows."""
    return int(onnx.defs.onnx_opset_version())


def new_model(opset: int, *, contrib: bool = False, graph_name: str = "main") -> onnx.ModelProto:
    """An empty model importing ``opset`` of the default domain (and ``com.microsoft`` 1
    when ``contrib``), with the lowest IR version that supports that opset, and at least 4:
    IR 3 (what opsets 1–8 map to) wants every initializer listed as a graph input too, so
    a model built the normal way (weights added as initializers) could never pass the
    checker; IR 4 only lifted that rule, and onnx and ONNX Runtime accept it with opset 7."""
    if not 1 <= opset <= latest_opset():
        raise DesignerError(f"opset must be between 1 and {latest_opset()}, not {opset}")
    imports = [helper.make_opsetid("", opset)]
    if contrib:
        imports.append(helper.make_opsetid(CONTRIB_DOMAIN, 1))
    graph = helper.make_graph([], graph_name, [], [])
    model = helper.make_model(graph, opset_imports=imports, producer_name="onnx-designer")
    model.ir_version = max(4, helper.find_min_ir_version_for(imports[:1], ignore_unknown=True))
    return model
