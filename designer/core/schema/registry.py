"""Operator schemas as plain frozen records, and a registry over every known domain/version.

The records (:class:`OpSchemaInfo`, :class:`FormalParameter`, :class:`AttributeInfo`,
:class:`TypeConstraint`) hold only Python values and ``onnx.AttributeProto`` defaults, so the
UI, the type checker and tests can use them without touching ``onnx.defs`` objects.

:class:`SchemaRegistry` indexes ``onnx.defs.get_all_schemas_with_history()`` (about 20 ms for
~660 schemas) and converts a schema to a record only when it is first asked for (about 0.1 ms
each, cached), so building the registry stays well under the 0.5 s budget. Schemas from
elsewhere (ONNX Runtime contrib operators, see ``designer.activities.ort_schemas``) are added
with :meth:`SchemaRegistry.add_schemas`.

ONNX does not list the values a string attribute accepts; :func:`extract_allowed_values` reads
them from the attribute description for the common phrasings and returns ``()`` when unsure.
"""

from __future__ import annotations

import bisect
import functools
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, cast

import onnx
import onnx.defs
import onnx.helper

from designer.core.schema.categories import category_of

__all__ = [
    "UNBOUNDED_ARITY",
    "AttributeInfo",
    "FormalParameter",
    "OpSchemaInfo",
    "ParamOption",
    "SchemaRegistry",
    "TypeConstraint",
    "default_registry",
    "extract_allowed_values",
    "normalize_domain",
    "schema_info_from_onnx",
]

ParamOption = Literal["single", "optional", "variadic"]

#: ``max_input``/``max_output`` of operators with a variadic last parameter (2**31 - 1).
UNBOUNDED_ARITY: Final = 2147483647

_ONNX_DOMAIN_ALIASES: Final = frozenset({"", "ai.onnx"})


def normalize_domain(domain: str) -> str:
    """Return the registry key of ``domain``: ``"ai.onnx"`` and ``""`` both become ``""``."""
    return "" if domain in _ONNX_DOMAIN_ALIASES else domain


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FormalParameter:
    """One formal input or output of an operator schema.

    ``type_str`` is the type or type parameter as written in the schema (``"T"``,
    ``"tensor(int64)"``); ``allowed_types`` the concrete types it admits, sorted
    (``("tensor(double)", "tensor(float)", …)``). A ``"variadic"`` parameter is the last one
    and covers every remaining position, at least ``min_arity`` of them; ``is_homogeneous``
    says whether those positions must share one type.
    """

    name: str
    type_str: str
    allowed_types: tuple[str, ...]
    option: ParamOption
    is_homogeneous: bool
    min_arity: int
    description: str


@dataclass(frozen=True, slots=True)
class TypeConstraint:
    """A type parameter of a schema (``"T"``) and the types it may be bound to."""

    type_param_str: str
    allowed_type_strs: tuple[str, ...]
    description: str


@dataclass(frozen=True, slots=True)
class AttributeInfo:
    """One attribute of an operator schema.

    ``type`` is an ``onnx.AttributeProto.AttributeType`` value and ``type_name`` its name
    (``"INT"``, ``"FLOATS"``, ``"GRAPH"``). ``default`` is the schema's default as an
    ``AttributeProto`` (``None`` when the schema has none). ``allowed_values`` lists the
    accepted strings of a ``STRING``/``STRINGS`` attribute when the schema's description states
    them clearly (see :func:`extract_allowed_values`), else ``()``: treat it as the set of
    known choices, not as a proof that other strings are invalid.
    """

    name: str
    type: int
    type_name: str
    required: bool
    default: onnx.AttributeProto | None = field(hash=False)
    description: str
    allowed_values: tuple[str, ...] = ()

    @classmethod
    def create(
        cls,
        op_type: str,
        name: str,
        type: int,
        required: bool,
        default: onnx.AttributeProto | None,
        description: str,
    ) -> AttributeInfo:
        """Build a record, filling ``type_name`` and ``allowed_values`` (a few regex scans).

        A ``default`` whose type is ``UNDEFINED`` (how ONNX says "no default") becomes None.
        """
        if default is not None and default.type == onnx.AttributeProto.UNDEFINED:
            default = None
        try:
            type_name = onnx.AttributeProto.AttributeType.Name(type)
        except ValueError:
            type_name = f"UNKNOWN({type})"
        allowed: tuple[str, ...] = ()
        if type in (onnx.AttributeProto.STRING, onnx.AttributeProto.STRINGS):
            default_text = _default_string(default)
            allowed = extract_allowed_values(op_type, name, description, default_text)
        return cls(
            name=name,
            type=type,
            type_name=type_name,
            required=required,
            default=default,
            description=description,
            allowed_values=allowed,
        )

    @property
    def default_value(self) -> Any:
        """The default as a Python value (``onnx.helper.get_attribute_value``), or None."""
        if self.default is None:
            return None
        return onnx.helper.get_attribute_value(self.default)


