"""What every command relies on in a parsed model, checked once at load.

protobuf parses many files that are not usable ONNX: names that are bytes (python protobuf
hands invalid UTF-8 in a ``string`` field back as ``bytes``), element types outside the
enum, negative or absurd dimensions, tensors whose data does not fit their dims, nesting
deeper than the code can walk. :func:`model_problem` finds the first such problem and
names where it is; :func:`designer.core.io.load.read_model` refuses the file with it, so
no command (and not the GUI) ever meets one. What onnx's checker decides (dangling
references, unknown operators, cycles…) is not repeated here.

Cost: one Python pass over the graph structure (nodes, value types, tensor headers); no
tensor data is read or copied.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from math import prod

import onnx
from onnx import AttributeProto, TensorProto

from designer.core.errors import one_line
from designer.core.tensor_sizes import DataMismatch, check_data_length, tensor_bytes_needed

#: Graphs nested in graphs (If/Loop/Scan bodies) deeper than this are refused: the walkers
#: of the code recurse per level.
MAX_GRAPH_DEPTH = 100
#: Types nested in types (sequence of map of optional …) deeper than this are refused.
MAX_TYPE_DEPTH = 32
#: A tensor declaring more bytes than this (1 PiB) is refused: no machine holds it, and
#: numpy cannot even describe some of them.
MAX_TENSOR_BYTES = 1 << 50
#: A tensor (or value type) of higher rank is refused (numpy stops at 64 dimensions).
MAX_RANK = 64

_DATA_TYPES = frozenset(TensorProto.DataType.values())
_ATTRIBUTE_TYPES = frozenset(AttributeProto.AttributeType.values())
_UNDEFINED = TensorProto.UNDEFINED
_EXTERNAL = TensorProto.EXTERNAL
#: Bits per element of the fixed-width data types, from tensor_bytes_needed itself (the
#: bytes 8 elements need): the fast path of _Walker.tensor computes the same sizes.
_ELEMENT_BITS = {
    dtype: bits
    for dtype in _DATA_TYPES
    if (bits := tensor_bytes_needed(TensorProto(data_type=dtype, dims=[8]))) is not None
}

_SCALAR_ATTRIBUTES = frozenset(
    {
        AttributeProto.FLOAT,
        AttributeProto.INT,
        AttributeProto.STRING,
        AttributeProto.FLOATS,
        AttributeProto.INTS,
        AttributeProto.STRINGS,
    }
)


_IS_TEXT = str.__instancecheck__


def _all_text(values: Iterable[object]) -> bool:
    return all(map(_IS_TEXT, values))


def _plain_dims(dims: Iterable[onnx.TensorShapeProto.Dimension]) -> bool:
    """No dimension is negative or carries text that is not valid UTF-8 (at most MAX_RANK
    of them)."""
    count = 0
    for dim in dims:
        count += 1
        if dim.dim_value < 0 or dim.dim_param.__class__ is not str or dim.denotation:
            return False
    return count <= MAX_RANK


def _node_where(node: onnx.NodeProto, where: str) -> str:
    return (
        f"{where}: node '{text_of(node.name) or text_of(node.op_type)}' ({text_of(node.op_type)})"
    )


class ModelProblem(Exception):
    """The first thing found that no command can work with; ``str()`` is one line."""


def model_problem(model: onnx.ModelProto) -> str | None:
    """Why ``model`` cannot be worked with (one line naming the node or tensor), or None."""
    return check_model(model).problem


@dataclass(frozen=True)
class ModelCheck:
    """What :func:`check_model` found."""

    problem: str | None  # as model_problem says
    #: Whether a tensor may be stored externally: one was (data_location EXTERNAL), or an
    #: attribute holds tensors or graphs its type does not say (the walk did not look
    #: into those). False is certain: no tensor of the model is external.
    maybe_external: bool


def check_model(model: onnx.ModelProto, *, text_checked: bool = False) -> ModelCheck:
    """:func:`model_problem`, and whether any tensor may be external, in one walk.

    ``text_checked``: every text field is known to be valid UTF-8 already
    (:func:`designer.core.text_check.text_is_utf8` said so of the bytes the model was
    parsed from), so the walk does not read the names of each node and tensor again."""
    walker = _Walker(text_checked)
    try:
        walker.model(model)
    except ModelProblem as exc:
        return ModelCheck(one_line(str(exc)), True)
    return ModelCheck(None, walker.external or walker.unlooked)


def text_of(value: object) -> str:
    """A name for a message: text as is, bytes decoded with replacement characters."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


