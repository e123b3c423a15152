"""Collapse module scopes of a view graph: every node of a collapsed group (see
:mod:`designer.core.hierarchy`) is replaced by one :class:`NodeKind.GROUP` box whose input
and output terminals are the values crossing the group's border; links inside a group are
dropped and links crossing it are re-targeted to the box. The result is a plain
:class:`ViewGraph`, so layout, painting, export and the layout JSON treat it like any graph.

Qt-free; O(nodes + edges).
"""

from __future__ import annotations

import zlib
from collections import Counter

from designer.core.hierarchy import AUTO_MAX_BOXES, Group, Hierarchy, pick_depth
from designer.core.viewgraph import (
    NodeKind,
    Terminal,
    TerminalState,
    ViewEdge,
    ViewGraph,
    ViewNode,
)


def group_key(group_id: str) -> int:
    """The (negative, stable) view key of a collapsed group's box: never a document key."""
    return -1 - zlib.crc32(group_id.encode("utf-8"))


def groups_below(hierarchy: Hierarchy, depth: int) -> set[str]:
    """Ids of the groups to collapse so that ``depth`` levels of the scope tree stay open
    (the groups ``depth + 1`` segments deep become boxes)."""
    return {g.id for g in hierarchy.groups() if g.depth == depth + 1}


def auto_graph_depth(
    graph: ViewGraph, hierarchy: Hierarchy, max_boxes: int = AUTO_MAX_BOXES
) -> int:
    """The level *Auto* keeps open (:func:`designer.core.hierarchy.pick_depth`): the
    deepest whose collapsed ``graph`` has at most ``max_boxes`` boxes (graph inputs and
    outputs included; hidden constants not counted), or the next one when that shows only
    a few; 0 when even level 0 shows more."""
    return pick_depth(collapsed_counts(graph, hierarchy), max_boxes)


def collapsed_counts(graph: ViewGraph, hierarchy: Hierarchy) -> list[int]:
    """How many nodes the collapsed ``graph`` draws at every depth 0 … ``hierarchy.depth()``
    (``len(collapse_graph(graph, hierarchy, groups_below(hierarchy, depth)).nodes)``),
    counted without building the boxes (their captions read every node of the group), in
    one pass over the nodes: they are counted per innermost group, then each group's
    ancestors say which box holds it at each depth."""
    group_of = hierarchy.group_of
    op = NodeKind.OP
    per_holder: Counter[int] = Counter()
    holders: dict[int, Group] = {}
    loose = 0
    for node in graph.nodes:
        holder = group_of.get(node.key) if node.kind is op else None
        if holder is None:
            loose += 1
            continue
        per_holder[id(holder)] += 1
        holders[id(holder)] = holder
    depths = hierarchy.depth() + 1
    loose_at = [loose] * depths
    boxes_at: list[set[int]] = [set() for _ in range(depths)]
    for hid, holder in holders.items():
        at: dict[int, Group] = {}  # depth → the group of that depth holding it
        group: Group | None = holder
        while group is not None:
            if group.path:
                at.setdefault(group.depth, group)
            group = group.parent
        for depth in range(depths):
            box = at.get(depth + 1)
            if box is None:
                loose_at[depth] += per_holder[hid]
            else:
                boxes_at[depth].add(id(box))
    return [loose_at[d] + len(boxes_at[d]) for d in range(depths)]


def parse_depth(text: str, graph: ViewGraph, hierarchy: Hierarchy) -> int:
    """``auto`` (what keeps the first view readable, :func:`auto_graph_depth`) or a level
    ≥ 0; ValueError with a one-line reason otherwise."""
    if text == "auto":
        return auto_graph_depth(graph, hierarchy)
    try:
        depth = int(text)
    except ValueError:
        raise ValueError(f"--collapse takes a depth (0, 1, 2, …) or 'auto', not {text!r}") from None
    if depth < 0:
        raise ValueError(f"--collapse depth must be 0 or more, not {depth}")
    return depth


def human_count(value: int) -> str:
    """``45.4k`` / ``1.2M`` / ``512``."""
    for limit, unit in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if value >= limit:
            return f"{value / limit:.1f}{unit}"
    return str(value)


def counted(value: int, noun: str, shown: str | None = None) -> str:
    """``1 op`` / ``66 ops``: ``value`` (written as ``shown`` when given, e.g. ``45.4k``)
    and ``noun``, singular for exactly one (captions and Find results read as English)."""
    return f"{shown if shown is not None else value} {noun}{'' if value == 1 else 's'}"


def group_caption(hierarchy: Hierarchy, group: Group) -> str:
    """The second line of a collapsed box: ``66 ops · 45.4k params`` (``1 op``)."""
    nodes, params, _bytes = hierarchy.size(group)
    text = counted(nodes, "op")
    if group.kind == "view":
        text = f"view group · {text}"
    if params:
        text += f" · {counted(params, 'param', human_count(params))}"
    return text


