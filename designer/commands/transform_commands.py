"""``fp16``, ``sanitize`` and ``cast``: the global modifications (M-1..M-3) without the GUI.

Each reads IN, transforms it, writes OUT atomically (external data beside OUT; a model
with external data keeps its weights external) and prints the same log the GUI shows, or
a JSON summary with ``--json``. OUT equal to IN is refused; an interrupted run leaves no
partial file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import onnx

from designer.commands.fp16_messages import check_not_run, unknown_block_names


def _prepare(args: argparse.Namespace) -> onnx.ModelProto:
    from designer.commands.outputs import refuse_input
    from designer.core.io import read_model
    from designer.core.transforms import TransformError

    source, target = Path(args.input), Path(args.output)
    refuse_input(target, source, error=TransformError)
    if target.is_dir():
        raise TransformError(f"{target}: is a folder; choose a file name")
    model = read_model(source)
    _gate(model, args)
    return model


def _gate(model: onnx.ModelProto, args: argparse.Namespace) -> None:
    """Refuse an input the type checker rejects (its first error, one line); with --force
    go on after a warning and make the command exit 1 (``args.forced``)."""
    from designer.core.analysis.gate import first_error
    from designer.core.transforms import TransformError

    args.forced = False
    problem = first_error(model, Path(args.input).resolve())
    if problem is None:
        return
    if not getattr(args, "force", False):
        raise TransformError(
            f"{args.input} is not a valid model ({problem}); fix it first "
            "(onnx-designer check shows every error) or pass --force"
        )
    print(
        f"onnx-designer: warning: {args.input} is not a valid model ({problem}); "
        "going on because of --force, the exit code will be 1",
        file=sys.stderr,
    )
    args.forced = True


def _verify(model: onnx.ModelProto, args: argparse.Namespace) -> None:
    """Never write a result the type checker rejects from an input it accepted."""
    from designer.core.analysis.gate import first_error
    from designer.core.transforms import TransformError

    if getattr(args, "forced", False):
        return
    problem = first_error(model, Path(args.input).resolve())
    if problem is not None:
        raise TransformError(
            f"the {args.command} result of {args.input} is not a valid model ({problem}); "
            f"nothing was written to {args.output}"
        )


def _has_external(model: onnx.ModelProto) -> bool:
    from designer.core.io.external import is_external, iter_model_tensors

    return any(is_external(t) for t in iter_model_tensors(model))


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Turn SIGTERM into KeyboardInterrupt while a command runs, so both clean up."""

    def raise_interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, raise_interrupt)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _save(model: onnx.ModelProto, args: argparse.Namespace, external: bool) -> dict[str, Any]:
    """Write OUT atomically; on any interruption remove the temporary files of this save."""
    from designer.core.io import write_model
    from designer.core.io.save import AUTO_EXTERNAL_LIMIT

    target = Path(args.output)
    folder = target.parent if str(target.parent) else Path(".")
    before = set(folder.iterdir()) if folder.is_dir() else set()
    try:
        report = write_model(
            model,
            target,
            Path(args.input).resolve().parent,
            limit=0 if external else AUTO_EXTERNAL_LIMIT,
        )
    except BaseException:
        if folder.is_dir():
            for path in set(folder.iterdir()) - before:
                if path.name.startswith(".") and path.name.endswith(".tmp"):
                    with contextlib.suppress(OSError):
                        path.unlink()
        raise
    return {"path": str(report.path), "data_files": [str(p) for p in report.data_files]}


def _convert_streamed(
    args: argparse.Namespace, model: onnx.ModelProto, convert: Callable[[Any], Any]
) -> tuple[Any, dict[str, Any]]:
    """``convert(sink)`` with OUT's data file open, converted weights streamed into it one
    at a time (memory: about the largest weight, not all of them), then the atomic save
    that renames it into place (designer.core.io.stream). For inputs with external data,
    whose output keeps its weights external anyway."""
    from designer.core.io import write_model
    from designer.core.io.stream import DataSink

    target = Path(args.output)
    with DataSink(target, model) as sink:
        result = convert(sink)
        _verify(result.model, args)
        source_dir = Path(args.input).resolve().parent
        report = write_model(result.model, target, source_dir, limit=0, sink=sink)
    return result, {"path": str(report.path), "data_files": [str(p) for p in report.data_files]}


