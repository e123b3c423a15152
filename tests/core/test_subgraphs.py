"""Subgraph templates and CreateSubgraph: the signature each operator requires, a template
made runnable with Identity nodes, unique names, copies, undo byte for byte."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from helpers.models import backend_node_model, subgraph_model, tensor_info
from onnx import TensorProto, helper

from designer.core.document import Document
from designer.core.edits import RemoveNodes
from designer.core.errors import EditError
from designer.core.scope import MAIN_SCOPE, ScopeId
from designer.core.subgraphs import CreateSubgraph, subgraph_template


def _node_key(doc: Document, name: str, scope_id: ScopeId = MAIN_SCOPE) -> int:
    scope = doc.scope(scope_id)
    return next(k for k, n in scope.nodes() if n.name == name)


def _signature(graph: onnx.GraphProto) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(name, type as text) of inputs and outputs; '?' when untyped."""

    def text(vi: onnx.ValueInfoProto) -> str:
        if vi.type.WhichOneof("value") is None:
            return "?"
        tensor = vi.type.tensor_type
        elem = TensorProto.DataType.Name(tensor.elem_type)
        if not tensor.HasField("shape"):
            return elem
        return f"{elem}{[d.dim_value or d.dim_param for d in tensor.shape.dim]}"

    return [(v.name, text(v)) for v in graph.input], [(v.name, text(v)) for v in graph.output]


