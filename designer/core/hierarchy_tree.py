"""How :func:`designer.core.hierarchy.build_hierarchy` finds the groups of a scope: one
pass over its nodes (module path from the node's name_scopes metadata or its name; a
local-function call or a node holding subgraphs is a leaf group of its own), then the
top-level constants exporters hoist out of their modules go back to them. Qt-free.

Cost: each node's protobuf fields are read once (every read makes a new Python object,
the bulk of the time at 100k nodes); module paths are worked out once per distinct name
prefix or name_scopes head; the name_scopes entries come from the node metadata the
document reads once per model change (:meth:`Document.node_metadata`: the view graph has
usually read it already). See ``bench/bench_hierarchy.py``.
"""

from __future__ import annotations

import onnx

from designer.core.document import Document
from designer.core.hierarchy import Group
from designer.core.scope import Scope, ScopeId
from designer.core.scope_path import common_path, name_path
from designer.core.walk import graph_attributes

#: Standard operators holding graph attributes; other domains are checked node by node.
_SUBGRAPH_OPS = frozenset({"If", "Loop", "Scan", "SequenceMap"})
_STANDARD = frozenset({"", "ai.onnx", "ai.onnx.ml"})


def group_tree(doc: Document, scope_id: ScopeId) -> Group:
    """The module, function-call and subgraph groups of ``scope_id`` (no hand groups).
    A node's module path is the one its name_scopes entry gives (read with the node
    metadata, :mod:`designer.core.node_meta`), else it depends only on its name up to the
    last ``/`` (see :func:`designer.core.scope_path.name_path`): its group is looked up by
    that prefix."""
    scope = doc.scope(scope_id)
    root = Group(())
    by_path: dict[tuple[str, ...], Group] = {(): root}
    by_prefix: dict[str, Group] = {}  # name up to its last "/" → group
    functions = {(f.domain, f.name, f.overload) for f in doc.model.functions}
    names = {(f.domain, f.name) for f in doc.model.functions}

    def group_for(path: tuple[str, ...]) -> Group:
        group = by_path.get(path)
        if group is None:
            parent = by_path.get(path[:-1])
            if parent is None:
                parent = group_for(path[:-1])
            group = by_path[path] = Group(path, parent=parent)
            parent.children.append(group)
        return group

    subgraph_ops, standard = _SUBGRAPH_OPS, _STANDARD
    paths = doc.node_metadata(scope_id).paths  # from name_scopes entries, read once
    for key, node, path in zip(scope.keys, scope.proto.node, paths, strict=True):
        if path is None:
            name = node.name
            prefix = name.rpartition("/")[0]  # "" without a "/" or with only a leading one
            group = by_prefix.get(prefix)
            if group is None:
                group = by_prefix[prefix] = group_for(name_path(name))
        else:
            group = by_path.get(path)
            if group is None:
                group = group_for(path)
        op_type = node.op_type
        domain = node.domain
        if names and (domain, op_type) in names:
            fid = (domain, op_type, node.overload)
            if fid in functions:
                group = _leaf(group, node, key, "function", (ScopeId(fid),), by_path)
        elif (op_type in subgraph_ops or domain not in standard) and any(
            True for _ in graph_attributes(node)
        ):
            inner = tuple(doc.subscope_ids(scope_id, key))
            group = _leaf(group, node, key, "subgraph", inner, by_path)
        group.own_keys.append(key)
    if root.own_keys and root.children:
        _adopt_loose(scope, root, by_path)
    return root


def _adopt_loose(scope: Scope, root: Group, by_path: dict[tuple[str, ...], Group]) -> None:
    """Move unscoped top-level nodes that read only initializers (or nothing) — the
    Constant and weight-tying Identity nodes exporters hoist out of their modules — into
    the innermost group holding all their consumers."""
    inits = set(scope.initializer_names())
    loose: dict[str, int] = {}
    for key in root.own_keys:
        node = scope.node(key)
        if all(not n or n in inits for n in node.input) and len(node.output) == 1:
            loose[node.output[0]] = key
    if not loose:
        return
    # the few nodes reading a loose output (the set test runs in C over each node's inputs)
    apart = loose.keys().isdisjoint
    # (a slice, not the container: see designer.core.hierarchy's docstring)
    readers = [(key, node) for key, node in scope.nodes() if not apart(node.input[:])]
    wanted = {key for key, _node in readers}
    where: dict[int, Group] = {}
    for group in root.walk():
        if group.path:
            for key in wanted.intersection(group.own_keys):
                where[key] = group
    target: dict[int, tuple[str, ...]] = {}
    for key, node in readers:
        reader = where.get(key)
        for name in node.input:
            source = loose.get(name)
            if source is None:
                continue
            path = reader.path if reader is not None and reader.kind == "scope" else ()
            if source in target:
                path = common_path(target[source], path)
            target[source] = path
    moved: set[int] = set()
    for key, path in target.items():
        if path:
            by_path[path].own_keys.append(key)
            moved.add(key)
    if moved:
        root.own_keys = [k for k in root.own_keys if k not in moved]


def _leaf(
    parent: Group,
    node: onnx.NodeProto,
    key: int,
    kind: str,
    inner: tuple[ScopeId, ...],
    by_path: dict[tuple[str, ...], Group],
) -> Group:
    label = node.name.rsplit("/", 1)[-1] if node.name else f"{node.op_type}#{key}"
    path = (*parent.path, label)
    while path in by_path:  # two unnamed calls, or a call named like a module scope
        path = (*parent.path, f"{path[-1]}#{key}")
    group = by_path[path] = Group(path, kind, parent, node_key=key, inner_scopes=inner)
    parent.children.append(group)
    return group
