r"""Print how often each operator type occurs in an ONNX model (a custom tool example).

Register it in ONNX Designer (Tools > Custom Tools… > New):
    Application: the Python interpreter ("Use Python")
    Arguments:   /path/to/op_histogram.py $Model

or from a shell:
    onnx-designer tool add "Op Histogram" "$(command -v python3)" \
        --arguments '/path/to/op_histogram.py $Model'

Usage: python op_histogram.py MODEL [--json]. Counts the main graph, every subgraph (If,
Loop, Scan bodies) and the model's local functions; weights are not loaded.
Exit codes: 0 printed, 2 bad usage or unreadable model.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator

import onnx


def iter_nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    """Every node of ``graph`` and of the subgraphs in its attributes, depth first."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from iter_nodes(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for sub in attr.graphs:
                    yield from iter_nodes(sub)


def histogram(model: onnx.ModelProto) -> Counter[str]:
    """Operator counts keyed ``op`` (default domain) or ``domain::op``."""
    counts: Counter[str] = Counter()
    functions = (n for f in model.functions for n in f.node)
    for node in [*iter_nodes(model.graph), *functions]:
        key = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"
        counts[key] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print an ONNX model's operator histogram.")
    parser.add_argument("model", help="the .onnx file")
    parser.add_argument("--json", action="store_true", help="print a JSON object instead")
    args = parser.parse_args(argv)
    try:
        model = onnx.load(args.model, load_external_data=False)
    except Exception as exc:  # any unreadable file: one line, no traceback
        print(f"op_histogram: cannot read {args.model}: {exc}", file=sys.stderr)
        return 2
    counts = histogram(model)
    if args.json:
        print(json.dumps(dict(counts.most_common()), indent=2))
        return 0
    total = sum(counts.values())
    print(f"{args.model}: {total} node(s), {len(counts)} operator type(s)")
    width = max((len(k) for k in counts), default=0)
    for op, count in counts.most_common():
        bar = "#" * max(1, round(40 * count / max(counts.values())))
        print(f"{op:<{width}}  {count:>6}  {bar}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
