"""Groups of a graph scope taken from the model's own structure: the module scopes in node
names (``/model/layers.3/self_attn/q_proj/MatMul``, TorchScript exporter), the dynamo
exporter's ``pkg.torch.onnx.name_scopes`` node metadata, local-function calls and subgraphs.

A :class:`Hierarchy` is a tree of :class:`Group` records; each group knows the node keys
directly inside it, and answers (lazily, cached) its op counts, parameter count and bytes
(initializers its nodes read; external data is never read) and the values crossing its
border. Qt-free. How the tree is found: :mod:`designer.core.hierarchy_tree`; its time at
100,000 nodes (target ≤ 0.5 s): ``bench/bench_hierarchy.py``.

Repeated protobuf fields are read as slices (``node.input[:]``, one C call): upb's
containers have no iterator, so a loop over one indexes it until an IndexError is raised
and caught, which costs more than the whole slice (about 1,600 more CPU instructions for a
two-input node, 2,900 for an empty field).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import onnx

from designer.core.document import Document
from designer.core.gcpause import gc_paused
from designer.core.scope import MAIN_SCOPE, ScopeId
from designer.core.summary import type_text
from designer.core.tensor_sizes import initializer_sizes
from designer.core.view_groups import apply_view_groups, view_groups


@dataclass(frozen=True, slots=True)
class BoundaryValue:
    """A value crossing a group's border: its name and type text (``?`` when unknown)."""

    name: str
    type: str


@dataclass(frozen=True, slots=True)
class GroupInfo:
    """What a group holds, counted over its whole subtree."""

    node_count: int
    op_counts: dict[str, int]  # op type → count, most frequent first
    param_count: int  # elements of the initializers read
    param_bytes: int
    inputs: tuple[BoundaryValue, ...]  # read inside, defined outside (initializers excluded)
    outputs: tuple[BoundaryValue, ...]  # defined inside, read outside or a graph output

    def op_summary(self, limit: int = 4) -> str:
        """``12 MatMul, 8 Add, … (+3 more)``."""
        items = list(self.op_counts.items())
        text = ", ".join(f"{n} {op}" for op, n in items[:limit])
        if len(items) > limit:
            text += f", … (+{len(items) - limit} more)"
        return text


@dataclass(eq=False, slots=True)
class Group:
    """One module scope (``kind`` "scope"), local-function call ("function"), node with
    subgraphs ("subgraph") or hand-made view-only group ("view") of a graph scope.
    ``path`` is the segments from the root (the root itself has an empty path); ``name``
    the last segment (e.g. ``layers.3``)."""

    path: tuple[str, ...]
    kind: str = "scope"
    parent: Group | None = None
    children: list[Group] = field(default_factory=list)
    own_keys: list[int] = field(default_factory=list)
    #: For "function" / "subgraph" groups: the node that calls / holds it, and the scopes
    #: whose own hierarchy :func:`build_hierarchy` gives (never expanded here).
    node_key: int | None = None
    inner_scopes: tuple[ScopeId, ...] = ()
    #: For a "view" group: the name it was made with (its path segment may differ when a
    #: module of the same name sits beside it).
    view_name: str = ""

    @property
    def name(self) -> str:
        return self.path[-1] if self.path else ""

    @property
    def id(self) -> str:
        """A stable text id: the path joined by ``/`` (``""`` for the root)."""
        return "/".join(self.path)

    @property
    def depth(self) -> int:
        return len(self.path)

    def walk(self) -> Iterator[Group]:
        """This group and every group below it, parents first."""
        stack = [self]
        while stack:
            group = stack.pop()
            yield group
            stack.extend(reversed(group.children))

    def keys(self) -> list[int]:
        """Every node key in this group's subtree, in tree order."""
        out: list[int] = []
        for group in self.walk():
            out.extend(group.own_keys)
        return out


