"""The barycenter sweep that sorts many layers at a time (designer.core.layout._sweep)
against a plain sequential sweep written out here: it must give the same orders (so no more
crossings, counted pair by pair below) on the bench graph shapes, on a ladder where every
change runs to the bottom, on random graphs and on real exports, by both of its ways of
working (rounds of numpy sorts, one layer at a time)."""

from __future__ import annotations

import itertools
import random
from typing import Any

import numpy as np
import pytest

from designer.core.io.load import open_document
from designer.core.layout import LayoutOptions, _sweep, layered_layout_of
from designer.core.layout import layered as layered_module
from designer.core.scope import MAIN_SCOPE
from designer.core.viewgraph import NodeKind, build_view_graph
from tests.helpers.shared import model

Columns = tuple[list[int], list[float], list[float], list[int], list[int]]


def reference_order(
    item_layer: np.ndarray, item_comp: np.ndarray, seg_u: np.ndarray, seg_v: np.ndarray, sweeps: int
) -> list[list[int]]:
    """The sweep as specified, one layer at a time (the layout's code before it sorted many
    layers at once): layers start in (component, item) order; a down sweep sorts layers 1,
    2, …, an up sweep the second last up to 0, each by (component, mean position of its
    neighbours in the layer sorted before; without any: those on the other side plus half
    a slot; without either: its own position), ties in their order; stop after an up
    sweep that changed nothing."""
    layer_of, comp = item_layer.tolist(), item_comp.tolist()
    items = len(layer_of)
    n_layers = max(layer_of) + 1 if items else 0
    layers: list[list[int]] = [[] for _ in range(n_layers)]
    for v in sorted(range(items), key=lambda v: (layer_of[v], comp[v], v)):
        layers[layer_of[v]].append(v)
    ups: list[list[int]] = [[] for _ in range(items)]
    downs: list[list[int]] = [[] for _ in range(items)]
    for u, v in zip(seg_u.tolist(), seg_v.tolist(), strict=True):
        downs[u].append(v)
        ups[v].append(u)
    pos = [0.0] * items

    def place(members: list[int]) -> None:
        for r, v in enumerate(members):
            pos[v] = (r + 0.5) / len(members)

    for members in layers:
        place(members)
    for half in range(2 * sweeps):
        down = half % 2 == 0
        near, far = (ups, downs) if down else (downs, ups)
        changed = False
        for i in range(1, n_layers) if down else range(n_layers - 2, -1, -1):
            members = layers[i]
            m = len(members)

            keys = {}
            for v in members:
                if near[v]:
                    keys[v] = comp[v], sum(pos[u] for u in near[v]) / len(near[v])
                elif far[v]:
                    keys[v] = comp[v], sum(pos[u] for u in far[v]) / len(far[v]) + 0.5 / m
                else:
                    keys[v] = comp[v], pos[v]
            new = sorted(members, key=keys.__getitem__)
            if new != members:
                changed = True
                layers[i] = new
                place(new)
        if not down and not changed and half > 0:
            break
    return layers


def crossings(layers: list[list[int]], seg_u: np.ndarray, seg_v: np.ndarray) -> int:
    """Pairs of segments between the same two consecutive layers whose ends are in opposite
    orders, counted pair by pair (segments spanning more layers, left when the layout's
    dummy budget runs out, are not counted)."""
    rank = {v: r for members in layers for r, v in enumerate(members)}
    layer_of = {v: i for i, members in enumerate(layers) for v in members}
    between: dict[int, list[tuple[int, int]]] = {}
    for u, v in zip(seg_u.tolist(), seg_v.tolist(), strict=True):
        if layer_of[v] == layer_of[u] + 1:
            between.setdefault(layer_of[u], []).append((rank[u], rank[v]))
    total = 0
    for segs in between.values():
        for i, (a, b) in enumerate(segs):
            for c, d in segs[i + 1 :]:
                total += (a - c) * (b - d) < 0
    return total


