"""The tuned view-graph builder (issue 15 point 5) draws exactly what the plain one did: every
ViewNode, Terminal and ViewEdge field equal, in the same order, on the real exports in
../shared/models, a generated decoder stack, subgraph and function scopes, and awkward
graphs (out of order, duplicate producers, shadowed inputs, dangling names)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers.models import function_model, subgraph_model, tensor_info
from helpers.shared import MODELS, ROOT
from helpers.viewgraph_reference import reference_view_graph
from onnx import TensorProto, helper, numpy_helper

from designer.core.document import Document
from designer.core.io import open_document
from designer.core.scope import MAIN_SCOPE
from designer.core.trt.settings import PRECISION_KEY
from designer.core.viewgraph import ViewGraph, build_view_graph

sys.path.insert(0, str(ROOT / "bench"))
from canvas_models import decoder_stack_model

REAL = sorted(p.name for p in MODELS.glob("*.onnx"))


def _same(doc: Document, **options: object) -> int:
    """Compare both builders on every scope of ``doc``; returns the number of nodes seen."""
    seen = 0
    for scope in doc.scopes():
        for constants in (False, True):
            want = reference_view_graph(doc, scope.id, show_constants=constants, **options)  # type: ignore[arg-type]
            got = build_view_graph(doc, scope.id, show_constants=constants, **options)  # type: ignore[arg-type]
            _assert_equal(got, want, f"{scope.id} constants={constants}")
            seen += len(got.nodes)
    return seen


def _assert_equal(got: ViewGraph, want: ViewGraph, where: str) -> None:
    assert got.scope == want.scope, where
    assert len(got.nodes) == len(want.nodes), where
    for a, b in zip(got.nodes, want.nodes, strict=True):
        assert a == b, f"{where}: node {b.name}\n got {a}\nwant {b}"
    assert len(got.edges) == len(want.edges), where
    for i, (e, f) in enumerate(zip(got.edges, want.edges, strict=True)):
        assert e == f, f"{where}: edge {i}: got {e}, want {f}"
    assert got == want, where
    # Terminals must not be shared between nodes (the canvas changes their state in place).
    terminals = [id(t) for n in got.nodes for t in (*n.inputs, *n.outputs)]
    assert len(set(terminals)) == len(terminals), where


@pytest.mark.parametrize("name", REAL)
def test_real_exports(name: str) -> None:
    assert _same(open_document(MODELS / name)) > 10


def test_decoder_stack() -> None:
    model = decoder_stack_model(8)
    assert _same(Document(model)) > 400


def test_subgraph_scopes_and_pinned_outer() -> None:
    doc = Document(subgraph_model())
    assert len(list(doc.scopes())) >= 5
    _same(doc)
    _same(doc, pinned_outer=("X", "outer_w", "not_a_name"))


def test_function_scopes() -> None:
    doc = Document(function_model())
    assert any(s.id.function for s in doc.scopes())
    _same(doc)


def _awkward() -> onnx.ModelProto:
    """Out of graph order, a name produced twice, an input shadowed by a node output, a
    dangling read, empty optional inputs, variadic ops, a two-output Constant, an unknown
    domain, an ai.onnx domain spelled out, precision metadata, an IR-3 style initializer
    listed as an input, a sparse initializer."""
    w = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
    sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(np.ones(1, np.float32), "sp"),
        numpy_helper.from_array(np.zeros(1, np.int64), "sp_i"),
        [2, 3],
    )
    constrained = helper.make_node("Relu", ["late"], ["r"], name="constrained")
    constrained.metadata_props.add(key=PRECISION_KEY, value="FP16")
    bogus = helper.make_node("Relu", ["r"], ["r2"])
    bogus.metadata_props.add(key=PRECISION_KEY, value="nonsense")
    nodes = [
        helper.make_node("Add", ["late", "w"], ["a"], name=""),  # reads a later output
        constrained,
        bogus,
        helper.make_node("Identity", ["x"], ["late"], name="producer"),
        helper.make_node("Identity", ["a"], ["dup"], name="first_dup"),
        helper.make_node("Neg", ["dup"], ["n"], name="reads_dup"),
        helper.make_node("Identity", ["r"], ["dup"], name="second_dup"),
        helper.make_node("Identity", ["a"], ["x"], name="shadows_input"),
        helper.make_node("Concat", ["a", "", "nowhere", "sp"], ["cat"], axis=0),
        helper.make_node("Sum", [], ["empty_sum"]),
        helper.make_node("Split", ["cat"], ["s0", "", "s2"], axis=0),
        helper.make_node("Constant", [], ["k"], value_float=1.0),
        helper.make_node("Constant", [], ["k2", "k3"], value_float=1.0),
        helper.make_node("Mul", ["k", "k2"], ["m"], domain="ai.onnx"),
        helper.make_node("Mystery", ["m", "k3", "s2"], ["q", ""], domain="x.y"),
        helper.make_node("Mystery", ["q"], [], domain="x.y"),
        helper.make_node("1 bad-name", ["q"], ["z"], domain="x.y"),
        helper.make_node("Clip", ["q", "", "w"], ["clipped"]),
    ]
    graph = helper.make_graph(
        nodes,
        "awkward",
        [tensor_info("x"), tensor_info("w"), tensor_info("unused")],
        [
            tensor_info("n"),
            tensor_info("z"),
            tensor_info("x"),
            tensor_info("missing"),
            tensor_info(""),
            tensor_info("w"),
        ],
        initializer=[w, numpy_helper.from_array(np.ones(1, np.float32), "")],
        sparse_initializer=[sparse],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("x.y", 1)]
    )
    model.ir_version = 3
    return model


def test_awkward_graphs() -> None:
    doc = Document(_awkward())
    _same(doc)
    _same(doc, pinned_outer=("x",))


def test_awkward_but_one_producer_each() -> None:
    """The awkward graph without its clashes (the one-pass way), in two orders."""
    model = _awkward()
    keep = [n for n in model.graph.node if n.name not in ("second_dup", "shadows_input")]
    keep = [n for n in keep if not (n.op_type == "Constant" and len(n.output) == 2)]
    del model.graph.node[:]
    model.graph.node.extend(keep)
    _same(Document(model), pinned_outer=("x",))
    _same(Document(_shuffled(model, 5)))


def test_awkward_inside_a_subgraph() -> None:
    """The same graph as the body of an If branch, reading outer names."""
    inner = _awkward().graph
    del inner.input[:]
    inner.node.append(helper.make_node("Add", ["outer_a", "late"], ["from_outer"], name="o"))
    inner.output.append(tensor_info("passed_through"))  # an outer value read only as output
    outer = helper.make_graph(
        [
            helper.make_node("Identity", ["x"], ["outer_a"], name="a"),
            helper.make_node("Identity", ["x"], ["passed_through"], name="p"),
            helper.make_node("If", ["c"], ["y"], then_branch=inner, else_branch=inner),
        ],
        "main",
        [tensor_info("x"), tensor_info("c", TensorProto.BOOL, []), tensor_info("w")],
        [tensor_info("y")],
    )
    model = helper.make_model(
        outer, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("x.y", 1)]
    )
    doc = Document(model)
    _same(doc)
    _same(doc, pinned_outer=("c", "w", "x"))


def _shuffled(model: onnx.ModelProto, seed: int) -> onnx.ModelProto:
    """``model`` with its main graph's nodes in a random order (each tensor still has one
    producer, but many are read before it comes)."""
    nodes = list(model.graph.node)
    order = np.random.default_rng(seed).permutation(len(nodes))
    del model.graph.node[:]
    model.graph.node.extend(nodes[i] for i in order)
    return model


def test_nodes_out_of_order() -> None:
    stack = decoder_stack_model(2)
    stack.graph.node.insert(
        0, helper.make_node("Add", ["hidden_in", "late_k"], ["uses_late"], name="early")
    )
    stack.graph.node.append(helper.make_node("Constant", [], ["late_k"], value_float=2.0))
    stack.graph.output.append(tensor_info("uses_late"))
    for seed in range(3):
        _same(Document(_shuffled(onnx.ModelProto.FromString(stack.SerializeToString()), seed)))
    _same(Document(_shuffled(subgraph_model(), 1)), pinned_outer=("X",))
    _same(Document(_shuffled(function_model(), 1)))


def test_after_edits_the_builders_still_agree(tmp_path: Path) -> None:
    """A document whose keys are no longer dense (nodes removed and added)."""
    doc = Document(decoder_stack_model(2))
    scope = doc.scope()
    for key in list(scope.keys[::7]):
        scope.remove_node(key)
    scope.insert_node(3, helper.make_node("Relu", ["hidden_in"], ["extra"], name="extra"), 10**6)
    _same(doc)
    assert build_view_graph(doc, MAIN_SCOPE).node(10**6).name == "extra"