class Hierarchy:
    """The group tree of one scope of ``doc`` (a snapshot: rebuild after edits)."""

    def __init__(self, doc: Document, scope_id: ScopeId, root: Group) -> None:
        self.doc = doc
        self.scope_id = scope_id
        self.root = root
        self._by_id: dict[str, Group] | None = None
        self._group_of: dict[int, Group] | None = None
        self._info: dict[str, GroupInfo] = {}
        self._consumers: dict[str, list[int]] | None = None
        self._types: dict[str, str] | None = None
        self._init_sizes: dict[str, tuple[int, int]] | None = None  # name → (elements, bytes)
        self._own_params: dict[int, set[str]] | None = None  # id(group) → initializers read
        self._sizes: dict[str, tuple[int, int, int]] = {}
        self._keys: dict[str, list[int]] = {}

    @property
    def by_id(self) -> dict[str, Group]:
        """Group id (path joined by ``/``) → group (built on first use)."""
        if self._by_id is None:
            self._by_id = {g.id: g for g in self.root.walk()}
        return self._by_id

    @property
    def group_of(self) -> dict[int, Group]:
        """Node key → the innermost group holding it (built on first use)."""
        if self._group_of is None:
            self._group_of = {k: g for g in self.root.walk() for k in g.own_keys}
        return self._group_of

    def groups(self) -> Iterator[Group]:
        """Every group except the root, parents first."""
        it = self.root.walk()
        next(it)
        yield from it

    def depth(self) -> int:
        """How many levels the tree has below the root."""
        return max((g.depth for g in self.root.walk()), default=0)

    def path_of(self, key: int) -> list[Group]:
        """The groups holding node ``key``, outermost first (empty for a top-level node)."""
        group = self.group_of.get(key)
        out: list[Group] = []
        while group is not None and group.path:
            out.append(group)
            group = group.parent
        out.reverse()
        return out

    def keys_of(self, group: Group) -> list[int]:
        """:meth:`Group.keys` of ``group``, cached (do not change the list)."""
        cached = self._keys.get(group.id)
        if cached is None:
            cached = self._keys[group.id] = group.keys()
        return cached

    def at_depth(self, depth: int) -> list[Group]:
        """The groups whose path is exactly ``depth`` segments long."""
        return [g for g in self.groups() if g.depth == depth]

    def info(self, group: Group) -> GroupInfo:
        """Counts, parameters and boundary of ``group`` (cached; O(subtree + its edges))."""
        cached = self._info.get(group.id)
        if cached is None:
            cached = self._info[group.id] = self._compute(group)
        return cached

    def size(self, group: Group) -> tuple[int, int, int]:
        """(nodes, parameter count, parameter bytes) of ``group``: :meth:`info` without the
        boundary (no consumer map), for labelling many boxes at once. The first call reads
        the inputs of every node of the scope once (:meth:`_own_params_of`); each call after
        that is O(groups in the subtree + initializers they read)."""
        cached = self._info.get(group.id)
        if cached is not None:
            return cached.node_count, cached.param_count, cached.param_bytes
        known = self._sizes.get(group.id)
        if known is not None:
            return known
        own = self._own_params_of()
        nodes = 0
        read: set[str] = set()
        for inner in group.walk():
            nodes += len(inner.own_keys)
            names = own.get(id(inner))
            if names:
                read |= names
        size = (nodes, *self._param_totals(read))
        self._sizes[group.id] = size
        return size

    def _initializer_sizes(self) -> dict[str, tuple[int, int]]:
        """Initializer name → (elements, bytes) of the scope (read on first use)."""
        if self._init_sizes is None:
            proto = self.doc.scope(self.scope_id).proto
            found = isinstance(proto, onnx.GraphProto)
            self._init_sizes = initializer_sizes(proto.initializer) if found else {}
        return self._init_sizes

    def _own_params_of(self) -> dict[int, set[str]]:
        """id(group) → the initializers its own nodes read (groups reading none left out);
        one pass over the scope's nodes, on first use."""
        if self._own_params is None:
            params = self._initializer_sizes().keys()
            own: dict[int, set[str]] = {}
            if params:
                group_of = self.group_of
                for key, node in self.doc.scope(self.scope_id).nodes():
                    read = params & node.input[:]  # (in C: each input looked up once)
                    if read:
                        gid = id(group_of[key])
                        names = own.get(gid)
                        if names is None:
                            own[gid] = read
                        else:
                            names |= read
            self._own_params = own
        return self._own_params

    def _param_totals(self, names: Iterable[str]) -> tuple[int, int]:
        """Elements and bytes of the initializers among ``names`` (each counted once)."""
        sizes = self._initializer_sizes()
        count = nbytes = 0
        for name in names:
            known = sizes.get(name)
            if known is not None:
                count += known[0]
                nbytes += known[1]
        return count, nbytes

    # --- internals ----------------------------------------------------------------------
    def _compute(self, group: Group) -> GroupInfo:
        scope = self.doc.scope(self.scope_id)
        keys = group.keys()
        inside = set(keys)
        ops: Counter[str] = Counter()
        produced: list[str] = []
        made: set[str] = set()
        read: dict[str, None] = {}
        for key in keys:
            node = scope.node(key)
            ops[node.op_type] += 1
            for name in node.output[:]:
                if name:
                    produced.append(name)
                    made.add(name)
            for name in node.input[:]:
                if name:
                    read[name] = None
        inits = self._initializer_sizes()
        param_count, param_bytes = self._param_totals(read)
        types = self._type_map()
        inputs = tuple(
            BoundaryValue(n, types.get(n, "?")) for n in read if n not in made and n not in inits
        )
        consumers = self._consumer_map()
        graph_outputs = set(scope.output_names())
        outputs = tuple(
            BoundaryValue(n, types.get(n, "?"))
            for n in produced
            if n in graph_outputs or any(c not in inside for c in consumers.get(n, ()))
        )
        return GroupInfo(
            node_count=len(keys),
            op_counts=dict(ops.most_common()),
            param_count=param_count,
            param_bytes=param_bytes,
            inputs=inputs,
            outputs=outputs,
        )

    def _consumer_map(self) -> dict[str, list[int]]:
        if self._consumers is None:
            out: dict[str, list[int]] = {}
            for key, node in self.doc.scope(self.scope_id).nodes():
                for name in node.input[:]:
                    if name:
                        out.setdefault(name, []).append(key)
            self._consumers = out
        return self._consumers

    def _type_map(self) -> dict[str, str]:
        if self._types is None:
            proto = self.doc.scope(self.scope_id).proto
            out: dict[str, str] = {}
            groups = (
                (proto.value_info,)
                if isinstance(proto, onnx.FunctionProto)
                else (proto.input, proto.output, proto.value_info)
            )
            for values in groups:
                for vi in values:
                    if vi.HasField("type"):
                        out[vi.name] = type_text(vi.type)
            self._types = out
        return self._types


