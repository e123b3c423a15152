"""Example transform plug-in: remove every doc string from a model.

Exporters copy source lines, stack traces and comments into ``doc_string`` fields; they make
the file larger and leak paths of the machine that exported it. This transform clears them
in the model, its graphs (subgraphs of If/Loop/Scan too), nodes, attributes, value infos,
initializers and local functions. Install it with an entry point in a package's
``pyproject.toml``::

    [project.entry-points."onnx_designer.transforms"]
    strip-doc-strings = "strip_doc_strings:StripDocStrings"

Then it is in Tools > Global Model Modification > Strip Doc Strings… and runs as
``onnx-designer transform strip-doc-strings IN OUT``.

A transform plug-in has ``title``, ``description`` and ``run(model, base_dir)`` returning the
new model (it gets a copy of the document's model, so changing it in place is fine).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

import onnx

from designer.core.walk import iter_graphs

logger = logging.getLogger(__name__)


def _clear(items: Iterable[object]) -> int:
    cleared = 0
    for item in items:
        if getattr(item, "doc_string", ""):
            item.doc_string = ""  # type: ignore[attr-defined]
            cleared += 1
    return cleared


class StripDocStrings:
    title = "Strip Doc Strings"
    description = "Remove the doc strings of the model, its graphs, nodes and functions"

    def run(self, model: onnx.ModelProto, base_dir: Path | None) -> onnx.ModelProto:
        cleared = _clear([model])
        for walked in iter_graphs(model):  # main graph, subgraphs, functions and theirs
            graph = walked.graph
            if isinstance(graph, onnx.GraphProto):
                cleared += _clear(
                    [graph, *graph.input, *graph.output, *graph.value_info, *graph.initializer]
                )
            else:
                cleared += _clear([graph])
            for node in graph.node:
                cleared += _clear([node, *node.attribute])
        logger.info("cleared %d doc string(s)", cleared)
        return model
