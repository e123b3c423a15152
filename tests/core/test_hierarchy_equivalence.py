"""The fast group tree (designer.core.hierarchy.build_hierarchy) equals a plain reference
computation written from the rules: every real export (both exporters) and generated
models with every odd case (function calls, subgraphs, custom-domain graph holders,
metadata without the name_scopes entry, two name_scopes entries, values that do not
parse, empty name segments, hoisted constants). The fast name_scopes parser equals
``ast.literal_eval`` wherever it answers."""

from __future__ import annotations

import ast
import random
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from designer.core.document import Document
from designer.core.hierarchy import Group, build_hierarchy
from designer.core.io.load import open_document
from designer.core.scope import MAIN_SCOPE, ScopeId
from designer.core.scope_path import (
    _METADATA_CACHE,
    NAME_SCOPES_KEY,
    _plain_entries,
    name_scopes_path,
)
from designer.core.walk import graph_attributes
from tests.helpers.shared import MODELS, ROOT

Record = tuple[str, str, str | None, tuple[int, ...], tuple[str, ...], int | None, tuple[str, ...]]


# --- the reference: one plain pass per rule, no caches ------------------------------------
def ref_path(node: onnx.NodeProto) -> tuple[str, ...]:
    """A node's module path: its first name_scopes entry (relative names), else its name."""
    for prop in node.metadata_props:
        if prop.key == NAME_SCOPES_KEY:
            try:
                entries = ast.literal_eval(prop.value)
            except (ValueError, SyntaxError):
                return ()
            if not isinstance(entries, list) or not entries or entries[0] != "":
                return ()
            out: list[str] = []
            previous = ""
            for entry in map(str, entries[1:-1]):
                relative = previous and entry.startswith(previous + ".")
                segment = entry[len(previous) + 1 :] if relative else entry
                if segment:
                    out.append(segment)
                previous = entry
            return tuple(out)
    if node.name.rfind("/") <= 0:
        return ()
    return tuple(s for s in node.name.rsplit("/", 1)[0].split("/") if s)


def reference(doc: Document, scope_id: ScopeId = MAIN_SCOPE) -> list[Record]:
    scope = doc.scope(scope_id)
    functions = {(f.domain, f.name, f.overload) for f in doc.model.functions}
    names = {(f.domain, f.name) for f in doc.model.functions}
    kinds: dict[tuple[str, ...], str] = {(): "scope"}
    children: dict[tuple[str, ...], list[tuple[str, ...]]] = {(): []}
    own: dict[tuple[str, ...], list[int]] = {(): []}
    extra: dict[tuple[str, ...], tuple[int | None, tuple[str, ...]]] = {}

    def add(path: tuple[str, ...], kind: str = "scope") -> None:
        if path not in kinds:
            add(path[:-1])
            kinds[path], children[path], own[path] = kind, [], []
            children[path[:-1]].append(path)

    for key, node in scope.nodes():
        path = ref_path(node)
        add(path)
        fid = (node.domain, node.op_type, node.overload)
        kind = ""
        inner: tuple[ScopeId, ...] = ()
        if fid in functions:
            kind, inner = "function", (ScopeId(fid),)
        elif (node.domain, node.op_type) in names:
            pass  # a call of a function of another overload: an ordinary node
        elif (
            node.op_type in ("If", "Loop", "Scan", "SequenceMap")
            or node.domain not in ("", "ai.onnx", "ai.onnx.ml")
        ) and list(graph_attributes(node)):
            kind, inner = "subgraph", tuple(doc.subscope_ids(scope_id, key))
        if kind:
            label = node.name.rsplit("/", 1)[-1] if node.name else f"{node.op_type}#{key}"
            leaf = (*path, label)
            while leaf in kinds:
                leaf = (*path, f"{leaf[-1]}#{key}")
            add(leaf, kind)
            extra[leaf] = (key, tuple(map(repr, inner)))
            path = leaf
        own[path].append(key)

    # top-level nodes reading only initializers go to the innermost module of all readers
    if own[()] and children[()]:
        inits = set(scope.initializer_names())
        where = {k: p for p, keys in own.items() for k in keys}
        loose = {}
        for key in own[()]:
            node = scope.node(key)
            if all(not n or n in inits for n in node.input) and len(node.output) == 1:
                loose[node.output[0]] = key
        common: dict[int, tuple[str, ...]] = {}
        for key, node in scope.nodes():
            reader = where[key] if kinds[where[key]] == "scope" else ()
            for name in node.input:
                if name in loose:
                    source = loose[name]
                    before = common.get(source, reader)
                    n = 0
                    while n < min(len(before), len(reader)) and before[n] == reader[n]:
                        n += 1
                    common[source] = reader[:n]
        for source, path in common.items():
            if path:
                own[path].append(source)
                own[()].remove(source)

    out: list[Record] = []
    stack = [()]
    while stack:
        path = stack.pop()
        key, inner = extra.get(path, (None, ()))
        parent = "/".join(path[:-1]) if path else None
        kids = tuple("/".join(c) for c in children[path])
        out.append(("/".join(path), kinds[path], parent, tuple(own[path]), kids, key, inner))
        stack.extend(reversed(children[path]))
    return out