def _emit(
    args: argparse.Namespace, log_json: dict[str, Any], text: str, saved: dict[str, Any]
) -> None:
    if args.json:
        payload = {"command": args.command, "input": str(args.input), "output": saved, **log_json}
        print(json.dumps(payload, indent=2, default=str))
    else:
        print(text)
        print(f"saved {saved['path']}")


def _progress(args: argparse.Namespace) -> Any:
    if not getattr(args, "verbose", False):
        return lambda fraction, message: None
    return lambda fraction, message: print(f"[{fraction:4.0%}] {message}", file=sys.stderr)


# --- fp16 ---------------------------------------------------------------------------------
def _fp16(args: argparse.Namespace) -> int:
    from designer.activities.fp16_check import clear_labels, label_unnamed_nodes
    from designer.activities.numerics import CheckOptions, convert_and_check
    from designer.core.memory import OutOfMemoryError
    from designer.core.transforms import DEFAULT_BLOCK_OPS, FP16Options

    with _interruptible():
        model = _prepare(args)
        from designer.commands.activity_commands import unknown_dims

        usage = unknown_dims("--check-dim", [name for name, _n in args.check_dim], model)
        if usage is not None:  # a name the model lacks would be ignored by the check
            print(usage, file=sys.stderr)
            return 2
        # unnamed nodes get labels ('Exp #3 (unnamed)') while this runs: the check blames
        # them by it, and auto-block and --block-node keep them in float32 by it
        labels = label_unnamed_nodes(model)
        usage, warnings = unknown_block_names(model, args.block_node, args.block_op)
        if usage is not None:
            clear_labels(model, labels)
            print(f"onnx-designer: error: {usage}", file=sys.stderr)
            return 2
        for warning in warnings:
            print(f"onnx-designer: warning: {warning}", file=sys.stderr)
        base = frozenset() if args.no_default_block_ops else DEFAULT_BLOCK_OPS
        options = FP16Options(
            keep_io_types=args.keep_io_types,
            block_ops=base | frozenset(args.block_op),
            block_nodes=frozenset(args.block_node),
            clip_constants=not args.no_clip,
            bfloat16=args.bf16,
        )
        check = CheckOptions(
            enabled=not args.no_check,
            seed=args.seed,
            input_dir=args.inputs,
            dims=dict(args.check_dim),
            rtol=args.rtol,
            atol=args.atol,
            auto_block=args.auto_block,
            max_rel_l2=args.check_max_rel_l2,
            min_cosine=args.check_min_cosine,
            max_range_error=args.check_max_range_error,
            top_k=args.check_top_k,
            min_topk=args.check_min_topk,
            backend=args.check_backend,
        )
        source_dir = Path(args.input).resolve().parent
        if args.no_check and _has_external(model):  # nothing runs the result: stream it
            return _fp16_streamed(args, model, options, source_dir, labels)
        try:
            outcome = convert_and_check(model, options, source_dir, check, progress=_progress(args))
        except OutOfMemoryError as exc:
            if not _has_external(model):
                raise
            # the check runs both models in ONNX Runtime, so the result is held in memory
            raise OutOfMemoryError(
                f"{exc}; with --no-check each converted weight is streamed into the "
                "output's data file instead (memory: about the largest weight)"
            ) from None
        clear_labels(outcome.result.model, labels)
        _verify(outcome.result.model, args)
        saved = _save(outcome.result.model, args, _has_external(model))
    _emit(args, outcome.result.log.to_json(), outcome.result.log.text(), saved)
    report = outcome.report
    if check.enabled and report.skipped is not None:  # not run is not passed
        print(check_not_run(args, model, report.skipped), file=sys.stderr)
        return 1
    if report.skipped is None and not report.passed:
        failed = "; ".join(
            f"{o.name} ({', '.join(o.failed)})" for o in report.outputs if not o.passed
        )
        where = f"; {report.first_nonfinite.line()}" if report.first_nonfinite else ""
        print(
            f"onnx-designer: error: numerical check failed for {failed}{where}; "
            f"the model was written to {args.output}",
            file=sys.stderr,
        )
        return 1
    return 1 if args.forced else 0


def _fp16_streamed(
    args: argparse.Namespace,
    model: onnx.ModelProto,
    options: Any,
    source_dir: Path,
    labels: dict[str, int],
) -> int:
    from designer.activities.fp16_check import clear_labels
    from designer.core.transforms import convert_to_fp16

    def convert(sink: Any) -> Any:
        result = convert_to_fp16(model, options, source_dir, progress=_progress(args), sink=sink)
        clear_labels(result.model, labels)
        return result

    result, saved = _convert_streamed(args, model, convert)
    _emit(args, result.log.to_json(), result.log.text(), saved)
    return 1 if args.forced else 0


