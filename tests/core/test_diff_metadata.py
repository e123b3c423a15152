"""Model diff of ``metadata_props`` (QA model-ops findings 6 and 7): node metadata (where the
designer keeps TensorRT layer precisions) is a node change naming the key; graph, model and
local-function metadata are metadata changes; identical models still say identical; and the
text summary's counts add up to the total it states.

Real models: SqueezeNet from ../shared/models with a TensorRT precision / profiles stored the
way the designer stores them; handmade models for subgraphs and functions."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import onnx
import pytest
from helpers.models import FN_DOMAIN, function_model, subgraph_model
from onnx import helper

from designer.core.diff import ModelDiff, diff_files, diff_models, summary_text
from designer.core.diff.rows import change_rows
from designer.core.trt.settings import (
    OUTPUT_TYPES_KEY,
    PRECISION_KEY,
    PROFILES_KEY,
    InputShapes,
    OptimizationProfile,
    profiles_value,
)

MODELS = Path(__file__).resolve().parents[2] / ".." / "shared" / "models"
SQUEEZENET = MODELS / "squeezenet1_0.torchscript.onnx"


@pytest.fixture(scope="module")
def squeezenet() -> onnx.ModelProto:
    return onnx.load(SQUEEZENET)


def _first_conv(model: onnx.ModelProto) -> onnx.NodeProto:
    node: onnx.NodeProto = next(n for n in model.graph.node if n.op_type == "Conv")
    return node


def _set(props: object, key: str, value: str) -> None:
    """Set ``key`` in a repeated StringStringEntryProto field (replacing an old value)."""
    entries = list(props)  # type: ignore[call-overload]
    for entry in entries:
        if entry.key == key:
            entry.value = value
            return
    props.add(key=key, value=value)  # type: ignore[attr-defined]


def _head_counts(diff: ModelDiff) -> tuple[int, int]:
    """(the total the summary's first count line states, the sum of the counts it lists)."""
    line = summary_text(diff).splitlines()[2]
    total, rest = line.split(" difference(s): ", 1)
    listed = rest.rsplit(";", 1)[0]
    return int(total), sum(int(n) for n in re.findall(r"(?:^|, )(\d+) ", listed))


def test_a_stored_layer_precision_is_a_node_change(squeezenet: onnx.ModelProto) -> None:
    b = copy.deepcopy(squeezenet)
    conv = _first_conv(b)
    conv.metadata_props.add(key=PRECISION_KEY, value="fp16")
    diff = diff_models(squeezenet, b)
    assert not diff.identical and diff.change_count == 1
    (change,) = diff.graph.nodes_changed
    assert change.after.name == conv.name and change.by == "name"
    assert [f.to_json() for f in change.fields] == [
        {"field": f"metadata {PRECISION_KEY}", "kind": "added", "before": None, "after": "fp16"}
    ]
    text = summary_text(diff)
    assert "1 difference(s): 1 node changed;" in text
    assert f"metadata {PRECISION_KEY}: added fp16" in text
    data = diff.to_json()
    assert data["identical"] is False and data["change_count"] == 1
    assert data["graph"]["nodes"]["changed"][0]["fields"][0]["field"] == f"metadata {PRECISION_KEY}"
    json.dumps(data, allow_nan=False)
    (row,) = change_rows(diff, squeezenet.graph, b.graph)  # the Compare view's table
    assert (row.kind, row.item) == ("changed", "node")
    assert f"metadata {PRECISION_KEY} added: fp16" in row.details


def test_changed_and_removed_node_metadata(squeezenet: onnx.ModelProto) -> None:
    a = copy.deepcopy(squeezenet)
    _first_conv(a).metadata_props.add(key=PRECISION_KEY, value="fp16")
    _first_conv(a).metadata_props.add(key=OUTPUT_TYPES_KEY, value="fp16")
    b = copy.deepcopy(a)
    _set(_first_conv(b).metadata_props, PRECISION_KEY, "int8")
    del _first_conv(b).metadata_props[1]  # OUTPUT_TYPES_KEY
    (change,) = diff_models(a, b).graph.nodes_changed
    assert [(f.field, f.kind, f.before, f.after) for f in change.fields] == [
        (f"metadata {OUTPUT_TYPES_KEY}", "removed", "fp16", None),
        (f"metadata {PRECISION_KEY}", "changed", "fp16", "int8"),
    ]


def test_identical_models_with_metadata_stay_identical(squeezenet: onnx.ModelProto) -> None:
    a = copy.deepcopy(squeezenet)
    _first_conv(a).metadata_props.add(key=PRECISION_KEY, value="fp16")
    a.graph.metadata_props.add(key="gk", value="gv")
    helper.set_model_props(a, {PROFILES_KEY: "{}"})
    diff = diff_models(a, copy.deepcopy(a))
    assert diff.identical and diff.change_count == 0
    assert "The models are identical" in summary_text(diff)
    assert diff.to_json()["identical"] is True


def test_graph_metadata_is_a_metadata_change(squeezenet: onnx.ModelProto) -> None:
    b = copy.deepcopy(squeezenet)
    b.graph.metadata_props.add(key="gk", value="gv")
    diff = diff_models(squeezenet, b)
    assert diff.graph.identical
    assert [c.to_json() for c in diff.metadata] == [
        {"field": "graph metadata gk", "kind": "added", "before": None, "after": "gv"}
    ]
    assert diff.change_count == 1
    text = summary_text(diff)
    assert "1 difference(s): 1 metadata change(s);" in text
    assert "graph metadata gk: added gv" in text
    removed = diff_models(b, squeezenet)
    assert [(c.field, c.kind) for c in removed.metadata] == [("graph metadata gk", "removed")]


def test_tensorrt_profiles_change_is_reported(squeezenet: onnx.ModelProto) -> None:
    def with_profile(batch: int) -> onnx.ModelProto:
        model = copy.deepcopy(squeezenet)
        shapes = InputShapes((1, 3, 224, 224), (batch, 3, 224, 224), (8, 3, 224, 224))
        helper.set_model_props(
            model, {PROFILES_KEY: profiles_value([OptimizationProfile({"input": shapes})])}
        )
        return model

    diff = diff_models(with_profile(4), with_profile(2))
    ((change),) = diff.metadata
    assert change.field == f"metadata {PROFILES_KEY}" and change.kind == "changed"
    assert diff.change_count == 1


def test_subgraph_metadata() -> None:
    a = subgraph_model()
    b = copy.deepcopy(a)
    branch = next(n for n in b.graph.node if n.name == "branch")
    then = next(x for x in branch.attribute if x.name == "then_branch")
    then.g.metadata_props.add(key="gk", value="1")  # the body's own metadata
    then.g.node[0].metadata_props.add(key=PRECISION_KEY, value="fp32")  # a node in it
    diff = diff_models(a, b)
    (change,) = diff.graph.nodes_changed
    assert [f.field for f in change.fields] == ["then_branch metadata gk"]
    ((where, sub),) = change.subgraphs
    assert where == "then_branch"
    (inner,) = sub.nodes_changed
    assert [f.field for f in inner.fields] == [f"metadata {PRECISION_KEY}"]
    assert diff.change_count == 1  # one changed node in the main graph
    assert "then_branch metadata gk: added 1" in summary_text(diff)


def test_function_metadata() -> None:
    a = function_model()
    b = copy.deepcopy(a)
    b.functions[0].metadata_props.add(key="fk", value="fv")
    diff = diff_models(a, b)
    assert [c.field for c in diff.metadata] == [f"function {FN_DOMAIN}:ScaledAdd metadata fk"]
    assert diff.functions_changed == () and diff.change_count == 1
    c = copy.deepcopy(a)
    c.functions[0].node[0].metadata_props.add(key=PRECISION_KEY, value="fp16")
    ((name, sub),) = diff_models(a, c).functions_changed
    assert name == f"{FN_DOMAIN}:ScaledAdd"
    assert [[f.field for f in n.fields] for n in sub.nodes_changed] == [
        [f"metadata {PRECISION_KEY}"]
    ]


def test_summary_counts_add_up_to_the_total(squeezenet: onnx.ModelProto) -> None:
    a = function_model()
    b = copy.deepcopy(a)
    b.opset_import[0].version += 1
    b.graph.name = "renamed"
    b.graph.metadata_props.add(key="gk", value="gv")
    b.graph.node[0].metadata_props.add(key=PRECISION_KEY, value="fp16")
    b.functions[0].node[0].op_type = "Sub"
    diff = diff_models(a, b)
    assert diff.change_count == 5  # node, opset, graph name, graph metadata, function
    total, listed = _head_counts(diff)
    assert total == listed == 5
    line = summary_text(diff).splitlines()[2]
    assert "1 opset change(s), 2 metadata change(s), 1 function changed" in line
    only_function = copy.deepcopy(a)
    only_function.functions[0].node[0].op_type = "Sub"
    diff = diff_models(a, only_function)
    assert _head_counts(diff) == (1, 1)
    assert "main graph identical" not in summary_text(diff)
    assert "1 difference(s): 1 function changed;" in summary_text(diff)


def test_summary_counts_add_up_on_a_real_model(squeezenet: onnx.ModelProto) -> None:
    b = copy.deepcopy(squeezenet)
    del b.graph.node[-1]
    b.graph.output[0].name = "changed_output"
    b.producer_name = "someone"
    b.graph.metadata_props.add(key="gk", value="gv")
    diff = diff_models(squeezenet, b)
    total, listed = _head_counts(diff)
    assert total == listed == diff.change_count and diff.metadata


def test_diff_files_reads_metadata(tmp_path: Path, squeezenet: onnx.ModelProto) -> None:
    b = copy.deepcopy(squeezenet)
    _first_conv(b).metadata_props.add(key=PRECISION_KEY, value="fp16")
    onnx.save(b, tmp_path / "b.onnx")
    assert not diff_files(SQUEEZENET, tmp_path / "b.onnx").identical
    assert diff_files(SQUEEZENET, SQUEEZENET).identical
