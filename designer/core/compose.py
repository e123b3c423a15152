"""Compose two models: outputs of A feed inputs of B, checked and written as one model.

``onnx.compose`` does the wiring (:func:`onnx.compose.merge_graphs`); names are prefixed
by :func:`designer.core.compose_ports.prefix_model` (subgraphs included). This module
checks first and says in one line what is wrong:

- every mapped output exists in A and every mapped input in B (each input wired once);
- each pair's types fit (:func:`designer.core.compose_ports.pair_problem`);
- opsets: a domain both models import at different versions is reconciled for the
  default domain by converting the older model up with onnx's version converter; other
  domains cannot be converted, and the error names them. The IR version is the newer one;
- names both models use (values, initializers, nodes, local functions) need prefixes:
  ``prefix_a``/``prefix_b`` are applied to every name of A/B, in If/Loop/Scan bodies too
  (the error lists collisions);
- model and graph ``metadata_props`` of both are kept (A's value where a key differs,
  logged);
- the result passes the type checker (onnx's checker and ours) before it is written.

External weights stay external: the result reads them from A's folder (B's where only B
has any); external tensors of the other model, when it lives in another folder, are read
into the result (refused up front when they would not fit in memory). The write is the
project's atomic save (:func:`designer.core.io.write_model`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import onnx
from onnx import compose, helper, version_converter

from designer.core.compose_ports import (
    collisions,
    graph_inputs,
    graph_outputs,
    pair_problem,
    prefix_model,
)
from designer.core.errors import DesignerError
from designer.core.io.external import is_external, iter_model_tensors, read_external_bytes
from designer.core.memory import require


class ComposeError(DesignerError):
    """Two models cannot be composed as asked (bad map, types, opsets, names)."""


@dataclass
class ComposeResult:
    """The composed model, the folder its external tensors are read from, and what was done
    on the way (opset conversion, weights read into memory) as log lines."""

    model: onnx.ModelProto
    source_dir: Path | None
    notes: list[str] = field(default_factory=list)


def parse_pair(text: str, a: onnx.ModelProto, b: onnx.ModelProto) -> tuple[str, str]:
    """``OUT_A:IN_B`` as a pair; names may hold ``:`` themselves (``x:0``), so the split is
    the one where the left part is an output of A and the right part an input of B."""
    outs = {p.name for p in graph_outputs(a)}
    ins = {p.name for p in graph_inputs(b)}
    splits = [
        (text[:i], text[i + 1 :]) for i, c in enumerate(text) if c == ":" and 0 < i < len(text) - 1
    ]
    if not splits:
        raise ComposeError(f"--map '{text}': expected OUTPUT_OF_A:INPUT_OF_B")
    fitting = [(o, i) for o, i in splits if o in outs and i in ins]
    if len(fitting) == 1:
        return fitting[0]
    if len(fitting) > 1:
        raise ComposeError(f"--map '{text}' can be split in {len(fitting)} ways; rename first")
    out, inp = ([(o, i) for o, i in splits if o in outs] or splits)[0]
    check_names([(out, inp)], a, b)  # names what is missing
    raise ComposeError(f"--map '{text}': expected OUTPUT_OF_A:INPUT_OF_B")


def check_names(io_map: Sequence[tuple[str, str]], a: onnx.ModelProto, b: onnx.ModelProto) -> None:
    """Every output named exists in A, every input in B, each input of B wired once."""
    if not io_map:
        raise ComposeError("map at least one output of A to an input of B")
    outs = {p.name for p in graph_outputs(a)}
    ins = {p.name for p in graph_inputs(b)}
    seen: set[str] = set()
    for out, inp in io_map:
        if out not in outs:
            raise ComposeError(f"A has no output '{out}' (its outputs: {_listing(outs)})")
        if inp not in ins:
            raise ComposeError(f"B has no input '{inp}' (its inputs: {_listing(ins)})")
        if inp in seen:
            raise ComposeError(f"B's input '{inp}' is mapped more than once")
        seen.add(inp)


def check_types(io_map: Sequence[tuple[str, str]], a: onnx.ModelProto, b: onnx.ModelProto) -> None:
    outs = {p.name: p for p in graph_outputs(a)}
    ins = {p.name: p for p in graph_inputs(b)}
    for out, inp in io_map:
        problem = pair_problem(outs[out], ins[inp])
        if problem is not None:
            raise ComposeError(f"A's output '{out}' cannot feed B's input '{inp}': {problem}")


def _listing(names: set[str]) -> str:
    shown = sorted(names)
    return ", ".join(shown[:8]) + (f" and {len(shown) - 8} more" if len(shown) > 8 else "")


def _opsets(model: onnx.ModelProto) -> dict[str, int]:
    return {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}


def reconcile_opsets(
    a: onnx.ModelProto, b: onnx.ModelProto, notes: list[str]
) -> tuple[onnx.ModelProto, onnx.ModelProto]:
    """A and B importing the same version of every domain both use (the older one converted
    up for the default domain); ComposeError for what cannot be reconciled."""
    va, vb = _opsets(a), _opsets(b)
    other = sorted(d for d in va.keys() & vb.keys() if d and va[d] != vb[d])
    if other:
        d = other[0]
        raise ComposeError(
            f"A imports {d} opset {va[d]} and B {d} opset {vb[d]}; onnx's version converter "
            "handles only the default domain: export both with the same version"
        )
    if "" in va and "" in vb and va[""] != vb[""]:
        older, newer = ("A", "B") if va[""] < vb[""] else ("B", "A")
        target = max(va[""], vb[""])
        model = a if older == "A" else b
        try:
            converted = version_converter.convert_version(model, target)
        except (RuntimeError, ValueError, onnx.checker.ValidationError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ComposeError(
                f"{older} uses opset {min(va[''], vb[''])} and {newer} opset {target}; "
                f"converting {older} to opset {target} failed ({first}); convert it first"
            ) from None
        notes.append(f"{older} converted from opset {min(va[''], vb[''])} to {target}")
        a, b = (converted, b) if older == "A" else (a, converted)
    return a, b


def _has_external(model: onnx.ModelProto) -> bool:
    return any(is_external(t) for t in iter_model_tensors(model))


def _inline(model: onnx.ModelProto, base_dir: Path, what: str, notes: list[str]) -> None:
    """Read ``model``'s external tensors into it (their files are checked as for a load)."""
    tensors = [t for t in iter_model_tensors(model) if is_external(t)]
    total = sum(int(e.value) for t in tensors for e in t.external_data if e.key == "length")
    require(2 * total + (256 << 20), f"reading the external weights of {what} into the result")
    for tensor in tensors:
        data = read_external_bytes(tensor, base_dir)
        del tensor.external_data[:]
        tensor.data_location = onnx.TensorProto.DEFAULT
        tensor.raw_data = data
    notes.append(f"{len(tensors)} external tensor(s) of {what} read into the result")


