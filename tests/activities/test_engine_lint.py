"""Each engine lint rule fires on a real engine (or one derived from a real one, as said) and
stays silent on another."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.engine_fixtures import (
    A100_FP16,
    A100_FP32,
    A100_QAT,
    A100_QAT_QGAP,
    A100_QAT_RESIDUAL,
    LAYER_JSON_10,
    RTX_FP16,
    RTX_FP32,
    RTX_QAT,
    all_trex_graphs,
    names_only,
    read,
    write,
)
from helpers.shared import TRT_SAMPLES

from designer.activities.reports.engine_bundle import EngineBundle, load_engine
from designer.activities.reports.engine_lint import (
    RULES,
    ChannelAlignment,
    Finding,
    Fp32WhereReducedAllowed,
    Fp32WithoutTf32,
    Int8ConvFloatOutput,
    LintRule,
    ReformatAtIO,
    SliceShuffleSegments,
    SlowerThanRequested,
    TooManyReformats,
    UnfusedQdq,
    lint,
)


def run(rule: type[LintRule], bundle: EngineBundle) -> list[Finding]:
    findings = rule().check(bundle)
    for f in findings:
        assert f.rule == rule.id and f.layers and f.found and f.fix
        assert f.layers[0] in {layer.name for layer in bundle.graph.layers}
    return findings


def test_int8_conv_with_float_output_feeding_int8() -> None:
    qat = run(Int8ConvFloatOutput, load_engine(A100_QAT))
    # TREx's article counts 13 INT8 convs with float output; 10 of them feed an INT8 layer
    # (conv1 feeds a float MaxPool, the FC is the last layer, one feeds only a float reformat)
    assert len(qat) == 10
    assert qat[0].layers == (
        "layer1.0.conv2.weight + QuantizeLinear_32 + Conv_34 + Add_36 + Relu_37",
        "QuantizeLinear_40",
        "layer1.1.conv2.weight + QuantizeLinear_57 + Conv_59 + Add_61 + Relu_62",
    )
    assert "Q" in qat[0].fix and "residual" in qat[0].fix
    assert run(Int8ConvFloatOutput, load_engine(A100_QAT_QGAP)) == []  # Q/DQ fixed: silent
    assert run(Int8ConvFloatOutput, load_engine(A100_FP16)) == []


def test_unfused_qdq() -> None:
    qat = run(UnfusedQdq, load_engine(A100_QAT))
    assert [f.severity for f in qat].count("warning") == 9
    assert qat[0].layers == ("QuantizeLinear_2",) and qat[0].severity == "info"  # input quantize
    assert run(UnfusedQdq, load_engine(A100_FP16)) == []


def test_too_many_reformats() -> None:
    found = run(TooManyReformats, load_engine(A100_QAT))
    assert len(found) == 1 and len(found[0].layers) == 11 and "19.8 %" in found[0].found
    assert run(TooManyReformats, load_engine(A100_QAT_QGAP)) == []  # only the input quantize
    assert run(TooManyReformats, load_engine(A100_FP32)) == []


def test_reformats_at_engine_io() -> None:
    found = run(ReformatAtIO, load_engine(A100_FP16))
    assert [f.layers[0] for f in found] == [
        "Reformatting CopyNode for Input Tensor 0 to Conv_0 + Relu_1",
        "Reformatting CopyNode for Output Tensor 0 to reshape_after_Gemm_48",  # via NoOp
    ]
    assert "--inputIOFormats=fp16:hwc4" in found[0].fix and "input" in found[0].found
    assert "--outputIOFormats" in found[1].fix
    assert run(ReformatAtIO, load_engine(A100_FP32)) == []  # its reformat is mid-network


def test_fp32_layers_where_fp16_was_allowed() -> None:
    found = run(Fp32WhereReducedAllowed, load_engine(A100_QAT))
    assert [f.layers[0] for f in found] == ["MaxPool_12"]
    assert "FP16/INT8" in found[0].found
    assert run(Fp32WhereReducedAllowed, load_engine(A100_FP32)) == []  # FP16 not allowed
    assert run(Fp32WhereReducedAllowed, load_engine(A100_FP16)) == []  # all FP16
    assert run(Fp32WhereReducedAllowed, load_engine(A100_QAT, siblings=False)) == []  # unknown


def test_fp32_without_tf32() -> None:
    # The 10.16 build log says TF32 is on by default; the second conv (32 channels) ran an
    # sm50 FP32 kernel. The first (1 channel) is too small for Tensor Cores and not counted.
    found = run(Fp32WithoutTf32, load_engine([LAYER_JSON_10, TRT_SAMPLES / "result-04.log"]))
    assert [f.layers[0] for f in found] == ["node_conv2d_1 + node_relu_1"]
    assert "32 input channels" in found[0].found
    rtx = run(Fp32WithoutTf32, load_engine(RTX_FP32))  # some convs use ffma / scudnn kernels
    assert rtx and all("tf32" not in f.found for f in rtx)
    assert run(Fp32WithoutTf32, load_engine(A100_FP32)) == []  # every conv ≥ 8 ch uses tf32
    assert run(Fp32WithoutTf32, load_engine(LAYER_JSON_10)) == []  # build options unknown


def test_channel_alignment() -> None:
    found = run(ChannelAlignment, load_engine(A100_QAT))
    assert len(found) == 1 and "output channels 1000" in found[0].found  # INT8 FC: % 16
    assert "16" in found[0].fix
    # FP16: 1000 is a multiple of 8; the 3-channel image input is not counted
    assert run(ChannelAlignment, load_engine(A100_FP16)) == []
    assert run(ChannelAlignment, load_engine(LAYER_JSON_10)) == []  # C=1 input, 32/64/1024


def test_slower_than_requested(tmp_path: Path) -> None:
    # Derived: the real build log of this engine with "--layerPrecisions=node_conv2d:fp16"
    # added to its command line; the real layer JSON shows that conv stayed FP32.
    text = (TRT_SAMPLES / "result-04.log").read_text(encoding="utf-8")
    asked = tmp_path / "build.log"
    asked.write_text(
        text.replace("--skipInference", "--skipInference --layerPrecisions=node_conv2d:fp16"),
        encoding="utf-8",
    )
    found = run(SlowerThanRequested, load_engine([LAYER_JSON_10, asked]))
    assert [f.layers[0] for f in found] == ["node_conv2d + node_relu"]
    assert "FP16 was requested" in found[0].found and "obey" in found[0].fix
    real = load_engine([LAYER_JSON_10, TRT_SAMPLES / "result-04.log"])
    assert run(SlowerThanRequested, real) == []
    # explicit quantization is a request for INT8: every quantized conv got it
    assert run(SlowerThanRequested, load_engine(A100_QAT)) == []


def test_slice_shuffle_heavy_segments() -> None:
    found = run(SliceShuffleSegments, load_engine(RTX_QAT))
    assert len(found) == 1
    assert found[0].layers == (
        "resnet50/conv1_pad/Pad",
        "QuantLinearNode__838",
        "resnet50/quant_conv1_conv/BiasAdd__1121",
    )
    assert "8.2 %" in found[0].found
    assert run(SliceShuffleSegments, load_engine(RTX_FP16)) == []  # Shuffle+Reformat, 3.0 %
    assert run(SliceShuffleSegments, load_engine(A100_FP32)) == []


def test_every_rule_has_an_id_and_title() -> None:
    assert len({rule.id for rule in RULES}) == len(RULES) == 9
    assert all(rule.title for rule in RULES)


@pytest.mark.parametrize("graph", all_trex_graphs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_trex_engine_lints(graph: Path) -> None:
    findings = lint(load_engine(graph))
    ranks = [("info", "warning", "error").index(f.severity) for f in findings]
    assert ranks == sorted(ranks, reverse=True)


def test_lint_of_the_10x_engine_and_names_only(tmp_path: Path) -> None:
    assert lint(load_engine(LAYER_JSON_10)) == []
    bare = load_engine(write(tmp_path / "n.json", names_only(read(LAYER_JSON_10))))
    assert lint(bare) == []  # nothing recorded, nothing claimed
    residual = lint(load_engine(A100_QAT_RESIDUAL))
    assert {f.rule for f in residual} >= {"unfused-qdq", "channel-alignment"}
