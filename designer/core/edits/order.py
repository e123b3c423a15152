"""Keeping a scope's node list topologically sorted when an edit makes a node read a value.

A new read (a link, an input switched to another tensor) can make a node read a value that a
later node produces. :func:`plan_read` finds the smallest block move that restores the order
(the producer and what it needs, moved up before the consumer, or the consumer and what
depends on it, moved down after the producer) and refuses a read that would close a cycle,
before anything changes. A :class:`Reorder` applies such a move and reverts it exactly.

A read of a value of an enclosing graph (inside an If/Loop body) is a read of the node that
holds the body, one scope up; the planner follows it there, so a cycle through a subgraph
is refused too. Costs: O(nodes + links) of the scopes involved per plan.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from designer.core.document import ChangeKind, Document, DocumentEvent
from designer.core.errors import EditError
from designer.core.functions import node_reads
from designer.core.scope import Scope, ScopeId

#: Longest loop a cycle message names in full; a longer one shows its first 3 and last 2 nodes.
_PATH_SHOWN = 6


@dataclass(frozen=True)
class Reorder:
    """A new order of one scope's node list (node keys, before and after)."""

    scope_id: ScopeId
    old: tuple[int, ...]
    new: tuple[int, ...]

    @property
    def moved(self) -> frozenset[int]:
        """The keys whose position changed."""
        return frozenset(a for a, b in zip(self.old, self.new, strict=True) if a != b)

    def apply(self, doc: Document) -> None:
        _set_order(doc, self.scope_id, self.old, self.new)
        doc.notify(DocumentEvent(ChangeKind.NODES, self.scope_id, self.moved))

    def revert(self, doc: Document) -> None:
        _set_order(doc, self.scope_id, self.new, self.old)
        doc.notify(DocumentEvent(ChangeKind.NODES, self.scope_id, self.moved))


def _set_order(
    doc: Document, scope_id: ScopeId, current: tuple[int, ...], target: tuple[int, ...]
) -> None:
    """Put the nodes of ``scope_id`` (now in order ``current``) in order ``target``.

    The protobuf messages are moved, not copied (``sort``), so the graphs of nodes holding
    subgraphs keep their identity; the cached scopes below are rebuilt with the same keys."""
    scope = doc.scope(scope_id)
    assert tuple(scope.keys) == current, "the node order changed outside the edit history"
    rank = {key: i for i, key in enumerate(target)}
    keys = iter(current)  # list.sort computes the keys once each, in list order
    scope.proto.node.sort(key=lambda _node: rank[next(keys)])
    doc.restore_keys({scope_id: list(target)})
    doc.invalidate_subscopes(scope_id)


class _Links:
    """The dependencies between the nodes of one scope (by node key)."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.order = list(scope.keys)
        self.producer: dict[str, int] = {}
        for key, node in scope.nodes():
            for out in node.output:
                if out:
                    self.producer[out] = key
        self.users: dict[int, list[int]] = {key: [] for key in self.order}
        self.needs: dict[int, set[int]] = {}
        for key, node in scope.nodes():
            needs = {self.producer[n] for n in node_reads(node) if n in self.producer}
            needs.discard(key)
            self.needs[key] = needs
            for need in needs:
                self.users[need].append(key)

    def label(self, key: int) -> str:
        node = self.scope.node(key)
        return node.name or f"{node.op_type} #{self.scope.index_of(key)}"

    def path(self, start: int, goal: int) -> list[int] | None:
        """Keys of a chain of links from ``start`` down to ``goal``, or None (BFS)."""
        came: dict[int, int | None] = {start: None}
        todo = deque([start])
        while todo:
            key = todo.popleft()
            if key == goal:
                chain: list[int] = []
                step: int | None = key
                while step is not None:
                    chain.append(step)
                    step = came[step]
                return chain[::-1]
            for user in self.users[key]:
                if user not in came:
                    came[user] = key
                    todo.append(user)
        return None

    def _reach(self, start: int, edges: Mapping[int, Iterable[int]], inside: range) -> set[int]:
        """``start`` and the nodes reachable from it along ``edges``, kept to positions in
        ``inside``."""
        index = {k: i for i, k in enumerate(self.order)}
        seen = {start}
        todo = [start]
        while todo:
            for nxt in edges[todo.pop()]:
                if nxt not in seen and index[nxt] in inside:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    def add_read(self, producer: int, consumer: int, note: str = "") -> tuple[int, ...] | None:
        """Make ``consumer`` read an output of ``producer``: the new key order when the
        producer comes later (None when the order stays valid). Raises EditError when the
        link would close a cycle (``note`` says where the read is, for the message)."""
        if producer == consumer:
            raise EditError(f"'{self.label(consumer)}' cannot read its own output{note}")
        loop = self.path(consumer, producer)
        if loop is not None:
            raise EditError(self._cycle_message(loop) + note)
        self.needs[consumer].add(producer)
        self.users[producer].append(consumer)
        j = self.order.index(consumer)
        i = self.order.index(producer)
        if i < j:
            return None
        # Move the producer and what it needs (between the two) up before the consumer, or
        # the consumer and what depends on it (between the two) down after the producer,
        # whichever moves fewer nodes. Neither set can hold the other node: no cycle.
        up = self._reach(producer, self.needs, range(j + 1, i + 1))
        down = self._reach(consumer, self.users, range(j, i))
        block = self.order[j : i + 1]
        if len(up) <= len(down):
            middle = [k for k in block if k in up] + [k for k in block if k not in up]
        else:
            middle = [k for k in block if k not in down] + [k for k in block if k in down]
        self.order[j : i + 1] = middle
        return tuple(self.order)

    def _cycle_message(self, loop: list[int]) -> str:
        """One line naming the loop: consumer → … → producer → consumer."""
        labels = [f"'{self.label(k)}'" for k in loop]
        head = labels[0]
        if len(labels) > _PATH_SHOWN:
            hidden = len(labels) - _PATH_SHOWN + 1
            labels = [*labels[:3], f"… {hidden} more …", *labels[-2:]]
        chain = " → ".join([*labels, head])
        return f"the link would create a cycle: {chain}"


def plan_read(
    doc: Document,
    scope_id: ScopeId,
    consumer: int,
    names: Iterable[str],
    producer: int | None = None,
) -> list[Reorder]:
    """What keeps the node lists sorted once node ``consumer`` of ``scope_id`` reads
    ``names``: one :class:`Reorder` per scope whose order must change (this scope, or an
    enclosing one for a value read from there). ``producer`` names the node that will
    produce every name not produced yet (an output about to be named). Raises EditError
    (naming the loop) when a read would close a cycle. Changes nothing."""
    plans: list[Reorder] = []
    pending = [n for n in dict.fromkeys(names) if n]
    scope: Scope | None = doc.scope(scope_id)
    note = ""
    while pending and scope is not None:
        links = _Links(scope)
        old = tuple(links.order)
        new: tuple[int, ...] | None = None
        defined = set(scope.input_names()) | set(scope.initializer_names())
        outer: list[str] = []
        for name in pending:
            source = links.producer.get(name, producer if name not in defined else None)
            if source is not None:
                new = links.add_read(source, consumer, note) or new
            elif name not in defined:
                outer.append(name)
        if new is not None and new != old:
            plans.append(Reorder(scope.id, old, new))
        if scope.parent is None or not outer:
            break
        step = scope.id.steps[-1]
        consumer = step.node_key  # the node holding this graph reads them
        note = f" (read inside its {step.attribute})"
        producer = None
        pending = outer
        scope = scope.parent
    return plans