def _capture(monkeypatch: pytest.MonkeyPatch) -> list[tuple[tuple[Any, ...], Any]]:
    """Record the arguments and result of every order_layers call of the layout."""
    calls: list[tuple[tuple[Any, ...], Any]] = []
    real = _sweep.order_layers

    def spy(*args: Any) -> Any:
        result = real(*args)
        calls.append((args, result))
        return result

    monkeypatch.setattr(layered_module, "order_layers", spy)
    return calls


def _check_against_reference(
    monkeypatch: pytest.MonkeyPatch, columns: Columns, options: LayoutOptions
) -> tuple[int, int]:
    """Lay ``columns`` out; assert the sweep's orders equal the reference's (so it has no
    more crossings); return the crossings of the swept and of the unswept (start) order."""
    calls = _capture(monkeypatch)
    layered_layout_of(*columns, options)
    (args, (flat, start)) = calls[-1]
    item_layer, item_comp, seg_u, seg_v, sweeps = args[:5]
    got = [flat[a:b].tolist() for a, b in itertools.pairwise(start.tolist())]
    want = reference_order(item_layer, item_comp, seg_u, seg_v, sweeps)
    assert got == want
    unswept = reference_order(item_layer, item_comp, seg_u, seg_v, 0)
    ours = crossings(got, seg_u, seg_v)
    assert ours <= crossings(want, seg_u, seg_v)
    return ours, crossings(unswept, seg_u, seg_v)


class _Builder:
    def __init__(self) -> None:
        self.widths: list[float] = []
        self.heights: list[float] = []
        self.sources: list[int] = []
        self.targets: list[int] = []

    def node(self, *inputs: int, small: bool = False) -> int:
        nid = len(self.widths)
        self.widths.append(60.0 if small else 100.0)
        self.heights.append(24.0 if small else 40.0)
        self.sources += inputs
        self.targets += [nid] * len(inputs)
        return nid

    def columns(self) -> Columns:
        ids = list(range(len(self.widths)))
        return ids, self.widths, self.heights, self.sources, self.targets


def residual_chain(size: int) -> Columns:
    """bench_layout's residual chain: input, then (weight, Conv, Relu, Add with a skip)."""
    b = _Builder()
    prev = b.node(small=True)
    while len(b.widths) + 4 <= size:
        conv = b.node(prev, b.node(small=True))
        prev = b.node(prev, b.node(conv))
    return b.columns()


def transformer(size: int) -> Columns:
    """bench_layout's transformer stack: pre-norm blocks, one mask feeding every block."""
    b = _Builder()
    x, mask = b.node(small=True), b.node(small=True)
    while len(b.widths) + 21 <= size:
        ln1 = b.node(x)
        q, k, v = (b.node(ln1, b.node(small=True)) for _ in range(3))
        scores = b.node(b.node(q, k), mask)
        attn = b.node(b.node(scores), v)
        r1 = b.node(x, b.node(attn, b.node(small=True)))
        ff = b.node(b.node(b.node(b.node(r1), b.node(small=True))), b.node(small=True))
        x = b.node(r1, ff)
    return b.columns()


