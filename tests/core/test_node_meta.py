"""The node metadata read once per model change (designer.core.node_meta, read through
Document.node_metadata) says what the per-node readers say: the module path of
scope_path's first name_scopes entry and node_precision's precision, on every real export
and on nodes with repeated or unknown entries; and it is read again after every change."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from designer.core.document import Document
from designer.core.edits.trt import SetLayerPrecision
from designer.core.io.load import open_document
from designer.core.scope import MAIN_SCOPE
from designer.core.scope_path import NAME_SCOPES_KEY, name_scopes_path
from designer.core.trt.settings import PRECISION_KEY, PRECISIONS
from tests.helpers.shared import MODELS


def ref_path(node: onnx.NodeProto) -> tuple[str, ...] | None:
    for prop in node.metadata_props:
        if prop.key == NAME_SCOPES_KEY:
            return name_scopes_path(prop.value)
    return None


def ref_precision(node: onnx.NodeProto) -> str:
    for prop in node.metadata_props:
        if prop.key == PRECISION_KEY:
            return prop.value if prop.value in PRECISIONS else ""
    return ""


def check(doc: Document) -> None:
    meta = doc.node_metadata()
    scope = doc.scope()
    assert meta.paths == [ref_path(n) for n in scope.proto.node]
    assert {k: meta.precision(k) for k in scope.keys} == {
        k: ref_precision(n) for k, n in scope.nodes()
    }


@pytest.mark.parametrize("name", sorted(p.name for p in MODELS.glob("*.onnx")))
def test_equals_the_per_node_readers_on_real_exports(name: str) -> None:
    doc = open_document(MODELS / name)
    check(doc)
    if "dynamo" in name:  # the dynamo exporter's entries are really read
        assert sum(p is not None for p in doc.node_metadata().paths) > 0.9 * len(doc.scope())


def _entries(*pairs: tuple[str, str]) -> list[onnx.StringStringEntryProto]:
    return [onnx.StringStringEntryProto(key=k, value=v) for k, v in pairs]


def odd_model() -> onnx.ModelProto:
    """Nodes with no metadata, other keys only, repeated keys, an unknown precision first
    and a known one after, a value that does not parse."""
    cases = [
        [],
        [("namespace", "x"), ("pkg.torch.onnx.fx_node", "y")],
        [(NAME_SCOPES_KEY, "['', 'm', 'm.a', 'n1']"), (NAME_SCOPES_KEY, "['', 'm', 'm.b', 'n1']")],
        [(PRECISION_KEY, "fp64"), (PRECISION_KEY, "fp16")],
        [(PRECISION_KEY, "int8"), (PRECISION_KEY, "fp16"), (NAME_SCOPES_KEY, "not a list")],
        [
            ("stack_trace", "s"),
            (NAME_SCOPES_KEY, "['', 'm', 'm.c', 'n5']"),
            (PRECISION_KEY, "bf16"),
        ],
    ]
    nodes = []
    for i, pairs in enumerate(cases):
        node = helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"/x{i}/Relu")
        node.metadata_props.extend(_entries(*pairs))
        nodes.append(node)
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info(f"t{len(cases)}", TensorProto.FLOAT, [1])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_first_entry_of_a_key_counts() -> None:
    doc = Document(odd_model())
    check(doc)
    meta = doc.node_metadata()
    assert meta.paths == [None, None, ("m", "a"), None, (), ("m", "c")]
    keys = doc.scope().keys
    assert [meta.precision(k) for k in keys] == ["", "", "", "", "int8", "bf16"]


def test_read_once_until_the_model_changes() -> None:
    doc = Document(odd_model())
    first = doc.node_metadata()
    assert doc.node_metadata() is first  # nothing changed: not read again
    key = doc.scope().keys[0]
    doc.undo_stack.push(SetLayerPrecision(MAIN_SCOPE, [key], "fp16"))
    changed = doc.node_metadata()
    assert changed is not first
    assert changed.precision(key) == "fp16"
    check(doc)
    doc.undo_stack.undo()
    assert doc.node_metadata().precision(key) == ""
    check(doc)


def test_a_new_scope_object_is_read_again() -> None:
    """A scope dropped and made again (its graph replaced) is read again, even when no
    change was counted."""
    doc = Document(odd_model())
    first = doc.node_metadata()
    doc.model.graph.node[0].metadata_props.add(key=PRECISION_KEY, value="fp8")
    doc._scopes.clear()  # what invalidating the scopes does
    assert doc.node_metadata() is not first
    check(doc)
