"""Real trtexec 10.16 logs (H100) parse to the numbers they state."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.engine_fixtures import LAYER_JSON_10
from helpers.shared import TRT_SAMPLES

from designer.activities.reports.engine_bundle import load_engine
from designer.activities.reports.trt_engine import EngineFormatError, load_graph
from designer.activities.reports.trtexec_log import (
    is_trtexec_log,
    load_trtexec_log,
    parse_layer_dump_line,
    parse_trtexec_log,
    version_from_code,
)


def test_performance_summary_of_result_03() -> None:
    log = load_trtexec_log(TRT_SAMPLES / "result-03.log")
    assert log.trt_version == "10.16.1" and log.status == "PASSED"
    assert "--useCudaGraph" in log.flags and "--shapes=x:4x1x28x28" in log.flags
    perf = log.performance
    assert perf is not None and perf.throughput_qps == 24896.9
    assert perf.latency is not None and perf.latency.as_dict() == {
        "min": 0.0383301,
        "max": 0.0651855,
        "mean": 0.0387646,
        "median": 0.0388184,
        "p90": 0.0388489,
        "p95": 0.0389404,
        "p99": 0.0390625,
    }
    assert perf.enqueue is not None and perf.enqueue.mean == 0.00197413
    assert perf.enqueue.percentile(99) == 0.00244141
    assert perf.h2d is not None and perf.h2d.max == 0 and perf.d2h is not None
    assert perf.gpu_compute is not None and perf.gpu_compute.median == 0.0388184
    assert perf.total_host_walltime_s == 3.00005 and perf.total_gpu_compute_s == 2.89541
    device = log.device
    assert device is not None and device.name == "NVIDIA H100 PCIe"
    assert device.compute_capability == "9.0" and device.sms == 114
    assert device.global_memory_mib == 81081 and device.memory_bus_width_bits == 5120
    assert device.compute_clock_ghz == 1.755
    assert log.io_bindings == [
        ("Input", "x", "4x1x28x28", "fp32"),
        ("Output", "y", "4x10", "fp32"),
        ("Output", "z", "4", "int64"),
    ]
    assert log.section("Inference Options")["CUDA Graph"] == "Enabled"
    assert log.build is None  # a --loadEngine run builds nothing
    assert log.run is not None and log.run.inference_options["Spin-wait"] == "Enabled"


def test_build_log_result_04_and_its_layer_dump() -> None:
    log = load_trtexec_log(TRT_SAMPLES / "result-04.log")
    assert log.build is not None and log.build.precision == "FP32"
    assert log.build.model_options["Format"] == "ONNX"
    assert log.build.build_options["Profiling verbosity"] == "2"
    assert log.tf32_default
    assert log.memory_bytes["Total Weights Memory"] == 13100672
    assert log.memory_bytes["Total Activation Memory"] == 125440
    assert log.engine_size_mib == 12.5765 and log.build_time_s == 8.05109
    assert log.performance is None and log.profile is None and log.run is None
    assert any("Int64 binding" in w for w in log.warnings)
    # --dumpLayerInfo printed the same engine description as the exported JSON (other build:
    # tactics may differ)
    dumped, exported = log.graph, load_graph(LAYER_JSON_10)
    assert dumped is not None and len(dumped.layers) == len(exported.layers) == 9
    for a, b in zip(dumped.layers, exported.layers, strict=True):
        strip = {"TacticName", "TacticValue"}
        assert {k: v for k, v in a.raw.items() if k not in strip} == {
            k: v for k, v in b.raw.items() if k not in strip
        }
        assert a.onnx_nodes == b.onnx_nodes
    assert [t.name for t in dumped.io_tensors] == ["x", "y", "z"]


def test_profile_table_of_result_05() -> None:
    log = load_trtexec_log(TRT_SAMPLES / "result-05.log")
    profile = log.profile
    assert profile is not None and profile.count == 18362 and len(profile.layers) == 15
    conv = profile.by_name()["node_conv2d_myl0_1"]
    assert (conv.time_ms, conv.average_ms, conv.median_ms, conv.percentage) == (
        193.50,
        0.0105,
        0.0098,
        12.7,
    )
    name = "Reformatting CopyNode for Input Tensor 0 to {ForeignNode[node_conv2d_1...node_relu_1]}"
    assert profile.by_name()[name].average_ms == 0.0056
    assert (profile.total_time_ms, profile.total_average_ms, profile.total_median_ms) == (
        1529.13,
        0.0833,
        0.0804,
    )
    assert sum(p.percentage or 0 for p in profile.layers) == pytest.approx(100, abs=0.3)
    assert log.performance is None  # --dumpProfile without --separateProfileRun prints none


def test_a_log_alone_opens_as_an_engine_and_logs_complete_a_bundle() -> None:
    bundle = load_engine(TRT_SAMPLES / "result-04.log")
    assert len(bundle.graph.layers) == 9 and bundle.trt_version == "10.16.1"
    assert bundle.version_family == "10.x"
    full = load_engine(
        [LAYER_JSON_10, TRT_SAMPLES / "result-04.log", TRT_SAMPLES / "result-05.log"]
    )
    assert full.graph.source == LAYER_JSON_10
    assert full.build is not None and full.build.precision == "FP32"
    assert full.allowed_precisions == {"FP32", "TF32"}
    assert full.profile is not None and full.profile.count == 18362
    assert full.device is not None and full.device.name == "NVIDIA H100 PCIe"
    with pytest.raises(EngineFormatError, match="no engine layers found"):
        load_engine(TRT_SAMPLES / "result-03.log")


def test_help_text_is_not_an_engine() -> None:
    with pytest.raises(EngineFormatError):
        load_engine(TRT_SAMPLES / "Help.txt")


def test_small_pieces() -> None:
    assert version_from_code("101601") == "10.16.1"
    assert version_from_code(8601) == "8.6.1" and version_from_code("8205") == "8.2.5"
    assert not is_trtexec_log("hello")
    dump = parse_layer_dump_line(
        "Name: a + b, LayerType: kgen, Inputs: [ { Name: x, Dimensions: [1,2], "
        "Format/Datatype: Half }], Outputs: [], TacticName: t, StreamId: 0, Metadata: "
    )
    assert dump == {
        "Name": "a + b",
        "LayerType": "kgen",
        "Inputs": [{"Name": "x", "Dimensions": [1, 2], "Format/Datatype": "Half"}],
        "Outputs": [],
        "TacticName": "t",
        "StreamId": 0,
        "Metadata": "",
    }
    cut = parse_trtexec_log(
        [
            "[07/07/2026-02:11:43] [I] === Profile (10 iterations ) ===",
            "[07/07/2026-02:11:43] [I]    Time(ms)     Avg.(ms)   Time(%)   Layer",
            "[07/07/2026-02:11:43] [I]       1.00       0.1000     100.0   conv",
        ],
        Path("cut.log"),
    )
    assert cut.profile is not None and cut.profile.layers[0].median_ms is None
    assert cut.status is None and cut.trt_version is None