def ladder(depth: int, width: int, block: int = 0) -> Columns:
    """``width`` parallel chains below one root. With ``block`` 0, their nodes are numbered
    right to left below the first layer of chains: every layer starts in the reverse order
    of the one above, so the first change (layer 2) makes the next layer change, and so on
    to the bottom. Else the numbering flips every ``block`` layers: a change starts at
    every other flip and the sweep's first guesses at the others are wrong."""
    b = _Builder()
    root = b.node()
    prev = [b.node(root) for _ in range(width)]
    for d in range(1, depth):
        base = len(b.widths)
        flip = (d // block) % 2 == 1 if block else True
        cur = [base + (width - 1 - j if flip else j) for j in range(width)]
        for _ in range(width):
            b.node()
        b.sources += prev
        b.targets += cur
        prev = cur
    return b.columns()


_WAYS = {  # (WALK_BELOW, MAX_ROUNDS)
    "default": (_sweep.WALK_BELOW, _sweep.MAX_ROUNDS),
    "rounds only": (0, 10**9),
    "one layer at a time": (10**9, 10**9),
    "two rounds, then one layer at a time": (0, 2),
}


@pytest.fixture(params=list(_WAYS))
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with the sweep's default switch-over, only numpy rounds, only the walk,
    and the walk taking over after two rounds."""
    below, rounds = _WAYS[request.param]
    monkeypatch.setattr(_sweep, "WALK_BELOW", below)
    monkeypatch.setattr(_sweep, "MAX_ROUNDS", rounds)
    return str(request.param)


@pytest.mark.parametrize("shape", [residual_chain, transformer])
@pytest.mark.parametrize("sweeps", [None, 3])
def test_bench_shapes_sort_as_the_sequential_sweep(
    monkeypatch: pytest.MonkeyPatch, way: str, shape: Any, sweeps: int | None
) -> None:
    ours, before = _check_against_reference(monkeypatch, shape(2_000), LayoutOptions(sweeps=sweeps))
    if shape is residual_chain:
        assert ours == 0  # a chain with its skip links beside it
    else:
        assert ours < before


@pytest.mark.parametrize("block", [0, 7])
def test_changes_running_down_a_ladder(
    monkeypatch: pytest.MonkeyPatch, way: str, block: int
) -> None:
    columns = ladder(400, 3, block)
    ours, before = _check_against_reference(monkeypatch, columns, LayoutOptions(sweeps=2))
    assert ours == 0 < before


@pytest.mark.parametrize("seed", range(12))
def test_random_graphs_sort_as_the_sequential_sweep(
    monkeypatch: pytest.MonkeyPatch, way: str, seed: int
) -> None:
    rng = random.Random(seed)
    n = rng.randint(5, 400)
    pairs = [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, 3 * n))]
    if seed % 3:  # mostly DAGs in index order, as models list their nodes; some with cycles
        pairs = [(min(p), max(p)) for p in pairs]
    columns: Columns = (
        list(range(n)),
        [rng.choice([60.0, 100.0, 180.0]) for _ in range(n)],
        [40.0] * n,
        [a for a, _ in pairs],
        [b for _, b in pairs],
    )
    options = LayoutOptions(sweeps=rng.choice([1, 2, 4]), proxy_fanout=rng.choice([3, 16]))
    _check_against_reference(monkeypatch, columns, options)


def _real_columns(name: str) -> Columns:
    """The drawable graph of a real export as the canvas lays it out (fixed box sizes)."""
    graph = build_view_graph(open_document(model(name)), MAIN_SCOPE)
    keys = [n.key for n in graph.nodes]
    boxed = {n.key for n in graph.nodes if n.kind in (NodeKind.OP, NodeKind.GROUP)}
    return (
        keys,
        [140.0 if k in boxed else 90.0 for k in keys],
        [44.0 if k in boxed else 26.0 for k in keys],
        [e.source for e in graph.edges],
        [e.target for e in graph.edges],
    )


@pytest.mark.parametrize(
    "name", ["gpt2_6l_h64.torchscript.onnx", "shufflenet_v2_x1_0.torchscript.onnx"]
)
def test_real_exports_sort_as_the_sequential_sweep(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    # the canvas's options: graph inputs with many consumers proxied, long links as stubs
    options = LayoutOptions(layer_gap=70.0, node_gap=36.0, proxy_fanout=16, max_span=24)
    ours, before = _check_against_reference(monkeypatch, _real_columns(name), options)
    assert ours < before


def test_ranges_concatenates_the_spans() -> None:
    got = _sweep.ranges(np.array([3, 0, 7, 7]), np.array([5, 0, 10, 8]))
    assert got.tolist() == [3, 4, 7, 8, 9, 7]
    assert _sweep.ranges(np.array([2]), np.array([2])).tolist() == []
