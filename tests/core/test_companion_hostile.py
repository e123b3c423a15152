"""Hostile layout files: non-finite, huge and deeply nested values never crash the loader.

A bad coordinate (NaN, Infinity, -Infinity, a 400-digit integer, beyond 1e9) drops that entry
(the node is laid out afresh) and keeps the good ones beside it; a file that cannot be parsed
at all (deep nesting, an integer past Python's digit limit) is a LayoutFileError, the same
warning path as any other malformed layout file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import onnx
import pytest
from helpers.models import chain_model

from designer.core.document import Document
from designer.core.io import open_document
from designer.core.io.companion import LayoutFileError, companion_path, load_positions
from designer.core.scope import MAIN_SCOPE
from designer.core.view_groups import view_groups

BIG_INT = "1" + "0" * 400


def _model(tmp_path: Path) -> Path:
    path = tmp_path / "m.onnx"
    onnx.save(chain_model(2), path)  # nodes relu0, relu1, add_w; input X
    return path


def _layout_text(main: str, extra: str = "") -> str:
    """A version 3 layout file whose main scope is the raw JSON object text ``main``."""
    return (
        '{"format": "onnx-designer-layout", "version": 3, "scopes": {"main": '
        + main
        + "}"
        + extra
        + "}"
    )


def _names(doc: Document) -> dict[str, tuple[float, float]]:
    """The main scope's restored positions by node name (``input:NAME`` for inputs)."""
    scope = doc.scope()
    out = {}
    for key, pos in doc.positions.get(MAIN_SCOPE, {}).items():
        io = doc.io_entry(key)
        out[f"input:{io[2]}" if io else scope.node(key).name] = pos
    return out


@pytest.mark.parametrize(
    "bad",
    [
        "NaN",
        "Infinity",
        "-Infinity",
        pytest.param(BIG_INT, id="int400"),
        pytest.param("-" + BIG_INT, id="-int400"),
        "1e400",
        "1000000001",
        "-2e9",
    ],
)
@pytest.mark.parametrize("where", ["x", "y"])
def test_bad_coordinate_drops_only_that_entry(tmp_path: Path, bad: str, where: str) -> None:
    path = _model(tmp_path)
    point = f"[{bad}, 5]" if where == "x" else f"[5, {bad}]"
    text = _layout_text('{"relu0": ' + point + ', "relu1": [10, 20], "input:X": [-3.5, 1e9]}')
    json.loads(text)  # Python's json accepts every one of these
    companion_path(path).write_text(text)
    doc = open_document(path)
    assert load_positions(doc, path) == 2
    names = _names(doc)
    assert names == {"relu1": (10.0, 20.0), "input:X": (-3.5, 1e9)}
    for x, y in doc.positions[MAIN_SCOPE].values():
        assert math.isfinite(x) and math.isfinite(y)


@pytest.mark.parametrize("depth", [100_000, 5_000])
@pytest.mark.parametrize("where", ["top", "entry", "collapsed", "groups"])
def test_deep_nesting_is_a_layout_file_error(tmp_path: Path, depth: int, where: str) -> None:
    path = _model(tmp_path)
    deep = "[" * depth + "]" * depth
    if where == "top":
        text = deep
    elif where == "entry":
        text = _layout_text('{"relu0": ' + deep + "}")
    elif where == "collapsed":
        text = _layout_text('{"relu0": [1, 2]}', ', "collapsed": {"main": ' + deep + "}")
    else:
        text = _layout_text(
            '{"relu0": [1, 2]}', ', "groups": {"main": [{"name": "g", "nodes": ' + deep + "}]}"
        )
    companion_path(path).write_text(text)
    doc = open_document(path)
    with pytest.raises(LayoutFileError) as info:
        load_positions(doc, path)
    message = str(info.value)
    assert str(companion_path(path)) in message and "layout file ignored" in message
    assert "nested too deeply" in message and "\n" not in message


def test_integer_past_the_digit_limit_is_a_layout_file_error(tmp_path: Path) -> None:
    path = _model(tmp_path)
    companion_path(path).write_text(_layout_text('{"relu0": [' + "9" * 5000 + ", 1]}"))
    doc = open_document(path)
    with pytest.raises(LayoutFileError) as info:
        load_positions(doc, path)
    assert "a number in it is too long" in str(info.value)
    assert "\n" not in str(info.value)


def test_huge_values_in_collapsed_and_groups_are_skipped(tmp_path: Path) -> None:
    path = _model(tmp_path)
    extra = (
        ', "collapsed": {"main": [NaN, Infinity, ' + BIG_INT + ', "m/a"]}'
        ', "groups": {"main": ['
        '{"name": "bad", "nodes": [NaN, ' + BIG_INT + "]},"
        '{"name": NaN, "nodes": ["relu0"]},'
        '{"name": " g ", "nodes": ["relu0", Infinity, "relu1"]},'
        '{"name": "g", "nodes": ["add_w"]}'
        "]}"
    )
    companion_path(path).write_text(_layout_text('{"relu0": [NaN, 1], "relu1": [4, 5]}', extra))
    doc = open_document(path)
    assert load_positions(doc, path) == 1
    assert _names(doc) == {"relu1": (4.0, 5.0)}
    assert doc.collapsed[MAIN_SCOPE] == {"m/a"}
    keys = doc.scope().keys
    # the second "g" is the same name once stripped: skipped like any duplicate
    assert [(g.name, g.keys) for g in view_groups(doc, MAIN_SCOPE)] == [("g", (keys[0], keys[1]))]
