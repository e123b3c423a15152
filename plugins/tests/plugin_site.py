"""Install plug-ins the way pip does, into a temporary site folder: a ``*.dist-info`` with
``METADATA`` and ``entry_points.txt`` beside the plug-in modules. Put the folder on
``sys.path`` (in-process) or ``PYTHONPATH`` (a subprocess) and ``importlib.metadata`` finds
the entry points."""

from __future__ import annotations

import os
from pathlib import Path

import onnx
from onnx import TensorProto, helper

from designer.core.walk import iter_graphs

PLUGINS = Path(__file__).resolve().parents[1]
ROOT = PLUGINS.parent


def install(
    site: Path,
    dist: str,
    groups: dict[str, dict[str, str]],
    modules: dict[str, str] | None = None,
    copies: tuple[str, ...] = (),
) -> Path:
    """Write distribution ``dist`` into ``site``: entry points ``groups`` (group -> name ->
    "module:attr"), module sources ``modules`` (name -> text) and ``copies`` of files from
    plugins/. Returns ``site``."""
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = []
    for group, entries in groups.items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    for name, text in (modules or {}).items():
        (site / f"{name}.py").write_text(text)
    for name in copies:
        (site / name).write_text((PLUGINS / name).read_text())
    return site


def env_with(site: Path) -> dict[str, str]:
    """The environment of a subprocess that sees the plug-ins in ``site``."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}


def documented_model() -> onnx.ModelProto:
    """Relu -> If (its branches have doc strings too), with doc strings everywhere."""
    then = helper.make_graph(
        [helper.make_node("Neg", ["y"], ["t"], doc_string="negate (then)")],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])],
        doc_string="then branch",
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["y"], ["e"], doc_string="copy (else)")],
        "else",
        [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])],
    )
    nodes = [
        helper.make_node("Relu", ["x"], ["y"], name="relu", doc_string="File x.py, line 3"),
        helper.make_node(
            "If", ["c"], ["z"], name="if", then_branch=then, else_branch=other, doc_string="if"
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "documented",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])],
        doc_string="main graph",
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.doc_string = "exported by a test"
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def doc_strings(model: onnx.ModelProto) -> list[str]:
    """Every non-empty doc string of ``model``, its graphs (subgraphs and function bodies
    too) and their nodes."""
    found = [model.doc_string]
    for walked in iter_graphs(model):
        found.append(walked.graph.doc_string)
        found.extend(node.doc_string for node in walked.graph.node)
    return [d for d in found if d]
