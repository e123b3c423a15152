"""Operator schemas: records, a registry over every domain/version, palette categories.

Built from ``onnx.defs``; contrib operators of ONNX Runtime are added from
``designer.activities.ort_schemas`` (this package never imports onnxruntime).
"""

from designer.core.schema.categories import CATEGORIES, category_of
from designer.core.schema.registry import (
    UNBOUNDED_ARITY,
    AttributeInfo,
    FormalParameter,
    OpSchemaInfo,
    ParamOption,
    SchemaRegistry,
    TypeConstraint,
    default_registry,
    extract_allowed_values,
    normalize_domain,
    schema_info_from_onnx,
)

__all__ = [
    "CATEGORIES",
    "UNBOUNDED_ARITY",
    "AttributeInfo",
    "FormalParameter",
    "OpSchemaInfo",
    "ParamOption",
    "SchemaRegistry",
    "TypeConstraint",
    "category_of",
    "default_registry",
    "extract_allowed_values",
    "normalize_domain",
    "schema_info_from_onnx",
]