@dataclass(frozen=True, slots=True)
class OpSchemaInfo:
    """One version of one operator: its formal inputs/outputs, attributes and arity.

    ``since_version`` is the opset version that introduced this form; the schema applies to
    every opset from there up to the next version of the same operator. ``min_input`` …
    ``max_output`` count actual positions (``UNBOUNDED_ARITY`` for variadic ones).
    ``deprecated`` marks a schema that only records the removal of an operator (e.g.
    ``Upsample`` from opset 10). ``support_level`` is ``"COMMON"`` or ``"EXPERIMENTAL"``.
    """

    name: str
    domain: str
    since_version: int
    doc: str
    inputs: tuple[FormalParameter, ...]
    outputs: tuple[FormalParameter, ...]
    attributes: Mapping[str, AttributeInfo] = field(hash=False)
    min_input: int
    max_input: int
    min_output: int
    max_output: int
    category: str
    deprecated: bool = False
    support_level: str = "COMMON"
    type_constraints: tuple[TypeConstraint, ...] = ()

    @property
    def qualified_name(self) -> str:
        """``"Conv"`` for the ONNX domain, ``"com.microsoft::FusedConv"`` otherwise."""
        return self.name if not self.domain else f"{self.domain}::{self.name}"

    def attribute(self, name: str) -> AttributeInfo | None:
        """The attribute called ``name``, or None."""
        return self.attributes.get(name)

    @property
    def required_attributes(self) -> tuple[AttributeInfo, ...]:
        """The attributes a node must set, in schema order."""
        return tuple(a for a in self.attributes.values() if a.required)

    def input_param(self, index: int) -> FormalParameter | None:
        """The formal input behind actual input position ``index`` (0-based), or None.

        A variadic last parameter covers every position from its own onwards; positions past
        the formal list of a non-variadic schema, and negative ones, give None.
        """
        return _param_at(self.inputs, index)

    def output_param(self, index: int) -> FormalParameter | None:
        """The formal output behind actual output position ``index``, or None (as inputs)."""
        return _param_at(self.outputs, index)

    def is_input_optional(self, index: int) -> bool:
        """True when input ``index`` is an ``optional`` formal parameter (may be left ``""``).

        Positions of a variadic parameter are not reported optional: a variadic list can be
        shorter (down to ``min_arity``) but its entries cannot be skipped.
        """
        param = self.input_param(index)
        return param is not None and param.option == "optional"

    def is_input_variadic(self, index: int) -> bool:
        """True when input ``index`` falls on the variadic last parameter."""
        param = self.input_param(index)
        return param is not None and param.option == "variadic"

    def is_output_optional(self, index: int) -> bool:
        """True when output ``index`` is an ``optional`` formal parameter."""
        param = self.output_param(index)
        return param is not None and param.option == "optional"

    def is_output_variadic(self, index: int) -> bool:
        """True when output ``index`` falls on the variadic last parameter."""
        param = self.output_param(index)
        return param is not None and param.option == "variadic"


def _param_at(params: tuple[FormalParameter, ...], index: int) -> FormalParameter | None:
    if index < 0 or not params:
        return None
    if index < len(params):
        return params[index]
    last = params[-1]
    return last if last.option == "variadic" else None


# --------------------------------------------------------------------------------------------
# Allowed values of string attributes
# --------------------------------------------------------------------------------------------

#: Attributes whose values are the same on every operator that has them (and whose contrib
#: copies often have no description at all).
_BY_ATTRIBUTE: Final[dict[str, tuple[str, ...]]] = {
    "auto_pad": ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"),
}

#: Values stated in a form the patterns below do not read ("`up`: …, `down`: …").
_BY_OPERATOR: Final[dict[tuple[str, str], tuple[str, ...]]] = {
    ("DepthToSpace", "mode"): ("DCR", "CRD"),
    ("SpaceToDepth", "mode"): ("DCR", "CRD"),
    ("Cast", "round_mode"): ("up", "down", "nearest"),
    ("CastLike", "round_mode"): ("up", "down", "nearest"),
}

