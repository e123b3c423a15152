"""Callers switched to the one walker (designer.core.walk) keep their answers: the cast's
scope paths (user-visible), the tensors external-data handling visits, the sanitize node
count, and the cast's size estimate for packed types (was half of the truth)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from designer.core.io.external import iter_loadable_tensors, iter_model_tensors
from designer.core.transforms.cast import _cast_nbytes, _scopes
from designer.core.transforms.sanitize import count_nodes

F = TensorProto.FLOAT


def _const(name: str) -> onnx.NodeProto:
    value = numpy_helper.from_array(np.ones(2, np.float32), f"{name}_value")
    return helper.make_node("Constant", [], [name], value=value)


def _body(name: str, nodes: list[onnx.NodeProto]) -> onnx.GraphProto:
    graph = helper.make_graph(nodes, name, [], [helper.make_tensor_value_info("y", F, [2])])
    graph.initializer.append(numpy_helper.from_array(np.zeros(2, np.float32), f"{name}_init"))
    return graph


def nested_model() -> onnx.ModelProto:
    """An unnamed If (index 1) whose then branch holds a named Loop, a node with a GRAPHS
    attribute after it (index 2), a sparse initializer, and a function with an unnamed If."""
    loop = helper.make_node(
        "Loop", ["", ""], ["l"], name="loop", body=_body("loop_body", [_const("lc")])
    )
    if_node = helper.make_node(
        "If",
        ["c"],
        ["y"],
        then_branch=_body("then", [loop, _const("tc")]),
        else_branch=_body("else", [_const("ec")]),
    )
    multi = helper.make_node("Multi", [], ["m"], domain="custom")
    attr = multi.attribute.add(name="branches", type=onnx.AttributeProto.GRAPHS)
    attr.graphs.extend([_body("b0", []), _body("b1", [_const("b1c")])])
    main = helper.make_graph([_const("c"), if_node, multi, _const("after")], "main", [], [])
    sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(np.ones(1, np.float32), "sp"),
        numpy_helper.from_array(np.zeros(1, np.int64), "sp_idx"),
        [4],
    )
    main.sparse_initializer.append(sparse)
    fn_if = helper.make_node(
        "If",
        ["c"],
        ["z"],
        then_branch=_body("fthen", [_const("ftc")]),
        else_branch=_body("felse", []),
    )
    fn = helper.make_function("local", "F", ["c"], ["z"], [_const("fc"), fn_if], [])
    model = helper.make_model(main, functions=[fn])
    info = model.training_info.add()
    info.initialization.CopyFrom(_body("init", [_const("ic")]))
    return model


def test_cast_scope_paths_are_unchanged() -> None:
    paths = [path for path, _proto in _scopes(nested_model())]
    assert paths == [
        "main",  # make_node sorts attributes: else_branch comes first
        "main/#1.else_branch",
        "main/#1.then_branch",
        "main/#1.then_branch/loop.body",
        "main/#2.branches[0]",
        "main/#2.branches[1]",
        "function local:F",
        "function local:F/#1.else_branch",
        "function local:F/#1.then_branch",
    ]


def _old_graph_tensors(graph: onnx.GraphProto, sparse: bool = True) -> Iterator[TensorProto]:
    """The recursion io/external.py had before the walker (the oracle)."""
    yield from graph.initializer
    if sparse:
        for part in graph.sparse_initializer:
            yield part.values
            yield part.indices
    yield from _old_node_tensors(graph.node, sparse)


def _old_node_tensors(nodes: list[onnx.NodeProto], sparse: bool) -> Iterator[TensorProto]:
    for node in nodes:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            if attr.HasField("g"):
                yield from _old_graph_tensors(attr.g, sparse)
            for graph in attr.graphs:
                yield from _old_graph_tensors(graph, sparse)


def test_external_data_visits_the_same_tensors() -> None:
    model = nested_model()
    old = [*_old_graph_tensors(model.graph)]
    for fn in model.functions:
        old.extend(_old_node_tensors(list(fn.node), True))
    old.extend(_old_graph_tensors(model.training_info[0].initialization))
    old.extend(_old_graph_tensors(model.training_info[0].algorithm))
    names = Counter(t.name for t in iter_model_tensors(model))
    assert names == Counter(t.name for t in old)
    assert {"sp", "sp_idx", "ic_value", "ftc_value", "lc_value", "b1c_value"} <= set(names)
    loadable = Counter(t.name for t in iter_loadable_tensors(model))
    assert "sp" not in loadable and "ic_value" not in loadable
    assert {"fc_value", "ftc_value", "after_value"} <= set(loadable)


def test_count_nodes_counts_every_scope() -> None:
    # main 4 + then 2 + loop body 1 + else 1 + branches 0 + 1 + function 2 + its If 1
    assert count_nodes(nested_model()) == 12


def test_cast_estimate_counts_packed_types_by_their_bits() -> None:
    int4 = helper.make_tensor("q", TensorProto.INT4, [10], np.zeros(10, np.int8))
    assert _cast_nbytes(int4, TensorProto.FLOAT) == 40  # was 5 // 1 * 4 = 20
    floats = numpy_helper.from_array(np.zeros(10, np.float32), "f")
    assert _cast_nbytes(floats, TensorProto.INT4) == 5
    assert _cast_nbytes(floats, TensorProto.FLOAT16) == 20
    assert _cast_nbytes(floats, TensorProto.STRING) == 10  # no fixed width: a byte each