def collapse_graph(graph: ViewGraph, hierarchy: Hierarchy, collapsed: set[str]) -> ViewGraph:
    """``graph`` with every group in ``collapsed`` (group ids; a group inside a collapsed
    one is hidden with it) drawn as one box. ``graph`` itself is not changed."""
    if not collapsed:
        return graph
    box_of: dict[int, Group] = {}  # id(group) → the outermost collapsed group holding it
    for group in hierarchy.root.walk():  # parents first
        parent = group.parent
        outer = box_of.get(id(parent)) if parent is not None else None
        if outer is not None:
            box_of[id(group)] = outer
        elif group.id in collapsed and group.path:
            box_of[id(group)] = group
    group_of = hierarchy.group_of
    owner: dict[int, Group] = {}
    for node in graph.nodes:
        if node.kind is NodeKind.OP:
            holder = group_of.get(node.key)
            box = box_of.get(id(holder)) if holder is not None else None
            if box is not None:
                owner[node.key] = box
    if not owner:
        return graph

    boxes: dict[str, ViewNode] = {}
    in_slot: dict[tuple[str, str], int] = {}
    out_slot: dict[tuple[str, str], int] = {}

    def box_node(group: Group) -> ViewNode:
        view = boxes.get(group.id)
        if view is None:
            view = boxes[group.id] = ViewNode(
                group_key(group.id),
                NodeKind.GROUP,
                group.name,
                group_caption(hierarchy, group),
                group=group.id,
            )
        return view

    def terminal(view: ViewNode, tensor: str, slots: dict[tuple[str, str], int], side: str) -> int:
        slot = slots.get((view.group, tensor))
        if slot is None:
            terminals = view.inputs if side == "in" else view.outputs
            slot = slots[(view.group, tensor)] = len(terminals)
            terminals.append(Terminal(slot, tensor, tensor, TerminalState.LINKED))
        return slot

    nodes: list[ViewNode] = []
    placed: set[str] = set()
    for node in graph.nodes:
        box = owner.get(node.key)
        if box is None:
            nodes.append(node)
        elif box.id not in placed:  # the box takes the place of its first node
            placed.add(box.id)
            nodes.append(box_node(box))
    edges: list[ViewEdge] = []
    seen: set[tuple[int, int, int, int]] = set()
    for edge in graph.edges:
        source, target = owner.get(edge.source), owner.get(edge.target)
        if source is None and target is None:
            edges.append(edge)
            continue
        if source is not None and source is target:
            continue  # inside one collapsed group
        s_key, s_index = edge.source, edge.source_index
        if source is not None:
            view = box_node(source)
            s_key, s_index = view.key, terminal(view, edge.tensor, out_slot, "out")
        t_key, t_index = edge.target, edge.target_index
        if target is not None:
            view = box_node(target)
            t_key, t_index = view.key, terminal(view, edge.tensor, in_slot, "in")
        spot = (s_key, s_index, t_key, t_index)
        if spot not in seen:
            seen.add(spot)
            edges.append(ViewEdge(s_key, s_index, t_key, t_index, edge.tensor))
    return ViewGraph(graph.scope, nodes, edges)


def expose(hierarchy: Hierarchy, collapsed: set[str], key: int) -> set[str]:
    """The collapsed groups (ids) to open so that node ``key`` shows as itself."""
    return {g.id for g in hierarchy.path_of(key) if g.id in collapsed}


def edges_by_node(graph: ViewGraph) -> dict[int, list[ViewEdge]]:
    """Node key → the links touching it (both ends), for :func:`expand_in_graph`. O(edges)."""
    out: dict[int, list[ViewEdge]] = {}
    for edge in graph.edges:
        out.setdefault(edge.source, []).append(edge)
        if edge.target != edge.source:
            out.setdefault(edge.target, []).append(edge)
    return out


