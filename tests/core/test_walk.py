"""The one subgraph walker (designer.core.walk) and the one tensor size
(designer.core.tensor_sizes.tensor_nbytes): nested If/Loop/Scan, GRAPHS attributes, local
functions, and string, scalar, packed and external tensors.

The walker is checked against an independent oracle that finds every GraphProto anywhere in
a message by protobuf reflection, on hand-made models and on a real exported model."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import onnx
import pytest
from google.protobuf.message import Message
from helpers.models import backend_node_models
from onnx import TensorProto, helper, numpy_helper

from designer.core.io.external import iter_model_tensors
from designer.core.tensor_sizes import tensor_nbytes
from designer.core.validate import MAX_GRAPH_DEPTH
from designer.core.walk import (
    attribute_graphs,
    graph_at,
    graph_attributes,
    has_subgraphs,
    iter_graphs,
    iter_nodes,
    nested_graphs,
)

F = TensorProto.FLOAT
#: Data types numpy holds one element per byte-multiple, as ONNX stores them.
WHOLE_BYTE_NUMPY = {
    TensorProto.FLOAT,
    TensorProto.DOUBLE,
    TensorProto.FLOAT16,
    TensorProto.INT8,
    TensorProto.UINT8,
    TensorProto.INT16,
    TensorProto.UINT16,
    TensorProto.INT32,
    TensorProto.UINT32,
    TensorProto.INT64,
    TensorProto.UINT64,
    TensorProto.BOOL,
    TensorProto.COMPLEX64,
    TensorProto.COMPLEX128,
}


def _graph(name: str, nodes: list[onnx.NodeProto]) -> onnx.GraphProto:
    return helper.make_graph(nodes, name, [], [])


def _leaf(name: str) -> onnx.NodeProto:
    return helper.make_node("Identity", ["x"], [f"{name}_out"], name=name)


def nested_model() -> onnx.ModelProto:
    """main: Loop 'loop' (body: If 'if' (then: Add 'then_add', else: Scan 'scan' (body:
    'scan_leaf'))), 'multi' with a GRAPHS attribute of two graphs, 'plain'; function F with an
    If 'f_if' (then: 'f_then', else: 'f_else'). make_node stores attributes sorted by name,
    so an If's else_branch comes before its then_branch in file order."""
    scan = helper.make_node(
        "Scan",
        ["x"],
        ["s"],
        name="scan",
        num_scan_inputs=1,
        body=_graph("scan_body", [_leaf("scan_leaf")]),
    )
    if_node = helper.make_node(
        "If",
        ["c"],
        ["y"],
        name="if",
        then_branch=_graph("then", [helper.make_node("Add", ["x", "x"], ["t"], name="then_add")]),
        else_branch=_graph("else", [scan]),
    )
    loop = helper.make_node(
        "Loop", ["", "c"], ["z"], name="loop", body=_graph("loop_body", [if_node])
    )
    multi = helper.make_node("Custom", ["x"], ["m"], name="multi", domain="custom")
    graphs = onnx.AttributeProto(name="branches", type=onnx.AttributeProto.GRAPHS)
    graphs.graphs.extend([_graph("b0", [_leaf("b0_leaf")]), _graph("b1", [_leaf("b1_leaf")])])
    multi.attribute.append(graphs)
    main = _graph("main", [loop, multi, _leaf("plain")])
    f_if = helper.make_node(
        "If",
        ["c"],
        ["y"],
        name="f_if",
        then_branch=_graph("f_then", [_leaf("f_then")]),
        else_branch=_graph("f_else", [_leaf("f_else")]),
    )
    fn = helper.make_function("local", "F", ["c"], ["y"], [f_if], [helper.make_opsetid("", 18)])
    return helper.make_model(main, functions=[fn])


def oracle_graphs(message: Any) -> Iterator[Any]:
    """Every GraphProto and FunctionProto reachable from ``message``, found by reflection
    (knows nothing of node attributes or their types)."""
    if isinstance(message, onnx.GraphProto | onnx.FunctionProto):
        yield message
    for field_desc, value in message.ListFields():
        if field_desc.type != field_desc.TYPE_MESSAGE:
            continue
        items = [value] if isinstance(value, Message) else value
        for item in items:
            yield from oracle_graphs(item)


def _names(root: Any, **kwargs: Any) -> list[str]:
    return [w.graph.name for w in iter_graphs(root, **kwargs)]


def test_walks_every_graph_depth_first_in_file_order() -> None:
    model = nested_model()
    walked = list(iter_graphs(model))
    assert [w.graph.name for w in walked] == [
        "main",
        "loop_body",
        "else",
        "scan_body",
        "then",
        "b0",
        "b1",
        "F",
        "f_else",
        "f_then",
    ]
    found = {id(g) for g in oracle_graphs(model)}
    assert {id(w.graph) for w in walked} == found
    assert len(walked) == len(found)


