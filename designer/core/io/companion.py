"""The companion layout file: node positions saved next to the model.

File: ``<model file name>.designer.json`` beside the model (``resnet.onnx`` →
``resnet.onnx.designer.json``). Format (JSON, UTF-8)::

    {"format": "onnx-designer-layout", "version": 3,
     "scopes": {"main": {"conv1": [x, y], "#7": [x, y], ...},
                "main/If_0/then_branch": {...},
                "function/local.fn/ScaledAdd/": {...}},
     "collapsed": {"main": ["m/model/layers.0", ...]},
     "groups": {"main": [{"name": "stem", "nodes": ["conv1", "#7", ...]}]}}

Nodes are keyed by name; a node without a name is keyed ``#<index>`` (its position in the
node list); graph inputs and outputs (drawn as nodes) are ``input:NAME`` /
``output:NAME``. Scopes are keyed by the path of node and attribute names that leads to
them. Positions of nodes the model no longer has are dropped on load; nodes without a saved
position are laid out. Writing is atomic (a flushed temporary file, then one rename).

Version 2 adds the optional ``collapsed`` object: per scope, the ids (module paths joined by
``/``, see :mod:`designer.core.hierarchy`) of the module groups the canvas draws as one box.
It is view state, not part of the model. Version 1 files (no ``collapsed``) read as before,
and a version 1 reader ignores the key.

Version 3 adds the optional ``groups`` object: per scope, the view-only groups made by hand
(:mod:`designer.core.view_groups`) in creation order, each its name and its nodes' labels
(keyed like ``scopes``). Nodes the model no longer has are dropped on load, and a group
left without nodes is dropped. Older files read as before; older readers ignore the key.

A hostile or damaged file never reaches the canvas: a coordinate that is not a finite number
of at most :data:`MAX_COORDINATE` in size (``NaN``, ``Infinity``, a 400-digit integer) is an
invalid entry and dropped (that node is laid out afresh), and a file that cannot be parsed
at all (bad JSON, nesting too deep for the parser, a number too long to convert) raises
:class:`LayoutFileError` like any other malformed file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from designer.core.document import Document, Position
from designer.core.errors import DesignerError
from designer.core.io.atomic import write_atomic
from designer.core.scope import Scope, ScopeId
from designer.core.view_groups import ViewGroup, all_view_groups, set_view_groups

FORMAT = "onnx-designer-layout"
VERSION = 3
MAX_COORDINATE = 1e9
"""Largest saved coordinate accepted (in scene units); larger or non-finite ones are dropped."""


class LayoutFileError(DesignerError):
    """The companion file exists but cannot be read; the model opens with a fresh layout."""


def companion_path(model_path: Path) -> Path:
    return model_path.with_name(model_path.name + ".designer.json")


def _node_label(scope: Scope, key: int) -> str:
    node = scope.node(key)
    return node.name or f"#{scope.index_of(key)}"


def scope_label(doc: Document, scope_id: ScopeId) -> str:
    """A path of names for ``scope_id`` that survives reopening (unnamed nodes on the way
    are named by their index)."""
    parts = ["function/" + "/".join(scope_id.function) if scope_id.function else "main"]
    current = ScopeId(scope_id.function)
    for step in scope_id.steps:
        scope = doc.scope(current)
        parts.append(_node_label(scope, step.node_key))
        parts.append(step.attribute if step.index < 0 else f"{step.attribute}[{step.index}]")
        current = current.child(step.node_key, step.attribute, step.index)
    return "/".join(parts)


def positions_to_json(doc: Document) -> dict[str, object]:
    scopes: dict[str, dict[str, list[float]]] = {}
    for scope_id, table in doc.positions.items():
        try:
            scope = doc.scope(scope_id)
            label = scope_label(doc, scope_id)
        except KeyError:
            continue
        if not table:
            continue
        entries = {}
        for key, (x, y) in table.items():
            io = doc.io_entry(key)
            if scope.has_node(key):
                entries[_node_label(scope, key)] = [round(x, 2), round(y, 2)]
            elif io is not None and io[0] == scope_id:
                entries[f"{io[1]}:{io[2]}"] = [round(x, 2), round(y, 2)]
        scopes[label] = entries
    data: dict[str, object] = {"format": FORMAT, "version": VERSION, "scopes": scopes}
    collapsed = {}
    for scope_id, ids in doc.collapsed.items():
        try:
            label = scope_label(doc, scope_id)
        except KeyError:
            continue
        if ids:
            collapsed[label] = sorted(ids)
    if collapsed:
        data["collapsed"] = collapsed
    groups = _groups_to_json(doc)
    if groups:
        data["groups"] = groups
    return data


def save_positions(doc: Document, model_path: Path) -> Path:
    """Write ``doc``'s positions beside ``model_path`` atomically; returns the file path."""
    path = companion_path(model_path)
    data = json.dumps(positions_to_json(doc), indent=1, sort_keys=True)
    write_atomic(path, data.encode("utf-8"), _mode_of(path))
    return path


