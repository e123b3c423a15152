"""Auto-block for the FP16 check: keep in float32 what the conversion cannot carry.

First the named culprits: while the check fails and some node's output went Inf/NaN, keep
the first such node (topological order, :func:`fp16_check.first_nonfinite`) in float32 and
check again (one conversion and run per node). What still fails without any Inf/NaN is
found by bisection over the converted nodes' order (O(k log n) trials for k nodes of n),
after one trial confirming that keeping every node in float32 passes at all.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import onnx

from designer.activities.fp16_metrics import NumericReport
from designer.activities.numerics import FP16Outcome, _Checker
from designer.core.transforms.fp16 import FP16Options, FP16Result, convert_to_fp16
from designer.core.transforms.log import Monitor


def auto_block(
    model: onnx.ModelProto,
    options: FP16Options,
    base_dir: Path | None,
    checker: _Checker,
    first: FP16Result,
    report: NumericReport,
    monitor: Monitor,
) -> FP16Outcome:
    """The conversion with the fewest nodes kept in float32 that this search finds passing
    (or the last attempt, failing, with notes saying why)."""
    candidates = list(dict.fromkeys(first.converted_nodes))
    named: list[str] = []
    notes: list[str] = []
    result = first
    trials = 0
    while not report.passed and report.skipped is None and len(named) < len(candidates):
        culprit = report.first_nonfinite
        if culprit is None or culprit.block is None or culprit.block in named:
            if culprit is not None and culprit.block is None:
                notes.append(f"auto-block: no node to keep for the {culprit.line()}")
            break
        named.append(culprit.block)
        notes.append(f"auto-block: kept '{culprit.block}' in float32 ({culprit.line()})")
        trials += 1
        monitor.step(0.5 + 0.25 * len(named) / len(candidates), f"auto-block trial {trials}")
        opts = replace(options, block_nodes=options.block_nodes | frozenset(named))
        result = convert_to_fp16(model, opts, base_dir, cancel=monitor.cancel)
        report = checker.report(result.model, set(candidates) - set(named))
    if report.passed or report.skipped is not None:
        return FP16Outcome(result, report, named, trials, notes)
    rest = [c for c in candidates if c not in named]
    base = options.block_nodes | frozenset(named)
    everything = replace(options, block_nodes=base | frozenset(rest))
    trials += 1
    if not checker.report(
        convert_to_fp16(model, everything, base_dir, cancel=monitor.cancel).model, locate=False
    ).passed:
        notes.append(
            "auto-block: even with every node in float32 the check fails; "
            "bisection skipped (see the first Inf/NaN above)"
        )
        return FP16Outcome(result, report, named, trials, notes)
    accepted: list[str] = []
    bisected: list[str] = []

    def attempt(extra: list[str]) -> NumericReport:
        nonlocal trials
        trials += 1
        done = len(accepted) + len(bisected)
        monitor.step(0.75 + 0.25 * done / max(len(rest), 1), f"auto-block trial {trials}")
        keep = set(rest) - set(accepted) - set(extra)
        opts = replace(options, block_nodes=base | keep)
        converted = convert_to_fp16(model, opts, base_dir, cancel=monitor.cancel)
        return checker.report(converted.model, locate=False)

    def search(segment: list[str]) -> None:
        if attempt(segment).passed:
            accepted.extend(segment)
        elif len(segment) == 1:
            bisected.append(segment[0])
        else:
            half = len(segment) // 2
            search(segment[:half])
            search(segment[half:])

    search(rest)
    if bisected:
        notes.append(f"auto-block: bisection kept {len(bisected)} more node(s) in float32")
    final = replace(options, block_nodes=base | frozenset(bisected))
    result = convert_to_fp16(model, final, base_dir, cancel=monitor.cancel)
    report = checker.report(result.model, set(candidates) - set(named) - set(bisected))
    return FP16Outcome(result, report, named + bisected, trials + 1, notes)
