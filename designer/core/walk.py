"""The one walker over a model's graphs: the main graph, every subgraph held by a GRAPH or
GRAPHS attribute (If branches, Loop and Scan bodies, ...) at any depth, and local function
bodies with their own subgraphs.

Every piece of code that needs "this graph and everything nested in it" goes through
:func:`iter_graphs` or :func:`iter_nodes` (or, for one level, :func:`graph_attributes`)
instead of recursing over ``attr.g`` / ``attr.graphs`` itself. Bytes of a tensor:
:func:`designer.core.tensor_sizes.tensor_nbytes`.

The walk is depth-first and pre-order, in file order: a graph, then for each of its nodes
(in order) each graph attribute (in order, GRAPHS elements in order). It is lazy: a node's
subgraphs are looked up when the walk moves past the node, so a consumer may replace the
attributes of the node it was just given. Cost: O(nodes + attributes) of what is walked;
no tensor data is touched.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import onnx

Container = onnx.GraphProto | onnx.FunctionProto
Root = onnx.ModelProto | onnx.GraphProto | onnx.FunctionProto | onnx.NodeProto


def graph_attributes(node: onnx.NodeProto) -> Iterator[tuple[str, int, onnx.GraphProto]]:
    """(attribute name, index or -1, graph) for every graph ``node`` holds directly.

    A GRAPH attribute yields index -1; a GRAPHS attribute yields each element with its index.
    An attribute whose ``type`` is unset but holds ``g`` or ``graphs`` counts by what it holds
    (older exporters leave ``type`` at 0)."""
    for attr in node.attribute:
        held = _held(attr)
        if held == onnx.AttributeProto.GRAPH:
            yield attr.name, -1, attr.g
        elif held == onnx.AttributeProto.GRAPHS:
            for i, graph in enumerate(attr.graphs):
                yield attr.name, i, graph


def _held(attr: onnx.AttributeProto) -> int:
    """GRAPH, GRAPHS or 0: what ``attr`` holds (its type, else what is set in it)."""
    if attr.type == onnx.AttributeProto.GRAPH or (attr.HasField("g") and not attr.graphs):
        return onnx.AttributeProto.GRAPH
    if attr.type == onnx.AttributeProto.GRAPHS or attr.graphs:
        return onnx.AttributeProto.GRAPHS
    return 0


def attribute_graphs(attr: onnx.AttributeProto) -> list[onnx.GraphProto]:
    """The graphs one attribute holds, by the rule of :func:`graph_attributes`: ``[g]`` for
    GRAPH, the list for GRAPHS, ``[]`` for any other attribute."""
    held = _held(attr)
    if held == onnx.AttributeProto.GRAPH:
        return [attr.g]
    if held == onnx.AttributeProto.GRAPHS:
        return list(attr.graphs)
    return []


def subgraphs(node: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    """The graphs ``node`` holds directly (one level; see :func:`iter_graphs` for all)."""
    for _attr, _index, graph in graph_attributes(node):
        yield graph


def graph_at(node: onnx.NodeProto, attribute: str, index: int = -1) -> onnx.GraphProto | None:
    """The graph ``node`` holds in ``attribute`` (element ``index`` of a GRAPHS attribute,
    -1 for GRAPH), or None."""
    for name, i, graph in graph_attributes(node):
        if name == attribute and i == index:
            return graph
    return None


def has_subgraphs(node: onnx.NodeProto) -> bool:
    return any(True for _ in graph_attributes(node))


@dataclass(frozen=True)
class Step:
    """One step down: graph attribute ``attribute`` (element ``index``, -1 for GRAPH) of
    ``node``."""

    node: onnx.NodeProto
    attribute: str
    index: int = -1

    @property
    def label(self) -> str:
        """``node/attribute`` or ``node/attribute[i]`` (node: its name, else its op type)."""
        suffix = f"[{self.index}]" if self.index >= 0 else ""
        return f"{self.node.name or self.node.op_type}/{self.attribute}{suffix}"


@dataclass(frozen=True)
class Walked:
    """A graph met by the walk: ``graph`` itself, the local ``function`` whose body it is or
    lies in (None outside functions), and the ``path`` of steps from the start of the walk
    (or from the function body) down to it; an empty path for the graph the walk started at
    and for function bodies."""

    graph: Container
    function: onnx.FunctionProto | None = None
    path: tuple[Step, ...] = ()

    @property
    def owner(self) -> Step | None:
        """The step that holds this graph (None for a root or function body)."""
        return self.path[-1] if self.path else None

    @property
    def depth(self) -> int:
        return len(self.path)

    def label(self, root: str = "main") -> str:
        """``root/node/attr/...`` or ``ƒ name/node/attr/...`` inside a function."""
        head = f"ƒ {self.function.name}" if self.function is not None else root
        return "/".join([head, *(s.label for s in self.path)])


def iter_graphs(root: Root, *, functions: bool = True) -> Iterator[Walked]:
    """Every graph under ``root``, ``root`` itself first when it is a graph or function.

    A model yields its main graph and its subgraphs, then (``functions``) each local function
    body followed by its subgraphs. A node yields only the graphs nested in it."""
    if isinstance(root, onnx.ModelProto):
        yield from _walk(Walked(root.graph))
        if functions:
            for fn in root.functions:
                yield from _walk(Walked(fn, fn))
    elif isinstance(root, onnx.NodeProto):
        yield from _below(root, None, ())
    elif isinstance(root, onnx.FunctionProto):
        yield from _walk(Walked(root, root))
    else:
        yield from _walk(Walked(root))


def nested_graphs(
    root: onnx.GraphProto | onnx.NodeProto, *, include_root: bool = True
) -> Iterator[onnx.GraphProto]:
    """The graphs of :func:`iter_graphs` walked from a graph or node (no function bodies can
    occur there), ``root`` itself first unless ``include_root`` is false."""
    for walked in iter_graphs(root):
        graph = walked.graph
        if isinstance(graph, onnx.GraphProto) and (include_root or walked.path):
            yield graph


def _walk(here: Walked) -> Iterator[Walked]:
    yield here
    for node in here.graph.node:
        yield from _below(node, here.function, here.path)


def _below(
    node: onnx.NodeProto, function: onnx.FunctionProto | None, path: tuple[Step, ...]
) -> Iterator[Walked]:
    for attr, index, graph in graph_attributes(node):
        yield from _walk(Walked(graph, function, (*path, Step(node, attr, index))))


def iter_nodes(
    root: Root | Iterable[onnx.NodeProto], *, functions: bool = True
) -> Iterator[onnx.NodeProto]:
    """Every node under ``root`` (a model, graph, function, node or a list of nodes), each
    followed by the nodes of its subgraphs at any depth. A node given as ``root`` is not
    yielded itself, only what its subgraphs hold; a model's function bodies follow its main
    graph when ``functions``."""
    if isinstance(root, onnx.ModelProto):
        yield from _nodes(root.graph.node)
        if functions:
            for fn in root.functions:
                yield from _nodes(fn.node)
    elif isinstance(root, onnx.NodeProto):
        for graph in subgraphs(root):
            yield from _nodes(graph.node)
    elif isinstance(root, onnx.GraphProto | onnx.FunctionProto):
        yield from _nodes(root.node)
    else:
        yield from _nodes(root)


def _nodes(nodes: Iterable[onnx.NodeProto]) -> Iterator[onnx.NodeProto]:
    for node in nodes:
        yield node
        for graph in subgraphs(node):
            yield from _nodes(graph.node)
