"""The precision badges read stored precisions as the build does (Qt-free): a stored
``FP16`` (or `` fp16 ``) is fp16, as :func:`designer.core.trt.settings.known_precision` reads
it for ``trt build``, not "no precision"; a value that is no precision stays none."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from designer.core.document import Document
from designer.core.node_meta import read_node_metadata
from designer.core.trt.settings import PRECISION_KEY, known_precision, read_settings_lenient


def _model(values: list[str]) -> onnx.ModelProto:
    """A chain of Relus, node i storing precision ``values[i]``."""
    nodes = []
    for i, value in enumerate(values):
        node = helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"/x{i}/Relu")
        node.metadata_props.add(key=PRECISION_KEY, value=value)
        nodes.append(node)
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info(f"t{len(values)}", TensorProto.FLOAT, [1])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_stored_precisions_read_case_insensitively() -> None:
    values = ["FP16", " Int8 ", "bf16", "fp64", "half", ""]
    doc = Document(_model(values))
    scope = doc.scope()
    meta = read_node_metadata(scope)
    got = [meta.precision(k) for k in scope.keys]
    assert got == ["fp16", "int8", "bf16", "", "", ""]
    assert got == [known_precision(v) or "" for v in values]  # the build's reading
    assert doc.node_metadata().precision(scope.keys[0]) == "fp16"  # what the canvas reads


def test_the_badge_agrees_with_what_the_build_uses() -> None:
    model = _model(["FP16", "unknown"])
    stored, _problems = read_settings_lenient(model)
    doc = Document(model)
    meta = doc.node_metadata()
    by_name = {n.name: meta.precision(k) for k, n in doc.scope().nodes()}
    assert by_name == {"/x0/Relu": "fp16", "/x1/Relu": ""}
    assert stored.precisions == {"/x0/Relu": "fp16"}
