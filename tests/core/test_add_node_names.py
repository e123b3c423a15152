"""A node added without a name gets one unique in the whole model (main graph, subgraphs,
functions), as tensor names are: a Relu added in an If branch was named "Relu" like the main
graph's, and the ORT profile report merged the two into one row."""

from __future__ import annotations

from helpers.models import subgraph_model

from designer.core.document import Document
from designer.core.edits.nodes import AddNode
from designer.core.scope import MAIN_SCOPE


def test_an_added_nodes_name_is_unique_across_graphs() -> None:
    doc = Document(subgraph_model())
    branch = next(s for s in doc.scopes() if s.id.steps)
    doc.undo_stack.push(AddNode(branch.id, "Relu"))  # in the If branch: "Relu"
    doc.undo_stack.push(AddNode(MAIN_SCOPE, "Relu"))  # then in the main graph
    inside = {n.name for n in doc.scope(branch.id).proto.node if n.op_type == "Relu"}
    main = {n.name for n in doc.scope(MAIN_SCOPE).proto.node if n.op_type == "Relu"}
    assert inside == {"Relu"} and len(main) == 1 and main.isdisjoint(inside)


def test_an_explicit_name_is_still_checked_only_in_its_graph() -> None:
    doc = Document(subgraph_model())
    branch = next(s for s in doc.scopes() if s.id.steps)
    inner = branch.proto.node[0].name
    doc.undo_stack.push(AddNode(MAIN_SCOPE, "Relu", name=inner))  # ONNX allows it
    assert inner in {n.name for n in doc.scope(MAIN_SCOPE).proto.node}
