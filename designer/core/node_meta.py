"""What the designer reads from node metadata, read once per scope and model change: each
node's module path from the dynamo exporter's ``pkg.torch.onnx.name_scopes`` entry and its
TensorRT precision (``onnx_designer.tensorrt.precision``). Qt-free.

Why one pass: the dynamo exporter writes five entries on every node (``namespace``,
``class_hierarchy``, ``fx_node``, ``name_scopes``, ``stack_trace``), and python protobuf
makes an object of every entry it hands out (about 1 µs each). Reading the entries of a
100,000-node export takes about half a second; the view graph (precision badges), the Layer
Explorer (its precision column) and the module groups each read them when a model opens.
Now the first of them reads them (:meth:`designer.core.document.Document.node_metadata`)
and the others look the answer up until the model changes.

As everywhere in the designer (:func:`designer.core.scope_path.scope_path`,
:func:`designer.core.trt.settings.metadata_value`), the first entry of a key counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from designer.core.scope import Scope
from designer.core.scope_path import NAME_SCOPES_KEY, known_path, name_scopes_path
from designer.core.trt.settings import PRECISION_KEY, known_precision


@dataclass(frozen=True, slots=True)
class NodeMetadata:
    """The metadata of one scope's nodes that the designer reads."""

    #: Parallel to the scope's node keys: the module path in the node's name_scopes entry
    #: (:func:`designer.core.scope_path.name_scopes_path`), None when it has no such entry
    #: (its path then comes from its name).
    paths: list[tuple[str, ...] | None]
    #: Node key → its TensorRT precision, for nodes whose precision entry holds one of
    #: :data:`designer.core.trt.settings.PRECISIONS` read as the build reads it
    #: (:func:`designer.core.trt.settings.known_precision`: ``" FP16"`` → ``"fp16"``), so a
    #: node the build gives a precision shows its badge.
    precisions: dict[int, str]

    def precision(self, key: int) -> str:
        """The precision stored on node ``key`` (``""``: none, or not a known precision)."""
        return self.precisions.get(key, "")


def read_node_metadata(scope: Scope) -> NodeMetadata:
    """One pass over the metadata entries of every node of ``scope``. O(entries)."""
    paths: list[tuple[str, ...] | None] = []
    precisions: dict[int, str] = {}
    append = paths.append
    scopes_key, precision_key = NAME_SCOPES_KEY, PRECISION_KEY
    for key, node in zip(scope.keys, scope.proto.node, strict=True):
        meta = node.metadata_props
        if not meta:
            append(None)
            continue
        path: tuple[str, ...] | None = None
        precision: str | None = None
        # a slice: looping over the field itself ends in a caught IndexError (see
        # designer.core.hierarchy's docstring); every entry is read, for the precision
        for entry in meta[:]:
            name = entry.key
            if name == scopes_key:
                if path is None:  # name_scopes_path's own cache, looked up in place
                    value = entry.value
                    cut = value.rfind(",")
                    path = known_path(value[:cut] if cut >= 0 else "")
                    if path is None:
                        path = name_scopes_path(value)
            elif name == precision_key and precision is None:
                precision = entry.value
        append(path)
        if precision is not None:  # rare: only the nodes given a precision pay for this
            known = known_precision(precision)
            if known is not None:
                precisions[key] = known
    return NodeMetadata(paths, precisions)