def compose_models(
    a: onnx.ModelProto,
    b: onnx.ModelProto,
    io_map: Sequence[tuple[str, str]],
    *,
    prefix_a: str = "",
    prefix_b: str = "",
    base_a: Path | None = None,
    base_b: Path | None = None,
) -> ComposeResult:
    """One model where the mapped outputs of A feed the inputs of B (see the module doc).

    The unmapped inputs of both become the result's inputs; B's outputs and A's unmapped
    outputs its outputs. ``a`` and ``b`` are not changed. ``base_a``/``base_b``: where their
    external data lives. Cost: a copy of both graphs, one type check of the result."""
    io_map = list(io_map)
    check_names(io_map, a, b)
    check_types(io_map, a, b)
    if prefix_a and prefix_a == prefix_b:
        raise ComposeError(f"the prefixes of A and B are both '{prefix_a}'; make them differ")
    clash = collisions(a, b, io_map, prefix_a, prefix_b)
    if clash:
        raise ComposeError(
            f"A and B both use the names of {'; '.join(clash[:2])}: give prefixes "
            "(--prefix-a/--prefix-b, e.g. a/ and b/)"
        )
    notes: list[str] = []
    a, b = _copy(a), _copy(b)
    source_dir = base_a if _has_external(a) else base_b if _has_external(b) else None
    if _has_external(a) and _has_external(b):
        assert base_a is not None and base_b is not None
        if os.path.realpath(base_a) != os.path.realpath(base_b):
            _inline(b, base_b, "B", notes)
    if (_has_external(a) and base_a is None) or (_has_external(b) and base_b is None):
        raise ComposeError("a model with external data needs its folder to be composed")
    a, b = reconcile_opsets(a, b, notes)
    if prefix_a:
        prefix_model(a, prefix_a)
    if prefix_b:
        prefix_model(b, prefix_b)
    wired = [(prefix_a + o, prefix_b + i) for o, i in io_map]
    try:
        graph = compose.merge_graphs(a.graph, b.graph, wired, name=f"{a.graph.name}+{b.graph.name}")
    except ValueError as exc:  # what the checks above did not foresee
        raise ComposeError(f"onnx.compose refused: {str(exc).splitlines()[0]}") from None
    opsets = {**_opsets(a), **_opsets(b)}
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid(d, v) for d, v in sorted(opsets.items())],
        ir_version=max(a.ir_version, b.ir_version),
        producer_name="onnx-designer compose",
    )
    model.functions.extend(a.functions)
    model.functions.extend(b.functions)
    helper.set_model_props(
        model, _merged_props(a.metadata_props, b.metadata_props, "metadata", notes)
    )
    graph_props = _merged_props(
        a.graph.metadata_props, b.graph.metadata_props, "graph metadata", notes
    )
    model.graph.metadata_props.extend(
        onnx.StringStringEntryProto(key=k, value=v) for k, v in graph_props.items()
    )
    problem = _first_error(model, source_dir)
    if problem is not None:
        raise ComposeError(f"the composed model is not valid ({problem}); nothing was written")
    notes.insert(
        0,
        f"{len(wired)} connection(s); {len(model.graph.node)} node(s), "
        f"{len(model.graph.input)} input(s), {len(model.graph.output)} output(s)",
    )
    return ComposeResult(model, source_dir, notes)