def records(root: Group) -> list[Record]:
    return [
        (
            g.id,
            g.kind,
            g.parent.id if g.parent is not None else None,
            tuple(g.own_keys),
            tuple(c.id for c in g.children),
            g.node_key,
            tuple(map(repr, g.inner_scopes)),
        )
        for g in root.walk()
    ]


def check(doc: Document, scope_id: ScopeId = MAIN_SCOPE) -> list[Record]:
    expected = reference(doc, scope_id)
    h = build_hierarchy(doc, scope_id)
    assert records(h.root) == expected
    assert all(g.name == (g.path[-1] if g.path else "") for g in h.root.walk())
    assert sorted(k for g in h.root.walk() for k in g.own_keys) == sorted(doc.scope(scope_id).keys)
    assert records(build_hierarchy(doc, scope_id).root) == expected  # warm caches: the same
    return expected


# --- real exports --------------------------------------------------------------------------
@pytest.mark.parametrize("path", sorted(MODELS.glob("*.onnx")), ids=lambda p: p.name)
def test_real_exports_match_the_reference(path: Path) -> None:
    doc = open_document(path)
    for scope in list(doc.scopes()):
        expected = check(doc, scope.id)
        if path.name.startswith("llama_24l_h64") and scope.id == MAIN_SCOPE:
            ids = {r[0] for r in expected}
            assert {f"m/model/layers.{i}/self_attn/q_proj" for i in range(24)} <= ids


# --- generated odd cases -------------------------------------------------------------------
def _meta(node: onnx.NodeProto, *entries: tuple[str, str]) -> onnx.NodeProto:
    for key, value in entries:
        entry = node.metadata_props.add()
        entry.key, entry.value = key, value
    return node


def _odd_model() -> onnx.ModelProto:
    scopes = NAME_SCOPES_KEY
    f = helper.make_function(
        "local", "Block", ["x"], ["y"], [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_opsetid("", 17)],
    )  # fmt: skip
    branch = helper.make_graph(
        [helper.make_node("Identity", ["h"], ["z"])], "then", [],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])],
    )  # fmt: skip
    w = numpy_helper.from_array(np.ones(2, np.float32), "w")
    n = helper.make_node
    nodes = [
        n("Constant", [], ["k"], name="Constant_0", value_float=1.0),  # hoisted, adopted
        n("Identity", ["w"], ["wt"], name="tied"),  # reads an initializer only
        n("Add", ["x", "w"], ["a"], name="/enc/Add"),
        n("Block", ["a"], ["h"], name="/enc/block", domain="local"),
        n("Block", ["h"], ["h2"], name="/enc/block", domain="local"),  # same label again
        n("Block", ["h2"], ["h3"], domain="local"),  # unnamed call
        n("Block", ["h3"], ["h4"], name="/enc/x", domain="local", overload="other"),
        n("If", ["c"], ["y1"], name="/enc/if", then_branch=branch, else_branch=branch),
        n("Custom", ["y1"], ["y2"], name="/dec//odd", domain="acme", body=branch),
        n("Mul", ["y2", "k"], ["m1"], name="/dec/layers.0/Mul"),
        n("Mul", ["m1", "wt"], ["m2"], name="//dec/layers.1//Mul"),
        _meta(n("Add", ["m2", "w"], ["d1"]), (scopes, "['', 'm', 'm.dec', 'add_1']")),
        _meta(
            n("Add", ["d1", "w"], ["d2"]), ("namespace", "x"), (scopes, "['', 'm', 'm.x, y', 'a']")
        ),
        _meta(n("Neg", ["d2"], ["d3"]), (scopes, "['', 'm', 'm.a,b', 'neg']")),
        _meta(n("Neg", ["d3"], ["d4"]), (scopes, "['', \"m'\", 'neg']")),  # a quote: ast
        _meta(n("Neg", ["d4"], ["d5"]), (scopes, "['', 'zz', broken]")),  # does not parse
        _meta(n("Neg", ["d5"], ["d6"]), (scopes, "['', 'm', 'ok']")),
        _meta(n("Neg", ["d6"], ["d7"], name="/n/Neg"), ("other", "v")),  # falls back to name
        _meta(n("Neg", ["d7"], ["d8"]), (scopes, "['', 'm', 'm.p', 'a']"), (scopes, "['']")),
        _meta(n("Neg", ["d8"], ["d9"]), ("x", "1"), (scopes, "[]"), (scopes, "['', 'q', 'b']")),
        _meta(n("Neg", ["d9"], ["d10"]), (scopes, "['_hook', 'sym_size_int_1']")),
        _meta(n("Neg", ["d10"], ["d11"]), (scopes, "['', 'm', 'm.p', 'm.p.q', 'c']")),
        _meta(n("Neg", ["d11"], ["d12"]), (scopes, "['', 'm', 'm.p', 'c']")),
        _meta(n("Neg", ["d12"], ["y"]), (scopes, "['']")),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [w],
    )
    return helper.make_model(
        graph,
        functions=[f],
        opset_imports=[
            helper.make_opsetid("", 17),
            helper.make_opsetid("local", 1),
            helper.make_opsetid("acme", 1),
        ],
    )


