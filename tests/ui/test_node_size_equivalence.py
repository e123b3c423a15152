"""Box sizes after tuning (issue 15 point 5): ``node_size`` and ``node_sizes`` (a whole graph)
give exactly the sizes the plain formula gives, on the real exports, a generated decoder
stack and names of every kind of character."""

from __future__ import annotations

import sys

import pytest
from helpers.shared import MODELS, ROOT

from designer.core.document import Document
from designer.core.io import open_document
from designer.core.viewgraph import NodeKind, Terminal, TerminalState, ViewNode, build_view_graph
from designer.ui.canvas import style as st

sys.path.insert(0, str(ROOT / "bench"))
from canvas_models import decoder_stack_model


def plain_node_size(node: ViewNode) -> tuple[float, float]:
    """The formula as first written (the reference)."""
    boxed = node.kind == NodeKind.OP or node.kind == NodeKind.GROUP
    height = st.OP_HEIGHT if boxed else st.IO_HEIGHT
    text = st.text_width(node.name)
    if boxed:
        op_width = st.text_width(node.op_type, "type") + 24.0
        text = text if text > op_width else op_width
    width = min(st.MAX_WIDTH, max(st.MIN_WIDTH, text + 2 * st.TEXT_PAD))
    terminals = max(len(node.inputs), len(node.outputs))
    return max(width, (terminals + 1) * st.TERMINAL_SPACING), height


def _check(nodes: list[ViewNode]) -> None:
    want = {n.key: plain_node_size(n) for n in nodes}
    for n in nodes:
        assert st.node_size(n) == want[n.key], n
    got = st.node_sizes(nodes)
    assert list(got) == list(want)
    for key, size in want.items():
        assert got[key] == size, (key, got[key], size)
        assert all(type(v) is float for v in got[key])


@pytest.mark.parametrize("name", sorted(p.name for p in MODELS.glob("*.onnx")))
def test_real_exports(qapp: object, name: str) -> None:
    doc = open_document(MODELS / name)
    nodes = build_view_graph(doc, doc.scope().id).nodes
    _check(nodes)


def test_decoder_stack(qapp: object) -> None:
    doc = Document(decoder_stack_model(30))
    _check(build_view_graph(doc, doc.scope().id).nodes)


def _node(key: int, kind: NodeKind, name: str, op_type: str, terminals: int) -> ViewNode:
    ins = [Terminal(i, "x", "", TerminalState.UNCONNECTED) for i in range(terminals)]
    return ViewNode(key, kind, name, op_type, inputs=ins)


def test_every_kind_of_name(qapp: object) -> None:
    """Empty names, long ones (clamped), CJK, emoji beyond the 16-bit range, a lone
    surrogate, scope paths of every shape, many terminals, every kind of node."""
    names = ["", "a", "x" * 400, "漢字の名前", "emoji 😀 name", "lone \ud800 surrogate", "é" * 30]
    names += ["/", "/top", "//x", "a/b/", "layer/ln/Sub_", "/model/layers.0/self_attn/MatMul_"]
    names += ["/" + "m" * 16, "/" * 20, "layer/" + "m" * 12]  # widths between the clamps
    kinds = list(NodeKind)
    nodes = [
        _node(i, kinds[i % len(kinds)], names[i % len(names)] + str(i), f"Op{i % 13}", i % 17)
        for i in range(2000)
    ]
    nodes.append(_node(5000, NodeKind.OP, "", "", 0))
    _check(nodes)