def _mode_of(path: Path) -> int | None:
    """The existing file's permissions; None for a new file (the usual default)."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return None


def load_positions(doc: Document, model_path: Path) -> int:
    """Read saved positions into ``doc.positions`` (not an edit: this is opening state;
    ``Document.set_positions`` notifies listeners).

    Returns how many nodes got a position; 0 when there is no companion file. Raises
    LayoutFileError when the file exists but is unreadable or malformed.
    """
    return load_positions_noted(doc, model_path)[0]


def load_positions_noted(doc: Document, model_path: Path) -> tuple[int, str | None]:
    """:func:`load_positions`, and a note for the user when the file was written by a newer
    designer (what this one knows is read; saving rewrites the file as :data:`VERSION`,
    without the rest), else None."""
    path = companion_path(model_path)
    if not path.exists():
        return 0, None
    try:
        data = _parse(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LayoutFileError(f"{path}: layout file ignored ({exc})") from None
    restored = apply_layout(doc, data, path)
    version = data.get("version") if isinstance(data, dict) else None
    note = None
    if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
        note = (
            f"{path.name} was written by a newer ONNX Designer (layout version {version}): "
            f"what this version knows of it was read, and saving rewrites it as version "
            f"{VERSION} without the rest"
        )
    return restored, note


def apply_layout(doc: Document, data: object, where: Path) -> int:
    """Give ``doc`` the layout ``data`` (the parsed contents of a layout file, e.g. one a
    recovery entry holds; ``where`` names it in errors): as :func:`load_positions` does
    after reading the file. Raises LayoutFileError when it is not a layout."""
    try:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError("not an onnx-designer layout file")
        scopes = data["scopes"]
        if not isinstance(scopes, dict):
            raise ValueError("'scopes' is not an object")
    except (ValueError, KeyError) as exc:
        raise LayoutFileError(f"{where}: layout file ignored ({exc})") from None
    by_label = {scope_label(doc, s.id): s for s in doc.scopes()}
    restored = 0
    for label, entries in scopes.items():
        scope = by_label.get(label)
        if scope is None or not isinstance(entries, dict):
            continue
        keys_by_label = {_node_label(scope, key): key for key in scope.keys}
        for kind, names in (("input", scope.input_names()), ("output", scope.output_names())):
            for name in names:
                keys_by_label[f"{kind}:{name}"] = doc.io_key(scope.id, kind, name)
        table: dict[int, Position] = {}
        for name, value in entries.items():
            key = keys_by_label.get(name)
            if key is None or not _is_point(value):
                continue
            table[key] = (float(value[0]), float(value[1]))  # finite: _is_point checked
            restored += 1
        doc.set_positions(scope.id, table)  # one POSITIONS event per scope
    collapsed = data.get("collapsed")
    if isinstance(collapsed, dict):
        for label, ids in collapsed.items():
            scope = by_label.get(label)
            if scope is not None and isinstance(ids, list):
                chosen = {i for i in ids if isinstance(i, str) and i}
                if chosen:
                    doc.collapsed[scope.id] = chosen
    groups = data.get("groups")
    if isinstance(groups, dict):
        _groups_from_json(doc, by_label, groups)
    return restored


def _parse(text: str) -> object:
    """The JSON value of ``text``; ValueError (one line, saying why) when it cannot be read,
    also for nesting too deep for the parser and numbers too long to convert."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError("not valid JSON: nested too deeply") from None
    except ValueError:  # an integer literal past Python's digit limit
        raise ValueError("not valid JSON: a number in it is too long") from None


def _is_coordinate(v: object) -> bool:
    """A real number (not a bool) that is finite and at most MAX_COORDINATE in size; the
    comparison is exact for ints, so a 400-digit integer is rejected before float() sees it."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return False
    if isinstance(v, float) and not math.isfinite(v):
        return False
    return abs(v) <= MAX_COORDINATE


def _is_point(value: object) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(_is_coordinate(v) for v in value)


def _groups_to_json(doc: Document) -> dict[str, list[dict[str, object]]]:
    """Version 3 ``groups``: per scope label, each hand group's name and node labels."""
    out: dict[str, list[dict[str, object]]] = {}
    for scope_id, groups in all_view_groups(doc).items():
        try:
            scope = doc.scope(scope_id)
            label = scope_label(doc, scope_id)
        except KeyError:
            continue
        entries: list[dict[str, object]] = []
        for group in groups:
            nodes = [_node_label(scope, k) for k in group.keys if scope.has_node(k)]
            if nodes:
                entries.append({"name": group.name, "nodes": nodes})
        if entries:
            out[label] = entries
    return out


def _groups_from_json(doc: Document, by_label: dict[str, Scope], data: dict[str, object]) -> None:
    """Read version 3 ``groups`` (malformed entries and unknown nodes are skipped)."""
    for label, entries in data.items():
        scope = by_label.get(label)
        if scope is None or not isinstance(entries, list):
            continue
        keys_by_label = {_node_label(scope, key): key for key in scope.keys}
        groups: list[ViewGroup] = []
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            name, nodes = entry.get("name"), entry.get("nodes")
            if not isinstance(name, str) or not name.strip() or "/" in name:
                continue
            name = name.strip()
            if not isinstance(nodes, list) or any(g.name == name for g in groups):
                continue
            keys = tuple(
                keys_by_label[n] for n in nodes if isinstance(n, str) and n in keys_by_label
            )
            if keys:
                groups.append(ViewGroup(name, keys))
        if groups:
            set_view_groups(doc, scope.id, groups)
