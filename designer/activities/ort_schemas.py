"""Schemas of ONNX Runtime's contrib operators (``com.microsoft`` and ``com.microsoft.*``).

onnx does not know these operators; ONNX Runtime exposes its schemas through
``onnxruntime.capi.onnxruntime_pybind11_state.get_all_operator_schema()``. This module turns
them into the core's :class:`~designer.core.schema.OpSchemaInfo` records so the palette, the
Parameters window and the type checker can treat them like ONNX operators.

onnxruntime is imported only inside :func:`load_contrib_schemas` (the first call costs about
0.2 s: the import, ~10 ms to list ~880 schemas, ~20 ms to convert the contrib ones; later calls
reuse the result). Without onnxruntime, or with a build lacking that API, the list is empty
and :func:`contrib_schemas_status` says why, for the caller to log.
"""

from __future__ import annotations

import functools
from typing import Any

import onnx

from designer.core.schema import (
    AttributeInfo,
    FormalParameter,
    OpSchemaInfo,
    ParamOption,
    SchemaRegistry,
    TypeConstraint,
    category_of,
)

__all__ = [
    "contrib_schemas_status",
    "is_contrib_domain",
    "load_contrib_schemas",
    "register_contrib_schemas",
]

_OPTION_NAMES: dict[str, ParamOption] = {
    "Single": "single",
    "Optional": "optional",
    "Variadic": "variadic",
}


def is_contrib_domain(domain: str) -> bool:
    """True for ``com.microsoft`` and its sub-domains (``com.microsoft.nchwc``, …)."""
    return domain == "com.microsoft" or domain.startswith("com.microsoft.")


def _enum_name(value: Any) -> str:
    return str(getattr(value, "name", value))


def _enum_int(value: Any) -> int:
    return int(getattr(value, "value", value))


def _convert_param(param: Any) -> FormalParameter:
    # ORT's binding spells these typeStr/isHomogeneous and has no min_arity (ONNX's default
    # is 1); accept onnx's spelling too in case a later binding aligns with it.
    type_str = getattr(param, "typeStr", None) or getattr(param, "type_str", "")
    homogeneous = getattr(param, "isHomogeneous", None)
    if homogeneous is None:
        homogeneous = getattr(param, "is_homogeneous", True)
    return FormalParameter(
        name=str(param.name),
        type_str=str(type_str),
        allowed_types=tuple(sorted(param.types)),
        option=_OPTION_NAMES.get(_enum_name(param.option), "single"),
        is_homogeneous=bool(homogeneous),
        min_arity=int(getattr(param, "min_arity", 1)),
        description=str(param.description or ""),
    )


def _attribute_default(attr: Any) -> onnx.AttributeProto | None:
    """The default of an ORT schema attribute (serialized ``AttributeProto`` bytes), or None."""
    raw = getattr(attr, "_default_value", None)
    if raw is None:
        raw = getattr(attr, "default_value", None)
    if isinstance(raw, onnx.AttributeProto):
        return raw
    if not raw:
        return None
    proto = onnx.AttributeProto()
    proto.ParseFromString(bytes(raw))
    return proto


def _convert_schema(schema: Any) -> OpSchemaInfo:
    domain = str(schema.domain)
    name = str(schema.name)
    attributes = {
        str(attr_name): AttributeInfo.create(
            op_type=name,
            name=str(attr_name),
            type=_enum_int(attr.type),
            required=bool(attr.required),
            default=_attribute_default(attr),
            description=str(attr.description or ""),
        )
        for attr_name, attr in schema.attributes.items()
    }
    return OpSchemaInfo(
        name=name,
        domain=domain,
        since_version=int(schema.since_version),
        doc=str(schema.doc or ""),
        inputs=tuple(_convert_param(p) for p in schema.inputs),
        outputs=tuple(_convert_param(p) for p in schema.outputs),
        attributes=attributes,
        min_input=int(schema.min_input),
        max_input=int(schema.max_input),
        min_output=int(schema.min_output),
        max_output=int(schema.max_output),
        category=category_of(name, domain),
        deprecated=bool(getattr(schema, "deprecated", False)),
        support_level=_enum_name(getattr(schema, "support_level", "COMMON")),
        type_constraints=tuple(
            TypeConstraint(
                type_param_str=str(c.type_param_str),
                allowed_type_strs=tuple(sorted(c.allowed_type_strs)),
                description=str(c.description or ""),
            )
            for c in getattr(schema, "type_constraints", ())
        ),
    )


@functools.cache
def _load() -> tuple[tuple[OpSchemaInfo, ...], str]:
    """Import onnxruntime, convert its contrib schemas once; return them and a status line."""
    try:
        import onnxruntime
        from onnxruntime.capi import onnxruntime_pybind11_state as ort_state
    except ImportError as error:
        return (
            (),
            f"ONNX Runtime contrib operators unavailable: onnxruntime not importable ({error})",
        )
    version = getattr(onnxruntime, "__version__", "?")
    get_all = getattr(ort_state, "get_all_operator_schema", None)
    if get_all is None:
        return (), (
            f"ONNX Runtime contrib operators unavailable: onnxruntime {version} has no "
            "get_all_operator_schema()"
        )
    try:
        raw_schemas = list(get_all())
    except Exception as error:  # a binding failure must not take the editor down
        return (), (
            f"ONNX Runtime contrib operators unavailable: get_all_operator_schema() of "
            f"onnxruntime {version} failed ({type(error).__name__}: {error})"
        )
    infos: list[OpSchemaInfo] = []
    failed: list[str] = []
    for schema in raw_schemas:
        domain = str(getattr(schema, "domain", ""))
        if not is_contrib_domain(domain):
            continue
        try:
            infos.append(_convert_schema(schema))
        except Exception as error:  # one odd schema should not hide all the others
            failed.append(f"{domain}::{getattr(schema, 'name', '?')} ({error})")
    infos.sort(key=lambda info: (info.domain, info.name, info.since_version))
    domains = ", ".join(sorted({info.domain for info in infos})) or "no contrib domain"
    status = (
        f"{len(infos)} ONNX Runtime contrib operator schemas ({domains}) from onnxruntime {version}"
    )
    if failed:
        shown = ", ".join(failed[:5]) + (", …" if len(failed) > 5 else "")
        status += f"; {len(failed)} could not be read: {shown}"
    return tuple(infos), status


def load_contrib_schemas() -> list[OpSchemaInfo]:
    """Every ``com.microsoft``/``com.microsoft.*`` schema of the installed onnxruntime.

    Empty when onnxruntime is missing or lacks the schema API (see
    :func:`contrib_schemas_status`). The first call imports onnxruntime (~0.2 s); later calls
    return a new list over the same cached records.
    """
    return list(_load()[0])


def contrib_schemas_status() -> str:
    """A one-line, human-readable account of what :func:`load_contrib_schemas` found or why
    it found nothing (loads the schemas if not done yet)."""
    return _load()[1]


def register_contrib_schemas(registry: SchemaRegistry) -> int:
    """Add the contrib schemas to ``registry``; return how many were added (0 without ORT)."""
    return registry.add_schemas(load_contrib_schemas())
