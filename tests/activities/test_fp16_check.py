"""The FP16 check computes the converted side with float16 semantics: the emulation model
(every float16 result rounded) against numpy, an overflow that plain onnxruntime hides,
the first node that went Inf/NaN, auto-block by that node then by bisection, the
backends, and real exports from ../shared/models passing with their numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import shared
from onnx import TensorProto, helper, numpy_helper

from designer.activities.fp16_check import run_half
from designer.activities.fp16_emulate import build_emulation, round_half, rounding_survives
from designer.activities.numerics import CheckOptions, convert_and_check, run_model
from designer.core.io import read_model
from designer.core.transforms import FP16Options, convert_to_fp16

F = TensorProto.FLOAT
KEEP_IO = FP16Options(keep_io_types=True)


def _chain(ops: list[tuple[str, str, float]], name: str = "chain") -> onnx.ModelProto:
    """x → op(·, constant) → … → y; ``ops`` as (op type, node name, constant)."""
    nodes, inits, last = [], [], "x"
    for i, (op, node, value) in enumerate(ops):
        out = "y" if i == len(ops) - 1 else f"t{i}"
        inits.append(numpy_helper.from_array(np.array(value, np.float32), f"k{i}"))
        nodes.append(helper.make_node(op, [last, f"k{i}"], [out], name=node))
        last = out
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info("x", F, [2])],
        [helper.make_tensor_value_info("y", F, [2])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def overflow() -> onnx.ModelProto:
    """x·1000·1000: 5e6 for x = 5, beyond float16's 65504."""
    return _chain([("Mul", "mul_a", 1000.0), ("Mul", "mul_b", 1000.0)], "overflow")


@pytest.fixture
def five(tmp_path: Path) -> Path:
    """An input folder holding x = [5, 0.01]."""
    value = numpy_helper.from_array(np.array([5.0, 0.01], np.float32), "x")
    (tmp_path / "x.pb").write_bytes(value.SerializeToString())
    return tmp_path


def test_emulation_rounds_every_float16_result_like_numpy() -> None:
    assert rounding_survives()
    model = _chain([("Add", "add", 1000.0), ("Sub", "sub", 1000.0)])
    converted = convert_to_fp16(model, KEEP_IO).model
    emu = build_emulation(converted, {"add", "sub"}, None)
    assert emu.rounded == 3 and emu.half_type == TensorProto.FLOAT16  # input cast, add, sub
    x = np.array([0.3, -0.7], np.float32)
    got = run_model(emu.model, {"x": x}, optimize=False)["y"]
    h = np.float16
    want = ((x.astype(h) + h(1000)).astype(h) - h(1000)).astype(np.float32)
    np.testing.assert_array_equal(got, want)  # 1000.3 - 1000 = 0.25 in float16
    assert [p.node for p in emu.probes if p.inserted] == ["x_float16_cast", "y_cast"]
    assert all(t.data_type == F for t in emu.model.graph.initializer)
    assert round_half(np.array([70000.0, 1.0001]), TensorProto.FLOAT16).tolist() == [np.inf, 1.0]


def test_overflow_fails_and_names_the_first_node(five: Path) -> None:
    outcome = convert_and_check(overflow(), KEEP_IO, check=CheckOptions(input_dir=five))
    report = outcome.report
    assert not report.passed and report.backend == "emulate"
    (out,) = report.outputs
    assert out.inf == 1 and out.failed == ["1 new NaN/Inf"]
    culprit = report.first_nonfinite
    assert culprit is not None and (culprit.node, culprit.block) == ("mul_b", "mul_b")
    assert (culprit.inf, culprit.nan, culprit.size) == (1, 0, 2)
    text = outcome.result.log.text()
    assert "first Inf/NaN: node 'mul_b' (Mul)" in text
    assert "emulated float16" in text and "auto: fast" in text
    assert outcome.result.log.details["check"]["first_nonfinite"]["block"] == "mul_b"


