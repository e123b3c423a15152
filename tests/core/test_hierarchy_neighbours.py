"""Neighbouring nodes whose groups are easy to confuse give the plain reference's groups
(designer.core.hierarchy_tree.group_tree finds a node's group by its name prefix or its
name_scopes value up to the last comma): prefixes and heads of the same length but other
text, name_scopes entries at other positions than the neighbours' ones, two name_scopes
entries, nodes without metadata or with metadata but no name_scopes between others,
values that do not parse (also followed by one of the same head that does), hook lists and
names without a module; and random runs of such nodes."""

from __future__ import annotations

import random

import onnx
from onnx import TensorProto, helper

from designer.core.document import Document
from designer.core.hierarchy import build_hierarchy
from designer.core.scope_path import _METADATA_CACHE, NAME_SCOPES_KEY
from tests.core.test_hierarchy_equivalence import records, reference

_OTHER = ("namespace", "pkg.torch.onnx.class_hierarchy", "pkg.torch.onnx.fx_node")


def _scopes(*modules: str) -> list[str]:
    """name_scopes entries of nested modules: '', 'm', 'm.a', 'm.a.b', …"""
    out = ["", "m"]
    for module in modules:
        out.append(f"{out[-1]}.{module}")
    return out


def _model(specs: list[tuple[str, list[tuple[str, str]]]]) -> onnx.ModelProto:
    """A chain of Neg nodes, each with a name and metadata entries."""
    nodes = []
    for i, (name, entries) in enumerate(specs):
        node = helper.make_node("Neg", [f"v{i}"], [f"v{i + 1}"], name=name)
        for key, value in entries:
            entry = node.metadata_props.add()
            entry.key, entry.value = key, value
        nodes.append(node)
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info(f"v{len(specs)}", TensorProto.FLOAT, [2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _check(specs: list[tuple[str, list[tuple[str, str]]]]) -> set[str]:
    """The ids of the groups, checked against the reference, with nothing parsed before:
    a value that does not parse takes the path cached for its head by an earlier build
    (see test_hierarchy_equivalence), which the reference does not know."""
    doc = Document(_model(specs))
    expected = reference(doc)
    _METADATA_CACHE.clear()
    assert records(build_hierarchy(doc).root) == expected
    return {record[0] for record in expected}


def test_neighbours_with_same_length_prefixes_and_heads() -> None:
    scopes = NAME_SCOPES_KEY
    specs = [
        ("/a/b/Neg_0", []),
        ("/a/c/Neg_1", []),  # same prefix length, other module
        ("/a/b/Neg_2", []),
        ("/a/bb/Neg", []),
        ("/a/b/", []),
        ("Neg_5", []),  # no module
        ("/Neg_6", []),
        ("//a//b/Neg_7", []),  # empty segments: the same module as /a/b
        ("/a/b/Neg_8", [("other", "x")]),  # metadata without name_scopes: by name
        ("", [(scopes, repr([*_scopes("p"), "n9"]))]),
        ("", [(scopes, repr([*_scopes("q"), "n10"]))]),  # same head length, other module
        ("/x/Neg", [(scopes, repr([*_scopes("p"), "n11"]))]),  # name_scopes wins
        ("/x/Neg", []),  # no metadata between metadata nodes
        ("", [(scopes, repr([*_scopes("p"), "n13"]))]),
        ("", [(scopes, repr([*_scopes("p", "r"), "n14"]))]),
        ("", [(scopes, repr([*_scopes("p"), "n15,x"]))]),  # a comma in the own name
        ("", [(scopes, repr([*_scopes("p"), "n16"]))]),
        ("", [(scopes, "['', 'm', 'm.s', 'does not parse]")]),  # a head of its own
        ("", [(scopes, repr([*_scopes("p"), "n18"]))]),
        ("", [(scopes, "['', 'm', 'm.t', broken]")]),  # does not parse, then its head does
        ("", [(scopes, repr([*_scopes("t"), "n18b"]))]),
        ("", [(scopes, "['_hook', 'n19']")]),  # no module path
        ("", [(scopes, "['_hook', 'n20']")]),
        ("", [(scopes, "['']"), (scopes, repr([*_scopes("p"), "n21"]))]),  # the first counts
        ("", [(scopes, repr([*_scopes("p"), "n22"])), (scopes, "['']")]),
        ("", [*((k, "v") for k in _OTHER), (scopes, repr([*_scopes("p"), "n23"]))]),
        ("", [(scopes, repr([*_scopes("q"), "n24"])), *((k, "v") for k in _OTHER)]),
        ("", [(_OTHER[0], "v"), (scopes, repr([*_scopes("q"), "n25"]))]),  # other position
        ("", [*((k, "v") for k in _OTHER), (scopes, "[]")]),
        ("", [(scopes, "[]")]),
        ("", [(scopes, "['', 'm'")]),  # no closing bracket: its own head
        ("", [(scopes, "x")]),  # no comma at all
        ("", [(scopes, "y")]),
    ]
    assert {"a/b", "a/c", "a/bb", "x", "m/p", "m/q", "m/p/r", "m/t"} <= _check(specs)


def _random_specs(rng: random.Random, count: int) -> list[tuple[str, list[tuple[str, str]]]]:
    modules = ["a", "b", "ab", "ba", "a.b", "layers.1", "layers.2", "layers.10"]
    names = ["/a/b", "/a/c", "/b/a", "/a/bb", "/ab/b", "//a/b", "/a//b", "", "/"]
    out: list[tuple[str, list[tuple[str, str]]]] = []
    while len(out) < count:
        run = rng.randint(1, 6)  # neighbours mostly share a module: runs of one pattern
        kind = rng.random()
        path = rng.sample(modules, rng.randint(0, 3))
        prefix = rng.choice(names)
        extra = rng.sample(_OTHER, rng.randint(0, 3))
        at = rng.randint(0, len(extra))
        for _ in range(run):
            i = len(out)
            name = f"{prefix}/Neg_{i}" if prefix else rng.choice(["", f"Neg_{i}"])
            entries: list[tuple[str, str]] = []
            if kind < 0.6:
                value = repr([*_scopes(*path), f"neg_{i}"])
                if rng.random() < 0.05:
                    value = f"['', 'm', 'broken{i}', neg]"  # does not parse: a head of its own
                elif rng.random() < 0.05:
                    value = rng.choice(["[]", "['']", f"['_hook', 'n{i}']"])
                entries = [(NAME_SCOPES_KEY, value)]
                if rng.random() < 0.1:  # a second entry: the first counts
                    entries.append((NAME_SCOPES_KEY, repr([*_scopes("z"), f"n{i}"])))
                entries[at:at] = [(k, "v") for k in extra]
                if rng.random() < 0.1:
                    entries.reverse()  # the entry at another position than its neighbours'
            elif kind < 0.8:
                entries = [(k, "v") for k in extra]  # metadata without name_scopes
            out.append((name, entries))
    return out


def test_random_neighbours_match_the_reference() -> None:
    rng = random.Random(16)
    for _ in range(4):
        ids = _check(_random_specs(rng, 600))
        assert len(ids) > 20