def build_hierarchy(doc: Document, scope_id: ScopeId = MAIN_SCOPE) -> Hierarchy:
    """The group tree of ``scope_id``. Children keep the order in which their first node
    appears; a local-function call or a node holding subgraphs is a leaf group of its own
    (kind "function" / "subgraph") under its module scope. O(nodes)."""
    from designer.core.hierarchy_tree import group_tree  # it builds Group records

    with gc_paused():  # tens of thousands of groups: no collections while they are made
        root = group_tree(doc, scope_id)
        hand = view_groups(doc, scope_id)
        if hand:  # view-only groups made by hand (designer.core.view_groups)
            apply_view_groups(root, hand)
    return Hierarchy(doc, scope_id, root)


#: The first view of :func:`auto_depth`: at most this many boxes and loose nodes …
AUTO_MAX_BOXES = 60
#: … unless that leaves fewer than this many (a Llama exported by TorchScript shows
#: ``model`` and ``lm_head`` alone at level 1: nothing of its structure) …
AUTO_FEW_BOXES = 12
#: … and the next level shows at most this many (the same Llama: its 24 layers, the
#: embedding, the norm and the ~50 mask ops left in ``model`` itself, 81 in all).
AUTO_STRETCH_BOXES = 150
#: A level showing at most this many (one ``model`` box: nothing of the structure) gives
#: way to the next one if that shows at most :data:`AUTO_COLUMN_BOXES` (a generated or
#: very deep model's 1,000 layers: a column of boxes to scroll, each opening at once,
#: where one box had to open onto all 100,000 nodes at once).
AUTO_LONE_BOXES = 2
AUTO_COLUMN_BOXES = 2000


def pick_depth(
    counts: Iterable[int],
    max_boxes: int = AUTO_MAX_BOXES,
    few: int = AUTO_FEW_BOXES,
    stretch: int = AUTO_STRETCH_BOXES,
) -> int:
    """The level *Auto* keeps open, from the number of boxes and loose nodes each level
    0, 1, 2, … shows: the deepest showing at most ``max_boxes`` (0 when even level 0
    shows more); when that one shows fewer than ``few``, the next, if it shows at most
    ``stretch``, and when it shows at most :data:`AUTO_LONE_BOXES`, the next if it shows
    at most :data:`AUTO_COLUMN_BOXES`. Levels that add nothing (a chain like ``m`` →
    ``model``) are opened through. Reads ``counts`` only as far as it needs."""
    best, shown = 0, None
    for depth, count in enumerate(counts):
        if count > max_boxes:
            if shown is not None and shown < few and count <= stretch:
                return depth
            if shown is not None and shown <= AUTO_LONE_BOXES and count <= AUTO_COLUMN_BOXES:
                return depth
            break
        best, shown = depth, count
    return best


def auto_depth(hierarchy: Hierarchy, max_boxes: int = AUTO_MAX_BOXES) -> int:
    """The level to keep open for the first view (:func:`pick_depth`), counting boxes
    and loose nodes with :func:`visible_count` (0: everything collapsed to the top
    groups)."""
    counts = (visible_count(hierarchy, depth) for depth in range(hierarchy.depth() + 1))
    return pick_depth(counts, max_boxes)


def visible_count(hierarchy: Hierarchy, depth: int) -> int:
    """Boxes plus loose nodes shown when groups deeper than ``depth`` levels are collapsed
    (a group at depth ``depth + 1`` is one box)."""
    count = 0
    stack = [hierarchy.root]
    while stack:
        group = stack.pop()
        if group.depth > depth:
            count += 1
            continue
        count += len(group.own_keys)
        stack.extend(group.children)
    return count