def test_plain_onnxruntime_hides_the_overflow_and_says_so(five: Path) -> None:
    check = CheckOptions(input_dir=five, backend="ort")
    outcome = convert_and_check(overflow(), KEEP_IO, check=check)
    assert outcome.report.passed  # the lie the check used to tell …
    assert "NOT float16-faithful" in outcome.result.log.text()  # … now labelled
    assert "overflow may go unseen" in outcome.report.backend_reason


def test_reference_backend_agrees(five: Path) -> None:
    check = CheckOptions(input_dir=five, backend="reference")
    outcome = convert_and_check(overflow(), KEEP_IO, check=check)
    assert not outcome.report.passed and outcome.report.backend == "reference"
    assert outcome.report.first_nonfinite is not None
    assert outcome.report.first_nonfinite.node == "mul_b"
    fixed = convert_and_check(
        overflow(),
        KEEP_IO,
        check=CheckOptions(input_dir=five, backend="reference", auto_block=True),
    )
    assert fixed.report.passed and fixed.blocked == ["mul_b"]


def test_auto_block_keeps_the_named_node_until_the_check_passes(five: Path) -> None:
    check = CheckOptions(input_dir=five, auto_block=True)
    outcome = convert_and_check(overflow(), KEEP_IO, check=check)
    assert outcome.report.passed, outcome.report.lines()
    assert outcome.blocked == ["mul_b"] and outcome.trials == 1  # named, no bisection
    assert outcome.result.converted_nodes == ["mul_a"]
    text = outcome.result.log.text()
    assert "auto-block: kept 'mul_b' in float32 (first Inf/NaN: node 'mul_b'" in text
    assert "before auto-block:" in text and "auto-block kept 1 node(s)" in text
    onnx.checker.check_model(outcome.result.model, full_check=True)


def test_auto_block_bisects_what_loses_precision_without_overflow() -> None:
    """(x + 1000) − 1000 keeps only ~0.25 of x in float16: no Inf, so no node is named,
    and bisection finds that both nodes must stay float32."""
    model = _chain([("Add", "add", 1000.0), ("Sub", "sub", 1000.0)])
    plain = convert_and_check(model, KEEP_IO)
    assert not plain.report.passed and plain.report.first_nonfinite is None
    assert "rel L2 >" in plain.report.outputs[0].failed[0]
    outcome = convert_and_check(model, KEEP_IO, check=CheckOptions(auto_block=True))
    assert outcome.report.passed, outcome.report.lines()
    assert sorted(outcome.blocked) == ["add", "sub"]
    assert "bisection kept 2 more node(s)" in outcome.result.log.text()


def test_limits_from_the_options_are_applied() -> None:
    model = _chain([("Mul", "m", 3.0)])
    loose = convert_and_check(model, KEEP_IO)
    assert loose.report.passed
    strict = convert_and_check(model, KEEP_IO, check=CheckOptions(max_rel_l2=1e-9))
    assert not strict.report.passed
    assert strict.report.outputs[0].failed == ["rel L2 > 1e-09"]
    assert "rel L2 <= 1e-09" in strict.result.log.text()
    with pytest.raises(Exception, match="unknown check backend"):
        convert_and_check(model, check=CheckOptions(backend="gpu"))


def test_bfloat16_is_emulated_in_bfloat16() -> None:
    model = _chain([("Mul", "m", 1.0 / 3.0)])
    feeds = {"x": np.array([1.0, 3.0], np.float32)}
    converted = convert_to_fp16(model, FP16Options(bfloat16=True, keep_io_types=True)).model
    run = run_half(converted, feeds, None, "auto", {"m"})
    assert run.backend == "emulate" and "bfloat16" in run.label
    # 1/3 in bfloat16 is 0.333984375; 1 * that, rounded again
    assert run.outputs["y"][0] == np.float32(0.333984375)
    outcome = convert_and_check(model, FP16Options(bfloat16=True, keep_io_types=True))
    assert outcome.report.passed and "rel L2 <= 0.05" in outcome.result.log.text()


