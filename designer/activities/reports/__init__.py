"""Profiles parsed into plain tables (Qt-free): ONNX Runtime now, TensorRT later."""

from designer.activities.reports.node_mapping import Mapping, ModelNode, NodeMapper, model_nodes
from designer.activities.reports.ort_profile import (
    NodeStats,
    OrtProfileReport,
    ProfileFormatError,
    parse_ort_profile,
)
from designer.activities.reports.table import Column, Table, report_file_name, write_tables

__all__ = [
    "Column",
    "Mapping",
    "ModelNode",
    "NodeMapper",
    "NodeStats",
    "OrtProfileReport",
    "ProfileFormatError",
    "Table",
    "model_nodes",
    "parse_ort_profile",
    "report_file_name",
    "write_tables",
]
