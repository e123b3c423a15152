"""Malformed models for the fuzz suite, generated from real ones with a seeded generator.

A :class:`Case` is a model file's bytes plus the files beside it (external data, links)
and the names the commands need (a subgraph node, a local function, an initializer).
:func:`cases` makes them: truncations and byte flips of the serialized models, and
structural mutations (bad dims and data types, names that are no text, dangling
references, cycles, recursive local functions, deep nesting, hostile external data).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from helpers.models import chain_model, function_model, rich_model, subgraph_model
from helpers.shared import MODELS
from helpers.transform_models import if_loop_model, mobilenet_like
from onnx import TensorProto, helper, numpy_helper

from designer.core.walk import iter_nodes, nested_graphs

#: A file set beside the model: (relative path, bytes) or (relative path, symlink target).
Extra = tuple[str, bytes | Path]


@dataclass
class Case:
    name: str
    data: bytes
    extras: list[Extra] = field(default_factory=list)
    subgraph: tuple[str, str] | None = None  # (node, attribute) for `extract --node`
    function: str | None = None  # DOMAIN:NAME for `extract --function`
    initializer: str | None = None  # for `cast --initializer`

    def write(self, folder: Path) -> Path:
        """Lay the case out in ``folder``; returns the model path."""
        folder.mkdir(parents=True, exist_ok=True)
        for rel, content in self.extras:
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, Path):
                os.symlink(content, path)
            else:
                path.write_bytes(content)
        path = folder / "model.onnx"
        path.write_bytes(self.data)
        return path


@dataclass
class Base:
    name: str
    model: onnx.ModelProto
    subgraph: tuple[str, str] | None = None
    function: str | None = None
    extras: list[Extra] = field(default_factory=list)

    def case(self, name: str, model: onnx.ModelProto | bytes, **extra: object) -> Case:
        data = model if isinstance(model, bytes) else model.SerializeToString()
        proto = self.model if isinstance(model, bytes) else model
        inits = [t.name for t in proto.graph.initializer if t.data_type == TensorProto.FLOAT]
        case = Case(
            f"{self.name}:{name}",
            data,
            list(self.extras),
            self.subgraph,
            self.function,
            inits[0] if inits else None,
        )
        for key, value in extra.items():
            setattr(case, key, value)
        return case


def _external_base() -> Base:
    """A small model whose two weights live in ``weights.bin``."""
    model = chain_model(2)
    blob = bytearray()
    arrays = {
        "W": np.arange(6, dtype=np.float32).reshape(2, 3),
        "V": np.ones((2, 3), np.float32),
    }
    del model.graph.initializer[:]
    model.graph.node.append(helper.make_node("Mul", ["Y", "V"], ["Z"], name="mul_v"))
    model.graph.output[0].name = "Z"
    for name, array in arrays.items():
        tensor = numpy_helper.from_array(array, name)
        raw = tensor.raw_data
        tensor.ClearField("raw_data")
        tensor.data_location = TensorProto.EXTERNAL
        for key, value in (
            ("location", "weights.bin"),
            ("offset", str(len(blob))),
            ("length", str(len(raw))),
        ):
            tensor.external_data.add(key=key, value=value)
        blob += raw
        model.graph.initializer.append(tensor)
    return Base("external", model, extras=[("weights.bin", bytes(blob))])


def _nested_if(depth: int) -> onnx.ModelProto:
    inner = helper.make_graph(
        [helper.make_node("Identity", ["x"], [f"y{depth}"], name=f"id{depth}")],
        f"g{depth}",
        [],
        [helper.make_tensor_value_info(f"y{depth}", TensorProto.FLOAT, [1])],
    )
    for level in range(depth - 1, -1, -1):
        other = helper.make_graph(
            [helper.make_node("Identity", ["x"], [f"e{level}"], name=f"else{level}")],
            f"e{level}",
            [],
            [helper.make_tensor_value_info(f"e{level}", TensorProto.FLOAT, [1])],
        )
        node = helper.make_node(
            "If", ["c"], [f"y{level}"], name=f"if{level}", then_branch=inner, else_branch=other
        )
        inner = helper.make_graph(
            [node],
            f"g{level}",
            [],
            [helper.make_tensor_value_info(f"y{level}", TensorProto.FLOAT, [1])],
        )
    inner.input.extend(
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
        ]
    )
    model = helper.make_model(inner, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def bases(real: bool = True) -> list[Base]:
    """The models mutated: test models of every kind, and (``real``) a real export."""
    out = [
        Base("rich", rich_model(), function="local.fn:ScaledAdd"),
        Base("subgraph", subgraph_model(), subgraph=("branch", "then_branch")),
        Base("function", function_model(), function="local.fn:ScaledAdd"),
        Base("mobilenet", mobilenet_like(channels=4, size=8)),
        Base("ifloop", if_loop_model(), subgraph=("branch", "then_branch")),
        _external_base(),
    ]
    squeeze = MODELS / "squeezenet1_0.torchscript.onnx"
    if real and squeeze.is_file():
        out.append(Base("squeezenet", onnx.load(squeeze)))
    return out


# --- mutations -----------------------------------------------------------------------------
def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    clone = onnx.ModelProto()
    clone.CopyFrom(model)
    return clone


def _all_tensors(model: onnx.ModelProto) -> list[onnx.TensorProto]:
    from designer.core.io.external import iter_model_tensors

    return list(iter_model_tensors(model))


def _all_values(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    values: list[onnx.ValueInfoProto] = []
    for graph in nested_graphs(model.graph):
        values.extend([*graph.input, *graph.output, *graph.value_info])
    return values


def _all_nodes(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    return list(iter_nodes(model))


Mutation = Callable[[onnx.ModelProto, random.Random], onnx.ModelProto | bytes | None]

HUGE = [2**62, 2**40, 10**12, 2**31 + 7, 10**8]


def bad_dims(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto | None:
    tensors = [t for t in _all_tensors(model) if t.dims]
    if not tensors:
        return None
    tensor = rng.choice(tensors)
    index = rng.randrange(len(tensor.dims))
    tensor.dims[index] = rng.choice([-1, -7, 0, tensor.dims[index] + 1, *HUGE])
    return model


def bad_value_dims(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto | None:
    values = [v for v in _all_values(model) if v.type.tensor_type.shape.dim]
    if not values:
        return None
    value = rng.choice(values)
    dim = rng.choice(value.type.tensor_type.shape.dim)
    dim.dim_value = rng.choice([-1, -(2**40), *HUGE])
    return model


def huge_input(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto | None:
    for value in model.graph.input:
        for dim in value.type.tensor_type.shape.dim:
            dim.dim_value = rng.choice(HUGE)
    return model


def bad_dtype(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto | None:
    choice = rng.random()
    if choice < 0.5:
        tensors = _all_tensors(model)
        if not tensors:
            return None
        rng.choice(tensors).data_type = rng.choice([0, 26, 99, 1000, -3])
    else:
        values = [v for v in _all_values(model) if v.type.HasField("tensor_type")]
        if not values:
            return None
        rng.choice(values).type.tensor_type.elem_type = rng.choice([27, 99, 1000, -1])
    return model


def data_length(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto | None:
    tensors = [t for t in _all_tensors(model) if t.raw_data or t.float_data or t.int64_data]
    if not tensors:
        return None
    tensor = rng.choice(tensors)
    if tensor.raw_data:
        cut = rng.choice([1, 2, 4, len(tensor.raw_data) // 2 or 1])
        tensor.raw_data = (
            tensor.raw_data[:-cut] if rng.random() < 0.6 else tensor.raw_data + b"\0" * cut
        )
    elif tensor.float_data:
        tensor.float_data.append(1.0)
    else:
        tensor.int64_data.append(1)
    return model


def dangling(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto | None:
    nodes = [n for n in _all_nodes(model) if n.input]
    if not nodes:
        return None
    node = rng.choice(nodes)
    node.input[rng.randrange(len(node.input))] = "ghost_value"
    return model


def dangling_output(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto | None:
    model.graph.output[0].name = "nobody_makes_this"
    return model


def cycle(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto | None:
    nodes = [n for n in model.graph.node if n.input and n.output]
    if len(nodes) < 2:
        return None
    first, last = nodes[0], nodes[-1]
    first.input[0] = last.output[0]
    return model


def duplicate_output(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto | None:
    nodes = [n for n in model.graph.node if n.output]
    if len(nodes) < 2:
        return None
    a, b = rng.sample(nodes, 2)
    b.output[0] = a.output[0]
    return model


def unknown_op(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto | None:
    nodes = _all_nodes(model)
    if not nodes:
        return None
    node = rng.choice(nodes)
    node.op_type = rng.choice(["NoSuchOp", "", "Conv2D", "relu"])
    if rng.random() < 0.3:
        node.domain = "not.imported"
    return model


def bad_attribute(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto | None:
    nodes = [n for n in _all_nodes(model) if n.attribute]
    if not nodes:
        return None
    attr = rng.choice(rng.choice(nodes).attribute)
    if rng.random() < 0.5:
        attr.type = rng.choice([0, 3, 5, 13])  # a defined type, but not this value
    else:
        attr.i = rng.choice([-(2**62), 2**62, 10**9])
        attr.type = onnx.AttributeProto.INT
    return model


def recursive_function(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto | None:
    if not model.functions:
        return None
    fn = model.functions[0]
    call = helper.make_node(fn.name, list(fn.input), ["again"], domain=fn.domain, name="self_call")
    fn.node.append(call)
    return model


def mutual_functions(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto | None:
    if not model.functions:
        return None
    fn = model.functions[0]
    twin = _copy_function(fn, fn.name + "Twin")
    fn.node.append(helper.make_node(twin.name, list(fn.input), ["to_twin"], domain=fn.domain))
    twin.node.append(helper.make_node(fn.name, list(fn.input), ["to_fn"], domain=fn.domain))
    model.functions.append(twin)
    return model


def _copy_function(fn: onnx.FunctionProto, name: str) -> onnx.FunctionProto:
    twin = onnx.FunctionProto()
    twin.CopyFrom(fn)
    twin.name = name
    return twin


def bad_text(model: onnx.ModelProto, rng: random.Random) -> bytes | None:
    """A name (node, value, op type, graph) made invalid UTF-8 in the serialized bytes."""
    nodes = [n for n in _all_nodes(model) if n.name and len(n.name) >= 2]
    if not nodes:
        return None
    node = rng.choice(nodes)
    marker = "Q" * len(node.name)
    node.name = marker
    data = model.SerializeToString()
    bad = bytes([0xFF, 0xFE, 0xC3]) * len(marker)
    return data.replace(marker.encode(), bad[: len(marker)], 1)


def bad_value_text(model: onnx.ModelProto, rng: random.Random) -> bytes | None:
    value = model.graph.input[0]
    old = value.name
    marker = "Z" * max(len(old), 3)
    for node in _all_nodes(model):
        for i, name in enumerate(node.input):
            if name == old:
                node.input[i] = marker
    value.name = marker
    data = model.SerializeToString()
    return data.replace(marker.encode(), b"\xc0" * len(marker))


def odd_text(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto | None:
    """Valid UTF-8 that breaks lines: a dangling input and a node named with them."""
    nodes = [n for n in _all_nodes(model) if n.input]
    if not nodes:
        return None
    node = rng.choice(nodes)
    node.input[0] = rng.choice(["a\nb", "x\r\ny", "p\u2028q", "tab\there\x0c"])
    node.name = "line\nbreak"
    return model


def deep(depth: int) -> Mutation:
    def mutate(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto:
        return _nested_if(depth)

    return mutate


def deep_types(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto:
    type_proto = model.graph.input[0].type
    for _ in range(rng.choice([40, 200, 2000])):
        wrapper = onnx.TypeProto()
        wrapper.sequence_type.elem_type.CopyFrom(type_proto)
        type_proto = wrapper
    model.graph.input[0].type.CopyFrom(type_proto)
    return model


STRUCTURAL: dict[str, Mutation] = {
    "bad-dims": bad_dims,
    "bad-value-dims": bad_value_dims,
    "huge-input": huge_input,
    "bad-dtype": bad_dtype,
    "data-length": data_length,
    "dangling": dangling,
    "dangling-output": dangling_output,
    "cycle": cycle,
    "duplicate-output": duplicate_output,
    "unknown-op": unknown_op,
    "bad-attribute": bad_attribute,
    "recursive-function": recursive_function,
    "mutual-functions": mutual_functions,
    "bad-text": bad_text,
    "bad-value-text": bad_value_text,
    "odd-text": odd_text,
    "deep-types": deep_types,
}


# --- external data -------------------------------------------------------------------------
def external_cases(base: Base, outside: Path) -> Iterator[Case]:
    """Hostile locations and ranges for the external-data model; ``outside`` is a file
    outside the model folder (a link to it must never be followed)."""
    blob = base.extras[0][1]
    assert isinstance(blob, bytes)

    def with_info(name: str, **info: str) -> Case:
        model = _copy(base.model)
        tensor = model.graph.initializer[0]
        entries = {e.key: e.value for e in tensor.external_data}
        entries.update(info)
        del tensor.external_data[:]
        for key, value in entries.items():
            if value != "<drop>":
                tensor.external_data.add(key=key, value=value)
        return base.case(name, model)

    yield with_info("ext-absolute", location=str(outside))
    yield with_info("ext-dotdot", location="../outside.bin")
    yield with_info("ext-missing", location="nope.bin")
    yield with_info("ext-no-location", location="<drop>")
    yield with_info("ext-empty-location", location="")
    yield with_info("ext-folder", location="sub")
    yield with_info("ext-offset-text", offset="twelve")
    yield with_info("ext-offset-negative", offset="-8")
    yield with_info("ext-length-past-end", length=str(len(blob) + 4096))
    yield with_info("ext-offset-past-end", offset=str(len(blob) * 4))
    yield with_info("ext-length-huge", length=str(2**62))
    linked = with_info("ext-symlink-file", location="link.bin")
    linked.extras = [*linked.extras, ("link.bin", outside)]
    yield linked
    folder = with_info("ext-symlink-folder", location="linked/outside.bin")
    folder.extras = [*folder.extras, ("linked", outside.parent)]
    yield folder
    sub = with_info("ext-folder-real", location="sub")
    sub.extras = [*sub.extras, ("sub/keep", b"x")]
    yield sub


# --- all cases -----------------------------------------------------------------------------
def cases(seed: int, per_kind: int, outside: Path, real: bool = True) -> list[Case]:
    """``per_kind`` cases of every mutation kind for every base model (deterministic)."""
    rng = random.Random(seed)
    out: list[Case] = []
    for base in bases(real):
        data = base.model.SerializeToString()
        out.append(base.case("original", base.model))
        for i in range(per_kind):
            cut = rng.randrange(1, len(data))
            out.append(base.case(f"truncate{i}@{cut}", data[:cut]))
            flipped = bytearray(data)
            for _ in range(rng.choice([1, 2, 4, 16])):
                pos = rng.randrange(len(flipped))
                flipped[pos] ^= 1 << rng.randrange(8)
            out.append(base.case(f"flip{i}", bytes(flipped)))
            for kind, mutate in STRUCTURAL.items():
                result = mutate(_copy(base.model), rng)
                if result is not None:
                    out.append(base.case(f"{kind}{i}", result))
        if base.name == "external":
            out.extend(external_cases(base, outside))
    deep_base = Base("deep", _nested_if(2))
    for depth in (34, 60, 99, 101, 400):
        out.append(deep_base.case(f"if{depth}", _nested_if(depth), subgraph=("if0", "then_branch")))
    return out
