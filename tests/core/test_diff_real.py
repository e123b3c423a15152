"""Model diff on the real exports in ../shared/models: against a sanitized, an FP16 and a
hand-edited copy the diff lists exactly the changes, counted here independently from the
two protobufs; a 5.5k-node model diffs in about a second."""

from __future__ import annotations

import copy
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from designer.core.diff import ModelDiff, diff_models
from designer.core.transforms import FP16Options, convert_to_fp16, sanitize

MODELS = Path(__file__).resolve().parents[2] / ".." / "shared" / "models"
SMALL = ["squeezenet1_0.torchscript.onnx", "bert_4l_h64.torchscript.onnx"]


def _load(name: str) -> onnx.ModelProto:
    return onnx.load(MODELS / name)


def _expected(a: onnx.ModelProto, b: onnx.ModelProto) -> dict[str, set[str]]:
    """What differs, by name (every node of these exports is named), computed directly."""
    na = {n.name: n for n in a.graph.node}
    nb = {n.name: n for n in b.graph.node}
    ia = {t.name: t for t in a.graph.initializer}
    ib = {t.name: t for t in b.graph.initializer}
    assert all(na) and all(nb)

    def tensor_differs(x: onnx.TensorProto, y: onnx.TensorProto) -> bool:
        if (x.data_type, list(x.dims)) != (y.data_type, list(y.dims)):
            return True
        return not np.array_equal(numpy_helper.to_array(x), numpy_helper.to_array(y))

    def io(xs: object, ys: object) -> set[str]:
        ta = {v.name: v.type.SerializeToString() for v in xs}  # type: ignore[attr-defined]
        tb = {v.name: v.type.SerializeToString() for v in ys}  # type: ignore[attr-defined]
        return {k for k in ta.keys() | tb.keys() if ta.get(k) != tb.get(k)}

    return {
        "nodes_removed": set(na) - set(nb),
        "nodes_added": set(nb) - set(na),
        "nodes_changed": {
            k
            for k in na.keys() & nb.keys()
            if na[k].SerializeToString() != nb[k].SerializeToString()
        },
        "initializers_removed": set(ia) - set(ib),
        "initializers_added": set(ib) - set(ia),
        "initializers_changed": {k for k in ia.keys() & ib.keys() if tensor_differs(ia[k], ib[k])},
        "inputs": io(a.graph.input, b.graph.input),
        "outputs": io(a.graph.output, b.graph.output),
    }


def _reported(diff: ModelDiff) -> dict[str, set[str]]:
    g = diff.graph
    return {
        "nodes_removed": {n.name for n in g.nodes_removed},
        "nodes_added": {n.name for n in g.nodes_added},
        "nodes_changed": {c.before.name for c in g.nodes_changed},
        "initializers_removed": {t.name for t in g.initializers_removed},
        "initializers_added": {t.name for t in g.initializers_added},
        "initializers_changed": {c.before.name for c in g.initializers_changed},
        "inputs": {c.field for c in g.inputs},
        "outputs": {c.field for c in g.outputs},
    }


@pytest.mark.parametrize("name", SMALL)
def test_sanitized_copy(name: str) -> None:
    a = _load(name)
    b = sanitize(a, None, MODELS).model
    diff = diff_models(a, b)
    expected = _expected(a, b)
    assert _reported(diff) == expected
    assert all(c.by == "name" for c in diff.graph.nodes_changed)


@pytest.mark.parametrize("name", SMALL)
def test_fp16_copy(name: str) -> None:
    a = _load(name)
    b = convert_to_fp16(a, FP16Options(keep_io_types=True), MODELS).model
    diff = diff_models(a, b)
    expected = _expected(a, b)
    assert expected["initializers_changed"]  # the conversion did change weights
    assert _reported(diff) == expected
    for c in diff.graph.initializers_changed:
        if c.before.dtype == "float" and c.after.dtype == "float16":
            assert c.max_abs_diff is not None and c.max_abs_diff < 0.01


def test_hand_edited_bert() -> None:
    """Delete 2 nodes, change 1 attribute, rename 1 initializer: exactly those 4 changes."""
    a = _load("bert_4l_h64.torchscript.onnx")
    b = copy.deepcopy(a)
    gone = [b.graph.node[10].name, b.graph.node[20].name]
    del b.graph.node[20]
    del b.graph.node[10]
    target = next(n for n in b.graph.node if n.attribute and n.op_type not in ("Constant",))
    attr = target.attribute[0]
    if attr.type == onnx.AttributeProto.INT:
        attr.i += 1
    elif attr.type == onnx.AttributeProto.FLOAT:
        attr.f += 1.0
    else:
        attr.ints.append(1)
    init = b.graph.initializer[0]
    old = init.name
    init.name = old + "_renamed"
    for node in b.graph.node:
        for k, x in enumerate(node.input):
            if x == old:
                node.input[k] = init.name
    diff = diff_models(a, b)
    g = diff.graph
    assert sorted(n.name for n in g.nodes_removed) == sorted(gone)
    assert [(c.before.name, [f.field for f in c.fields]) for c in g.nodes_changed] == [
        (target.name, [f"attribute {attr.name}"])
    ]
    (renamed,) = g.initializers_changed
    assert (renamed.before.name, renamed.after.name, renamed.values_differ) == (
        old,
        init.name,
        False,
    )
    assert diff.change_count == 4


def test_5k_nodes_in_about_a_second() -> None:
    a = _load("llama_24l_h64.torchscript.onnx")
    assert len(a.graph.node) > 5000
    b = copy.deepcopy(a)
    for node in b.graph.node[::2]:
        node.name = ""  # half of the nodes must be matched by structure
    del b.graph.node[100]
    start = time.perf_counter()
    diff = diff_models(a, b)
    took = time.perf_counter() - start
    assert [n.index for n in diff.graph.nodes_removed] == [100]
    renamed = [c for c in diff.graph.nodes_changed if [f.field for f in c.fields] == ["name"]]
    stripped = (len(a.graph.node) + 1) // 2 - 1  # every other node, less the deleted one
    assert len(renamed) == len(diff.graph.nodes_changed) == stripped
    assert diff.graph.matches == tuple(
        (i, i if i < 100 else i - 1) for i in range(len(a.graph.node)) if i != 100
    )
    assert took < 4.0, f"diff of {len(a.graph.node)} nodes took {took:.2f} s"
