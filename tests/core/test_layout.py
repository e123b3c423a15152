"""Tests of the Qt-free layered layout (designer.core.layout)."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from designer.core.layout import (
    Cancelled,
    LayoutEdge,
    LayoutNode,
    LayoutOptions,
    LayoutResult,
    layered_layout,
)

W, H = 100.0, 40.0


def _nodes(count: int, start: int = 0) -> list[LayoutNode]:
    return [LayoutNode(i, W, H) for i in range(start, start + count)]


def _edges(pairs: list[tuple[int, int]]) -> list[LayoutEdge]:
    return [LayoutEdge(a, b) for a, b in pairs]


def residual_chain(size: int) -> tuple[list[LayoutNode], list[LayoutEdge]]:
    """Input, then (weight, Conv, Relu, Add) blocks with a skip edge, like a ResNet."""
    nodes = [LayoutNode(0, 60.0, 24.0)]
    edges: list[LayoutEdge] = []
    prev = 0
    while len(nodes) + 4 <= size:
        w, conv, relu, add = range(len(nodes), len(nodes) + 4)
        nodes += [LayoutNode(w, 60.0, 24.0), LayoutNode(conv, W, H)]
        nodes += [LayoutNode(relu, W, H), LayoutNode(add, W, H)]
        edges += _edges([(prev, conv), (w, conv), (conv, relu), (relu, add), (prev, add)])
        prev = add
    return nodes, edges


def _boxes(nodes: list[LayoutNode], result: LayoutResult) -> np.ndarray:
    """All placed boxes (nodes and proxies) as rows x0, y0, x1, y1."""
    size = {n.id: (n.width, n.height) for n in nodes}
    rows = [(x, y, x + size[i][0], y + size[i][1]) for i, (x, y) in result.positions.items()]
    for source, copies in result.proxies.items():
        w, h = size[source]
        rows += [(x, y, x + w, y + h) for _, (x, y) in copies]
    return np.array(rows, dtype=np.float64).reshape(-1, 4)


def _assert_no_overlap(boxes: np.ndarray) -> None:
    x0, y0, x1, y1 = (boxes[:, k] for k in range(4))
    ox = (x0[:, None] < x1[None, :]) & (x0[None, :] < x1[:, None])
    oy = (y0[:, None] < y1[None, :]) & (y0[None, :] < y1[:, None])
    both = ox & oy
    np.fill_diagonal(both, False)
    assert not both.any(), f"{int(both.sum()) // 2} overlapping pairs"


def _assert_downward(
    nodes: list[LayoutNode], edges: list[LayoutEdge], result: LayoutResult
) -> None:
    height = {n.id: n.height for n in nodes}
    for e in edges:
        if e.source in result.positions:
            sy, ty = result.positions[e.source][1], result.positions[e.target][1]
            assert ty > sy + height[e.source], e


def test_empty_graph() -> None:
    calls: list[float] = []
    result = layered_layout([], [], progress=calls.append)
    assert result == LayoutResult({}, {}, 0.0, 0.0)
    assert calls[-1] == 1.0


def test_single_node() -> None:
    result = layered_layout([LayoutNode(7, 80.0, 30.0)], [])
    assert result.positions == {7: (0.0, 0.0)}
    assert (result.width, result.height) == (80.0, 30.0)
    assert result.proxies == {}


def test_chain_points_down_and_stays_in_one_column() -> None:
    nodes = _nodes(5)
    edges = _edges([(0, 1), (1, 2), (2, 3), (3, 4)])
    result = layered_layout(nodes, edges)
    _assert_downward(nodes, edges, result)
    assert {x for x, _ in result.positions.values()} == {0.0}


def test_residual_chain_is_narrow_downward_and_without_overlaps() -> None:
    nodes, edges = residual_chain(2_000)
    result = layered_layout(nodes, edges)
    assert len(result.positions) == len(nodes)
    _assert_downward(nodes, edges, result)
    assert result.width <= 6 * W
    # Initializers sit in the layer right above their consumer.
    for e in edges:
        if nodes[e.source].width == 60.0 and e.source != 0:
            gap = result.positions[e.target][1] - result.positions[e.source][1]
            assert gap <= H + LayoutOptions().layer_gap
    # Skip edges span two layers and get one bend per crossed layer, top to bottom.
    skips = [(e.source, e.target) for e in edges if e.source % 4 == 0 and e.target % 4 == 0]
    assert len(skips) > 400
    for key in skips:
        bends = result.routes[key]
        ys = [y for _, y in bends]
        assert len(bends) == 2 and ys == sorted(ys)
        assert result.positions[key[0]][1] < ys[0] < ys[-1] < result.positions[key[1]][1]


def test_no_boxes_overlap_with_mixed_sizes() -> None:
    nodes = [LayoutNode(i, 20.0 + 37 * (i % 5), 10.0 + 13 * (i % 3)) for i in range(120)]
    rng = np.random.default_rng(3)
    pairs = {(int(a), int(b)) for a, b in rng.integers(0, 120, (300, 2)) if a < b}
    edges = _edges(sorted(pairs))
    result = layered_layout(nodes, edges)
    _assert_no_overlap(_boxes(nodes, result))
    _assert_downward(nodes, edges, result)


def test_deterministic() -> None:
    nodes, edges = residual_chain(400)
    extra = _edges([(5, 300), (9, 200), (17, 396)])
    first = layered_layout(nodes, edges + extra)
    second = layered_layout(list(nodes), list(edges + extra))
    assert first == second


def test_high_fanout_source_becomes_proxies() -> None:
    # A mask (id 100) feeding 20 blocks of a chain.
    nodes = [*_nodes(40), LayoutNode(100, 60.0, 24.0)]
    edges = _edges([(i, i + 1) for i in range(39)])
    consumers = list(range(1, 40, 2))
    edges += _edges([(100, c) for c in consumers])
    result = layered_layout(nodes, edges, LayoutOptions(proxy_fanout=16))
    assert 100 not in result.positions
    copies = result.proxies[100]
    assert [c for c, _ in copies] == consumers
    gap = LayoutOptions().layer_gap
    for consumer, (px, py) in copies:
        cx, cy = result.positions[consumer]
        assert py + 24.0 < cy <= py + 24.0 + gap + H  # in the layer right above
        # Over it or right beside whatever sits over it.
        assert abs((px + 30.0) - (cx + W / 2)) <= (60.0 + W) / 2 + LayoutOptions().node_gap + 1e-6
    _assert_no_overlap(_boxes(nodes, result))
    _assert_downward(nodes, edges, result)


def test_edges_longer_than_max_span_are_reported_not_routed() -> None:
    # A chain of 40 with one link from the top to the bottom and one across 3 layers.
    nodes = _nodes(40)
    edges = _edges([(i, i + 1) for i in range(39)] + [(0, 39), (5, 8)])
    routed = layered_layout(nodes, edges, LayoutOptions())
    assert (0, 39) in routed.routes and routed.long_edges == []
    result = layered_layout(nodes, edges, LayoutOptions(max_span=10))
    assert result.long_edges == [(0, 39)]
    assert (0, 39) not in result.routes and (5, 8) in result.routes
    assert result.positions == routed.positions or result.width <= routed.width
    _assert_no_overlap(_boxes(nodes, result))
    _assert_downward(nodes, edges, result)  # still below its source


def test_fanout_at_the_limit_is_laid_out_normally() -> None:
    nodes = [*_nodes(16), LayoutNode(100, 60.0, 24.0)]
    edges = _edges([(100, c) for c in range(16)])
    result = layered_layout(nodes, edges, LayoutOptions(proxy_fanout=16))
    assert result.proxies == {}
    assert 100 in result.positions
    _assert_downward(nodes, edges, result)


def test_cycles_give_a_layout() -> None:
    nodes = _nodes(300)
    edges = _edges(
        [(i, (i + 1) % 300) for i in range(300)] + [(i, (i * 7) % 300) for i in range(300)]
    )
    result = layered_layout(nodes, edges)
    assert set(result.positions) == set(range(300))
    _assert_no_overlap(_boxes(nodes, result))


def test_two_cycle_and_self_loop_and_duplicate_edges() -> None:
    nodes = _nodes(3)
    edges = _edges([(0, 1), (1, 0), (1, 1), (1, 2), (1, 2)])
    result = layered_layout(nodes, edges)
    assert set(result.positions) == {0, 1, 2}
    assert result.positions[2][1] > result.positions[1][1]


def test_cancel_raises_immediately_and_mid_run() -> None:
    nodes, edges = residual_chain(2_000)
    with pytest.raises(Cancelled):
        layered_layout(nodes, edges, cancel=lambda: True)
    polls = 0

    def cancel_later() -> bool:
        nonlocal polls
        polls += 1
        return polls > 5

    with pytest.raises(Cancelled):
        layered_layout(nodes, edges, cancel=cancel_later)
    assert polls == 6


def test_progress_is_nondecreasing_and_ends_at_one() -> None:
    nodes, edges = residual_chain(1_000)
    calls: list[float] = []
    layered_layout(nodes, edges, progress=calls.append)
    assert len(calls) >= 5
    assert calls == sorted(calls)
    assert calls[0] >= 0.0 and calls[-1] == 1.0


def test_disconnected_components_side_by_side() -> None:
    a = _edges([(0, 1), (1, 2), (0, 2)])
    b = _edges([(3, 4), (3, 5), (4, 6), (5, 6)])
    nodes = _nodes(8)  # 7 is isolated
    result = layered_layout(nodes, a + b)
    _assert_no_overlap(_boxes(nodes, result))
    spans = []
    for group in ([0, 1, 2], [3, 4, 5, 6], [7]):
        xs = [result.positions[i][0] for i in group]
        spans.append((min(xs), max(xs) + W))
    spans.sort()
    for (_, right), (left, _) in itertools.pairwise(spans):
        assert right <= left


def test_isolated_nodes_only() -> None:
    result = layered_layout(_nodes(4), [])
    assert sorted(result.positions.values()) == [
        (0.0, 0.0),
        (130.0, 0.0),
        (260.0, 0.0),
        (390.0, 0.0),
    ]


def test_bad_input_is_reported() -> None:
    with pytest.raises(ValueError, match="not among the nodes"):
        layered_layout(_nodes(2), _edges([(0, 5)]))
    with pytest.raises(ValueError, match="more than once"):
        layered_layout([LayoutNode(1, W, H), LayoutNode(1, W, H)], [])
    with pytest.raises(ValueError, match="node_gap"):
        layered_layout(_nodes(2), [], LayoutOptions(node_gap=-1.0))


def test_dummy_budget_keeps_huge_spans_linear() -> None:
    # Every node also feeds the last one: ~n^2/2 dummies without the budget.
    n = 2_000
    nodes = _nodes(n)
    edges = _edges([(i, i + 1) for i in range(n - 1)] + [(i, n - 1) for i in range(1, n - 2)])
    result = layered_layout(nodes, edges, LayoutOptions(proxy_fanout=10**9))
    assert sum(len(b) for b in result.routes.values()) <= 2 * (n + len(edges)) + 1000
    _assert_downward(nodes, edges, result)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 30),
    st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29)), max_size=60),
    st.integers(0, 3),
)
def test_random_graphs(count: int, pairs: list[tuple[int, int]], fanout: int) -> None:
    nodes = [LayoutNode(i * 3, 10.0 + i % 4 * 20, 5.0 + i % 3 * 10) for i in range(count)]
    edges = [LayoutEdge(a * 3, b * 3) for a, b in pairs if a < count and b < count]
    result = layered_layout(nodes, edges, LayoutOptions(proxy_fanout=fanout))
    placed = set(result.positions) | set(result.proxies)
    assert placed == {n.id for n in nodes}
    _assert_no_overlap(_boxes(nodes, result))
    if all(e.source < e.target for e in edges):  # acyclic: everything points down
        _assert_downward(nodes, edges, result)
    assert result == layered_layout(nodes, edges, LayoutOptions(proxy_fanout=fanout))


def test_core_layout_imports_no_gui_or_runtime() -> None:
    code = (
        "import sys, designer.core.layout\n"
        "bad = [m for m in ('PySide6', 'onnxruntime', 'paramiko', 'onnx', 'networkx') "
        "if m in sys.modules]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
