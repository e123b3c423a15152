"""Turns canvas intents (ids and plain values) into core Edits. Nothing here touches Qt or
changes the document: the view pushes the returned edit through the session.

Edits that are one user action (delete a selection, link onto a used input) come back as
one :class:`CompoundEdit`, so one Ctrl+Z undoes them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import onnx

from designer.core.document import Document, Position
from designer.core.edits import (
    AddGraphIO,
    CompoundEdit,
    Edit,
    MoveNodes,
    RemoveGraphIO,
    RemoveNodes,
    SetNodeInput,
    SetNodeOutput,
)
from designer.core.edits.lookup import names_in_use
from designer.core.edits.order import plan_read
from designer.core.errors import EditError
from designer.core.names import unique_name
from designer.core.scope import ScopeId
from designer.core.viewgraph import NodeKind, TerminalState, ViewEdge, ViewGraph

TypeLookup = Callable[[str], onnx.TypeProto | None]


def move_edit(scope_id: ScopeId, positions: Mapping[int, Position], label: str = "") -> Edit:
    edit = MoveNodes(scope_id, positions)  # no merge_id: each drag is its own undo step
    if label:
        edit.label = label
    return edit


def link_edit(
    doc: Document,
    graph: ViewGraph,
    source: tuple[int, int],
    target: tuple[int, int],
    type_of: TypeLookup | None = None,
) -> Edit:
    """Connect output terminal ``source`` (key, slot) to input terminal ``target``.

    An input takes one link: a link already there, or an initializer feeding it, is
    replaced. An unnamed output (optional or the growth terminal) is named first. Linking to
    a graph output makes the graph output that tensor. A link into an earlier node keeps the
    node list sorted (the edit moves nodes, see SetNodeInput). Raises EditError for a link
    that cannot be made (into its own node, output to output, one closing a cycle, …)."""
    scope_id = graph.scope
    src_key, src_slot = source
    dst_key, dst_slot = target
    if src_key == dst_key:
        raise EditError("a node cannot be linked to itself")
    src = graph.node(src_key)
    dst = graph.node(dst_key)
    if src.kind == NodeKind.OUTPUT or dst.kind == NodeKind.INPUT:
        raise EditError("links go from an output (circle) to an input (triangle)")
    if src_slot >= len(src.outputs) or dst_slot >= len(dst.inputs):
        raise EditError("that terminal does not exist any more")
    edits: list[Edit] = []
    tensor = src.outputs[src_slot].tensor
    if not tensor:
        tensor = unique_name(f"{src.name}_out{src_slot}", names_in_use(doc, scope_id))
        edits.append(SetNodeOutput(scope_id, src_key, src_slot, tensor))
    terminal = dst.inputs[dst_slot]
    if terminal.tensor == tensor and terminal.state == TerminalState.LINKED:
        raise EditError(f"'{dst.name}' already takes '{tensor}' there")
    if dst.kind == NodeKind.OUTPUT:
        outputs = doc.scope(scope_id).output_names()
        if tensor in outputs:
            raise EditError(f"'{tensor}' is already a graph output")
        value = onnx.ValueInfoProto(name=tensor)
        known = type_of(tensor) if type_of is not None else None
        old = doc.scope(scope_id).value_info(dst.name)
        if known is not None:
            value.type.CopyFrom(known)
        elif old is not None and old.HasField("type"):
            value.type.CopyFrom(old.type)
        index = outputs.index(dst.name)
        edits += [
            RemoveGraphIO(scope_id, "output", dst.name),
            AddGraphIO(scope_id, "output", value, index),
        ]
        label = f"Make {tensor} graph output"
    else:
        # refuse a cycle here, before the output naming above is applied and undone again
        producer = src_key if src.kind == NodeKind.OP else None
        plan_read(doc, scope_id, dst_key, [tensor], producer=producer)
        edits.append(SetNodeInput(scope_id, dst_key, dst_slot, tensor))
        label = f"Link {src.name} → {dst.name}"
    return edits[0] if len(edits) == 1 else CompoundEdit(label, edits)


def delete_edit(
    doc: Document, graph: ViewGraph, keys: Iterable[int], edges: Iterable[ViewEdge]
) -> Edit | None:
    """Remove nodes ``keys`` (operators, graph inputs/outputs) and links ``edges`` as one
    step: consumers of removed nodes are disconnected, removed links disconnect inputs.
    Returns None when there is nothing to do."""
    scope_id = graph.scope
    keys = [k for k in dict.fromkeys(keys) if graph.has_node(k)]
    ops = [k for k in keys if graph.node(k).kind == NodeKind.OP]
    ios = [graph.node(k) for k in keys if graph.node(k).kind != NodeKind.OP]
    removed = set(keys)
    disconnect: dict[tuple[int, int], None] = {}
    # A value read inside a subgraph (an implicit link) is no input to disconnect: the read
    # stays in the subgraph, which the type checker then flags if the value is gone.
    for edge in graph.edges:
        if edge.source in removed and edge.target not in removed and not edge.implicit:
            disconnect[(edge.target, edge.target_index)] = None
    for edge in edges:
        if edge.target not in removed and not edge.implicit:
            disconnect[(edge.target, edge.target_index)] = None
    edits: list[Edit] = []
    for target, slot in sorted(disconnect, key=lambda ts: (ts[0], -ts[1])):
        if graph.node(target).kind == NodeKind.OP:
            edits.append(SetNodeInput(scope_id, target, slot, ""))
    if ops:
        edits.append(RemoveNodes(scope_id, ops))
    for io in ios:
        if io.kind != NodeKind.OUTER:  # an outer-scope value is only disconnected
            edits.append(RemoveGraphIO(scope_id, io.kind.value, io.name))
    if not edits:
        return None
    parts = []
    if ops or ios:
        n = len(ops) + len(ios)
        parts.append(f"{n} node" + ("s" if n != 1 else ""))
    links = len(edits) - len(ops[:1]) - len(ios)
    if links and not parts:
        parts.append(f"{links} link" + ("s" if links != 1 else ""))
    return CompoundEdit("Delete " + ", ".join(parts), edits)