# --- sanitize -----------------------------------------------------------------------------
def _sanitize(args: argparse.Namespace) -> int:
    from designer.activities.fold_eval import (
        has_symbolic_shapes,
        ort_evaluator,
        ort_symbolic_shapes,
    )
    from designer.core.transforms import SanitizeOptions, sanitize

    with _interruptible():
        model = _prepare(args)
        options = SanitizeOptions(fold_size_threshold=args.fold_size_threshold, passes=args.passes)
        source_dir = Path(args.input).resolve().parent
        symbolic = not args.no_symbolic_shapes and has_symbolic_shapes()
        shapes = ort_symbolic_shapes if symbolic else None
        result = sanitize(
            model, options, source_dir, ort_evaluator, shapes=shapes, progress=_progress(args)
        )  # the result is checked inside (refused with the reason when invalid)
        saved = _save(result.model, args, _has_external(model))
    _emit(args, result.log.to_json(), result.log.text(), saved)
    return 1 if args.forced else 0


# --- cast ---------------------------------------------------------------------------------
def _cast(args: argparse.Namespace) -> int:
    from designer.core.transforms import (
        TransformError,
        cast_tensors,
        list_cast_candidates,
        select_candidates,
    )

    to: int = args.to  # a data type already (_dtype)
    with _interruptible():
        model = _prepare(args)
        if not args.initializer and not args.attribute:
            raise TransformError("name at least one --initializer or --attribute to cast")
        keys = select_candidates(list_cast_candidates(model), args.initializer, args.attribute)
        source_dir = Path(args.input).resolve().parent
        if _has_external(model):  # OUT keeps its weights external: stream the cast ones

            def convert(sink: Any) -> Any:
                return cast_tensors(
                    model, keys, to, source_dir, progress=_progress(args), sink=sink
                )

            result, saved = _convert_streamed(args, model, convert)
        else:
            result = cast_tensors(model, keys, to, source_dir, progress=_progress(args))
            _verify(result.model, args)
            saved = _save(result.model, args, False)
    _emit(args, result.log.to_json(), result.log.text(), saved)
    for warning in result.log.warnings:  # lost precision: on the README's warning channel
        print(f"onnx-designer: warning: {warning}", file=sys.stderr)
    return 1 if args.forced else 0


