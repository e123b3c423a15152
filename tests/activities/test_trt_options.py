"""TensorRT build/profile options → trtexec command lines, checked against the REAL parsers.

Every option × {10.16, 11.1} either gives an argv that version's trtexec option parser (read from
its sampleOptions.cpp by the stand-in's parser module) accepts completely, or a clear refusal
saying what that version lacks and what to do.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from designer.activities.trt.command import format_command, trtexec_argv, trtexec_profile_argv
from designer.activities.trt.options import TrtBuildOptions, TrtOptionError, TrtProfileOptions
from designer.activities.trt.version import TrtVersion, parse_banner, parse_python_version
from tests.helpers.shared import TRT_OPTIONS, TRT_SAMPLES
from tests.helpers.trtexec_standin import sample_options

V10 = TrtVersion(10, 16, 1)
V11 = TrtVersion(11, 1, 0)
VERSIONS = {"10.16": V10, "11.1": V11}
STRONG_ONLY = "builds strongly typed networks only"

PROFILE = {"x": ([1, 3, 32, 32], [4, 3, 32, 32], [8, 3, 32, 32])}

# (case id, changes to TrtBuildOptions, {version: None (accepted) or a refusal substring}).
BUILD_CASES: list[tuple[str, dict[str, Any], dict[str, str | None]]] = [
    ("defaults", {}, {}),
    ("typing-strong", {"typing": "strong"}, {}),
    (
        "typing-obey",
        {"typing": "obey", "layer_precisions": {"conv1": "fp16"}},
        {"11.1": "has no layer precisions"},  # (nor their trtexec flags),
    ),
    (
        "typing-prefer",
        {"typing": "prefer", "layer_precisions": {"conv1": "int8"}},
        {"11.1": "has no layer precisions"},  # (nor their trtexec flags),
    ),
    (
        "output-types",
        {"typing": "obey", "layer_output_types": {"conv1": ["fp16", "fp32"]}},
        {"11.1": "has no layer precisions"},  # (nor their trtexec flags),
    ),
    ("no-tf32", {"tf32": False}, {}),
    ("fp16", {"fp16": True}, {"11.1": "--fp16"}),
    ("bf16", {"bf16": True}, {"11.1": "--bf16"}),
    ("int8", {"int8": True}, {"11.1": "--int8"}),
    ("fp8", {"fp8": True}, {"11.1": "--fp8"}),
    ("int8-calib", {"int8": True, "calibration_cache": "calib.cache"}, {"11.1": "--calib"}),
    ("sparsity", {"sparsity": True}, {}),
    ("tactics-cudnn", {"tactic_sources": {"cudnn": False}}, {"11.1": "no cudnn tactic source"}),
    (
        "tactics-cublas",
        {"tactic_sources": {"cublas": True, "cublasLt": False}},
        {"11.1": "no cublas, cublasLt tactic source"},
    ),
    (
        "tactics-jit",
        {"tactic_sources": {"jit_convolutions": False, "edge_mask_convolutions": True}},
        {},
    ),
    ("plugin-instance-norm", {"native_instance_norm": False}, {}),
    ("opt-level", {"builder_optimization_level": 5}, {}),
    ("aux-streams", {"max_aux_streams": 2}, {}),
    ("hw-ampere", {"hardware_compatibility": "ampere+"}, {}),
    ("hw-same-cc", {"hardware_compatibility": "sameComputeCapability"}, {}),
    ("version-compatible", {"version_compatible": True}, {}),
    ("workspace", {"workspace_mib": 2048}, {}),
    ("refit", {"weights": "refit"}, {}),
    ("strip", {"weights": "strip"}, {}),
    ("verbosity-none", {"profiling_verbosity": "none"}, {}),
    ("verbosity-names", {"profiling_verbosity": "layer_names_only"}, {}),
    ("layer-info", {"layer_info": "layers.json"}, {}),
    ("device", {"device": 1}, {}),
    ("plugins", {"plugins": ["a.so", "b.so"], "dynamic_plugins": ["c.so"]}, {}),
    ("timing-cache", {"timing_cache": "timing.cache"}, {}),
    ("one-profile", {"profiles": [PROFILE]}, {}),
    (
        "two-profiles",
        {"profiles": [PROFILE, {"x": ([8, 3, 32, 32], [16, 3, 32, 32], [32, 3, 32, 32])}]},
        {},
    ),
    ("verbose", {"verbose": True}, {}),
    ("no-skip-inference", {"skip_inference": False}, {}),
    ("no-engine", {"engine": None}, {}),
]


def _base() -> TrtBuildOptions:
    return TrtBuildOptions(model="/data/model.onnx", engine="/data/model.engine")


def assert_parser_accepts(argv: list[str], version: str) -> dict[str, list[str]]:
    """The real parser of ``version`` consumes every argument (no unknown, no bad value)."""
    assert argv[0] == "trtexec"
    options, unknown = sample_options.check_arguments(argv[1:], version)
    assert not unknown, f"TensorRT {version} does not know {unknown}"
    return options


@pytest.mark.parametrize("version", sorted(VERSIONS))
@pytest.mark.parametrize(
    ("case", "changes", "refusals"), BUILD_CASES, ids=[c[0] for c in BUILD_CASES]
)
def test_every_build_option_on_every_version(
    case: str, changes: dict[str, Any], refusals: dict[str, str | None], version: str
) -> None:
    options = dataclasses.replace(_base(), **changes)
    refusal = refusals.get(version)
    if refusal is not None:
        with pytest.raises(TrtOptionError) as info:
            trtexec_argv(options, VERSIONS[version])
        message = str(info.value)
        assert refusal in message
        assert "\n" not in message
        # What to do instead is said, too.
        assert "leave" in message or "convert the model" in message
        return
    argv = trtexec_argv(options, VERSIONS[version])
    parsed = assert_parser_accepts(argv, version)
    assert parsed["--onnx"] == ["/data/model.onnx"]
    assert ("--skipInference" in parsed) == options.skip_inference


def test_refusal_for_11_offers_conversion() -> None:
    with pytest.raises(TrtOptionError, match="strongly typed networks only") as info:
        trtexec_argv(dataclasses.replace(_base(), fp16=True, int8=False), V11)
    assert "Convert to FP16" in str(info.value) and "onnx-designer fp16" in str(info.value)


def test_flag_values_are_the_parsers_syntax() -> None:
    options = dataclasses.replace(
        _base(),
        typing="obey",
        layer_precisions={"conv1": "fp16", "fc": "int8", "/m/conv:0": "bf16"},
        layer_output_types={"conv1": ["fp16", "fp32"]},
        workspace_mib=512,
        tactic_sources={"cudnn": False, "cublasLt": True},
        profiles=[PROFILE],
    )
    argv = trtexec_argv(options, V10)
    assert "--layerPrecisions=conv1:fp16,fc:int8,/m/conv:0:bf16" in argv
    assert_parser_accepts(argv, "10.16")
    assert "--layerOutputTypes=conv1:fp16+fp32" in argv
    assert "--memPoolSize=workspace:512M" in argv
    assert "--tacticSources=-CUDNN,+CUBLAS_LT" in argv
    assert "--minShapes=x:1x3x32x32" in argv and "--maxShapes=x:8x3x32x32" in argv
    assert "--precisionConstraints=obey" in argv


def test_several_profiles_are_positional() -> None:
    second = {"x": ([8, 3, 32, 32], [16, 3, 32, 32], [32, 3, 32, 32])}
    argv = trtexec_argv(dataclasses.replace(_base(), profiles=[PROFILE, second]), V10)
    i = argv.index("--profile=0")
    assert argv[i + 1 : i + 4] == [
        "--minShapes=x:1x3x32x32",
        "--optShapes=x:4x3x32x32",
        "--maxShapes=x:8x3x32x32",
    ]
    assert argv[i + 4] == "--profile=1"


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        ({"fp8": True, "int8": True}, "FP8 and INT8"),
        ({"typing": "strong", "fp16": True}, "strongly typed"),
        ({"layer_precisions": {"a": "fp16"}}, "only honoured with typing mode"),
        ({"typing": "obey", "layer_precisions": {"a": "fp17"}}, "fp17"),
        ({"typing": "obey", "layer_precisions": {"a,b": "fp16"}}, "rename it"),
        ({"profiles": [{"x'": ([1], [1], [1])}]}, "input name"),
        ({"profiles": [{"x": ([1], [1], [1])}, {}]}, "profile 1 is empty"),
        ({"builder_optimization_level": 9}, "0..5"),
        ({"workspace_mib": 0}, "workspace"),
        ({"layer_info": "l.json", "profiling_verbosity": "none"}, "detailed"),
        ({"native_instance_norm": False, "version_compatible": True}, "InstanceNorm"),
        ({"profiles": [{"x": ([4], [2], [8])}]}, "min ≤ opt ≤ max"),
        ({"profiles": [{"x": ([1, 2], [2], [8])}]}, "ranks"),
        ({"tactic_sources": {"cudnnn": True}}, "cudnnn"),
        ({"typing": "fast"}, "typing mode"),
    ],
)
def test_bad_combinations_are_refused_in_one_line(changes: dict[str, Any], needle: str) -> None:
    with pytest.raises(TrtOptionError) as info:
        trtexec_argv(dataclasses.replace(_base(), **changes), V10)
    assert needle in str(info.value) and "\n" not in str(info.value)


PROFILE_CASES: list[tuple[str, dict[str, Any]]] = [
    ("prebuilt", {"use_engine": "/data/m.engine"}),
    ("build-and-measure", {}),
    ("passes", {"iterations": 50, "duration_s": 2, "warmup_ms": 100, "avg_runs": 5}),
    ("fractional-duration", {"duration_s": 0.5}),
    ("with-copies", {"hide_non_compute": False}),
    ("spin-graph", {"spin_wait": True, "cuda_graph": True}),
    ("separate", {"separate_profile_run": True}),
    (
        "exports",
        {
            "use_engine": "/data/m.engine",
            "export_profile": "p.json",
            "export_times": "t.json",
            "export_layer_info": "l.json",
        },
    ),
    ("no-dump", {"dump_profile": False}),
    ("shapes", {"shapes": {"x": [2, 3, 32, 32]}}),
]


@pytest.mark.parametrize("version", sorted(VERSIONS))
@pytest.mark.parametrize(("case", "changes"), PROFILE_CASES, ids=[c[0] for c in PROFILE_CASES])
def test_every_profile_option_on_every_version(
    case: str, changes: dict[str, Any], version: str
) -> None:
    build = dataclasses.replace(_base(), engine=None, profiles=[PROFILE], skip_inference=False)
    prof = TrtProfileOptions(build=build, **changes)
    argv = trtexec_profile_argv(prof, VERSIONS[version])
    parsed = assert_parser_accepts(argv, version)
    assert "--skipInference" not in parsed
    assert ("--loadEngine" in parsed) == bool(prof.use_engine)
    if not prof.shapes:
        assert parsed["--shapes"] == ["x:4x3x32x32"]  # profile 0's opt shape


def test_measurement_defaults_follow_the_version() -> None:
    prof = TrtProfileOptions(build=_base(), use_engine="e.engine")
    v10 = trtexec_profile_argv(prof, V10)
    v11 = trtexec_profile_argv(prof, V11)
    assert "--noDataTransfers" in v10 and "--noDataTransfers" not in v11
    assert "--noSpinWait" in v11 and "--noCudaGraph" in v11
    shown = trtexec_profile_argv(dataclasses.replace(prof, hide_non_compute=False), V11)
    assert "--includeDataTransfers" in shown


def test_profile_validation() -> None:
    with pytest.raises(TrtOptionError, match="iterations"):
        trtexec_profile_argv(TrtProfileOptions(build=_base(), iterations=0), V10)


def test_format_command_quotes() -> None:
    argv = trtexec_argv(dataclasses.replace(_base(), model="/my models/a.onnx"), V10)
    assert "'--onnx=/my models/a.onnx'" in format_command(argv)


# --- the parser module reads the real sources -------------------------------------------


def test_parser_is_read_from_the_sources() -> None:
    p10, p11 = sample_options.load("10.16"), sample_options.load("11.1")
    assert len(p10.flags) > 100 and len(p11.flags) > 100
    for flag in ("--onnx", "--saveEngine", "--stronglyTyped", "--memPoolSize", "--profile"):
        assert flag in p10.flags and flag in p11.flags
    removed = {"--fp16", "--bf16", "--int8", "--fp8", "--best", "--calib"}
    removed |= {"--precisionConstraints", "--layerPrecisions", "--layerOutputTypes"}
    assert removed <= p10.flags and not removed & p11.flags
    assert "CUDNN" in p10.values["--tacticSources"]
    assert "CUDNN" not in p11.values["--tacticSources"]
    assert "workspace" in p10.mem_pools and "fp16" in p10.data_types
    text = (TRT_OPTIONS / "v11.1" / "sampleOptions.cpp").read_text()
    assert all(f'"{flag}"' in text for flag in p11.flags)


def test_parser_rejects_what_trtexec_rejects() -> None:
    with pytest.raises(sample_options.OptionError, match="Unknown tactic source: CUDNN"):
        sample_options.check_arguments(["--onnx=a", "--tacticSources=-CUDNN"], "11.1")
    with pytest.raises(sample_options.OptionError, match="Unknown memory pool"):
        sample_options.check_arguments(["--onnx=a", "--memPoolSize=workspaces:1M"], "10.16")
    with pytest.raises(sample_options.OptionError, match="fp8 and int8"):
        sample_options.check_arguments(["--onnx=a", "--fp8", "--int8"], "10.16")
    _, unknown = sample_options.check_arguments(["--onnx=a", "--fp16", "--bogus=1"], "11.1")
    assert unknown == [("--fp16", ""), ("--bogus", "1")]
    _, unknown = sample_options.check_arguments(["--onnx=a", "--onnx=b"], "10.16")
    assert unknown == [("--onnx", "b")]  # a repeated key stays behind, as in trtexec


# --- versions --------------------------------------------------------------------------


@pytest.mark.parametrize("log", ["Help.txt", "result-03.log", "result-04.log", "result-05.log"])
def test_version_from_the_recorded_banner(log: str) -> None:
    text = (TRT_SAMPLES / log).read_text()
    assert parse_banner(text) == TrtVersion(10, 16, 1)
    assert re.search(r"\[TensorRT v101601\]", text)


def test_version_parsing() -> None:
    assert parse_banner("[07/07/2026] [I] TensorRT version: 10.16.1") == V10
    assert parse_banner("nothing here") is None
    assert TrtVersion.parse("10.16") == TrtVersion(10, 16)
    assert TrtVersion.parse("v110100") == TrtVersion(11, 1, 0)
    assert str(TrtVersion.parse("10.16.1.11")) == "10.16.1.11"
    assert parse_python_version("warning: x\n10.16.1.11\n") == TrtVersion(10, 16, 1, 11)
    assert parse_python_version("") is None
    assert TrtVersion(10, 16, 1).banner_number == 101601 and V11.short == "11.1"
    assert TrtVersion(11, 1) > V10
    with pytest.raises(ValueError, match="not a TensorRT version"):
        TrtVersion.parse("ten")
