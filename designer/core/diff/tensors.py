"""Initializer differences of one graph: added, removed, changed (type, shape, values),
renamed (found through the nodes that read them: see :class:`~designer.core.diff.nodes.Matcher`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import onnx

from designer.core.diff.records import TensorChange, TensorInfo
from designer.core.diff.values import compare_values, tensor_info


def diff_initializers(
    a: Sequence[onnx.TensorProto],
    b: Sequence[onnx.TensorProto],
    renames: Mapping[str, str],
    a_dir: Path | None,
    b_dir: Path | None,
) -> tuple[list[TensorInfo], list[TensorInfo], list[TensorChange]]:
    """(added, removed, changed); ``renames`` maps B names to A names. Each pair's values
    are read and compared once, one pair at a time."""
    by_name_a = {t.name: t for t in a}
    names_b = {t.name for t in b}
    added: list[TensorInfo] = []
    changed: list[TensorChange] = []
    used: set[str] = set()
    for tb in b:
        name_a = tb.name if tb.name in by_name_a else renames.get(tb.name)
        ta = by_name_a.get(name_a) if name_a is not None else None
        if ta is None or name_a in used or (name_a != tb.name and name_a in names_b):
            added.append(tensor_info(tb))
            continue
        used.add(ta.name)
        change = compare_initializer(ta, tb, a_dir, b_dir)
        if change is not None:
            changed.append(change)
    removed = [tensor_info(t) for t in a if t.name not in used]
    return added, removed, changed


def compare_initializer(
    ta: onnx.TensorProto, tb: onnx.TensorProto, a_dir: Path | None, b_dir: Path | None
) -> TensorChange | None:
    """The change between two versions of one initializer, or None when equal."""
    ia, ib = tensor_info(ta), tensor_info(tb)
    if ia.shape != ib.shape:
        return TensorChange(ia, ib, True, None, "shapes differ")
    cmp = compare_values(ta, tb, a_dir, b_dir)
    if not cmp.differ and ia == ib:
        return None
    return TensorChange(ia, ib, cmp.differ, cmp.max_abs_diff, cmp.note)