def test_paths_owners_and_functions() -> None:
    model = nested_model()
    by_name = {w.graph.name: w for w in iter_graphs(model)}
    scan_body = by_name["scan_body"]
    assert [(s.node.name, s.attribute, s.index) for s in scan_body.path] == [
        ("loop", "body", -1),
        ("if", "else_branch", -1),
        ("scan", "body", -1),
    ]
    assert scan_body.depth == 3 and scan_body.function is None
    assert scan_body.owner is not None and scan_body.owner.node.op_type == "Scan"
    assert scan_body.label() == "main/loop/body/if/else_branch/scan/body"
    assert by_name["b1"].owner is not None and by_name["b1"].owner.index == 1
    assert by_name["b1"].label() == "main/multi/branches[1]"
    assert by_name["main"].owner is None and by_name["main"].depth == 0
    body = by_name["F"]
    assert body.function is model.functions[0] and body.path == ()
    inner = by_name["f_else"]
    assert inner.function is model.functions[0]
    assert inner.label() == "ƒ F/f_if/else_branch"


def test_functions_can_be_left_out() -> None:
    model = nested_model()
    assert _names(model, functions=False) == _names(model.graph)
    assert "F" not in _names(model, functions=False)
    assert [n.name for n in iter_nodes(model, functions=False)] == [
        n.name for n in iter_nodes(model.graph)
    ]


def test_roots_graph_function_node() -> None:
    model = nested_model()
    loop = model.graph.node[0]
    assert _names(loop) == ["loop_body", "else", "scan_body", "then"]
    assert _names(loop.attribute[0].g) == ["loop_body", "else", "scan_body", "then"]
    assert _names(model.functions[0]) == ["F", "f_else", "f_then"]
    assert _names(model.graph.node[2]) == []
    assert [g.name for g in nested_graphs(model.graph, include_root=False)][:2] == [
        "loop_body",
        "else",
    ]
    assert [g.name for g in nested_graphs(loop)] == ["loop_body", "else", "scan_body", "then"]


def test_iter_nodes_yields_each_node_before_its_subgraphs() -> None:
    model = nested_model()
    assert [n.name for n in iter_nodes(model)] == [
        "loop",
        "if",
        "scan",
        "scan_leaf",
        "then_add",
        "multi",
        "b0_leaf",
        "b1_leaf",
        "plain",
        "f_if",
        "f_else",
        "f_then",
    ]
    oracle = [n for g in oracle_graphs(model) for n in g.node]
    assert sorted(n.name for n in iter_nodes(model)) == sorted(n.name for n in oracle)
    loop = model.graph.node[0]
    assert [n.name for n in iter_nodes(loop)] == ["if", "scan", "scan_leaf", "then_add"]
    assert [n.name for n in iter_nodes(list(model.graph.node)[1:])] == [
        "multi",
        "b0_leaf",
        "b1_leaf",
        "plain",
    ]


def test_walk_follows_attributes_replaced_by_the_consumer() -> None:
    """The walk looks a node's subgraphs up after handing the node out: a consumer that swaps
    a node's graph attribute is walked into the new graph (function inlining does this)."""
    model = nested_model()
    seen = []
    for node in iter_nodes(model.graph):
        seen.append(node.name)
        if node.name == "if":
            del node.attribute[:]
            node.attribute.append(
                helper.make_attribute("then_branch", _graph("new", [_leaf("new_leaf")]))
            )
    assert seen == ["loop", "if", "new_leaf", "multi", "b0_leaf", "b1_leaf", "plain"]


def test_walks_the_deepest_nesting_validation_lets_through() -> None:
    """validate admits graphs nested MAX_GRAPH_DEPTH deep; the walk gets to the bottom."""
    inner = _graph("g0", [_leaf("bottom")])
    for depth in range(1, MAX_GRAPH_DEPTH + 1):
        node = helper.make_node("If", ["c"], ["y"], name=f"if{depth}", then_branch=inner)
        inner = _graph(f"g{depth}", [node])
    walked = list(iter_graphs(inner))
    assert len(walked) == MAX_GRAPH_DEPTH + 1
    assert walked[-1].depth == MAX_GRAPH_DEPTH and walked[-1].graph.name == "g0"
    assert [n.name for n in iter_nodes(inner)][-1] == "bottom"