class _Walker:
    def __init__(self, text_checked: bool = False) -> None:
        self.text_checked = text_checked
        self.external = False  # a tensor with data_location EXTERNAL was seen
        self.unlooked = False  # an attribute of a plain type holds tensors or graphs

    def model(self, model: onnx.ModelProto) -> None:
        where = "the model"
        self.strings(
            where,
            (
                ("producer name", model.producer_name),
                ("producer version", model.producer_version),
                ("domain", model.domain),
                ("doc string", model.doc_string),
            ),
        )
        for opset in model.opset_import:
            self.strings("an opset import", (("domain", opset.domain),))
        for prop in model.metadata_props:
            self.strings("the model's metadata", (("key", prop.key), ("value", prop.value)))
        if model.HasField("graph"):
            self.graph(model.graph, "main graph", 0)
        for fn in model.functions:
            self.function(fn)
        for index, info in enumerate(model.training_info):
            self.graph(info.initialization, f"training_info[{index}] initialization", 0)
            self.graph(info.algorithm, f"training_info[{index}] algorithm", 0)

    # --- text ------------------------------------------------------------------------------
    @staticmethod
    def strings(where: str, fields: Iterable[tuple[str, object]]) -> None:
        for label, value in fields:
            if value.__class__ is not str:
                raise ModelProblem(
                    f"{where}: the {label} {text_of(value)!r} is not valid UTF-8 text"
                )

    @staticmethod
    def names(where: str, label: str, values: Iterable[object]) -> None:
        for index, value in enumerate(values):
            if value.__class__ is not str:
                raise ModelProblem(
                    f"{where}: {label} {index} {text_of(value)!r} is not valid UTF-8 text"
                )

    # --- graphs and functions --------------------------------------------------------------
    def graph(self, graph: onnx.GraphProto, where: str, depth: int) -> None:
        if depth > MAX_GRAPH_DEPTH:
            raise ModelProblem(
                f"{where}: graphs are nested more than {MAX_GRAPH_DEPTH} levels deep"
            )
        self.strings(f"graph '{text_of(graph.name)}'", (("name", graph.name),))
        where = (
            f"graph '{graph.name}'"
            if depth
            else (f"main graph '{graph.name}'" if graph.name else "main graph")
        )
        self.strings(where, (("doc string", graph.doc_string),))
        for group, label in (
            (graph.input, "input"),
            (graph.output, "output"),
            (graph.value_info, "value_info"),
        ):
            prefix = f"{where}: {label}"
            for value in group:
                # The common case inline (a tensor type): this runs for every value.
                if value.name.__class__ is str and value.doc_string.__class__ is str:
                    tensor_type = value.type.tensor_type
                    if value.type.WhichOneof("value") == "tensor_type" and (
                        tensor_type.elem_type in _DATA_TYPES
                        and not value.type.denotation
                        and _plain_dims(tensor_type.shape.dim)
                    ):
                        continue
                self.value_info(value, prefix)
        prefix = f"{where}: initializer"
        for tensor in graph.initializer:
            self.tensor(tensor, prefix)
        for sparse in graph.sparse_initializer:
            self.tensor(sparse.values, f"{where}: sparse initializer")
            self.tensor(sparse.indices, f"{where}: sparse initializer indices")
            self.dims(sparse.dims, f"{where}: sparse initializer '{sparse.values.name}'")
        if self.text_checked:  # only the attributes are left to look at
            for node in graph.node:
                if attributes := node.attribute:
                    for attr in attributes:
                        self.attribute(attr, node, where, depth)
            return
        join = "".join  # raises TypeError on bytes: the fast test that all is text
        for node in graph.node:
            try:
                join((node.name, node.op_type, node.domain, node.overload, node.doc_string))
                join(node.input)
                join(node.output)
            except TypeError:
                self.node(node, where, depth)  # names what is not text
                continue
            attributes = node.attribute
            if attributes:
                for attr in attributes:
                    self.attribute(attr, node, where, depth)

    def function(self, fn: onnx.FunctionProto) -> None:
        self.strings(
            "a local function",
            (("name", fn.name), ("domain", fn.domain), ("overload", fn.overload)),
        )
        where = f"local function '{fn.domain}:{fn.name}'"
        self.strings(where, (("doc string", fn.doc_string),))
        self.names(where, "input", fn.input)
        self.names(where, "output", fn.output)
        self.names(where, "attribute", fn.attribute)
        for opset in fn.opset_import:
            self.strings(where, (("opset domain", opset.domain),))
        for attr in fn.attribute_proto:
            self.attribute(attr, None, f"{where}: default of", 0)
        for value in fn.value_info:
            self.value_info(value, f"{where}: value_info")
        for node in fn.node:
            self.node(node, where, 0)

    def node(self, node: onnx.NodeProto, where: str, depth: int) -> None:
        # The fast test first: messages are only built for a node that fails it.
        if not (
            node.name.__class__ is str
            and node.op_type.__class__ is str
            and node.domain.__class__ is str
            and node.overload.__class__ is str
            and node.doc_string.__class__ is str
            and _all_text(node.input)
            and _all_text(node.output)
        ):
            self._node_text(node, where)
        for attr in node.attribute:
            self.attribute(attr, node, where, depth)

    def _node_text(self, node: onnx.NodeProto, where: str) -> None:
        for label, value in (("name", node.name), ("op_type", node.op_type)):
            if value.__class__ is not str:
                raise ModelProblem(
                    f"{where}: a node's {label} {text_of(value)!r} is not valid UTF-8 text"
                )
        here = _node_where(node, where)
        self.strings(
            here,
            (("domain", node.domain), ("overload", node.overload), ("doc string", node.doc_string)),
        )
        self.names(here, "input", node.input)
        self.names(here, "output", node.output)

    def attribute(
        self, attr: AttributeProto, node: onnx.NodeProto | None, where: str, depth: int
    ) -> None:
        if (
            attr.type in _SCALAR_ATTRIBUTES
            and attr.name.__class__ is str
            and attr.ref_attr_name.__class__ is str
            and attr.doc_string.__class__ is str
        ):  # the common case; what the walk does not look into is noted
            if not self.unlooked and (
                attr.HasField("t")
                or attr.HasField("g")
                or attr.HasField("sparse_tensor")
                or attr.tensors
                or attr.graphs
            ):
                self.unlooked = True
            return

        def here() -> str:
            prefix = _node_where(node, where) if node is not None else where
            return f"{prefix}, attribute '{attr.name}'"

        if not (
            attr.name.__class__ is str
            and attr.ref_attr_name.__class__ is str
            and attr.doc_string.__class__ is str
        ):
            prefix = _node_where(node, where) if node is not None else where
            self.strings(prefix, (("attribute name", attr.name),))
            self.strings(
                here(), (("ref_attr_name", attr.ref_attr_name), ("doc string", attr.doc_string))
            )
        if attr.type not in _ATTRIBUTE_TYPES:
            raise ModelProblem(f"{here()}: attribute type {attr.type} is not one ONNX defines")
        kind = attr.type
        if kind in _SCALAR_ATTRIBUTES:  # (the fast path above takes these)
            self.unlooked = True  # not looked into: cautious
            return
        if attr.HasField("t"):
            self.tensor(attr.t, f"{here()}: tensor")
        for tensor in attr.tensors:
            self.tensor(tensor, f"{here()}: tensor")
        if attr.HasField("sparse_tensor"):
            self.tensor(attr.sparse_tensor.values, f"{here()}: sparse tensor")
            self.tensor(attr.sparse_tensor.indices, f"{here()}: sparse tensor indices")
            self.dims(attr.sparse_tensor.dims, f"{here()}: sparse tensor")
        for sparse in attr.sparse_tensors:
            self.tensor(sparse.values, f"{here()}: sparse tensor")
            self.tensor(sparse.indices, f"{here()}: sparse tensor indices")
        if attr.HasField("tp"):
            self.type(attr.tp, f"{here()}: type", 0)
        for type_proto in attr.type_protos:
            self.type(type_proto, f"{here()}: type", 0)
        if attr.HasField("g"):
            self.graph(attr.g, here(), depth + 1)
        for graph in attr.graphs:
            self.graph(graph, here(), depth + 1)

    # --- values and tensors ----------------------------------------------------------------
    def value_info(self, value: onnx.ValueInfoProto, where: str) -> None:
        if value.name.__class__ is not str:
            raise ModelProblem(f"{where} name {text_of(value.name)!r} is not valid UTF-8 text")
        if value.doc_string.__class__ is not str:
            self.strings(f"{where} '{value.name}'", (("doc string", value.doc_string),))
        if value.HasField("type"):
            try:
                self.type(value.type, "", 0)
            except ModelProblem as exc:  # name the value only now
                raise ModelProblem(f"{where} '{value.name}'{exc}") from None

    def type(self, type_proto: onnx.TypeProto, where: str, depth: int) -> None:
        """Raises ModelProblem with ``where`` + ": …" (``where`` may be empty: the caller
        then puts its own prefix in front)."""
        if depth > MAX_TYPE_DEPTH:
            raise ModelProblem(f"{where}: its type is nested more than {MAX_TYPE_DEPTH} levels")
        if type_proto.denotation.__class__ is not str:
            self.strings(where, (("type denotation", type_proto.denotation),))
        kind = type_proto.WhichOneof("value")
        if kind in ("tensor_type", "sparse_tensor_type"):
            tensor = getattr(type_proto, kind)
            if tensor.elem_type not in _DATA_TYPES:
                raise ModelProblem(
                    f"{where}: element type {tensor.elem_type} is not a data type ONNX defines"
                )
            if tensor.HasField("shape"):
                dims = tensor.shape.dim
                if len(dims) > MAX_RANK:
                    raise ModelProblem(f"{where}: rank {len(dims)} is over {MAX_RANK}")
                for dim in dims:
                    if dim.dim_param.__class__ is not str or dim.denotation.__class__ is not str:
                        self.strings(
                            where,
                            (("dimension name", dim.dim_param), ("denotation", dim.denotation)),
                        )
                    if dim.dim_value < 0:
                        raise ModelProblem(f"{where}: dimension {dim.dim_value} is negative")
        elif kind == "sequence_type":
            self.type(type_proto.sequence_type.elem_type, where, depth + 1)
        elif kind == "optional_type":
            self.type(type_proto.optional_type.elem_type, where, depth + 1)
        elif kind == "map_type":
            if type_proto.map_type.key_type not in _DATA_TYPES:
                raise ModelProblem(
                    f"{where}: map key type {type_proto.map_type.key_type} is not a data type "
                    "ONNX defines"
                )
            self.type(type_proto.map_type.value_type, where, depth + 1)

    @staticmethod
    def dims(dims: Iterable[int], where: str) -> None:
        dims = list(dims)
        if len(dims) > MAX_RANK:
            raise ModelProblem(f"{where}: rank {len(dims)} is over {MAX_RANK}")
        count = 1
        for dim in dims:
            if dim < 0:
                raise ModelProblem(f"{where}: dimension {dim} is negative")
            count *= dim
        if count > MAX_TENSOR_BYTES:
            raise ModelProblem(f"{where}: dims {dims} declare {count:.3g} elements; too large")

    def tensor(self, tensor: TensorProto, where: str) -> None:
        if tensor.data_location == _EXTERNAL:
            self.external = True
        elif (
            tensor.name.__class__ is str
            and tensor.doc_string.__class__ is str
            and not tensor.external_data
            and not tensor.HasField("segment")
        ):  # the common case, in one go: inline data of a fixed-width type that fits
            bits = _ELEMENT_BITS.get(tensor.data_type)
            dims = tensor.dims[:]
            if bits is not None and len(dims) <= MAX_RANK and (not dims or min(dims) >= 0):
                count = prod(dims)
                needed = (count * bits + 7) // 8  # as tensor_bytes_needed says
                if (
                    count <= MAX_TENSOR_BYTES
                    and needed <= MAX_TENSOR_BYTES
                    and needed
                    and needed == len(tensor.raw_data)
                ):
                    return
        self._tensor(tensor, where)

    def _tensor(self, tensor: TensorProto, where: str) -> None:
        if tensor.name.__class__ is not str:
            raise ModelProblem(f"{where} name {text_of(tensor.name)!r} is not valid UTF-8 text")
        here = f"{where} '{tensor.name}'" if tensor.name else where
        self.strings(here, (("doc string", tensor.doc_string),))
        for entry in tensor.external_data:
            self.strings(
                here, (("external data key", entry.key), ("external data value", entry.value))
            )
        if tensor.data_type not in _DATA_TYPES or tensor.data_type == _UNDEFINED:
            raise ModelProblem(f"{here}: data type {tensor.data_type} is not one ONNX defines")
        self.dims(tensor.dims, here)
        needed = tensor_bytes_needed(tensor)
        if needed is not None and needed > MAX_TENSOR_BYTES:
            raise ModelProblem(
                f"{here}: dims {list(tensor.dims)} need {needed:.3g} bytes; too large"
            )
        if tensor.HasField("segment"):
            return  # a segment of a larger tensor: its data covers only part of the dims
        try:
            check_data_length(tensor, here, needed)
        except DataMismatch as exc:
            raise ModelProblem(str(exc)) from None
