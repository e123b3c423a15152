"""Comparing real engines: FP32 vs FP16 vs QAT ResNet18 (A100), Keras ResNet50 (RTX 3090)."""

from __future__ import annotations

import pytest
from helpers.engine_fixtures import A100_FP16, A100_FP32, A100_QAT, RTX_FP16, RTX_FP32, RTX_QAT

from designer.activities.reports.engine_bundle import load_engine
from designer.activities.reports.engine_compare import compare_engines, comparison_tables


def test_fp32_fp16_qat_summary_and_type_deltas() -> None:
    cmp = compare_engines([load_engine(p) for p in (A100_FP32, A100_FP16, A100_QAT)])
    assert cmp.names == [
        "fp32/resnet.onnx.engine",
        "fp16/resnet.onnx.engine",
        "qat/resnet-qat.onnx.engine",
    ]
    lat = [cmp.latency(i) for i in range(3)]
    assert lat == [1.99072, 0.862183, 0.882568]
    summary, types, _ = comparison_tables(cmp)
    rows = summary.records()
    assert rows[1]["delta_ms"] == pytest.approx(0.862183 - 1.99072)
    assert rows[1]["delta_percent"] is not None and rows[1]["delta_percent"] < -50
    assert rows[2]["reformats"] == 12 and "INT8 22" in str(rows[2]["precision_mix"])
    conv = cmp.type_latency()["Convolution"]
    assert conv[1] is not None and conv[0] is not None and conv[1] < conv[0]
    assert cmp.type_counts()["Reformat"] == [1, 2, 12]
    conv_row = next(r for r in types.records() if r["type"] == "Convolution")
    assert conv_row["delta_ms_1"] == pytest.approx(conv[1] - conv[0])
    chart = cmp.chart_data()
    assert chart["engines"] == cmp.names and chart["latency_ms"] == lat
    assert cmp.precision_mix()["INT8"] == [0, 0, 22]


def test_layers_match_through_onnx_node_names() -> None:
    cmp = compare_engines([load_engine(A100_FP32), load_engine(A100_FP16)])
    assert len(cmp.groups) == 23
    first = cmp.groups[0]
    assert first.onnx_nodes == ("Conv_0", "Relu_1")
    assert first.layers == (("Conv_0 + Relu_1",), ("Conv_0 + Relu_1",))
    assert first.precision == ("FP32", "FP16")
    assert first.latency_ms[0] is not None and first.latency_ms[1] is not None
    assert first.latency_ms[1] < first.latency_ms[0]
    matched = comparison_tables(cmp)[2]
    assert matched.records()[0]["delta_ms_1"] == pytest.approx(
        first.latency_ms[1] - first.latency_ms[0]
    )


def test_keras_resnet50_fp32_fp16_qat_on_rtx3090() -> None:
    cmp = compare_engines([load_engine(p) for p in (RTX_FP32, RTX_FP16, RTX_QAT)])
    lat = [cmp.latency(i) for i in range(3)]
    assert lat[0] is not None and lat[1] is not None and lat[2] is not None
    assert lat[2] < lat[1] < lat[0]  # INT8 < FP16 < FP32
    assert len(cmp.groups) > 40  # TF node names are shared by the FP32 and FP16 exports
    assert all(sum(1 for layers in g.layers if layers) >= 2 for g in cmp.groups)


def test_needs_two_engines() -> None:
    with pytest.raises(ValueError, match="at least two"):
        compare_engines([load_engine(A100_FP16)])