def test_graph_attributes_and_lookups() -> None:
    model = nested_model()
    if_node = model.graph.node[0].attribute[0].g.node[0]
    assert [(a, i, g.name) for a, i, g in graph_attributes(if_node)] == [
        ("else_branch", -1, "else"),  # make_node sorts attributes by name
        ("then_branch", -1, "then"),
    ]
    multi = model.graph.node[1]
    assert [(a, i) for a, i, _g in graph_attributes(multi)] == [("branches", 0), ("branches", 1)]
    found = graph_at(multi, "branches", 1)
    assert found is not None and found.name == "b1"
    assert graph_at(multi, "branches", 2) is None
    assert graph_at(if_node, "then_branch", 0) is None
    assert has_subgraphs(if_node) and not has_subgraphs(model.graph.node[2])
    # An attribute whose type an old exporter left unset counts by what it holds.
    untyped = helper.make_node("If", ["c"], ["y"])
    attr = untyped.attribute.add(name="then_branch")
    attr.g.CopyFrom(_graph("old", []))
    assert [g.name for _a, _i, g in graph_attributes(untyped)] == ["old"]
    assert [g.name for g in attribute_graphs(untyped.attribute[0])] == ["old"]
    assert [g.name for g in attribute_graphs(multi.attribute[0])] == ["b0", "b1"]
    assert attribute_graphs(helper.make_attribute("axis", 1)) == []


def test_walker_matches_oracle_on_onnx_backend_models() -> None:
    """Every node test model onnx ships (If, Loop, Scan, SequenceMap bodies, expanded
    functions): the walker finds exactly the graphs and nodes the oracle finds, and
    tensor_nbytes agrees with numpy for every whole-byte tensor they hold."""
    models = backend_node_models()
    with_subgraphs = 0
    checked = 0
    for name, model in models.items():
        walked = list(iter_graphs(model))
        assert {id(w.graph) for w in walked} == {id(g) for g in oracle_graphs(model)}, name
        assert len(walked) == len({id(w.graph) for w in walked}), name
        oracle_nodes = sum(len(g.node) for g in oracle_graphs(model))
        assert sum(1 for _ in iter_nodes(model)) == oracle_nodes, name
        with_subgraphs += len(walked) > 1
        for tensor in iter_model_tensors(model):
            if tensor.data_type in WHOLE_BYTE_NUMPY:
                assert tensor_nbytes(tensor) == numpy_helper.to_array(tensor).nbytes, name
                checked += 1
    assert with_subgraphs >= 40 and checked >= 1000


# --- tensor_nbytes --------------------------------------------------------------------------
def test_fixed_width_from_dims_inline_either_way() -> None:
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    raw = numpy_helper.from_array(array, "raw")
    assert raw.raw_data and tensor_nbytes(raw) == 24
    typed = helper.make_tensor("typed", F, [2, 3], array.ravel().tolist())
    assert not typed.raw_data and tensor_nbytes(typed) == 24
    half = numpy_helper.from_array(np.zeros(5, np.float16), "half")
    assert tensor_nbytes(half) == 10
    boolean = numpy_helper.from_array(np.zeros(3, bool), "b")
    assert tensor_nbytes(boolean) == 3
    empty = numpy_helper.from_array(np.zeros((0, 4), np.int64), "empty")
    assert tensor_nbytes(empty) == 0


def test_scalar_is_one_element() -> None:
    scalar = numpy_helper.from_array(np.array(1.5, np.float64), "s")
    assert list(scalar.dims) == [] and tensor_nbytes(scalar) == 8
    typed = helper.make_tensor("s", TensorProto.INT32, [], [7])
    assert tensor_nbytes(typed) == 4


def test_string_is_sum_of_utf8_lengths() -> None:
    strings = helper.make_tensor("s", TensorProto.STRING, [3], [b"ab", "cdé".encode(), b""])
    assert tensor_nbytes(strings) == 2 + 4 + 0
    scalar = helper.make_tensor("s", TensorProto.STRING, [], [b"hello"])
    assert tensor_nbytes(scalar) == 5


def test_packed_types_round_up_to_whole_bytes() -> None:
    int4 = helper.make_tensor("q", TensorProto.INT4, [3], [1, -2, 3])
    assert tensor_nbytes(int4) == 2
    uint4 = helper.make_tensor("q", TensorProto.UINT4, [4], [1, 2, 3, 4])
    assert tensor_nbytes(uint4) == 2


def test_external_counts_declared_shape_and_never_reads() -> None:
    tensor = TensorProto(name="w", data_type=F, dims=[4, 8])
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "does-not-exist.bin"), ("offset", "0"), ("length", "7")):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    assert tensor_nbytes(tensor) == 4 * 8 * 4  # the shape, not the (wrong) length, not the file
    strings = TensorProto(name="s", data_type=TensorProto.STRING, dims=[2])
    strings.data_location = TensorProto.EXTERNAL
    assert tensor_nbytes(strings) == 0  # ONNX never stores strings externally


def test_unknown_type_is_zero() -> None:
    undefined = TensorProto(name="u", data_type=TensorProto.UNDEFINED, dims=[3])
    assert tensor_nbytes(undefined) == 0
    bogus = TensorProto(name="b", data_type=999, dims=[3])
    assert tensor_nbytes(bogus) == 0


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.int8, np.uint16, np.int64, np.complex64, np.bool_]
)
def test_agrees_with_numpy(dtype: Any) -> None:
    array = np.zeros((3, 5), dtype)
    assert tensor_nbytes(numpy_helper.from_array(array, "a")) == array.nbytes