#: Phrases that introduce a list of values; the list must follow right after.
_LIST_INTRO: Final = re.compile(
    r"""
    (?:must|should|can|could)\s+be\s+(?:either|one\s+of|exactly)\b:?
    | \bone\s+of\b:?
    | \b(?:allowed|valid|supported)\s+values\s+(?:are|include)\b:?
    | \bsupported\s+modes\s+include\b:?
    | \bmodes\s+are\s+supported\s*:
    | :                                   # "Supported modes: …", "Type of reduction: …"
    """,
    re.IGNORECASE | re.VERBOSE,
)

#: One list item: optional quotes, an identifier, punctuation that some docs put inside the
#: quotes ('NONE,' 'SOFTMAX,'), closing quotes, an optional parenthetical "(default)".
_ITEM: Final = re.compile(
    r"""\s*
    (?P<open>[`"']*)
    (?P<value>[A-Za-z_][A-Za-z0-9_]*)
    (?P<inner>[,.]?)
    (?P<close>[`"']*)
    (?:\s*\([^()]*\))?
    """,
    re.VERBOSE,
)

_SEPARATOR: Final = re.compile(r"\s*(?P<comma>,)?\s*(?P<word>(?:or|and)\b)?\s*", re.IGNORECASE)
_LIST_END: Final = re.compile(r"\s*(?:$|[.;\n])")
_NOT_VALUES: Final = frozenset(
    {"a", "an", "the", "is", "are", "be", "if", "of", "to", "in", "it", "this", "that", "see"}
)


def _read_list(text: str, pos: int) -> tuple[str, ...]:
    """Read ``A, B or C`` / ``'A', 'B'`` / ``"A" (x), and "B" (y).`` starting at ``pos``.

    Returns () unless at least two items are read and the list ends a sentence (``.``, ``;``,
    newline or end of text), so prose after a colon is not mistaken for a list.
    """
    values: list[str] = []
    ended = False  # the last item carried the sentence's full stop: "cubic." or 'PROBIT.'
    while True:
        item = _ITEM.match(text, pos)
        if item is None:
            return ()
        values.append(item["value"])
        pos = item.end()
        if item["inner"] == ".":
            ended = True
            break
        separator = _SEPARATOR.match(text, pos)
        assert separator is not None  # the pattern can match the empty string
        joined = bool(separator["comma"] or separator["word"] or item["inner"] == ",")
        if not joined or separator.end() == pos:
            break
        pos = separator.end()
    if len(values) < 2 or not (ended or _LIST_END.match(text, pos)):
        return ()
    if any(v.lower() in _NOT_VALUES for v in values):
        return ()
    return tuple(dict.fromkeys(values))


def _values_by_attribute_name(attr_name: str, description: str) -> tuple[str, ...]:
    """Values from ``if <attr_name> is "X"`` sentences (Resize coordinate_transformation_mode)."""
    pattern = re.compile(
        rf"""`?{re.escape(attr_name)}`?\s+is\s+[`"']+([A-Za-z_][A-Za-z0-9_]*)[`"']""",
    )
    return tuple(dict.fromkeys(pattern.findall(description)))


def extract_allowed_values(
    op_type: str, attr_name: str, description: str, default: str | None = None
) -> tuple[str, ...]:
    """Return the strings a string attribute accepts, read from its description, or ``()``.

    Known phrasings: "must be either A, B or C", "Must be one of a (default), b, or c",
    "One of 'A,' 'B,' or 'C.'", "Allowed values are 'a' and 'b'", "Three modes: a (default),
    b and c", "Supported modes: `a`(default), `b`", "It can be either "A" (…) or "B" (…)",
    and one sentence per value ``if <attr> is "a"``. A few attributes whose docs use other
    forms are listed by hand. The result is rejected (``()``) when it has fewer than two
    values or when ``default`` is given and not among them. Costs a few regex scans of the
    description (microseconds).
    """
    by_operator = _BY_OPERATOR.get((op_type, attr_name))
    if by_operator is not None:
        return by_operator
    by_attribute = _BY_ATTRIBUTE.get(attr_name)
    if by_attribute is not None:
        return by_attribute
    if not description:
        return ()

    def acceptable(values: tuple[str, ...]) -> bool:
        return len(values) >= 2 and (not default or default in values)

    for intro in _LIST_INTRO.finditer(description):
        values = _read_list(description, intro.end())
        if acceptable(values):
            return values
    values = _values_by_attribute_name(attr_name, description)
    return values if acceptable(values) else ()


