"""Deferred position shifts (``Document.defer_shift``): nothing changes until the positions
are read; then each shift is applied in order, giving exactly what shifting at once gives.
Applying one token leaves the others pending; replacing the positions drops them; a write
through ``set_positions`` applies them first unless the caller keeps them."""

from __future__ import annotations

import random

from onnx import TensorProto, helper

from designer.core.deferred_shifts import MAX_PENDING
from designer.core.document import ChangeKind, Document, DocumentEvent, Position
from designer.core.edits.nodes import MoveNodes
from designer.core.scope import MAIN_SCOPE


def _doc(count: int = 50) -> Document:
    """A chain of ``count`` Relu nodes whose keys are 1..count, at random positions."""
    nodes = [helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"]) for i in range(count)]
    value = [1, 4]
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, value)],
        [helper.make_tensor_value_info(f"t{count}", TensorProto.FLOAT, value)],
    )
    doc = Document(helper.make_model(graph))
    assert doc.scope().keys == list(range(1, count + 1))
    rng = random.Random(1)
    doc.positions[MAIN_SCOPE] = {
        k: (rng.random() * 100, rng.random() * 100) for k in range(1, count + 1)
    }
    return doc


def _shifted(
    table: dict[int, Position], keys: list[int], shifts: list[tuple[float, float]]
) -> dict[int, Position]:
    """The reference: every shift applied at once, one after the other."""
    out = dict(table)
    for dx, dy in shifts:
        for k in keys:
            x, y = out[k]
            out[k] = (x, y + dy) if dx == 0.0 else (x + dx, y + dy)
    return out


def test_shifts_apply_in_order_when_read() -> None:
    doc = _doc()
    before = dict(doc.positions[MAIN_SCOPE])
    a, b = list(range(1, 11)), list(range(11, 31))
    rng = random.Random(2)
    shifts_a = [(0.0, rng.uniform(-50, 50)) for _ in range(MAX_PENDING + 3)]  # some applied
    shifts_b = [(rng.uniform(-5, 5), rng.uniform(-50, 50)) for _ in range(5)]
    for shift in shifts_a:
        doc.defer_shift(MAIN_SCOPE, "a", lambda: a, *shift)
    for shift in shifts_b:
        doc.defer_shift(MAIN_SCOPE, "b", lambda: b, *shift)
    assert doc.deferred_tokens(MAIN_SCOPE) == ["a", "b"]
    # the full entry "a" was applied on the spot; the rest is pending and not drawn
    assert dict(doc.drawn_positions(MAIN_SCOPE))[b[0]] == before[b[0]]
    expected = _shifted(_shifted(before, a, shifts_a), b, shifts_b)
    assert doc.positions[MAIN_SCOPE] == expected  # read: applied, exactly
    assert doc.deferred_tokens(MAIN_SCOPE) == []


def test_settle_one_token_and_replace_drops() -> None:
    doc = _doc()
    before = dict(doc.positions[MAIN_SCOPE])
    doc.defer_shift(MAIN_SCOPE, "g/1", lambda: [1, 2], 0.0, 10.0)
    doc.defer_shift(MAIN_SCOPE, "g/2", lambda: [3], 0.0, 20.0)
    doc.settle_positions(MAIN_SCOPE, lambda t: t == "g/1")
    drawn = doc.drawn_positions(MAIN_SCOPE)
    assert drawn[1] == (before[1][0], before[1][1] + 10.0) and drawn[3] == before[3]
    assert doc.deferred_tokens(MAIN_SCOPE) == ["g/2"]
    doc.positions = {MAIN_SCOPE: dict(before)}  # replaced as a whole (an edit's revert)
    assert doc.deferred_tokens(MAIN_SCOPE) == [] and doc.positions[MAIN_SCOPE] == before


def test_set_positions_applies_first_unless_kept() -> None:
    doc = _doc()
    events: list[DocumentEvent] = []
    doc.subscribe(events.append)
    before = dict(doc.positions[MAIN_SCOPE])
    doc.defer_shift(MAIN_SCOPE, "g", lambda: [5, 6], 0.0, 7.0)
    assert events == []  # a deferred shift is no event: nothing drawn changes
    doc.set_positions(MAIN_SCOPE, {40: (1.0, 2.0)}, keep_deferred=True)
    assert doc.deferred_tokens(MAIN_SCOPE) == ["g"]
    assert events[-1].kind is ChangeKind.POSITIONS and events[-1].node_keys == {40}
    doc.set_positions(MAIN_SCOPE, {5: (0.0, 0.0)})  # a key it names: applied before
    assert doc.deferred_tokens(MAIN_SCOPE) == []
    assert doc.positions[MAIN_SCOPE][5] == (0.0, 0.0)
    assert doc.positions[MAIN_SCOPE][6] == (before[6][0], before[6][1] + 7.0)


def test_a_move_edit_and_its_undo_see_true_positions() -> None:
    doc = _doc()
    before = dict(doc.positions[MAIN_SCOPE])
    doc.defer_shift(MAIN_SCOPE, "g", lambda: [8, 9], 0.0, 3.5)
    edit = MoveNodes(MAIN_SCOPE, {8: (1.0, 1.0)})
    doc.undo_stack.push(edit)
    assert doc.positions[MAIN_SCOPE][8] == (1.0, 1.0)
    doc.undo_stack.undo()
    assert doc.positions[MAIN_SCOPE][8] == (before[8][0], before[8][1] + 3.5)
    assert doc.positions[MAIN_SCOPE][9] == (before[9][0], before[9][1] + 3.5)
