"""The module path of a node, as the exporters record it: the dynamo exporter's
``pkg.torch.onnx.name_scopes`` node metadata, or the ``/``-separated prefix of a
TorchScript-exported node's name (``/m/model/layers.3/self_attn/q_proj/MatMul``)."""

from __future__ import annotations

import ast

import onnx

#: Node metadata key of the dynamo exporter's module path.
NAME_SCOPES_KEY = "pkg.torch.onnx.name_scopes"


def scope_path(node: onnx.NodeProto) -> tuple[str, ...]:
    """The module path of ``node``: from its ``pkg.torch.onnx.name_scopes`` metadata when it
    has one (each entry made relative to its parent: ``m.model.layers.2`` → ``layers.2``),
    else from the ``/``-separated prefix of its name; empty for a top-level node."""
    if node.metadata_props:
        for prop in node.metadata_props:
            if prop.key == NAME_SCOPES_KEY:
                return name_scopes_path(prop.value)
    return name_path(node.name)


_METADATA_CACHE: dict[str, tuple[str, ...]] = {}
#: The module path of a name_scopes value's head (the value up to its last ``,``) when
#: :func:`name_scopes_path` has parsed one with that head already, else None.
known_path = _METADATA_CACHE.get


def name_scopes_path(value: str) -> tuple[str, ...]:
    """The module path in a ``pkg.torch.onnx.name_scopes`` value (``()`` when it has none
    or is not a Python list literal). Cached by the value up to its last ``,``: what
    follows is the node's own name, which the path does not depend on."""
    # "['', 'm', 'm.model', 'm.model.layers.2', 'view_11']": the root module is '' and the
    # last entry is the node's own (fx) name. Lists that do not start at the root module
    # (e.g. nodes added by a hook) have no module path.
    cut = value.rfind(",")  # (designer.core.node_meta looks the cache up the same way)
    head = value[:cut] if cut >= 0 else ""
    cached = _METADATA_CACHE.get(head)
    if cached is not None:
        return cached
    entries: object = _plain_entries(value)
    if entries is None:
        try:
            entries = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return ()
    if not isinstance(entries, list) or not entries or entries[0] != "":
        path: tuple[str, ...] = ()
    else:
        segments = []
        previous = ""
        for entry in entries[1:-1]:
            text = str(entry)
            segment = (
                text[len(previous) + 1 :] if previous and text.startswith(previous + ".") else text
            )
            if segment:
                segments.append(segment)
            previous = text
        path = tuple(segments)
    if len(_METADATA_CACHE) > 100_000:
        _METADATA_CACHE.clear()
    _METADATA_CACHE[head] = path
    return path


def _plain_entries(value: str) -> list[str] | None:
    """The entries of ``value`` when it is ``repr`` of a list of plain strings (each in
    single quotes, holding no quote, backslash, line break or NUL: what the exporter
    writes), else None. For such a value ``ast.literal_eval`` gives the same list, ~10x
    slower."""
    if len(value) < 4 or not value.startswith("['") or not value.endswith("']"):
        return None
    inner = value[2:-2]
    if '"' in inner or "\\" in inner or "\n" in inner or "\r" in inner or "\0" in inner:
        return None
    parts = inner.split("', '")
    if inner.count("'") != 2 * (len(parts) - 1):  # a quote other than the separators'
        return None
    return parts


def name_path(name: str) -> tuple[str, ...]:
    cut = name.rfind("/")
    if cut <= 0:
        return ()
    parts = name[:cut].split("/")
    if "" in parts:
        return tuple(filter(None, parts))
    return tuple(parts)


def common_path(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    """The longest module path both ``a`` and ``b`` lie in (their common leading segments)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]