def test_odd_cases_match_the_reference() -> None:
    doc = Document(_odd_model())
    expected = check(doc)
    kinds = {r[0]: r[1] for r in expected}
    own = {r[0]: r[3] for r in expected}
    assert sorted(k for k in kinds.values() if k != "scope") == ["function"] * 3 + ["subgraph"] * 2
    assert kinds["enc/block"] == "function" and kinds["enc/if"] == kinds["dec/odd"] == "subgraph"
    assert "enc/x" not in kinds  # a call of another overload is an ordinary node
    assert {"m/x, y", "m/a,b", "m'", "m/p/q", "m/p", "n", "dec/layers.0", "dec/layers.1"} <= set(
        kinds
    )
    assert "q" not in kinds  # the first name_scopes entry counts
    keys = doc.scope().keys
    assert keys[0] in own["dec/layers.0"] and keys[1] in own["dec/layers.1"]  # adopted
    assert len(own[""]) == 4  # does not parse, hook, "[]", "['']"


@pytest.mark.parametrize("metadata", [False, True], ids=["names", "name_scopes"])
def test_bench_models_match_the_reference(metadata: bool) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from bench_hierarchy import scoped_model
    finally:
        sys.path.remove(str(ROOT / "bench"))
    doc = Document(scoped_model(2_000, metadata, dynamo_entries=metadata))
    records_ = check(doc)
    assert len(records_) == 1 + 1 + 1 + 20 + 500  # root, m, model, layers, blocks


# --- the fast name_scopes parser -----------------------------------------------------------
_ALPHABET = ["", "m", "a.b", "layers.3", ".", ",", ", ", "'", '"', "\\", "\n", "\r", "\0", "\t"]
_ALPHABET += ["é", " ", "[", "]", "\u2028", "\x0c", "\x85", "\x1c", "\ud7ff", "🙂"]


def _texts(rng: random.Random) -> list[str]:
    out = []
    for _ in range(3000):
        entries = ["".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 3)))]
        entries += ["".join(rng.choices(_ALPHABET, k=rng.randint(0, 4))) for _ in range(4)]
        text = repr(entries[: rng.randint(0, 5)])
        if rng.random() < 0.3:  # damage it
            i = rng.randrange(len(text) + 1)
            text = text[:i] + rng.choice([*_ALPHABET, "['", "']", "', '"]) + text[i + 1 :]
        out.append(text)
    return out


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # ast on damaged text
def test_plain_entries_agree_with_literal_eval() -> None:
    answered = 0
    for text in _texts(random.Random(16)):
        fast = _plain_entries(text)
        if fast is None:
            continue
        answered += 1
        assert fast == ast.literal_eval(text), text
    assert answered > 200  # the fast path is taken (for plain entries, as exporters write)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # ast on damaged text
def test_name_scopes_path_agrees_with_the_reference() -> None:
    for text in _texts(random.Random(5)):
        # a value that does not parse takes the path of a parsed one with the same text up
        # to its last comma (cached by that): start each one afresh
        _METADATA_CACHE.clear()
        node = _meta(helper.make_node("Relu", ["a"], ["b"]), (NAME_SCOPES_KEY, text))
        assert name_scopes_path(text) == ref_path(node), text
