"""TensorRT settings stored in the model (X-1, X-2): the records, validation, the Edits, their
exact undo, and the round trip through save / reopen / resave on real exports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from helpers.models import subgraph_model
from helpers.shared import model as shared_model

from designer import cli
from designer.core.analysis import check_document
from designer.core.document import Document
from designer.core.edits import RemoveGraphIO, RemoveNodes, RenameNode, RenameTensor
from designer.core.edits.trt import (
    SetLayerOutputTypes,
    SetLayerPrecision,
    SetOptimizationProfiles,
    with_profile,
    without_profile,
)
from designer.core.errors import EditError
from designer.core.io import open_document, save_document
from designer.core.scope import MAIN_SCOPE, ScopeId
from designer.core.trt.settings import (
    PRECISION_KEY,
    PROFILES_KEY,
    InputShapes,
    OptimizationProfile,
    TrtSettingsError,
    dynamic_inputs,
    free_dims_as_one,
    has_settings,
    inputs_without_profile,
    parse_dims,
    read_settings,
    read_settings_lenient,
    validate_shapes,
)

LLAMA = "llama_24l_h64.dynamo.onnx"
SQUEEZENET = "squeezenet1_0.torchscript.onnx"


def shapes(lo: str, mid: str, hi: str) -> InputShapes:
    return InputShapes(parse_dims(lo), parse_dims(mid), parse_dims(hi))


def llama_profiles() -> list[OptimizationProfile]:
    big = shapes("1x1", "2x8", "8x512")
    one = shapes("1x1", "1x1", "1x1")
    return [
        OptimizationProfile({"input_ids": big, "attention_mask": big}),
        OptimizationProfile({"input_ids": one, "attention_mask": one}),
    ]


@pytest.fixture
def llama() -> Document:
    return open_document(shared_model(LLAMA))


def keys_by_name(doc: Document, *names: str) -> list[int]:
    table = {node.name: key for key, node in doc.scope(MAIN_SCOPE).nodes()}
    return [table[n] for n in names]


def matmuls(doc: Document, count: int) -> list[str]:
    names = [n.name for _k, n in doc.scope(MAIN_SCOPE).nodes() if n.op_type == "MatMul"]
    assert len(names) >= count
    return names[:count]


def test_dynamic_inputs_of_real_exports() -> None:
    llama = onnx.load(shared_model(LLAMA), load_external_data=False)
    assert dynamic_inputs(llama) == {
        "input_ids": ["batch", "seq"],
        "attention_mask": ["batch", "seq"],
    }
    squeeze = onnx.load(shared_model(SQUEEZENET), load_external_data=False)
    assert dynamic_inputs(squeeze) == {"input": ["batch", 3, 224, 224]}
    assert free_dims_as_one(["batch", 3, 224, 224]) == (1, 3, 224, 224)
    assert inputs_without_profile(squeeze, ()) == ["input"]
    assert not has_settings(llama)


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        (shapes("1x3x224x224", "4x3x224x224", "8x3x224x224"), None),
        (shapes("1x3x224", "4x3x224", "8x3x224"), "has rank 4"),
        (shapes("1x3x224x224", "4x3x224x224", "8x3x224"), "same rank"),
        (shapes("1x1x224x224", "4x1x224x224", "8x1x224x224"), "dim 1 is fixed at 3"),
        (shapes("4x3x224x224", "2x3x224x224", "8x3x224x224"), "min ≤ opt ≤ max"),
        (shapes("0x3x224x224", "2x3x224x224", "8x3x224x224"), "≥ 1"),
    ],
)
def test_validate_shapes(given: InputShapes, problem: str | None) -> None:
    model = onnx.load(shared_model(SQUEEZENET), load_external_data=False)
    found = validate_shapes(model, "input", given)
    assert found is None if problem is None else (found is not None and problem in found)
    assert "not a top-level input" in (validate_shapes(model, "nope", given) or "")


def test_parse_dims_rejects_junk() -> None:
    assert parse_dims("1x3x224x224") == (1, 3, 224, 224)
    for bad in ("", "1x", "ax3", "1,3", "-1x3", "\u00b2x3"):
        with pytest.raises(TrtSettingsError, match="1x3x224x224"):
            parse_dims(bad)
    assert parse_dims("2147483647x1") == (2**31 - 1, 1)  # the largest trtexec's stoi reads
    for big in ("2147483648x1", "99999999999999999999x512"):
        with pytest.raises(TrtSettingsError, match="32-bit"):
            parse_dims(big)


def test_stored_profiles_with_a_dim_past_32_bits_are_refused() -> None:
    from designer.core.trt.settings import parse_profiles

    text = (
        '{"version": 1, "profiles": [{"x": {"min": [1], "opt": [4],'
        ' "max": [99999999999999999999]}}]}'
    )
    with pytest.raises(TrtSettingsError, match="32-bit"):
        parse_profiles(text)


def test_round_trip_save_reopen_resave(llama: Document, tmp_path: Path) -> None:
    """Profiles and precisions survive save, reopen and `onnx-designer resave`; the file is
    valid ONNX that onnxruntime runs (at the opt shape)."""
    stack = llama.undo_stack
    stack.push(SetOptimizationProfiles(llama_profiles()))
    names = matmuls(llama, 3)
    stack.push(SetLayerPrecision(MAIN_SCOPE, keys_by_name(llama, *names), "fp16"))
    stack.push(SetLayerOutputTypes(MAIN_SCOPE, keys_by_name(llama, names[0]), ["fp32"]))
    expected = read_settings(llama.model)
    assert expected.precisions == dict.fromkeys(names, "fp16")
    assert expected.output_types == {names[0]: ("fp32",)}
    assert len(expected.profiles) == 2

    first = tmp_path / "first.onnx"
    save_document(llama, first)
    reopened = open_document(first)
    assert read_settings(reopened.model) == expected
    second = tmp_path / "second.onnx"
    assert cli.main(["resave", str(first), str(second)]) == 0
    assert read_settings(onnx.load(second)) == expected
    assert first.read_bytes() == second.read_bytes()

    onnx.checker.check_model(str(second), full_check=True)
    session = ort.InferenceSession(str(second), providers=["CPUExecutionProvider"])
    opt = expected.profiles[0].shapes["input_ids"].opt
    feeds = {
        "input_ids": np.ones(opt, dtype=np.int64),
        "attention_mask": np.ones(opt, dtype=np.int64),
    }
    outputs = session.run(None, feeds)
    assert outputs[0].shape[:2] == opt


def test_undo_redo_restore_exact_bytes(llama: Document) -> None:
    before = llama.model.SerializeToString()
    stack = llama.undo_stack
    names = matmuls(llama, 4)
    stack.push(SetOptimizationProfiles(llama_profiles()))
    stack.push(SetLayerPrecision(MAIN_SCOPE, keys_by_name(llama, *names), "int8"))
    stack.push(SetLayerPrecision(MAIN_SCOPE, keys_by_name(llama, *names[:2]), None))
    stack.push(without_profile(llama, 1))
    after = llama.model.SerializeToString()
    assert read_settings(llama.model).precisions == dict.fromkeys(names[2:], "int8")
    assert len(read_settings(llama.model).profiles) == 1
    for _ in range(4):
        stack.undo()
    assert llama.model.SerializeToString() == before
    for _ in range(4):
        stack.redo()
    assert llama.model.SerializeToString() == after


def test_multi_selection_is_one_undo_step(llama: Document) -> None:
    names = matmuls(llama, 5)
    llama.undo_stack.push(SetLayerPrecision(MAIN_SCOPE, keys_by_name(llama, *names), "bf16"))
    assert len(llama.undo_stack) == 1
    assert llama.undo_stack.labels() == ["Set layer precision bf16 on 5 nodes"]
    llama.undo_stack.undo()
    assert read_settings(llama.model).precisions == {}


def test_rename_carries_and_delete_drops(llama: Document) -> None:
    stack = llama.undo_stack
    stack.push(SetOptimizationProfiles(llama_profiles()))
    name = matmuls(llama, 1)[0]
    (key,) = keys_by_name(llama, name)
    stack.push(SetLayerPrecision(MAIN_SCOPE, [key], "fp16"))
    snapshot = llama.model.SerializeToString()

    stack.push(RenameNode(MAIN_SCOPE, key, "my_matmul"))
    assert read_settings(llama.model).precisions == {"my_matmul": "fp16"}
    stack.push(RenameTensor(MAIN_SCOPE, "input_ids", "tokens"))
    profiles = read_settings(llama.model).profiles
    assert all(list(p.shapes) == ["tokens", "attention_mask"] for p in profiles)
    assert inputs_without_profile(llama.model, profiles) == []

    stack.push(RemoveNodes(MAIN_SCOPE, [key]))
    assert read_settings(llama.model).precisions == {}
    stack.push(RemoveGraphIO(MAIN_SCOPE, "input", "attention_mask"))
    profiles = read_settings(llama.model).profiles
    assert all(list(p.shapes) == ["tokens"] for p in profiles)

    for _ in range(4):
        stack.undo()
    assert llama.model.SerializeToString() == snapshot


def test_removing_the_last_profiled_input_removes_the_key() -> None:
    doc = open_document(shared_model(SQUEEZENET))
    batch = shapes("1x3x224x224", "2x3x224x224", "4x3x224x224")
    doc.undo_stack.push(SetOptimizationProfiles([OptimizationProfile({"input": batch})]))
    before = doc.model.SerializeToString()
    doc.undo_stack.push(RemoveGraphIO(MAIN_SCOPE, "input", "input"))
    assert PROFILES_KEY not in {p.key for p in doc.model.metadata_props}
    doc.undo_stack.undo()
    assert doc.model.SerializeToString() == before


@pytest.mark.parametrize(
    ("profiles", "message"),
    [
        ([OptimizationProfile({"input": shapes("1x3", "1x3", "1x3")})], "has rank 4"),
        ([OptimizationProfile({"pixels": shapes("1", "1", "1")})], "not a top-level input"),
        ([OptimizationProfile({})], "has no inputs"),
    ],
)
def test_invalid_profiles_change_nothing(profiles: list[OptimizationProfile], message: str) -> None:
    doc = open_document(shared_model(SQUEEZENET))
    before = doc.model.SerializeToString()
    with pytest.raises(EditError, match=message):
        doc.undo_stack.push(SetOptimizationProfiles(profiles))
    assert doc.model.SerializeToString() == before and len(doc.undo_stack) == 0


def test_with_profile_adds_and_replaces() -> None:
    doc = open_document(shared_model(SQUEEZENET))
    a = OptimizationProfile({"input": shapes("1x3x224x224", "2x3x224x224", "4x3x224x224")})
    b = OptimizationProfile({"input": shapes("8x3x224x224", "8x3x224x224", "8x3x224x224")})
    doc.undo_stack.push(with_profile(doc, a))
    doc.undo_stack.push(with_profile(doc, a))
    doc.undo_stack.push(with_profile(doc, b, index=1))
    assert read_settings(doc.model).profiles == (a, b)
    with pytest.raises(EditError, match="no optimization profile 5"):
        with_profile(doc, a, index=5)
    with pytest.raises(EditError, match="no TensorRT optimization profiles to clear"):
        Document(onnx.ModelProto(graph=onnx.GraphProto())).undo_stack.push(
            SetOptimizationProfiles([])
        )


def test_bad_precision_requests_change_nothing(llama: Document) -> None:
    before = llama.model.SerializeToString()
    with pytest.raises(EditError, match="unknown precision 'fp17'"):
        SetLayerPrecision(MAIN_SCOPE, [1], "fp17")
    with pytest.raises(EditError, match="select at least one node"):
        llama.undo_stack.push(SetLayerPrecision(MAIN_SCOPE, [], "fp16"))
    (key,) = keys_by_name(llama, matmuls(llama, 1)[0])
    with pytest.raises(EditError, match="has 1 output; give 1 type, not 2"):
        llama.undo_stack.push(SetLayerOutputTypes(MAIN_SCOPE, [key], ["fp16", "fp32"]))
    assert llama.model.SerializeToString() == before

    doc = Document(subgraph_model())
    sub = next(s for s in doc.scopes() if s.id != MAIN_SCOPE)
    sub_keys = [k for k, _n in sub.nodes()]
    with pytest.raises(EditError, match="nodes of the main graph"):
        doc.undo_stack.push(SetLayerPrecision(sub.id, sub_keys, "fp16"))
    assert isinstance(sub.id, ScopeId)


def test_unnamed_node_is_refused() -> None:
    model = onnx.load(shared_model(SQUEEZENET), load_external_data=False)
    model.graph.node[0].ClearField("name")
    doc = Document(model)
    key = next(iter(doc.scope(MAIN_SCOPE).keys))
    with pytest.raises(EditError, match="has no name"):
        doc.undo_stack.push(SetLayerPrecision(MAIN_SCOPE, [key], "fp16"))


def test_corrupt_values_are_reported_not_crashed() -> None:
    model = onnx.load(shared_model(SQUEEZENET), load_external_data=False)
    model.metadata_props.add(key=PROFILES_KEY, value="{not json")
    model.graph.node[3].metadata_props.add(key=PRECISION_KEY, value="fp99")
    with pytest.raises(TrtSettingsError, match="is not JSON"):
        read_settings(model)
    settings, problems = read_settings_lenient(model)
    assert settings.profiles == () and settings.precisions == {}
    assert len(problems) == 2 and "unknown TensorRT precision 'fp99'" in problems[1]
    doc = Document(model)
    codes = [d.code for d in check_document(doc).diagnostics]
    assert codes.count("trt-settings-invalid") == 2
    with pytest.raises(EditError, match="fix or clear it first"):
        with_profile(doc, OptimizationProfile({}))
    # replacing the unreadable value is allowed: that is how it gets fixed
    good = OptimizationProfile({"input": shapes("1x3x224x224", "1x3x224x224", "2x3x224x224")})
    doc.undo_stack.push(SetOptimizationProfiles([good]))
    assert read_settings_lenient(doc.model)[0].profiles == (good,)


@pytest.mark.parametrize(
    ("version_json", "message"),
    [
        ('{"version": 2, "profiles": []}', "version 2"),
        ('{"version": 1, "profiles": {}}', "must be a list"),
        ('{"version": 1, "profiles": [{"x": {"min": [1]}}]}', "exactly 'min', 'opt'"),
        (
            '{"version": 1, "profiles": [{"x": {"min": [1.5], "opt": [1], "max": [1]}}]}',
            "list of integers",
        ),
        ("[]", "JSON object"),
    ],
)
def test_malformed_json_messages(version_json: str, message: str) -> None:
    model = onnx.ModelProto(graph=onnx.GraphProto())
    model.metadata_props.add(key=PROFILES_KEY, value=version_json)
    with pytest.raises(TrtSettingsError, match=message):
        read_settings(model)


def test_type_checking_warns_only_when_settings_exist(llama: Document) -> None:
    def trt_codes() -> list[tuple[str, str]]:
        return [
            (d.code, d.tensor)
            for d in check_document(llama).diagnostics
            if d.code.startswith("trt-")
        ]

    assert trt_codes() == []
    (key,) = keys_by_name(llama, matmuls(llama, 1)[0])
    llama.undo_stack.push(SetLayerPrecision(MAIN_SCOPE, [key], "fp16"))
    assert trt_codes() == [
        ("trt-profile-missing", "input_ids"),
        ("trt-profile-missing", "attention_mask"),
    ]
    half = shapes("1x1", "2x8", "8x512")
    llama.undo_stack.push(SetOptimizationProfiles([OptimizationProfile({"input_ids": half})]))
    assert trt_codes() == [("trt-profile-missing", "attention_mask")]
    llama.undo_stack.push(SetOptimizationProfiles(llama_profiles()))
    assert trt_codes() == []


def test_a_profile_made_stale_by_a_type_change_is_reported() -> None:
    from designer.core.edits import SetValueType

    doc = open_document(shared_model(SQUEEZENET))
    batch = shapes("1x3x224x224", "2x3x224x224", "4x3x224x224")
    doc.undo_stack.push(SetOptimizationProfiles([OptimizationProfile({"input": batch})]))
    new_type = onnx.helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, ["batch", 3, 112, 112])
    doc.undo_stack.push(SetValueType(MAIN_SCOPE, "input", new_type))
    stale = [d for d in check_document(doc).diagnostics if d.code == "trt-profile-invalid"]
    assert len(stale) == 1 and "dim 2 is fixed at 112" in stale[0].message


def test_node_metadata_keeps_an_ir8_model_valid(tmp_path: Path) -> None:
    """Precisions live in node metadata (an IR 10 field): an IR 8 export stays valid ONNX
    that onnx.checker accepts and onnxruntime runs."""
    doc = open_document(shared_model(SQUEEZENET))
    assert doc.model.ir_version == 8
    keys = [k for k, n in doc.scope(MAIN_SCOPE).nodes() if n.op_type == "Conv"][:4]
    doc.undo_stack.push(SetLayerPrecision(MAIN_SCOPE, keys, "fp16"))
    batch = shapes("1x3x224x224", "2x3x224x224", "4x3x224x224")
    doc.undo_stack.push(SetOptimizationProfiles([OptimizationProfile({"input": batch})]))
    path = tmp_path / "squeeze.onnx"
    save_document(doc, path)
    onnx.checker.check_model(str(path), full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (out,) = session.run(None, {"input": np.zeros(batch.opt, dtype=np.float32)})
    assert out.shape[0] == 2
    assert len(read_settings(onnx.load(path)).precisions) == 4