def expand_in_graph(
    full: ViewGraph,
    derived: ViewGraph,
    hierarchy: Hierarchy,
    group_id: str,
    collapsed: set[str],
    links: dict[int, list[ViewEdge]],
) -> ViewGraph | None:
    """``derived`` (``full`` collapsed with ``collapsed`` plus ``group_id``) with the box of
    ``group_id`` opened: the same graph :func:`collapse_graph` gives for ``collapsed``,
    built from the box's nodes and the links touching them only (``links``:
    :func:`edges_by_node` of ``full``). None when that shortcut does not apply (a group
    inside ``group_id`` stays collapsed, or the box is not drawn)."""
    group = hierarchy.by_id.get(group_id)
    box = group_key(group_id)
    if group is None or group_id in collapsed or not derived.has_node(box):
        return None
    prefix = group_id + "/"
    if any(i.startswith(prefix) for i in collapsed):
        return None
    subtree = group.keys()
    members = [k for k in subtree if full.has_node(k)]
    inside = set(members)
    owner_cache: dict[int, int | None] = {}

    def owner(key: int) -> int | None:
        """The box key of the outermost collapsed group holding ``key`` (None: drawn)."""
        if key in owner_cache:
            return owner_cache[key]
        found = next((g for g in hierarchy.path_of(key) if g.id in collapsed), None)
        result = group_key(found.id) if found is not None else None
        owner_cache[key] = result
        return result

    slots: dict[tuple[int, str, str], int] = {}
    read: set[int] = set()

    def slot(key: int, tensor: str, side: str) -> int | None:
        """The terminal of box ``key`` for ``tensor`` (it crossed the border before)."""
        if key not in read:
            read.add(key)
            view = derived.node(key)
            for t in view.inputs:
                slots.setdefault((key, t.tensor, "in"), t.index)
            for t in view.outputs:
                slots.setdefault((key, t.tensor, "out"), t.index)
        return slots.get((key, tensor, side))

    nodes: list[ViewNode] = []
    for node in derived.nodes:
        if node.key == box:
            nodes.extend(full.node(k) for k in members)
        else:
            nodes.append(node)
    edges = [e for e in derived.edges if e.source != box and e.target != box]
    added: set[ViewEdge] = set()
    for key in members:
        for edge in links.get(key, ()):
            if edge.source in inside and edge.target in inside:
                new: ViewEdge = edge
            elif edge.source in inside:
                other = owner(edge.target)
                if other is None:
                    new = edge
                else:
                    index = slot(other, edge.tensor, "in")
                    if index is None:
                        return None
                    new = ViewEdge(edge.source, edge.source_index, other, index, edge.tensor)
            else:
                other = owner(edge.source)
                if other is None:
                    new = edge
                else:
                    index = slot(other, edge.tensor, "out")
                    if index is None:
                        return None
                    new = ViewEdge(other, index, edge.target, edge.target_index, edge.tensor)
            if new not in added:
                added.add(new)
                edges.append(new)
    return ViewGraph(derived.scope, nodes, edges)


def collapse_in_graph(
    derived: ViewGraph, hierarchy: Hierarchy, group_id: str, collapsed: set[str]
) -> ViewGraph | None:
    """``derived`` with group ``group_id`` folded into one box (``collapsed``: the ids
    after folding, ``group_id`` among them): the boxes and links :func:`collapse_graph`
    gives for ``collapsed``, built from ``derived``'s nodes inside the group and the links
    touching them only (the new box's terminals in the order its links come). None when
    that shortcut does not apply (a group holding it is collapsed, nothing of it drawn)."""
    group = hierarchy.by_id.get(group_id)
    if group is None or group_id not in collapsed:
        return None
    holder = group.parent
    while holder is not None:
        if holder.id in collapsed:
            return None
        holder = holder.parent
    inner = {g.id for g in group.walk()}
    members = set(group.keys())
    gone = {
        n.key
        for n in derived.nodes
        if (n.kind is NodeKind.OP and n.key in members)
        or (n.kind is NodeKind.GROUP and n.group in inner)
    }
    if not gone:
        return None
    box = ViewNode(
        group_key(group_id),
        NodeKind.GROUP,
        group.name,
        group_caption(hierarchy, group),
        group=group_id,
    )
    placed = False
    nodes: list[ViewNode] = []
    for node in derived.nodes:
        if node.key not in gone:
            nodes.append(node)
        elif not placed:  # the box takes the place of its first node
            placed = True
            nodes.append(box)
    slots: dict[tuple[str, str], int] = {}

    def terminal(tensor: str, side: str) -> int:
        slot = slots.get((side, tensor))
        if slot is None:
            terminals = box.inputs if side == "in" else box.outputs
            slot = slots[(side, tensor)] = len(terminals)
            terminals.append(Terminal(slot, tensor, tensor, TerminalState.LINKED))
        return slot

    edges: list[ViewEdge] = []
    seen: set[tuple[int, int, int, int]] = set()
    for edge in derived.edges:
        source_in, target_in = edge.source in gone, edge.target in gone
        if not source_in and not target_in:
            edges.append(edge)
            continue
        if source_in and target_in:
            continue  # inside the group
        s_key, s_index, t_key, t_index = (
            edge.source,
            edge.source_index,
            edge.target,
            edge.target_index,
        )
        if source_in:
            s_key, s_index = box.key, terminal(edge.tensor, "out")
        else:
            t_key, t_index = box.key, terminal(edge.tensor, "in")
        spot = (s_key, s_index, t_key, t_index)
        if spot not in seen:
            seen.add(spot)
            edges.append(ViewEdge(s_key, s_index, t_key, t_index, edge.tensor))
    return ViewGraph(derived.scope, nodes, edges)
