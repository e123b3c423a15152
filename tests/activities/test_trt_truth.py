"""TensorRT analysis reports only what the files say: channel alignment of convolutions
with a fused residual input, a --dumpProfile table cut off inside a log, and engine weights
that the layer records give only in part. Real files from ../shared/fixtures, read in place;
a derived file changes a real one only where a test says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.engine_fixtures import (
    A100_FP16,
    A100_FP32,
    A100_QAT_RESIDUAL,
    LAYER_JSON_10,
    TREX_INPUTS,
)
from helpers.shared import TRT_SAMPLES

from designer.activities.analysis import analyze
from designer.activities.reports.engine_bundle import load_engine
from designer.activities.reports.engine_report import build_report
from designer.activities.reports.trt_engine import load_graph
from designer.activities.reports.trt_profile import EngineProfile
from designer.activities.reports.trtexec_log import (
    CutProfile,
    load_trtexec_log,
    parse_trtexec_log,
)

A100_FP16_PROFILE = A100_FP16.with_name("resnet.onnx.engine.profile.json")
RESIDUALS = TREX_INPUTS / "mobilenet_v2_residuals.qat.onnx.engine"
RESIDUAL_CONV = "features.15.conv.2.weight + QuantizeLinear_643 + Conv_645 + Add_647"
BUILD_LOG = TRT_SAMPLES / "result-04.log"  # built model-trained.trt: Total Weights Memory
PROFILE_LOG = TRT_SAMPLES / "result-05.log"  # --dumpProfile of it: 15 layers and Total


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _alignment(problems: list[str]) -> list[str]:
    return [p for p in problems if "not a multiple of 8" in p]


# ------------------------------------------------------------------ 1. alignment-8 on TensorRT


def test_residual_convolutions_are_not_misread_as_one_channel() -> None:
    graph = load_graph(Path(f"{RESIDUALS}.graph.json"))
    residual = [
        layer
        for layer in graph.layers
        if layer.kind == "Convolution" and len(layer.inputs) == 2 and "Add_" in layer.name
    ]
    assert len(residual) == 10  # the premise: a second (residual) input, no weight tensor
    conv = graph.layer(RESIDUAL_CONV)
    assert conv is not None and conv.raw["OutMaps"] == 160
    assert [t.dims for t in conv.inputs] == [(1, 960, 7, 7), (1, 160, 7, 7)]
    found = analyze(Path(f"{RESIDUALS}.profile.json"))
    alignment = [f for f in found.findings if f.detector == "alignment-8"]
    assert not any("channels 1 " in f.problem for f in alignment), alignment
    assert alignment == []  # every conv of this engine has channels that are multiples of 8


def test_a_really_misaligned_residual_convolution_is_still_found(tmp_path: Path) -> None:
    # Derived: the real engine with one residual conv's width 160 -> 156 (its output, the
    # residual it adds and OutMaps); everything else as recorded.
    root = _read(Path(f"{RESIDUALS}.graph.json"))
    layer = next(x for x in root["Layers"] if x["Name"] == RESIDUAL_CONV)
    layer["OutMaps"] = 156
    layer["Inputs"][1]["Dimensions"] = [1, 156, 7, 7]
    layer["Outputs"][0]["Dimensions"] = [1, 156, 7, 7]
    engine = tmp_path / RESIDUALS.name
    Path(f"{engine}.graph.json").write_text(json.dumps(root), encoding="utf-8")
    profile = Path(f"{engine}.profile.json")
    profile.write_bytes(Path(f"{RESIDUALS}.profile.json").read_bytes())
    found = analyze(profile)
    alignment = [f for f in found.findings if f.detector == "alignment-8"]
    assert len(alignment) == 1, alignment
    assert RESIDUAL_CONV in alignment[0].problem
    assert "output channels 156 not a multiple of 8" in alignment[0].problem
    assert "input channels" not in alignment[0].problem  # 960 is aligned
    assert "156 -> 160" in alignment[0].fix


# ------------------------------------------------------------------ 2. a cut --dumpProfile log


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")


def _cut(tmp_path: Path, keep: int, tail: str = "") -> Path:
    """The first ``keep`` lines of result-05.log (each with its line end), then ``tail``."""
    text = "".join(line + "\n" for line in _lines(PROFILE_LOG)[:keep]) + tail
    path = tmp_path / "cut.log"
    path.write_text(text, encoding="utf-8")
    return path


def test_complete_logs_parse_as_complete() -> None:
    for name in ("result-03.log", "result-04.log", "result-05.log"):
        log = load_trtexec_log(TRT_SAMPLES / name)
        assert log.problems == [] and not log.profile_cut, name
    full = load_trtexec_log(PROFILE_LOG).profile
    assert full is not None and type(full) is EngineProfile
    assert len(full.layers) == 15 and full.count == 18362
    assert (full.total_time_ms, full.total_average_ms, full.total_median_ms) == (
        1529.13,
        0.0833,
        0.0804,
    )
    report = build_report(load_engine([LAYER_JSON_10, PROFILE_LOG]))
    assert not any("cut off" in n for n in report.notes)


def test_a_log_cut_inside_the_profile_table_says_so(tmp_path: Path) -> None:
    path = _cut(tmp_path, 92)  # as the designer keeps the log of a cancelled run
    log = load_trtexec_log(path)
    assert isinstance(log.profile, CutProfile) and log.profile_cut
    assert len(log.profile.layers) == 8 and log.profile.total_time_ms is None
    assert log.problems == [log.profile.problem]
    problem = log.profile.problem
    assert str(path) in problem and "8 layer(s)" in problem and "'Total'" in problem
    assert "cut off" in problem and "finished run" in problem
    assert "no line end" not in problem  # every line it kept is whole
    report = build_report(load_engine([LAYER_JSON_10, path]))
    assert report.layers_sum_ms == pytest.approx(log.profile.sum_average_ms)
    assert report.notes[0] == problem  # shown first, above every number it affects


def test_a_partial_last_row_is_called_out(tmp_path: Path) -> None:
    row = _lines(PROFILE_LOG)[92]  # the 9th row: "...   5.1   __myl_Resh_myl5_1"
    assert row.endswith("__myl_Resh_myl5_1")
    path = _cut(tmp_path, 92, row[:-6])  # the writer stopped inside the layer's name
    log = load_trtexec_log(path)
    assert log.profile_cut and log.profile is not None and len(log.profile.layers) == 9
    assert "no line end" in log.problems[0] and "may be cut" in log.problems[0]


def test_a_table_broken_off_by_another_line_is_cut_too() -> None:
    lines = _lines(PROFILE_LOG)
    start = next(i for i, line in enumerate(lines) if "=== Profile (" in line)
    end = next(i for i, line in enumerate(lines) if line.endswith("  Total"))
    kept = [*lines[: start + 5], lines[end + 1], *lines[end + 2 :]]  # rows 1-3, no Total
    log = parse_trtexec_log(kept, Path("broken.log"))
    assert log.profile_cut and log.profile is not None and len(log.profile.layers) == 3
    assert "3 layer(s)" in log.problems[0]


# ------------------------------------------------------------------ 3. engine weights


def test_weights_with_the_build_log_are_the_engines_total() -> None:
    for files in ([LAYER_JSON_10, BUILD_LOG], [BUILD_LOG]):  # the log's dump stands in
        report = build_report(load_engine(files, siblings=False))
        assert report.weights_bytes == 13100672 and report.weights_source == "build log"
        assert report.weights_complete and report.weights_in_layers == 208384
        summary = {row[0]: row[1] for row in report.summary()}
        assert summary["weights"] == 13100672
        assert not any("lower bound" in n for n in report.notes)


def test_weights_the_layers_record_only_in_part_are_a_lower_bound() -> None:
    report = build_report(load_engine(LAYER_JSON_10, siblings=False))
    # The Myelin gemm (3136x1024 FP32, 12.25 MiB) records no Weights: 0.2 MiB is not the
    # engine's weights.
    assert report.weights_source == "layers (lower bound)" and not report.weights_complete
    assert report.weights_bytes == report.weights_in_layers == 208384
    assert "node_linear_myl4_0" in report.weights_unrecorded
    summary = {row[0]: row[1] for row in report.summary()}
    assert summary["weights"] is None and summary["weights_lower_bound"] == 208384
    note = next(n for n in report.notes if "lower bound" in n)
    assert "0.20 MiB" in note and "node_linear_myl4_0" in note and "Total Weights Memory" in note


def test_weights_every_layer_records_are_the_total() -> None:
    report = build_report(load_engine(A100_FP32, siblings=False))
    expected = sum(layer.weights_bytes or 0 for layer in report.bundle.graph.layers)
    assert report.weights_source == "layers" and report.weights_complete
    assert report.weights_bytes == expected > 0 and report.weights_unrecorded == ()
    assert {row[0]: row[1] for row in report.summary()}["weights"] == expected


def test_fused_conv_act_pool_weights_are_counted() -> None:
    report = build_report(load_engine(A100_QAT_RESIDUAL, siblings=False))
    fused = next(x for x in report.bundle.graph.layers if x.kind == "ConvActPool")
    assert fused.weights_bytes is None  # it records ConvWeights / ConvBias, not Weights
    assert fused.raw["ConvWeights"] == {"Type": "Int8", "Count": 9408}
    plain = sum(layer.weights_bytes or 0 for layer in report.bundle.graph.layers)
    assert report.weights_bytes == plain + 9408 * 1 + 64 * 4
    assert report.weights_source == "layers"


def test_build_logs_that_disagree_give_no_total(tmp_path: Path) -> None:
    # Derived: result-04.log with another Total Weights Memory (the log of another build).
    other = tmp_path / "other-build.log"
    text = BUILD_LOG.read_text(encoding="utf-8")
    assert "Total Weights Memory: 13100672 bytes" in text
    other.write_text(text.replace("13100672 bytes", "6550336 bytes"), encoding="utf-8")
    report = build_report(load_engine([LAYER_JSON_10, BUILD_LOG, other], siblings=False))
    assert report.weights_source == "layers (lower bound)"
    note = next(n for n in report.notes if "different" in n)
    assert "13100672" in note and "6550336" in note and "lower bound" in note


def _model_named(*names: str) -> Any:
    from onnx import helper

    nodes = [helper.make_node("Relu", [f"x{i}"], [f"y{i}"], name=n) for i, n in enumerate(names)]
    return helper.make_model(helper.make_graph(nodes, "given", [], []))


def test_report_refuses_a_model_none_of_whose_nodes_the_engine_names() -> None:
    from designer.activities.analysis.trt_source import NotAProfileError, trt_profile

    profile = A100_FP16_PROFILE
    with pytest.raises(NotAProfileError, match="names a node of the model given"):
        trt_profile(profile, model=_model_named("features.0.conv", "classifier.1"))
    some = trt_profile(profile, model=_model_named("Conv_0", "Relu_1", "MaxPool_2"))
    assert any("name none of the model's" in note for note in some.notes)  # said, not hidden
    assert trt_profile(profile).nodes  # no model: as before


def test_report_of_a_cut_log_says_so(tmp_path: Path) -> None:
    from designer.activities.analysis.trt_source import trt_profile

    cut = _cut(tmp_path, 92)
    notes = trt_profile(cut).notes
    assert any("Total" in note or "cut" in note for note in notes[:1]), notes
    assert not any("cut" in note for note in trt_profile(PROFILE_LOG).notes)


def test_a_damaged_file_beside_the_engine_is_named_not_skipped_silently(tmp_path: Path) -> None:
    import shutil

    graph = tmp_path / "resnet.onnx.engine.graph.json"
    shutil.copy(A100_FP16, graph)
    whole = A100_FP16_PROFILE.read_bytes()
    (tmp_path / "resnet.onnx.engine.profile.json").write_bytes(whole[:1500])  # a cut run's
    bundle = load_engine(graph)
    assert bundle.profile is None
    assert len(bundle.skipped) == 1 and "cut-off JSON" in bundle.skipped[0]
    assert "profile.json" in bundle.skipped[0]
    assert any("cut-off JSON" in note for note in build_report(bundle).notes)
    (tmp_path / "resnet.onnx.engine.profile.json").write_bytes(whole)  # whole again
    again = load_engine(graph)
    assert again.profile is not None and again.skipped == ()


def test_an_ort_profile_with_a_model_it_did_not_profile_is_refused() -> None:
    """The ONNX Runtime side of the same check: the profile of tiny_cnn with SqueezeNet."""
    import onnx
    from helpers.shared import ORT_FIXTURES, model

    from designer.activities.analysis.profile import ModelMismatchError, load_profile

    profile = next(ORT_FIXTURES.glob("tiny_cnn_opt-disabled_ort_profile_*.json"))
    own = onnx.load(str(ORT_FIXTURES / "tiny_cnn.onnx"))
    assert any(n.onnx_nodes for n in load_profile(profile, model=own).nodes)
    other = onnx.load(str(model("squeezenet1_0.torchscript.onnx")))
    with pytest.raises(ModelMismatchError, match="none of its"):
        load_profile(profile, model=other)