def _default_string(default: onnx.AttributeProto | None) -> str | None:
    if default is None or default.type != onnx.AttributeProto.STRING:
        return None
    return default.s.decode("utf-8", errors="replace")


# --------------------------------------------------------------------------------------------
# Conversion from onnx.defs
# --------------------------------------------------------------------------------------------

_OPTION_NAMES: Final[dict[str, ParamOption]] = {
    "Single": "single",
    "Optional": "optional",
    "Variadic": "variadic",
}


def _enum_name(value: object) -> str:
    """``name`` of a pybind11 enum member (onnx's stubs do not declare it)."""
    return str(cast(Any, value).name)


def _enum_int(value: object) -> int:
    """``value`` of a pybind11 enum member (onnx's stubs do not declare it)."""
    return int(cast(Any, value).value)


def _convert_param(param: onnx.defs.OpSchema.FormalParameter) -> FormalParameter:
    return FormalParameter(
        name=param.name,
        type_str=param.type_str,
        allowed_types=tuple(sorted(param.types)),
        option=_OPTION_NAMES.get(_enum_name(param.option), "single"),
        is_homogeneous=bool(param.is_homogeneous),
        min_arity=int(param.min_arity),
        description=param.description or "",
    )


def schema_info_from_onnx(schema: onnx.defs.OpSchema) -> OpSchemaInfo:
    """Convert one ``onnx.defs.OpSchema`` into an :class:`OpSchemaInfo` (about 0.1 ms)."""
    attributes: dict[str, AttributeInfo] = {}
    for name, attr in schema.attributes.items():
        attributes[name] = AttributeInfo.create(
            op_type=schema.name,
            name=name,
            type=_enum_int(attr.type),
            required=bool(attr.required),
            default=attr.default_value,
            description=attr.description or "",
        )
    domain = normalize_domain(schema.domain)
    return OpSchemaInfo(
        name=schema.name,
        domain=domain,
        since_version=int(schema.since_version),
        doc=schema.doc or "",
        inputs=tuple(_convert_param(p) for p in schema.inputs),
        outputs=tuple(_convert_param(p) for p in schema.outputs),
        attributes=attributes,
        min_input=int(schema.min_input),
        max_input=int(schema.max_input),
        min_output=int(schema.min_output),
        max_output=int(schema.max_output),
        category=category_of(schema.name, domain),
        deprecated=bool(schema.deprecated),
        support_level=_enum_name(schema.support_level),
        type_constraints=tuple(
            TypeConstraint(
                type_param_str=c.type_param_str,
                allowed_type_strs=tuple(sorted(c.allowed_type_strs)),
                description=c.description or "",
            )
            for c in schema.type_constraints
        ),
    )


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------

_Key = tuple[str, str]  # (domain, op_type)
_VersionKey = tuple[str, str, int]  # (domain, op_type, since_version)