def _merged_props(
    a: Iterable[onnx.StringStringEntryProto],
    b: Iterable[onnx.StringStringEntryProto],
    what: str,
    notes: list[str],
) -> dict[str, str]:
    """A's ``metadata_props`` entries, then B's other keys. A key both hold with different
    values keeps A's (the model that runs first, as for the model metadata) and is logged,
    so nothing is dropped unsaid: exporters keep real data there (torch's
    ``pkg.torch.export.*`` graph metadata, the designer's TensorRT profiles)."""
    merged = {p.key: p.value for p in a}
    for p in b:
        if p.key not in merged:
            merged[p.key] = p.value
        elif merged[p.key] != p.value:
            notes.append(f"{what} '{p.key}' differs in A and B; A's value kept")
    return merged


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    return out


def _first_error(model: onnx.ModelProto, source_dir: Path | None) -> str | None:
    from designer.core.analysis.gate import first_error

    where = (source_dir / "composed.onnx") if source_dir is not None else None
    return first_error(model, where)


def compose_files(
    path_a: Path,
    path_b: Path,
    out: Path,
    io_map: Sequence[tuple[str, str]] | Sequence[str],
    *,
    prefix_a: str = "",
    prefix_b: str = "",
) -> tuple[ComposeResult, list[Path]]:
    """Read A and B, compose them and write the result to ``out`` atomically; returns the
    result and the data files written. ``io_map`` pairs or ``OUT_A:IN_B`` texts."""
    from designer.core.io import read_model, write_model

    out = Path(out)
    for name, path in (("A", path_a), ("B", path_b)):
        if out.exists() and Path(path).exists() and out.resolve() == Path(path).resolve():
            raise ComposeError(f"{out}: the output is model {name}; choose another file")
    a, b = read_model(path_a), read_model(path_b)
    pairs = [parse_pair(p, a, b) if isinstance(p, str) else p for p in io_map]
    result = compose_models(
        a,
        b,
        pairs,
        prefix_a=prefix_a,
        prefix_b=prefix_b,
        base_a=Path(path_a).resolve().parent,
        base_b=Path(path_b).resolve().parent,
    )
    report = write_model(result.model, out, result.source_dir)
    return result, report.data_files
