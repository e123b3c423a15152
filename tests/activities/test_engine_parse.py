"""Parsing real TensorRT engine files: layer JSON (8.x, 10.x, 11-style), profiles, metadata."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.engine_fixtures import (
    A100_FP16,
    A100_QAT,
    LAYER_JSON_10,
    RTX_QAT,
    TREX_INPUTS,
    all_trex_graphs,
    names_only,
    read,
    to_trt11,
    write,
)
from helpers.shared import TRT_SAMPLES

from designer.activities.reports.engine_bundle import engine_name, load_engine
from designer.activities.reports.trt_engine import (
    EngineFormatError,
    layout_of,
    load_graph,
    parse_graph,
    precision_of,
    split_metadata,
)
from designer.activities.reports.trt_profile import stats_from_list


@pytest.mark.parametrize("graph", all_trex_graphs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_trex_engine_opens_with_its_siblings(graph: Path) -> None:
    raw = read(graph)
    bundle = load_engine(graph)
    assert bundle.graph.version_family == "8.x"
    assert len(bundle.graph.layers) == len(raw["Layers"])
    assert [t.name for t in bundle.graph.io_tensors] == raw["Bindings"]
    assert {t.mode for t in bundle.graph.io_tensors} == {"Input", "Output"}
    assert all(t.dims for t in bundle.graph.io_tensors)
    # every sibling TREx wrote was found and parsed
    prefix = engine_name(graph) + "."
    expected = {
        p.name.removeprefix(prefix).removesuffix(".json")
        for p in graph.parent.iterdir()
        if p.name.startswith(prefix) and p.name.endswith(".json")
    }
    assert set(bundle.sources) == expected
    assert bundle.profile is not None
    assert len(bundle.profile.layers) == len(raw["Layers"])  # profile names match the layers
    assert (
        bundle.profile.count
        == read(graph.with_name(graph.name.replace("graph", "profile")))[0]["count"]
    )
    assert bundle.device is not None and bundle.device.name
    assert bundle.build is not None and bundle.build.precision
    assert bundle.performance is not None and bundle.performance.latency is not None
    for layer in bundle.graph.layers:
        assert layer.precision is not None, layer.name
        assert layer.raw["Name"] == layer.name


def test_10x_layer_json_named_log_opens() -> None:
    graph = load_graph(LAYER_JSON_10)
    assert graph.version_family == "10.x"
    assert [t.name for t in graph.io_tensors] == ["x", "y", "z"]
    assert [t.mode for t in graph.io_tensors] == ["Input", "Output", "Output"]
    assert graph.io_tensors[2].precision == "INT64"
    first = graph.layers[0]
    assert first.name == "node_conv2d + node_relu"
    assert first.kind == "Convolution" and first.layer_type == "CaskConvolution"
    assert first.onnx_nodes == ("node_conv2d", "node_relu")
    assert first.onnx_nodes_source == "metadata"
    assert first.weights_count == 800 and first.bias_count == 32
    assert first.weights_bytes == (800 + 32) * 4
    assert first.stream_id == 0
    assert first.inputs[0].dims == (1, 1, 28, 28) and first.inputs[0].precision == "FP32"
    gemm = graph.layers[4]
    assert gemm.kind == "gemm" and gemm.onnx_nodes == ("node_linear", "node_relu_2")  # \u001f
    assert gemm.inputs[0].location is None  # not recorded for Myelin tensors
    # empty Metadata: no ONNX nodes, and no guess from the Myelin name
    assert graph.layers[-1].onnx_nodes == () and graph.layers[-1].onnx_nodes_source == "none"
    assert graph.layers[-1].outputs[0].precision == "INT64"


def test_trt11_schema_built_from_the_10x_file_reads_the_same(tmp_path: Path) -> None:
    old = load_graph(LAYER_JSON_10)
    new = load_graph(write(tmp_path / "model.11.json", to_trt11(read(LAYER_JSON_10))))
    assert new.version_family == "11.x"
    assert len(new.layers) == len(old.layers)
    for a, b in zip(old.layers, new.layers, strict=True):
        assert (a.name, a.kind, a.precision, a.onnx_nodes, a.tactic) == (
            b.name,
            b.kind,
            b.precision,
            b.onnx_nodes,
            b.tactic,
        )
        assert [(t.name, t.dims, t.precision) for t in a.inputs + a.outputs] == [
            (t.name, t.dims, t.precision) for t in b.inputs + b.outputs
        ]
    assert [(t.name, t.mode, t.dims, t.precision) for t in old.io_tensors] == [
        (t.name, t.mode, t.dims, t.precision) for t in new.io_tensors
    ]
    x = new.io_tensors[0]
    assert x.datatype == "Float" and x.location == "Device" and x.is_shape_io is False
    assert x.profiles[0].min_shape == x.profiles[0].max_shape == (1, 1, 28, 28)
    assert new.layers[0].inputs[0].datatype == "Float"


def test_trt11_of_an_int8_engine_keeps_precisions(tmp_path: Path) -> None:
    old = load_graph(A100_QAT)
    new = load_graph(write(tmp_path / "qat.json", to_trt11(read(A100_QAT))))
    assert [layer.precision for layer in old.layers] == [layer.precision for layer in new.layers]
    assert [t.layout for layer in old.layers for t in layer.outputs] == [
        t.layout for layer in new.layers for t in layer.outputs
    ]


def test_bare_list_root_and_names_only(tmp_path: Path) -> None:
    layers = read(A100_FP16)["Layers"]
    bare = load_graph(write(tmp_path / "bare.json", layers))
    assert len(bare.layers) == len(layers) and bare.io_tensors == []
    names = load_graph(write(tmp_path / "names.json", names_only(read(LAYER_JSON_10))))
    assert not names.detailed and names.version_family == "unknown"
    assert names.layers[0].name == "node_conv2d + node_relu"
    assert names.layers[0].kind == "not recorded" and names.layers[0].precision is None
    assert [t.name for t in names.io_tensors] == ["x", "y", "z"]
    assert names.io_tensors[0].mode is None  # nothing says which is which
    dicts = [{"Name": layer["Name"]} for layer in layers]
    assert not load_graph(write(tmp_path / "dicts.json", {"Layers": dicts})).detailed


def test_missing_fields_degrade_to_not_recorded(tmp_path: Path) -> None:
    root = read(RTX_QAT)
    for layer in root["Layers"]:
        for key in ("ParameterType", "LayerType", "Weights", "TacticName", "TacticValue"):
            layer.pop(key, None)
        for tensor in layer["Inputs"] + layer["Outputs"]:
            tensor.pop("Dimensions")
            tensor["Format/Datatype"] = "Some future format"
        layer["Groups"] = "many"  # wrong type
    graph = load_graph(write(tmp_path / "sparse.json", root))
    layer = graph.layers[5]
    assert layer.kind == "not recorded" and layer.tactic is None and layer.weights_count is None
    assert layer.inputs[0].dims is None and layer.inputs[0].precision is None
    assert layer.inputs[0].size_bytes is None and layer.weights_bytes is None
    assert layer.inputs[0].label() == "not recorded"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("not json at all", "neither JSON nor a trtexec log"),
        ('{"nodes": []}', "JSON of unknown kind"),
        ("[1, 2, 3]", "JSON of unknown kind"),
    ],
)
def test_not_an_engine_file_is_one_line(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(content)
    with pytest.raises(EngineFormatError) as err:
        load_engine(path)
    message = str(err.value)
    assert "\n" not in message and expected in message and "--exportLayerInfo" in message


def test_parse_graph_errors_name_what_was_expected(tmp_path: Path) -> None:
    with pytest.raises(EngineFormatError, match="expected layers"):
        parse_graph({"Layers": [1, 2]})
    with pytest.raises(EngineFormatError, match="--exportLayerInfo"):
        parse_graph({"Bindings": []})
    with pytest.raises(EngineFormatError, match="no such file"):
        load_engine(tmp_path / "missing.json")
    with pytest.raises(EngineFormatError, match="a folder"):
        load_engine(tmp_path)
    plan = tmp_path / "model.engine"
    plan.write_bytes(b"ftrt\0\0\x01\x02" * 64)
    with pytest.raises(EngineFormatError, match="--exportLayerInfo"):
        load_engine(plan)
    profile_only = TREX_INPUTS / "mobilenet.qat.onnx.engine.profile.json"
    with pytest.raises(EngineFormatError, match="no engine layers found"):
        load_engine(profile_only)
    with pytest.raises(EngineFormatError, match="not JSON"):
        load_graph(TRT_SAMPLES / "result-03.log")


def test_format_helpers() -> None:
    assert precision_of("Row major linear FP32") == "FP32"
    assert precision_of("Channel major FP16 format where channel % 8 == 0") == "FP16"
    assert precision_of("Thirty-two wide channel vectorized row major Int8 format") == "INT8"
    assert precision_of("Row major linear BFloat16 format") == "BF16"
    assert precision_of("Half") == "FP16" and precision_of("Float") == "FP32"
    assert precision_of("Unknown format") is None and precision_of(None) is None
    assert layout_of("Thirty-two wide channel vectorized row major Int8 format") == "CHW32"
    assert layout_of("Channel major FP16 format where channel % 8 == 0") == "HWC8"
    assert layout_of("Row major linear FP32 format (kLINEAR)") == "LINEAR"
    assert layout_of("Float") is None
    assert split_metadata("[ONNX Layer: a]\u001e[ONNX Layer: b]\u001f[ONNX Layer: a]") == ("a", "b")
    assert split_metadata("") == ()


def test_8x_onnx_nodes_are_guessed_from_fused_names() -> None:
    graph = load_graph(TREX_INPUTS / "mobilenet.qat.onnx.engine.graph.json")
    conv = graph.layers[1]
    assert conv.onnx_nodes_source == "name"
    assert "Conv_12" in conv.onnx_nodes and "Clip_16" in conv.onnx_nodes
    assert not any(n.endswith(".weight") for n in conv.onnx_nodes)
    reformat = next(layer for layer in graph.layers if layer.name.startswith("Reformatting"))
    assert reformat.onnx_nodes == ()


def test_profile_metadata_lists_map_to_percentiles() -> None:
    five = stats_from_list([0.878601, 0.889893, 0.882274, 0.882568, 0.884766])
    assert five is not None and five.median == 0.882568 and five.percentile(99) == 0.884766
    seven = load_engine(TREX_INPUTS / "mobilenet.qat.onnx.engine.graph.json").performance
    assert seven is not None and seven.latency is not None
    assert seven.latency.percentiles == {90.0: 0.352234, 95.0: 0.352295, 99.0: 0.376038}
    assert seven.throughput_qps == 2829.15 and seven.total_gpu_compute_s == 2.9897


def test_timing_json_summary_matches_metadata() -> None:
    bundle = load_engine(A100_QAT)
    assert bundle.timing is not None and len(bundle.timing.records) > 100
    mine = bundle.timing.summary()
    stated = bundle.run.performance if bundle.run else None
    assert stated is not None and stated.gpu_compute is not None and mine.gpu_compute is not None
    # the timing file holds the same run: its median GPU time is within 5 % of the stated one
    assert mine.gpu_compute.median == pytest.approx(stated.gpu_compute.median, rel=0.05)
    assert mine.throughput_qps == pytest.approx(stated.throughput_qps, rel=0.1)


def test_explicit_files_win_and_siblings_can_be_off() -> None:
    alone = load_engine(A100_FP16, siblings=False)
    assert alone.profile is None and alone.run is None and set(alone.sources) == {"graph"}
    other_profile = A100_QAT.with_name("resnet-qat.onnx.engine.profile.json")
    mixed = load_engine([A100_FP16, other_profile])
    assert mixed.profile is not None and mixed.profile.source == other_profile


def test_json_shapes_are_sniffed_not_guessed_from_names(tmp_path: Path) -> None:
    copy = tmp_path / "engine.txt"
    copy.write_text(json.dumps(read(A100_FP16)))
    assert load_engine(copy).name == "engine"


def test_wrong_types_degrade_instead_of_raising(tmp_path: Path) -> None:
    from designer.activities.reports.engine_lint import lint
    from designer.activities.reports.engine_report import build_report, report_tables

    root = to_trt11(read(LAYER_JSON_10))
    root["I/O Tensors"] = [None, 3, {"Name": "x", "ProfileInfo": 7, "Dimensions": "1x1"}]
    layers = root["Layers"]
    layers[0].update(Inputs=3, Outputs={"a": 1}, Metadata=5, Weights="x", Kernel="5x5")
    layers[1].update(Groups="many", StreamId=[0], TacticName=None, LayerType=["kgen"])
    layers[2]["Inputs"] = [None, "bare-name", {"Name": "t", "Dimensions": [1, "a"]}]
    layers[3]["Bias"] = {"Count": "32", "Type": 4}
    path = write(tmp_path / "odd.json", root)
    bundle = load_engine(path)
    first = bundle.graph.layers[0]
    assert first.inputs == () and first.outputs == () and first.weights_count is None
    assert first.onnx_nodes == () and first.kernel_shape is None
    assert bundle.graph.layers[1].layer_type is None and bundle.graph.layers[1].stream_id is None
    assert [t.name for t in bundle.graph.layers[2].inputs] == ["bare-name", "t"]
    assert bundle.graph.layers[2].inputs[1].dims is None
    assert bundle.graph.layers[3].bias_count == 32 and bundle.graph.layers[3].bias_type == "4"
    assert bundle.graph.io_tensors[2].profiles == () and bundle.graph.io_tensors[2].dims is None
    report = build_report(bundle)
    assert report_tables(report) and isinstance(lint(bundle), list)
