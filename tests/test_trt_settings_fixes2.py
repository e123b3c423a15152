"""Hand-edited TensorRT settings in a model (QA trt-gui findings 11, 7 and 5):

* 11: stored output types whose count does not match the node's outputs are reported by
  ``read_settings_lenient``, warned by Type Checking on the node and refused by the build
  before anything runs (a matching count still passes);
* 7: ``trt show`` prints what is readable, lists every problem (the invalid profile too) and
  exits 1 with no "(ignored)" in its errors; a stored ``FP16`` reads as ``fp16`` (the editors
  write lower case, trtexec knows lower case only) and reaches trtexec lower-cased;
* 5: ``profile trt --use-engine`` needs no optimization profile in the model and sends
  ``--shapes`` only when the user gives them (trtexec sets free dims to 1 otherwise: said on
  stderr).

Real onnx models built with onnx.helper; the trtexec lines are checked with the real
sampleOptions.cpp parser of the stand-in.
"""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest
from helpers.trtexec_standin import sample_options
from onnx import TensorProto, helper

from designer.activities.trt.model_settings import with_model_settings
from designer.activities.trt.options import TrtBuildOptions, TrtOptionError
from designer.cli import main
from designer.core.analysis.diagnostics import Severity
from designer.core.document import Document
from designer.core.scope import MAIN_SCOPE
from designer.core.trt.diagnostics import trt_diagnostics
from designer.core.trt.settings import (
    OUTPUT_TYPES_KEY,
    PRECISION_KEY,
    PROFILES_KEY,
    TrtSettingsError,
    node_precision,
    read_settings,
    read_settings_lenient,
)

PROFILE_MAX_BELOW_OPT = (
    '{"version":1,"profiles":[{"x":{"min":[1,3,8,8],"opt":[4,3,8,8],"max":[2,3,8,8]}}]}'
)
PROFILE_OK = '{"version":1,"profiles":[{"x":{"min":[2,3,8,8],"opt":[4,3,8,8],"max":[8,3,8,8]}}]}'