def _dtype(text: str) -> int:
    """``cast --to``: a data type name (a bad one is a usage error, exit 2)."""
    from designer.core.transforms import parse_type

    try:
        return parse_type(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", type=Path, metavar="IN", help="the model to read")
    parser.add_argument("output", type=Path, metavar="OUT", help="where to write the result")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.add_argument("-v", "--verbose", action="store_true", help="print progress")
    parser.add_argument(
        "--force",
        action="store_true",
        help="go on when the type checker rejects IN (a warning; the exit code is 1)",
    )


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative: give 0 or more")
    return value


def _limit(low: float, high: float) -> Any:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is outside [{low:g}, {high:g}]")
        return value

    return parse


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of 1 or more")
    return int(text)


def _dim(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    if not sep or not name or not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not NAME=N (N >= 1)")
    return name, int(value)


def _fp16_check_options(fp16: argparse.ArgumentParser) -> None:
    """The numerical check's limits (defaults per target type: fp16_metrics.DEFAULT_LIMITS)."""
    from designer.activities.fp16_metrics import DEFAULT_MIN_TOPK, DEFAULT_TOP_K

    inf = float("inf")
    group = fp16.add_argument_group("numerical check (converted side in float16 semantics)")
    group.add_argument(
        "--check-backend",
        choices=("auto", "emulate", "reference", "ort"),
        default="auto",
        help="how the converted model runs: emulate = onnxruntime with every float16 result "
        "rounded (auto's choice), reference = onnx's reference evaluator (slow), "
        "ort = onnxruntime as is (may hide float16 overflow)",
    )
    group.add_argument(
        "--check-max-rel-l2",
        type=_limit(0, inf),
        metavar="X",
        help="max relative L2 error per output (default 0.01; bfloat16 0.05)",
    )
    group.add_argument(
        "--check-min-cosine",
        type=_limit(-1, 1),
        metavar="X",
        help="min cosine similarity per output (default 0.9999; bfloat16 0.998)",
    )
    group.add_argument(
        "--check-max-range-error",
        type=_limit(0, inf),
        metavar="X",
        help="max abs error / the output's range (default 0.02; bfloat16 0.1)",
    )
    group.add_argument(
        "--check-top-k",
        type=_positive,
        default=DEFAULT_TOP_K,
        metavar="K",
        help=f"k of the top-k agreement of classifier-like outputs (default {DEFAULT_TOP_K})",
    )
    group.add_argument(
        "--check-min-topk",
        type=_limit(0, 1),
        default=DEFAULT_MIN_TOPK,
        metavar="F",
        help=f"min share of the original's top-k kept (default {DEFAULT_MIN_TOPK:g})",
    )
    group.add_argument(
        "--rtol",
        "--check-rtol",
        type=_limit(0, inf),
        help="also require |a-e| <= atol + rtol*|e| element-wise (off unless given)",
    )
    group.add_argument(
        "--atol",
        "--check-atol",
        type=_limit(0, inf),
        help="absolute part of the element-wise test (off unless given)",
    )
    group.add_argument(
        "--check-dim",
        type=_dim,
        action="append",
        default=[],
        metavar="NAME=N",
        help="size of a symbolic input dimension for random inputs (default 1; repeatable)",
    )


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    fp16 = sub.add_parser(
        "fp16",
        help="convert weights and computation to float16 (or bfloat16)",
        description="Convert IN to float16 and check it against the original, the converted "
        "side computed with float16 semantics (relative L2, cosine, max abs error of the "
        "range, top-k, NaN/Inf per output; the first node that went Inf/NaN). "
        "Exits 1 if the check fails or cannot run (--no-check skips it on purpose).",
    )
    _common(fp16)
    fp16.add_argument("--keep-io-types", action="store_true", help="keep inputs/outputs float32")
    fp16.add_argument(
        "--block-op",
        action="append",
        default=[],
        metavar="OP",
        help="keep this operator type in float32 (repeatable; added to the defaults)",
    )
    fp16.add_argument(
        "--no-default-block-ops",
        action="store_true",
        help="do not block Range, TopK, NonMaxSuppression, RoiAlign, CumSum, Random*",
    )
    fp16.add_argument(
        "--block-node",
        action="append",
        default=[],
        metavar="NAME",
        help="keep this node in float32 (repeatable)",
    )
    fp16.add_argument("--bf16", action="store_true", help="convert to bfloat16 instead")
    fp16.add_argument(
        "--no-clip",
        action="store_true",
        help="let weights beyond the float16 range become inf instead of clipping",
    )
    fp16.add_argument(
        "--auto-block",
        action="store_true",
        help="keep in float32 the node that first went Inf/NaN (repeatedly), then bisect "
        "for the nodes that still break the limits",
    )
    _fp16_check_options(fp16)
    fp16.add_argument(
        "--inputs",
        type=Path,
        metavar="DIR",
        help="folder of TensorProto .pb input files (default: random inputs)",
    )
    fp16.add_argument(
        "--seed", type=_non_negative, default=0, help="seed of the random inputs (0 or more)"
    )
    fp16.add_argument("--no-check", action="store_true", help="skip the numerical check")
    fp16.set_defaults(handler=_fp16)

    san = sub.add_parser(
        "sanitize",
        help="fold constants and remove unused nodes, initializers and value_info",
        description="Fold constants (evaluated with ONNX Runtime; shape computations too) and "
        "remove what nothing uses, in every graph, subgraph and function.",
    )
    _common(san)
    san.add_argument(
        "--fold-size-threshold",
        type=_non_negative,
        metavar="BYTES",
        help="do not fold results larger than this",
    )
    san.add_argument(
        "--passes",
        type=_non_negative,
        metavar="N",
        help="folding passes (default: until nothing changes)",
    )
    san.add_argument(
        "--no-symbolic-shapes",
        action="store_true",
        help="use only onnx's shape inference, not ONNX Runtime's symbolic one (folds less)",
    )
    san.set_defaults(handler=_sanitize)

    cast = sub.add_parser(
        "cast",
        help="cast initializers and tensor attributes to one data type",
        description="Cast the named initializers and NODE.ATTR tensor attributes to --to; "
        "Cast nodes back are inserted where an operator needs the old type.",
    )
    _common(cast)
    cast.add_argument(
        "--to", required=True, type=_dtype, metavar="DTYPE", help="e.g. float16, int8, float"
    )
    cast.add_argument("--initializer", action="append", default=[], metavar="NAME")
    cast.add_argument("--attribute", action="append", default=[], metavar="NODE.ATTR")
    cast.set_defaults(handler=_cast)
