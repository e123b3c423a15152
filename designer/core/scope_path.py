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
                return _metadata_path(prop.value)
    return name_path(node.name)


_METADATA_CACHE: dict[str, tuple[str, ...]] = {}


def _metadata_path(value: str) -> tuple[str, ...]:
    # "['', 'm', 'm.model', 'm.model.layers.2', 'view_11']": the root module is '' and the
    # last entry is the node's own (fx) name. Lists that do not start at the root module
    # (e.g. nodes added by a hook) have no module path.
    head = value.rsplit(",", 1)[0] if "," in value else ""
    cached = _METADATA_CACHE.get(head)
    if cached is not None:
        return cached
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
            if previous and text.startswith(previous + "."):
                segments.append(text[len(previous) + 1 :])
            else:
                segments.append(text)
            previous = text
        path = tuple(s for s in segments if s)
    if len(_METADATA_CACHE) > 100_000:
        _METADATA_CACHE.clear()
    _METADATA_CACHE[head] = path
    return path


def name_path(name: str) -> tuple[str, ...]:
    cut = name.rfind("/")
    if cut <= 0:
        return ()
    parts = name[:cut].split("/")
    if "" in parts:
        return tuple(s for s in parts if s)
    return tuple(parts)