class SchemaRegistry:
    """Every operator schema of every domain and version, looked up by opset.

    ``SchemaRegistry()`` indexes the schemas of the installed onnx (about 20 ms) and converts
    each to an :class:`OpSchemaInfo` on first use (cached). ``SchemaRegistry(load_onnx=False)``
    starts empty. Domain ``"ai.onnx"`` is stored and reported as ``""``. Safe to share between
    threads: lookups and additions take one internal lock.
    """

    def __init__(self, schemas: Iterable[OpSchemaInfo] = (), *, load_onnx: bool = True) -> None:
        self._lock = threading.RLock()
        self._versions: dict[_Key, list[int]] = {}
        self._ops_by_domain: dict[str, set[str]] = {}
        self._domain_max: dict[str, int] = {}
        self._pending: dict[_VersionKey, onnx.defs.OpSchema] = {}
        self._infos: dict[_VersionKey, OpSchemaInfo] = {}
        if load_onnx:
            self._load_onnx()
        self.add_schemas(schemas)

    # -- building -----------------------------------------------------------------------------

    def _load_onnx(self) -> None:
        for schema in onnx.defs.get_all_schemas_with_history():
            domain = normalize_domain(schema.domain)
            version = int(schema.since_version)
            self._index(domain, schema.name, version)
            self._pending[(domain, schema.name, version)] = schema
        version_map = getattr(onnx.defs.C, "schema_version_map", None)
        if version_map is not None:
            for domain, (_low, high) in version_map().items():
                self._raise_domain_max(normalize_domain(domain), int(high))

    def _index(self, domain: str, op_type: str, version: int) -> None:
        versions = self._versions.setdefault((domain, op_type), [])
        if version not in versions:
            bisect.insort(versions, version)
        self._ops_by_domain.setdefault(domain, set()).add(op_type)
        self._raise_domain_max(domain, version)

    def _raise_domain_max(self, domain: str, version: int) -> None:
        if version > self._domain_max.get(domain, 0):
            self._domain_max[domain] = version

    def add_schemas(self, schemas: Iterable[OpSchemaInfo]) -> int:
        """Add (or replace, for the same domain, name and version) schemas; return how many.

        For schemas not from onnx, e.g. ONNX Runtime contrib operators. O(n log v).
        """
        count = 0
        with self._lock:
            for info in schemas:
                domain = normalize_domain(info.domain)
                key = (domain, info.name, info.since_version)
                self._index(domain, info.name, info.since_version)
                self._pending.pop(key, None)
                self._infos[key] = info
                count += 1
        return count

    # -- lookups ------------------------------------------------------------------------------

    def _info(self, key: _VersionKey) -> OpSchemaInfo:
        info = self._infos.get(key)
        if info is None:
            info = schema_info_from_onnx(self._pending.pop(key))
            self._infos[key] = info
        return info

    def get(
        self, op_type: str, domain: str = "", opset_version: int | None = None
    ) -> OpSchemaInfo | None:
        """The schema of ``op_type`` that applies at ``opset_version`` of ``domain``, or None.

        That is the newest version with ``since_version <= opset_version`` (the newest of all
        when ``opset_version`` is None). Deprecated schemas are returned too (check
        ``deprecated``). None for an unknown operator, or one newer than the opset.
        O(log v) plus a one-off conversion.
        """
        domain = normalize_domain(domain)
        with self._lock:
            versions = self._versions.get((domain, op_type))
            if not versions:
                return None
            if opset_version is None:
                version = versions[-1]
            else:
                position = bisect.bisect_right(versions, opset_version)
                if position == 0:
                    return None
                version = versions[position - 1]
            return self._info((domain, op_type, version))

    def versions(self, op_type: str, domain: str = "") -> list[int]:
        """Every ``since_version`` known for ``op_type`` in ``domain``, ascending."""
        with self._lock:
            return list(self._versions.get((normalize_domain(domain), op_type), ()))

    def op_types(self, domain: str = "") -> list[str]:
        """Every operator name ever defined in ``domain`` (any version), sorted."""
        with self._lock:
            return sorted(self._ops_by_domain.get(normalize_domain(domain), ()))

    def ops_for(self, opset_imports: Mapping[str, int]) -> list[OpSchemaInfo]:
        """Every operator available to a model with these opset imports, sorted by domain/name.

        For each imported domain, the schema each operator has at the imported version;
        operators not yet defined there or deprecated at that version are left out, and so
        are domains the registry does not know. Converts each schema once (about 25 ms for
        the whole ONNX domain the first time, then O(ops)).
        """
        result: list[OpSchemaInfo] = []
        with self._lock:
            for raw_domain, version in opset_imports.items():
                domain = normalize_domain(raw_domain)
                for op_type in sorted(self._ops_by_domain.get(domain, ())):
                    info = self.get(op_type, domain, version)
                    if info is not None and not info.deprecated:
                        result.append(info)
        result.sort(key=lambda info: (info.domain, info.name))
        return result

    def domains(self) -> dict[str, int]:
        """Every known domain (``""`` for ONNX) with the highest opset version known for it."""
        with self._lock:
            return dict(self._domain_max)

    def has_domain(self, domain: str) -> bool:
        """True when the registry knows ``domain`` (``"ai.onnx"`` counts as ``""``)."""
        with self._lock:
            return normalize_domain(domain) in self._domain_max


@functools.cache
def default_registry() -> SchemaRegistry:
    """The process-wide registry of the installed onnx's schemas, built on first call.

    Contrib schemas added to it (``designer.activities.ort_schemas.register_contrib_schemas``)
    are visible to every later caller.
    """
    return SchemaRegistry()