def loop_model() -> onnx.ModelProto:
    """A Loop with two carried values (a: float[2,3], b: int64[4]) and one scan output,
    whose body attribute is not set yet."""
    loop = helper.make_node("Loop", ["M", "cond", "a", "b"], ["a_final", "b_final", "stacked"])
    loop.name = "loop"
    graph = helper.make_graph(
        [loop],
        "loop_main",
        [
            tensor_info("M", TensorProto.INT64, []),
            tensor_info("cond", TensorProto.BOOL, []),
            tensor_info("a"),
            tensor_info("b", TensorProto.INT64, [4]),
        ],
        [
            tensor_info("a_final"),
            tensor_info("b_final", TensorProto.INT64, [4]),
            tensor_info("stacked", TensorProto.FLOAT, ["N", 2, 3]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    return model


def test_loop_template_signature() -> None:
    doc = Document(loop_model())
    graph = subgraph_template(doc, MAIN_SCOPE, _node_key(doc, "loop"), "body", "loop_body")
    inputs, outputs = _signature(graph)
    assert graph.name == "loop_body" and not graph.node
    assert inputs == [
        ("iteration_num", "INT64[]"),
        ("cond_in", "BOOL[]"),
        ("a_in", "FLOAT[2, 3]"),
        ("b_in", "INT64[4]"),
    ]
    assert outputs == [
        ("cond_out", "BOOL[]"),
        ("a_final_out", "FLOAT[2, 3]"),
        ("b_final_out", "INT64[4]"),
        ("stacked_elem", "FLOAT[2, 3]"),  # one iteration's slice of N×2×3
    ]


def test_loop_template_made_runnable() -> None:
    """Created from the template, then given Identity nodes passing the values through, the
    Loop body passes onnx's full check and runs in onnxruntime."""
    doc = Document(loop_model())
    edit = CreateSubgraph(MAIN_SCOPE, _node_key(doc, "loop"), "body", "loop_body")
    doc.undo_stack.push(edit)
    body = doc.scope(edit.created)
    (_it, cond_in, a_in, b_in) = body.input_names()
    (cond_out, a_out, b_out, elem) = body.output_names()
    # The edits refuse a declared (not yet produced) graph output as a node output, so the
    # nodes go straight into the proto here.
    for src, dst in ((cond_in, cond_out), (a_in, a_out), (b_in, b_out), (a_in, elem)):
        body.proto.node.append(helper.make_node("Identity", [src], [dst]))
    onnx.checker.check_model(doc.model, full_check=True)
    session = ort.InferenceSession(doc.model.SerializeToString())
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(4, dtype=np.int64)
    feeds = {"M": np.array(3, dtype=np.int64), "cond": np.array(True), "a": a, "b": b}
    a_final, b_final, stacked = session.run(None, feeds)
    np.testing.assert_array_equal(a_final, a)
    np.testing.assert_array_equal(b_final, b)
    assert stacked.shape == (3, 2, 3)
    np.testing.assert_array_equal(stacked[2], a)


def test_if_template_one_output_per_node_output() -> None:
    doc = Document(subgraph_model())
    key = _node_key(doc, "branch")
    graph = subgraph_template(doc, MAIN_SCOPE, key, "then_branch", "new_then")
    inputs, outputs = _signature(graph)
    assert inputs == []
    assert outputs == [("Y_then", "FLOAT[2, 3]")]  # typed like the If's output Y


def test_scan_template_state_and_elements() -> None:
    doc = Document(backend_node_model("test_scan9_sum"))
    key = doc.scope().keys[0]
    graph = subgraph_template(doc, MAIN_SCOPE, key, "body", "scan_body")
    inputs, outputs = _signature(graph)
    # Scan(initial: float[2], x: float[3,2]) -> (y: float[2], z: float[3,2]), one scan input.
    assert inputs == [("initial_in", "FLOAT[2]"), ("x_elem", "FLOAT[2]")]
    assert outputs == [("y_out", "FLOAT[2]"), ("z_elem", "FLOAT[2]")]


def test_template_of_op_without_rule_is_empty_and_names_avoid_outer_names() -> None:
    model = subgraph_model()
    custom = helper.make_node("MyOp", ["X"], ["custom_out"], name="custom", domain="my.ops")
    model.graph.node.append(custom)
    model.opset_import.add(domain="my.ops", version=1)
    doc = Document(model)
    graph = subgraph_template(doc, MAIN_SCOPE, _node_key(doc, "custom"), "g", "my_graph")
    assert _signature(graph) == ([], []) and graph.name == "my_graph"
    # An If template inside the Loop body must not redefine names visible there.
    body = MAIN_SCOPE.child(_node_key(doc, "loop"), "body")
    inner_if = _node_key(doc, "body_if", body)
    inner = subgraph_template(doc, body, inner_if, "else_branch", "fresh")
    assert [v.name for v in inner.output] == ["v_out_else"]


def test_create_from_template_and_undo_is_byte_identical() -> None:
    doc = Document(loop_model())
    before = doc.model.SerializeToString()
    edit = CreateSubgraph(MAIN_SCOPE, _node_key(doc, "loop"), "body", "loop_body")
    doc.undo_stack.push(edit)
    assert edit.created == MAIN_SCOPE.child(_node_key(doc, "loop"), "body")
    assert doc.scope(edit.created).name == "loop_body"
    assert len(doc.scope(edit.created).input_names()) == 4
    doc.undo_stack.undo()
    assert doc.model.SerializeToString() == before
    doc.undo_stack.redo()
    assert doc.scope(edit.created).proto.name == "loop_body"


def test_create_copy_from_existing_subgraph() -> None:
    doc = Document(subgraph_model())
    before = doc.model.SerializeToString()
    branch = _node_key(doc, "branch")
    then_id = MAIN_SCOPE.child(branch, "then_branch")
    edit = CreateSubgraph(MAIN_SCOPE, branch, "else_branch", "else_copy", copy_from=then_id)
    doc.undo_stack.push(edit)
    copy = doc.scope(edit.created).proto
    original = doc.scope(then_id).proto
    assert copy.name == "else_copy" and original.name == "then_branch"
    assert [n.op_type for n in copy.node] == ["Mul"]
    assert copy is not original
    copy.node[0].name = "changed"  # a deep copy: the source does not change
    assert original.node[0].name == "then_mul"
    copy.node[0].name = "then_mul"
    onnx.checker.check_model(doc.model, full_check=True)
    doc.undo_stack.undo()
    assert doc.model.SerializeToString() == before


def test_copy_renames_names_that_would_shadow_outer_values() -> None:
    """Copying the Loop body into the If inside it: the body's names are visible there."""
    doc = Document(subgraph_model())
    loop_body = MAIN_SCOPE.child(_node_key(doc, "loop"), "body")
    inner_if = _node_key(doc, "body_if", loop_body)
    edit = CreateSubgraph(loop_body, inner_if, "else_branch", "copied", copy_from=loop_body)
    doc.undo_stack.push(edit)
    copy = doc.scope(edit.created)
    visible = doc.scope(loop_body).defined_names()
    assert not (copy.defined_names() & visible)
    then = next(a.g for a in copy.proto.node[1].attribute if a.name == "then_branch")
    assert list(then.node[0].input) == ["v_in_1", "A"]  # renamed use, outer value kept


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("then_branch", "already exists"),  # the other branch's name
        ("with_subgraphs", "already exists"),  # the scope's own graph name
        ("inner_then", "already exists"),  # nested deeper in the same scope
        ("1abc", "starts with a digit"),
        ("bad name", "contains"),
    ],
)
def test_create_rejects_bad_names(name: str, message: str) -> None:
    doc = Document(subgraph_model())
    before = doc.model.SerializeToString()
    edit = CreateSubgraph(MAIN_SCOPE, _node_key(doc, "branch"), "else_branch", name)
    with pytest.raises(EditError, match=message):
        doc.undo_stack.push(edit)
    assert doc.model.SerializeToString() == before


def test_replacing_a_graph_may_reuse_its_own_name() -> None:
    doc = Document(subgraph_model())
    edit = CreateSubgraph(MAIN_SCOPE, _node_key(doc, "branch"), "else_branch", "else_branch")
    doc.undo_stack.push(edit)
    assert doc.scope(edit.created).name == "else_branch"


def test_create_rejects_unknown_or_non_graph_attribute_and_missing_node() -> None:
    doc = Document(subgraph_model())
    key = _node_key(doc, "branch")
    with pytest.raises(EditError, match="no attribute 'body'"):
        doc.undo_stack.push(CreateSubgraph(MAIN_SCOPE, key, "body", "g"))
    add = _node_key(doc, "pre_add")
    with pytest.raises(EditError, match="no attribute"):
        doc.undo_stack.push(CreateSubgraph(MAIN_SCOPE, add, "then_branch", "g"))
    doc.undo_stack.push(RemoveNodes(MAIN_SCOPE, [key]))
    with pytest.raises(EditError, match="not in graph"):
        doc.undo_stack.push(CreateSubgraph(MAIN_SCOPE, key, "then_branch", "g"))
    loop = _node_key(doc, "loop")
    with pytest.raises(EditError, match="only a subgraph"):
        doc.undo_stack.push(CreateSubgraph(MAIN_SCOPE, loop, "body", "g", copy_from=MAIN_SCOPE))
    gone = ScopeId(("local.fn", "Gone", ""))
    with pytest.raises(EditError, match="does not exist"):
        doc.undo_stack.push(CreateSubgraph(MAIN_SCOPE, loop, "body", "g", copy_from=gone))
