"""View-only groups made by hand: a named set of nodes of one scope that the canvas, the
Layer Explorer and Find treat like a module scope (it collapses to one box, expands, can be
focused) without any change to the model. Distinct from Group into Local Function, which
rewrites the model.

A hand group sits in the hierarchy (:func:`designer.core.hierarchy.build_hierarchy` calls
:func:`apply_view_groups`) under the innermost group holding all its nodes, kind ``"view"``,
named by the user; a module whose nodes are all in it moves under it (its id gains the
group's name), other nodes leave their module for it. Saved in the layout file
(``groups``, see :mod:`designer.core.io.companion`) by node label.

The groups of a document are kept beside it (a weak table: they die with the document),
in creation order. Qt-free.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from designer.core.document import Document
from designer.core.errors import DesignerError
from designer.core.functions import node_reads
from designer.core.scope import ScopeId
from designer.core.scope_path import common_path

if TYPE_CHECKING:
    from designer.core.hierarchy import Group

#: The kind of a hand-made group in :class:`designer.core.hierarchy.Group`.
VIEW_KIND = "view"


class ViewGroupError(DesignerError):
    """A hand group cannot be made as asked (bad name, no nodes); nothing changed."""


@dataclass(frozen=True, slots=True)
class ViewGroup:
    """A hand group: its name (one path segment) and its nodes (document keys)."""

    name: str
    keys: tuple[int, ...]


_TABLES: WeakKeyDictionary[Document, dict[ScopeId, list[ViewGroup]]] = WeakKeyDictionary()


def view_groups(doc: Document, scope_id: ScopeId) -> list[ViewGroup]:
    """The hand groups of ``scope_id`` in creation order (a copy)."""
    return list(_TABLES.get(doc, {}).get(scope_id, ()))


def all_view_groups(doc: Document) -> dict[ScopeId, list[ViewGroup]]:
    """Every scope's hand groups (copies)."""
    return {s: list(g) for s, g in _TABLES.get(doc, {}).items() if g}


def check_name(doc: Document, scope_id: ScopeId, name: str) -> str:
    """``name`` stripped, or ViewGroupError with a one-line reason."""
    text = name.strip()
    if not text:
        raise ViewGroupError("A view group needs a name")
    if "/" in text:
        raise ViewGroupError(f"A view group name cannot contain '/': {text!r}")
    if any(g.name == text for g in view_groups(doc, scope_id)):
        raise ViewGroupError(f"There is already a view group named {text!r}; choose another name")
    return text


def add_view_group(doc: Document, scope_id: ScopeId, name: str, keys: Iterable[int]) -> ViewGroup:
    """Make hand group ``name`` of nodes ``keys`` (those the scope has); ViewGroupError
    (nothing changed) for a bad name or when none of ``keys`` is a node of the scope."""
    text = check_name(doc, scope_id, name)
    scope = doc.scope(scope_id)
    chosen = tuple(dict.fromkeys(k for k in keys if k >= 0 and scope.has_node(k)))
    if not chosen:
        raise ViewGroupError(
            "Select the nodes to group first (graph inputs and outputs do not count)"
        )
    group = ViewGroup(text, chosen)
    _TABLES.setdefault(doc, {}).setdefault(scope_id, []).append(group)
    return group


def constants_feeding_only(doc: Document, scope_id: ScopeId, keys: Iterable[int]) -> list[int]:
    """The Constant nodes of the scope, not among ``keys``, whose outputs only nodes of
    ``keys`` read (at least one, none a graph output; a value read inside a node's subgraph
    is read by that node): what a hand group of ``keys`` takes along when Constants are not
    drawn, so that a rubber band around a module's drawn nodes groups the whole module.
    O(nodes)."""
    scope = doc.scope(scope_id)
    chosen = set(keys)
    readers: dict[str, set[int]] = {}
    constants: list[tuple[int, list[str]]] = []
    for key, node in scope.nodes():
        for name in node_reads(node):
            readers.setdefault(name, set()).add(key)
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and key not in chosen:
            constants.append((key, [o for o in node.output if o]))
    outputs = set(scope.output_names())
    taken: list[int] = []
    for key, names in constants:
        if not names or not outputs.isdisjoint(names):
            continue
        read = set().union(*(readers.get(n, set()) for n in names))
        if read and read <= chosen:
            taken.append(key)
    return taken


def remove_view_group(doc: Document, scope_id: ScopeId, name: str) -> bool:
    """Drop hand group ``name`` (its nodes go back to their modules); False if none."""
    groups = _TABLES.get(doc, {}).get(scope_id, [])
    kept = [g for g in groups if g.name != name]
    if len(kept) == len(groups):
        return False
    _TABLES[doc][scope_id] = kept
    return True


def set_view_groups(doc: Document, scope_id: ScopeId, groups: Iterable[ViewGroup]) -> None:
    """Replace ``scope_id``'s hand groups (a layout file being read)."""
    _TABLES.setdefault(doc, {})[scope_id] = list(groups)


def apply_view_groups(root: Group, groups: Iterable[ViewGroup]) -> None:
    """Insert hand ``groups`` into the group tree under ``root`` (in order; a later group
    can hold an earlier one). Keys the tree no longer has are skipped; a group left with
    none is not drawn."""
    from designer.core.hierarchy import Group

    for spec in groups:
        where = {k: g for g in root.walk() for k in g.own_keys}
        keys = [k for k in spec.keys if k in where]
        if not keys:
            continue
        chosen = set(keys)
        common = where[keys[0]].path
        for key in keys[1:]:
            common = common_path(common, where[key].path)
        holder = next(g for g in root.walk() if g.path == common)
        while holder.parent is not None and chosen.issuperset(holder.keys()):
            holder = holder.parent  # a whole module chosen: the group wraps it
        taken = {id(g) for g in root.walk() if g.path}  # every existing group
        path = (*holder.path, spec.name)
        names = {g.path for g in holder.children}
        count = 1
        while path in names:
            count += 1
            path = (*holder.path, f"{spec.name} ({count})")
        group = Group(path, VIEW_KIND, holder, view_name=spec.name)
        _take(holder, group, chosen, taken)
        spot = next(
            (i for i, c in enumerate(holder.children) if not chosen.isdisjoint(c.keys())),
            len(holder.children),
        )
        holder.children.insert(spot, group)


def _take(source: Group, group: Group, chosen: set[int], existing: set[int]) -> None:
    """Move the ``chosen`` nodes of ``source``'s subtree into ``group``: whole sub-groups
    when all their nodes are chosen, single nodes otherwise."""
    mine = [k for k in source.own_keys if k in chosen]
    if mine:
        source.own_keys = [k for k in source.own_keys if k not in chosen]
        group.own_keys.extend(mine)
    for child in list(source.children):
        if id(child) not in existing:
            continue
        inside = child.keys()
        if inside and chosen.issuperset(inside):
            source.children.remove(child)
            child.parent = group
            group.children.append(child)
            _repath(child, group.path)
        elif not chosen.isdisjoint(inside):
            _take(child, group, chosen, existing)


def _repath(group: Group, prefix: tuple[str, ...]) -> None:
    group.path = (*prefix, group.name)
    for child in group.children:
        _repath(child, group.path)
