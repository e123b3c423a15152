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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import onnx


def _prepare(args: argparse.Namespace) -> onnx.ModelProto:
    from designer.core.io import read_model
    from designer.core.transforms import TransformError

    source, target = Path(args.input), Path(args.output)
    same = source.resolve() == target.resolve()
    if not same and target.exists() and source.exists():
        same = source.samefile(target)
    if same:
        raise TransformError(f"{target}: the output path is the input; choose another file")
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


# --- fp16 ----------------------------------------------------------------------------------
def _fp16(args: argparse.Namespace) -> int:
    from designer.activities.numerics import CheckOptions, convert_and_check
    from designer.core.transforms import DEFAULT_BLOCK_OPS, FP16Options

    with _interruptible():
        model = _prepare(args)
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
            rtol=args.rtol,
            atol=args.atol,
            auto_block=args.auto_block,
        )
        source_dir = Path(args.input).resolve().parent
        outcome = convert_and_check(model, options, source_dir, check, progress=_progress(args))
        _verify(outcome.result.model, args)
        saved = _save(outcome.result.model, args, _has_external(model))
    _emit(args, outcome.result.log.to_json(), outcome.result.log.text(), saved)
    report = outcome.report
    if report.skipped is None and not report.passed:
        failed = ", ".join(o.name for o in report.outputs if not o.passed)
        print(
            f"onnx-designer: error: numerical check failed for {failed} "
            f"(rtol {args.rtol:g}, atol {args.atol:g}); the model was written to {args.output}",
            file=sys.stderr,
        )
        return 1
    return 1 if args.forced else 0


# --- sanitize -----------------------------------------------------------------------------
def _sanitize(args: argparse.Namespace) -> int:
    from designer.activities.numerics import ort_evaluator
    from designer.core.transforms import SanitizeOptions, sanitize

    with _interruptible():
        model = _prepare(args)
        options = SanitizeOptions(fold_size_threshold=args.fold_size_threshold, passes=args.passes)
        source_dir = Path(args.input).resolve().parent
        result = sanitize(model, options, source_dir, ort_evaluator, progress=_progress(args))
        _verify(result.model, args)
        saved = _save(result.model, args, _has_external(model))
    _emit(args, result.log.to_json(), result.log.text(), saved)
    return 1 if args.forced else 0


# --- cast ---------------------------------------------------------------------------------
def _cast(args: argparse.Namespace) -> int:
    from designer.core.transforms import (
        TransformError,
        cast_tensors,
        list_cast_candidates,
        parse_type,
        select_candidates,
    )

    with _interruptible():
        try:
            to = parse_type(args.to)
        except ValueError as exc:
            raise TransformError(str(exc)) from None
        model = _prepare(args)
        if not args.initializer and not args.attribute:
            raise TransformError("name at least one --initializer or --attribute to cast")
        keys = select_candidates(list_cast_candidates(model), args.initializer, args.attribute)
        source_dir = Path(args.input).resolve().parent
        result = cast_tensors(model, keys, to, source_dir, progress=_progress(args))
        _verify(result.model, args)
        saved = _save(result.model, args, _has_external(model))
    _emit(args, result.log.to_json(), result.log.text(), saved)
    return 1 if args.forced else 0


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
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    fp16 = sub.add_parser(
        "fp16",
        help="convert weights and computation to float16 (or bfloat16)",
        description="Convert IN to float16 and check it against the original in ONNX Runtime "
        "(max abs/rel error and NaN/Inf per output). Exits 1 if the check fails.",
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
        help="keep in float32 the nodes whose conversion breaks the tolerance",
    )
    fp16.add_argument("--rtol", type=float, default=1e-2, help="relative tolerance (0.01)")
    fp16.add_argument("--atol", type=float, default=1e-3, help="absolute tolerance (0.001)")
    fp16.add_argument(
        "--inputs",
        type=Path,
        metavar="DIR",
        help="folder of TensorProto .pb input files (default: random inputs)",
    )
    fp16.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
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
    san.set_defaults(handler=_sanitize)

    cast = sub.add_parser(
        "cast",
        help="cast initializers and tensor attributes to one data type",
        description="Cast the named initializers and NODE.ATTR tensor attributes to --to; "
        "Cast nodes back are inserted where an operator needs the old type.",
    )
    _common(cast)
    cast.add_argument("--to", required=True, metavar="DTYPE", help="e.g. float16, int8, float")
    cast.add_argument("--initializer", action="append", default=[], metavar="NAME")
    cast.add_argument("--attribute", action="append", default=[], metavar="NODE.ATTR")
    cast.set_defaults(handler=_cast)
