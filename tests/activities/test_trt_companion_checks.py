"""TensorRT files of different engines are not combined, Q/DQ layers are not called reformat
casts, and what a trtexec log does not record is not guessed (QA analysis defects 1, 2, 5,
10, 12), on the real TREx exports and the TensorRT 10.16 cookbook recordings."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.engine_fixtures import A100, LAYER_JSON_10, RTX3090, TREX_INPUTS
from helpers.shared import TRT_SAMPLES

from designer.activities.analysis import analyze
from designer.activities.analysis.analyze import Analysis
from designer.activities.reports.engine_bundle import load_engine, with_profile
from designer.activities.reports.engine_compare import compare_engines, comparison_tables
from designer.activities.reports.engine_report import build_report
from designer.activities.reports.trt_engine import EngineFormatError
from designer.cli import main

pytestmark = pytest.mark.skipif(not A100.is_dir(), reason=f"{A100} (shared fixtures) is absent")

A100_FP16_GRAPH = A100 / "fp16" / "resnet.onnx.engine.graph.json"
A100_FP16_PROFILE = A100 / "fp16" / "resnet.onnx.engine.profile.json"
RTX_FP16 = RTX3090 / "fp16"  # ResNet50 (TensorFlow export): 86 layers, none of ResNet18's
RTX_PROFILE = RTX_FP16 / "resnet.onnx.engine.profile.json"
PROFILE_LOG = TRT_SAMPLES / "result-05.log"  # 10.16 --dumpProfile of a rebuilt engine


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _alone(tmp_path: Path, source: Path) -> Path:
    """A copy of ``source`` with nothing of its engine beside it."""
    folder = tmp_path / "alone"
    folder.mkdir(exist_ok=True)
    return Path(shutil.copy(source, folder / source.name))


# --- 1: engine report refuses another engine's profile, as the window does ----------------
def test_engine_report_refuses_the_profile_of_another_engine(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    graph = _alone(tmp_path, A100_FP16_GRAPH)
    with pytest.raises(EngineFormatError) as gui:  # what Load Profile… says
        with_profile(load_engine(graph), RTX_PROFILE)
    for verb in ("report", "info", "lint"):
        code, out, err = run(capsys, "engine", verb, str(graph), str(RTX_PROFILE))
        assert code == 1 and out == "", verb
        assert err.strip() == f"onnx-designer: error: {gui.value}"
        assert "profiles another engine: 0 of its 86 layers" in err and "not loaded" in err


def test_engine_report_leaves_out_a_foreign_profile_found_beside(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    graph = _alone(tmp_path, A100_FP16_GRAPH)
    shutil.copy(RTX_PROFILE, graph.with_name("resnet.onnx.engine.profile.json"))
    code, out, _ = run(capsys, "engine", "report", str(graph))
    assert code == 0
    assert "note: skipped resnet.onnx.engine.profile.json profiles another engine" in out
    assert "not in the layer JSON" not in out  # no ResNet50 times on ResNet18's layers


def test_engine_report_takes_the_engines_own_profile(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    graph = _alone(tmp_path, A100_FP16_GRAPH)
    code, out, err = run(capsys, "engine", "report", str(graph), str(A100_FP16_PROFILE))
    assert code == 0 and err == "" and "Latency by layer type:" in out


# --- 2: report --with does not mix in another engine's layer JSON or timing ---------------
def _profile_copy(tmp_path: Path) -> Path:
    """The A100 ResNet18 FP16 profile alone (its own companions not beside it)."""
    folder = tmp_path / "p2"
    folder.mkdir()
    return Path(shutil.copy(A100_FP16_PROFILE, folder / "a100fp16.profile.json"))


def test_report_with_another_engines_companions_warns_and_does_not_mix(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    profile = _profile_copy(tmp_path)
    layers = RTX_FP16 / "resnet.onnx.engine.graph.json"
    timing = RTX_FP16 / "resnet.onnx.engine.timing.json"
    code, _, err = run(
        capsys, "report", str(profile), "--with", str(layers), "--with", str(timing),
        "--output", str(tmp_path / "out"),
    )  # fmt: skip
    assert code == 0
    warnings = [line for line in err.splitlines() if line.startswith("onnx-designer: warning")]
    assert len(warnings) == 2
    assert "describes another engine: 0 of the 36 layers" in warnings[0]
    assert "timing.json is not combined" in warnings[1] and "4.022 ms" in warnings[1]
    analysis = analyze(profile, extra=[layers, timing])
    assert len(analysis.profile.warnings) == 2
    assert analysis.profile.iterations == []  # not the RTX-3090 ResNet50 iteration times
    assert {n.op_type for n in analysis.profile.nodes} == {"Reformat", "not recorded"}
    casts = [f for f in analysis.findings if f.detector == "cast-reformat"]
    assert [f.problem.split(" ")[0] for f in casts] == ["2"]  # not the 10 zero-time copies


def test_report_with_the_engines_own_companions_combines_them(tmp_path: Path) -> None:
    profile = _profile_copy(tmp_path)
    analysis = analyze(
        profile,
        extra=[A100_FP16_GRAPH, A100 / "fp16" / "resnet.onnx.engine.timing.json"],
    )
    assert analysis.profile.warnings == []
    assert len(analysis.profile.iterations) == 3698
    assert "Convolution" in {n.op_type for n in analysis.profile.nodes}


def test_report_of_a_log_with_another_builds_layer_json_warns() -> None:
    analysis = analyze(PROFILE_LOG, extra=[LAYER_JSON_10])  # 2 of 15 layers match
    (warning,) = analysis.profile.warnings
    assert "model-trained-exportLayerInfo.log describes another engine" in warning
    assert "2 of the 15 layers of result-05.log" in warning
    assert not any(n.precision for n in analysis.profile.nodes)  # nothing taken from it


# --- 5: Q/DQ layers of QAT engines are no reformat casts ------------------------------------
def _cast_findings(analysis: Analysis) -> list[str]:
    return [f.problem for f in analysis.findings if f.detector == "cast-reformat"]


@pytest.mark.parametrize(
    ("profile", "qdq"),
    [
        (A100 / "qat" / "resnet-qat.onnx.engine.profile.json", 10),
        (TREX_INPUTS / "mobilenet.qat.onnx.engine.profile.json", 17),
        (A100 / "qat-residual" / "resnet-qat-residual.onnx.engine.profile.json", 3),
    ],
)
def test_qat_engines_get_qdq_placement_advice_not_fp16(profile: Path, qdq: int) -> None:
    analysis = analyze(profile)
    findings = [f for f in analysis.findings if f.detector == "cast-reformat"]
    assert findings, analysis.findings
    assert not any("FP16" in f.fix and "convert the whole model" in f.fix for f in findings)
    (qdq_finding,) = [f for f in findings if "quantize/dequantize" in f.problem]
    assert qdq_finding.problem.startswith(f"{qdq} stand-alone")
    assert "Q/DQ" in qdq_finding.fix and "INT8" in qdq_finding.fix
    assert all(n.startswith(("QuantizeLinear_", "DequantizeLinear_")) for n in qdq_finding.nodes)
    flagged = {n.name for n in analysis.profile.nodes if n.qdq}
    lint = load_engine(profile.with_name(profile.name.replace(".profile.", ".graph.")))
    assert flagged == {layer.name for layer in lint.graph.layers if layer.is_qdq}


def test_an_engine_with_real_reformats_still_gets_the_finding() -> None:
    analysis = analyze(A100_FP16_PROFILE)
    (problem,) = _cast_findings(analysis)
    assert problem.startswith("2 Cast/reformat/layout node(s) (Reformat)")
    (finding,) = [f for f in analysis.findings if f.detector == "cast-reformat"]
    assert "FP16 with --keep-io-types" in finding.fix  # a float engine: FP16 advice fits
    assert all(n.startswith("Reformatting CopyNode") for n in finding.nodes)


# --- 10: a trtexec log alone: types, tactics, Tensor Core use are not recorded ---------------
def test_log_without_layer_json_guesses_no_types_or_kernels() -> None:
    analysis = analyze(PROFILE_LOG)
    nodes = {n.name: n for n in analysis.profile.nodes}
    conv = nodes["node_conv2d_1_myl3_1"]
    assert conv.op_type == "not recorded" and conv.kernels == ()
    assert nodes["__myl_Cast_myl5_7"].op_type == "not recorded"
    reformat = next(n for n in nodes.values() if n.name.startswith("Reformatting CopyNode"))
    assert reformat.op_type == "Reformat"  # TensorRT's own name for what it inserts
    tables = analysis.tables()
    assert "Myelin" not in tables["detail"].column_values("op_type")
    assert set(tables["detail"].column_values("tensor_core")) == {None}
    kernel = tables["kernel"]
    assert set(kernel.column_values("source")) == {"not recorded"}
    assert set(kernel.column_values("tensor_core")) == {None}


# --- 12: engine compare counts layers as info/report do, and says the units ----------------
def test_compare_counts_all_layers_and_labels_deltas_apart(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fp32, fp16 = A100 / "fp32" / "resnet.onnx.engine.graph.json", A100_FP16_GRAPH
    bundles = [load_engine(fp32), load_engine(fp16)]
    summary = comparison_tables(compare_engines(bundles))[0]
    layers = summary.column_values("layers")
    assert layers == [len(b.graph.layers) for b in bundles] == [32, 36]
    for bundle, count in zip(bundles, layers, strict=True):
        mix = build_report(bundle).by_precision
        assert sum(s.count for s in mix) == count  # the same row's precision mix
    columns = {c.key: c for c in summary.columns}
    assert "NoOp" in columns["layers"].label
    delta, relative = columns["delta_ms"], columns["delta_percent"]
    assert delta.label != relative.label and (delta.unit, relative.unit) == ("ms", "%")
    code, out, _ = run(capsys, "engine", "compare", str(fp32), str(fp16))
    header = out.splitlines()[1]
    assert code == 0 and "Δ vs first (ms)" in header and "Δ vs first, relative (%)" in header
    assert "Latency (ms)" in header