@pytest.mark.parametrize(
    ("name", "dims"),
    [
        ("squeezenet1_0.torchscript.onnx", {}),
        ("bert_4l_h64.torchscript.onnx", {"seq": 16}),
    ],
)
def test_real_exports_with_keep_io_pass_with_their_numbers(name: str, dims: dict[str, int]) -> None:
    model = read_model(shared.model(name))
    outcome = convert_and_check(model, KEEP_IO, check=CheckOptions(dims=dims))
    report = outcome.report
    assert report.passed and report.backend == "emulate", report.lines()
    assert report.first_nonfinite is None
    for out in report.outputs:
        assert 0 < out.rel_l2 < 5e-3 and out.cosine > 0.99999 and out.range_error < 5e-3
    text = outcome.result.log.text()
    assert "rel L2" in text and "cosine" in text and "of range" in text
    if name.startswith("squeezenet"):
        (logits,) = report.outputs
        assert logits.k == 5 and logits.topk is not None and logits.topk >= 0.8
        assert "top-1" in text and "top-5" in text


def test_subgraphs_and_local_functions_are_emulated() -> None:
    from helpers import transform_models as tm
    from helpers.models import function_model

    for model in (tm.if_loop_model(), function_model(), tm.function_fold_model()):
        for keep_io in (False, True):
            outcome = convert_and_check(model, FP16Options(keep_io_types=keep_io))
            report = outcome.report
            assert report.backend == "emulate", report.backend_reason
            assert report.passed, report.lines()


def test_emulation_agrees_with_the_reference_evaluator() -> None:
    """Two float16-faithful computations of the same converted model stay as close to each
    other as each is to float32 (they differ only in how numpy and onnxruntime accumulate)."""
    from helpers import transform_models as tm

    from designer.activities.fp16_metrics import rel_l2
    from designer.activities.numerics import random_inputs

    for model in (tm.tiny_transformer(), tm.mobilenet_like()):
        converted = convert_to_fp16(model).model
        feeds = random_inputs(model)
        exact = run_model(model, feeds)
        emulated = run_half(converted, feeds, None, "emulate", set())
        reference = run_half(converted, feeds, None, "reference", set())
        assert (emulated.backend, reference.backend) == ("emulate", "reference")
        for name, value in exact.items():
            emu = emulated.outputs[name].astype(np.float32)
            ref = reference.outputs[name].astype(np.float32)
            assert rel_l2(ref, emu) < 2e-3
            assert 0 < rel_l2(value, emu) < 2e-3 and 0 < rel_l2(value, ref) < 2e-3


def test_auto_falls_back_with_the_reason(five: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from designer.activities import fp16_check, fp16_emulate
    from designer.core.memory import OutOfMemoryError

    def no_memory(needed: int, what: str) -> None:
        raise OutOfMemoryError(f"{what} needs {needed} bytes")

    monkeypatch.setattr(fp16_emulate, "require", no_memory)
    check = CheckOptions(input_dir=five)
    small = convert_and_check(overflow(), KEEP_IO, check=check).report
    assert small.backend == "reference" and not small.passed  # still float16-faithful
    assert "emulation failed (emulating float16 needs" in small.backend_reason
    assert "the model is small" in small.backend_reason
    monkeypatch.setattr(fp16_check, "REFERENCE_MAX_NODES", 0)
    large = convert_and_check(overflow(), KEEP_IO, check=check)
    assert large.report.backend == "ort"
    assert "too large for the reference evaluator" in large.report.backend_reason
    assert "NOT float16-faithful" in large.result.log.text()
    with pytest.raises(Exception, match="emulation failed"):
        run_half(convert_to_fp16(overflow()).model, {}, None, "emulate", set())
