"""From a profile report to canvas overlay values: ONNX node names → document node keys."""

from __future__ import annotations

from typing import Protocol

from designer.activities.reports.ort_profile import OrtProfileReport
from designer.core.document import Document
from designer.core.scope import MAIN_SCOPE


def keys_by_name(doc: Document) -> dict[str, int]:
    """Main-graph node name → node key (unnamed nodes cannot be matched). O(nodes)."""
    scope = doc.scope(MAIN_SCOPE)
    return {
        node.name: key for node, key in zip(scope.proto.node, scope.keys, strict=True) if node.name
    }


class SharesReport(Protocol):
    def onnx_node_share(self) -> dict[str, float]: ...


def overlay_shares(doc: Document, report: SharesReport) -> dict[int, float]:
    """Node key → share of profiled node time (0..1) for the nodes of ``doc`` the report
    maps to (a fused node's time is split evenly over the ONNX nodes it came from). Any
    report with ``onnx_node_share()`` (ONNX Runtime, TensorRT) works."""
    keys = keys_by_name(doc)
    shares: dict[int, float] = {}
    for name, percent in report.onnx_node_share().items():
        key = keys.get(name)
        if key is not None:
            shares[key] = shares.get(key, 0.0) + percent / 100.0
    return shares


def name_overlap(doc: Document, report: OrtProfileReport) -> int:
    """How many profiled node names are node names of ``doc`` (to guess the document)."""
    keys = keys_by_name(doc)
    return sum(1 for node in report.nodes if node.name in keys)