def make_model(
    relu: dict[str, str] | None = None,
    split: dict[str, str] | None = None,
    profiles: str | None = None,
) -> onnx.ModelProto:
    """x[batch,3,8,8] → Relu "relu" (1 output) → Split "split" (2 outputs), with the given
    node metadata and stored profiles."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Split", ["r"], ["a", "b"], name="split", axis=1, num_outputs=2),
    ]
    for node, props in zip(nodes, (relu or {}, split or {}), strict=True):
        for key, value in props.items():
            node.metadata_props.add(key=key, value=value)
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 8, 8])],
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, ["batch", 2, 8, 8]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, ["batch", 1, 8, 8]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 10
    if profiles is not None:
        model.metadata_props.add(key=PROFILES_KEY, value=profiles)
    onnx.checker.check_model(model)
    return model


def save(model: onnx.ModelProto, tmp_path: Path, name: str = "m.onnx") -> Path:
    path = tmp_path / name
    onnx.save(model, path)
    return path


def cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def trtexec(line: str, version: str = "10.16") -> dict[str, list[str]]:
    parsed, unknown = sample_options.check_arguments(line.split()[1:], version)
    assert not unknown, unknown
    return parsed


BUILD = ["--typing", "obey", "--print-command", "--trt-version", "10.16"]


# --- 11. output types that are not one per output ----------------------------------------------
def test_output_type_count_is_compared_with_the_node_outputs() -> None:
    good = make_model({OUTPUT_TYPES_KEY: "fp16"}, {OUTPUT_TYPES_KEY: "fp16,fp32"})
    settings, problems = read_settings_lenient(good)
    assert problems == []
    assert settings.output_types == {"relu": ("fp16",), "split": ("fp16", "fp32")}

    bad = make_model({OUTPUT_TYPES_KEY: "fp16,fp32"}, {OUTPUT_TYPES_KEY: "fp16"})
    settings, problems = read_settings_lenient(bad)
    assert settings.output_types == {}  # left out, like an unknown precision
    assert problems == [
        "node 'relu': output types 'fp16,fp32': 2 types for 1 output; TensorRT needs one type"
        " per output",
        "node 'split': output types 'fp16': 1 type for 2 outputs; TensorRT needs one type per"
        " output",
    ]


def test_type_checking_warns_on_the_node_like_an_unknown_precision() -> None:
    doc = Document(make_model({OUTPUT_TYPES_KEY: "fp16"}, {PRECISION_KEY: "fp16"}))
    assert [d.code for d in trt_diagnostics(doc)] == ["trt-profile-missing"]

    doc = Document(make_model({OUTPUT_TYPES_KEY: "fp16,fp16"}, {PRECISION_KEY: "fp99"}))
    found = [d for d in trt_diagnostics(doc) if d.code == "trt-settings-invalid"]
    keys = doc.scope(MAIN_SCOPE).keys
    assert [(d.severity, d.node_key, d.node_name) for d in found] == [
        (Severity.WARNING, keys[0], "relu"),
        (Severity.WARNING, keys[1], "split"),
    ]
    assert "2 types for 1 output" in found[0].message
    assert "unknown TensorRT precision 'fp99'" in found[1].message
    assert all("engine build refuses the model" in d.message for d in found)


def test_the_build_refuses_a_wrong_count_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = save(make_model({OUTPUT_TYPES_KEY: "fp16"}, profiles=PROFILE_OK), tmp_path, "g.onnx")
    code, out, err = cli(capsys, "trt", "build", good, *BUILD)
    assert code == 0, err
    assert trtexec(out)["--layerOutputTypes"] == ["relu:fp16"]

    bad = save(make_model({OUTPUT_TYPES_KEY: "fp16,fp32"}, profiles=PROFILE_OK), tmp_path)
    code, out, err = cli(capsys, "trt", "build", bad, *BUILD)
    assert code == 1 and out == ""
    assert "node 'relu': output types 'fp16,fp32': 2 types for 1 output" in err
    assert "(ignored)" not in err


def test_with_model_settings_refuses_only_what_the_build_would_use() -> None:
    model = make_model({OUTPUT_TYPES_KEY: "fp16,fp32", PRECISION_KEY: "half"}, profiles=PROFILE_OK)
    base = TrtBuildOptions(model="m.onnx", typing="obey")
    with pytest.raises(TrtOptionError) as caught:
        with_model_settings(base, model)
    assert "unknown TensorRT precision 'half'" in str(caught.value)
    assert "2 types for 1 output" in str(caught.value)
    # ignoring the stored precisions, or replacing both values, builds
    assert with_model_settings(base, model, ignore_stored_precisions=True).layer_precisions == {}
    fixed = TrtBuildOptions(
        model="m.onnx",
        typing="obey",
        layer_precisions={"relu": "fp16"},
        layer_output_types={"relu": ["fp32"]},
    )
    merged = with_model_settings(fixed, model)
    assert merged.layer_precisions == {"relu": "fp16"}
    assert merged.layer_output_types == {"relu": ["fp32"]}


# --- 7. trt show ------------------------------------------------------------------------------
def test_show_prints_what_it_can_and_lists_every_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = make_model(
        {PRECISION_KEY: "half", OUTPUT_TYPES_KEY: "fp16,fp32"},
        {PRECISION_KEY: "FP16"},
        profiles=PROFILE_MAX_BELOW_OPT,
    )
    code, out, err = cli(capsys, "trt", "show", save(bad, tmp_path))
    assert code == 1
    assert "x  min 1x3x8x8  opt 4x3x8x8  max 2x3x8x8  (invalid)" in out
    assert "layer precisions: 1\n  split  fp16\n" in out  # the readable one, lower-cased
    assert err.splitlines() == [
        "onnx-designer: error: node 'relu': unknown TensorRT precision 'half'; use one of fp32,"
        " fp16, bf16, fp8, int64, int32, int8, int4, uint8, bool",
        "onnx-designer: error: node 'relu': output types 'fp16,fp32': 2 types for 1 output;"
        " TensorRT needs one type per output",
        "onnx-designer: error: profile 0: 'x' dim 0 (batch): need min ≤ opt ≤ max, got 1/4/2",
    ]
    code, out, err = cli(capsys, "trt", "show", save(bad, tmp_path), "--json")
    assert code == 1 and len(json.loads(out)["problems"]) == 3

    good = make_model({PRECISION_KEY: "fp16"}, profiles=PROFILE_OK)
    code, out, err = cli(capsys, "trt", "show", save(good, tmp_path, "g.onnx"))
    assert code == 0 and err == ""
    assert "x  min 2x3x8x8  opt 4x3x8x8  max 8x3x8x8\n" in out and "relu  fp16" in out


def test_read_settings_lists_the_problems_without_ignored() -> None:
    bad = make_model({PRECISION_KEY: "half"}, {PRECISION_KEY: "fp99"})
    with pytest.raises(TrtSettingsError, match=r"'half'; .*node 'split'.*'fp99'") as caught:
        read_settings(bad)
    assert "(ignored)" not in str(caught.value) and "more)" not in str(caught.value)


def test_a_stored_precision_reads_case_insensitively_and_reaches_trtexec_lower_cased(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = make_model({PRECISION_KEY: " FP16"}, {PRECISION_KEY: "Half"}, profiles=PROFILE_OK)
    assert node_precision(model.graph.node[0]) == "fp16"
    settings, problems = read_settings_lenient(model)
    assert settings.precisions == {"relu": "fp16"}
    assert problems == [
        "node 'split': unknown TensorRT precision 'Half'; use one of fp32, fp16, bf16, fp8,"
        " int64, int32, int8, int4, uint8, bool"
    ]
    del model.graph.node[1].metadata_props[:]
    code, out, err = cli(capsys, "trt", "build", save(model, tmp_path), *BUILD)
    assert code == 0, err
    assert trtexec(out)["--layerPrecisions"] == ["relu:fp16"]  # trtexec knows lower case only


# --- 5. profiling a prebuilt engine -------------------------------------------------------------
PROFILE = ["--print-command", "--trt-version", "10.16"]


def test_a_prebuilt_engine_needs_no_profile_and_gets_no_made_up_shapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = tmp_path / "m.engine"
    engine.write_bytes(b"plan")
    # the stored profile (opt batch 4) and the broken precision are the build's, not the engine's
    model = save(make_model({PRECISION_KEY: "half"}, profiles=PROFILE_OK), tmp_path)
    bare = save(make_model(), tmp_path, "bare.onnx")
    for path in (model, bare):
        code, out, err = cli(capsys, "profile", "trt", path, "--use-engine", engine, *PROFILE)
        assert code == 0, err
        parsed = trtexec(out)
        assert parsed["--loadEngine"] == [str(engine)] and "--shapes" not in parsed
        assert "no shape given for dynamic input(s) x: trtexec then sets each of their free" in err
    for shape in ("x:2x3x8x8", "x:1x3x8x8:2x3x8x8:8x3x8x8"):
        code, out, err = cli(
            capsys, "profile", "trt", bare, "--use-engine", engine, *PROFILE, "--shape", shape
        )
        assert code == 0 and err == "", err
        assert trtexec(out)["--shapes"] == ["x:2x3x8x8"]
    code, out, err = cli(
        capsys, "profile", "trt", bare, "--use-engine", engine, *PROFILE, "--shape", "x:2x3"
    )
    assert code == 1 and "'x' has rank 4; the profile gives 2 dims" in err


def test_building_then_profiling_still_runs_the_stored_profile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = save(make_model(profiles=PROFILE_OK), tmp_path)
    code, out, err = cli(capsys, "profile", "trt", model, *PROFILE)
    assert code == 0, err
    assert trtexec(out)["--shapes"] == ["x:4x3x8x8"]
    bare = save(make_model(), tmp_path, "b.onnx")
    code, _out, err = cli(capsys, "profile", "trt", bare, *PROFILE)
    assert code == 1 and "have no TensorRT optimization profile" in err


def test_with_model_settings_for_a_prebuilt_engine() -> None:
    model = make_model({PRECISION_KEY: "half"}, profiles=PROFILE_MAX_BELOW_OPT)
    base = TrtBuildOptions(model="m.onnx")
    with pytest.raises(TrtOptionError):
        with_model_settings(base, model)
    got = with_model_settings(base, model, prebuilt_engine=True)
    assert got.profiles == [] and got.layer_precisions == {}
    ones = with_model_settings(base, model, prebuilt_engine=True, free_dims_as_one=True)
    assert ones.profiles == [{"x": ([1, 3, 8, 8], [1, 3, 8, 8], [1, 3, 8, 8])}]
