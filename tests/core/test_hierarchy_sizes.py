"""Hierarchy.size and Hierarchy.info count every group's nodes and parameters (elements and
bytes of the initializers its nodes read, each once) as a plain reference computation does,
on every shared export and on the bench model, whichever of the two is asked first and
whatever level is asked before (the per-initializer sizes are shared between groups)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from designer.core.document import Document
from designer.core.hierarchy import Group, Hierarchy, build_hierarchy
from designer.core.io.load import open_document
from designer.core.tensor_sizes import tensor_nbytes
from tests.helpers.shared import MODELS, ROOT


def reference(doc: Document, hierarchy: Hierarchy, group: Group) -> tuple[int, int, int]:
    scope = doc.scope(hierarchy.scope_id)
    inits = {t.name: t for t in getattr(scope.proto, "initializer", ())}
    keys = [k for g in group.walk() for k in g.own_keys]
    read = {name for key in keys for name in scope.node(key).input}
    params = [inits[name] for name in read if name in inits]
    elements = 0
    for tensor in params:
        count = 1
        for dim in tensor.dims:
            count *= dim
        elements += count
    return len(keys), elements, sum(tensor_nbytes(t) for t in params)


def _check(doc: Document) -> int:
    checked = 0
    for scope in list(doc.scopes()):
        sizes_first = build_hierarchy(doc, scope.id)
        groups = sorted(sizes_first.root.walk(), key=lambda g: -g.depth)  # deepest first
        expected = {g.id: reference(doc, sizes_first, g) for g in groups}
        assert {g.id: sizes_first.size(g) for g in groups} == expected
        info_first = build_hierarchy(doc, scope.id)
        for group in reversed(list(info_first.root.walk())):  # leaves last
            info = info_first.info(group)
            assert (info.node_count, info.param_count, info.param_bytes) == expected[group.id]
            assert info_first.size(group) == expected[group.id]
            checked += 1
    return checked


@pytest.mark.parametrize("path", sorted(MODELS.glob("*.onnx")), ids=lambda p: p.name)
def test_shared_exports_count_like_the_reference(path: Path) -> None:
    assert _check(open_document(path)) > 1


def test_bench_model_counts_like_the_reference() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from bench_hierarchy import scoped_model
    finally:
        sys.path.remove(str(ROOT / "bench"))
    doc = Document(scoped_model(2_000, metadata=False))
    assert _check(doc) == 1 + 1 + 1 + 20 + 500
