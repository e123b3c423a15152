"""The Python-builder path: every tensorrt name it uses exists in that version's bindings.

The bindings' sources (pyCore.cpp, pyFoundationalTypes.cpp of TensorRT 10.16 and 11.1) are
read for ``py::enum_<…>(m, "Name")`` with their ``.value("MEMBER", …)`` and
``py::class_<…>(m, "Name")`` with their ``.def*("attr", …)``.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from functools import cache

import pytest

from designer.activities.runners import runner_path
from designer.activities.trt.options import TrtBuildOptions, TrtOptionError
from designer.activities.trt.python_builder import (
    RUNNER_API,
    RUNNER_API_UNCHECKED,
    python_builder_settings,
)
from designer.activities.trt.version import TrtVersion
from tests.helpers.shared import TRT_PYTHON

VERSIONS = {"v10.16": TrtVersion(10, 16, 1), "v11.1": TrtVersion(11, 1, 0)}


@cache
def bindings(folder: str) -> dict[str, set[str]]:
    """Python name → members/attributes bound in that version's pyCore/pyFoundationalTypes."""
    text = "".join(
        (TRT_PYTHON / folder / name).read_text()
        for name in ("pyCore.cpp", "pyFoundationalTypes.cpp")
    )
    names: dict[str, set[str]] = {}
    heads = list(re.finditer(r'py::(?:enum_|class_)<[^;{]*?\bm,\s*"(\w+)"', text))
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        body = text[head.end() : end]
        body = body.split(";", 1)[0] if ".value(" in body[:400] else body
        members = set(re.findall(r'\.value\(\s*"(\w+)"', body))
        members |= set(
            re.findall(
                r'\.def(?:_property|_property_readonly|_readwrite|_static)?\(\s*"(\w+)"', body
            )
        )
        names.setdefault(head.group(1), set()).update(members)
    # Nested enums bound on a class object: py::enum_<ILogger::Severity>(baseLoggerBinding, …)
    for _owner, nested in re.findall(r'py::enum_<\w+::(\w+)>\(\s*\w+,\s*"(\w+)"', text):
        names.setdefault("Logger", set()).add(nested)
    return names


FULL = TrtBuildOptions(
    model="m.onnx",
    engine="m.engine",
    typing="obey",
    tf32=False,
    fp16=True,
    bf16=True,
    int8=True,
    sparsity=True,
    tactic_sources={"cudnn": False, "cublas": True, "cublasLt": False, "jit_convolutions": False},
    native_instance_norm=False,
    builder_optimization_level=4,
    max_aux_streams=2,
    hardware_compatibility="sameComputeCapability",
    workspace_mib=1024,
    weights="strip",
    profiling_verbosity="detailed",
    layer_info="l.json",
    timing_cache="t.cache",
    profiles=[{"x": ([1, 3], [2, 3], [4, 3])}],
    layer_precisions={"a": "fp16", "b": "int4", "c": "bool"},
    layer_output_types={"a": ["bf16", "fp8", "uint8", "int64", "int32", "fp32"]},
)
STRONG = TrtBuildOptions(
    model="m.onnx",
    typing="strong",
    tactic_sources={"edge_mask_convolutions": True},
    hardware_compatibility="ampere+",
    version_compatible=True,
    weights="refit",
    profiling_verbosity="layer_names_only",
    workspace_mib=64,
)


def _cases(folder: str) -> list[TrtBuildOptions]:
    cases = [STRONG, dataclasses.replace(STRONG, typing="default", profiling_verbosity="none")]
    if folder == "v10.16":
        cases += [FULL, dataclasses.replace(FULL, typing="prefer", int8=False, fp8=True)]
    return cases


@pytest.mark.parametrize("folder", sorted(VERSIONS))
def test_every_name_used_exists_in_the_bindings(folder: str) -> None:
    bound = bindings(folder)
    for case in _cases(folder):
        settings = python_builder_settings(case, VERSIONS[folder])
        json.dumps(settings)  # what the runner receives
        for owner, members in settings["api"].items():
            assert owner in bound, f"{folder}: no tensorrt.{owner}"
            missing = set(members) - bound[owner]
            assert not missing, f"{folder}: tensorrt.{owner} lacks {sorted(missing)}"
        assert not set(settings["api_unchecked"]) & set(bound)  # really not in these files


def test_11_refuses_weak_typing_and_old_tactics() -> None:
    with pytest.raises(TrtOptionError, match="strongly typed networks only"):
        python_builder_settings(
            dataclasses.replace(STRONG, typing="default", fp16=True), VERSIONS["v11.1"]
        )
    with pytest.raises(TrtOptionError, match="cudnn"):
        python_builder_settings(
            dataclasses.replace(STRONG, tactic_sources={"cudnn": False}), VERSIONS["v11.1"]
        )
    with pytest.raises(TrtOptionError, match="trtexec"):
        python_builder_settings(
            dataclasses.replace(FULL, calibration_cache="c.cache"), VERSIONS["v10.16"]
        )


def test_settings_values() -> None:
    s = python_builder_settings(FULL, VERSIONS["v10.16"])
    assert {"FP16", "BF16", "INT8", "OBEY_PRECISION_CONSTRAINTS", "SPARSE_WEIGHTS"} <= set(
        s["set_flags"]
    )
    assert {"STRIP_PLAN", "REFIT_IDENTICAL"} <= set(s["set_flags"]) and s["clear_flags"] == ["TF32"]
    assert s["memory_pool_limits"] == {"WORKSPACE": 1024 << 20}
    assert s["layer_precisions"] == {"a": "HALF", "b": "INT4", "c": "BOOL"}
    assert s["tactic_sources"] == {
        "CUDNN": False,
        "CUBLAS": True,
        "CUBLAS_LT": False,
        "JIT_CONVOLUTIONS": False,
    }
    strong = python_builder_settings(STRONG, VERSIONS["v11.1"])
    assert strong["network_flags"] == ["STRONGLY_TYPED"]
    assert strong["hardware_compatibility_level"] == "AMPERE_PLUS"


def _runner_names() -> dict[str, set[str]]:
    """tensorrt names the runner script spells out: trt.X, trt.X.Y, and obj.attr on the
    objects it gets from tensorrt (builder, config, profile, …)."""
    tree = ast.parse(runner_path("trt_build").read_text())
    objects = {
        "logger": "Logger",
        "builder": "Builder",
        "config": "IBuilderConfig",
        "profile": "IOptimizationProfile",
        "runtime": "Runtime",
        "engine": "ICudaEngine",
        "inspector": "EngineInspector",
        "parser": "OnnxParser",
        "network": "INetworkDefinition",
        "layer": "ILayer",
    }
    used: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id == "trt":
            used.setdefault("<module>", set()).add(node.attr)
        elif isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
            if value.value.id == "trt":
                used.setdefault(value.attr, set()).add(node.attr)
        elif isinstance(value, ast.Name) and value.id in objects:
            used.setdefault(objects[value.id], set()).add(node.attr)
        elif (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Name)
            and value.func.value.id in objects
        ):
            returns = {"get_timing_cache": "ITimingCache", "get_input": "ITensor"}
            returns["get_output"] = "ITensor"
            owner = returns.get(value.func.attr)
            assert owner, f"runner calls .{node.attr} on the result of .{value.func.attr}()"
            used.setdefault(owner, set()).add(node.attr)
    return used


def test_runner_uses_only_declared_names() -> None:
    declared = {k: set(v) for k, v in RUNNER_API.items()}
    for k, v in RUNNER_API_UNCHECKED.items():
        declared.setdefault(k, set()).update(v)
    used = _runner_names()
    module_level = used.pop("<module>")
    # Classes/enums reached as trt.X: bound ones, the enums whose members come from settings.
    dynamic_enums = {
        "BuilderFlag",
        "NetworkDefinitionCreationFlag",
        "MemoryPoolType",
        "ProfilingVerbosity",
        "HardwareCompatibilityLevel",
        "TacticSource",
        "DataType",
    }
    assert module_level <= set(declared) | dynamic_enums | {"__version__"}
    for owner, attrs in used.items():
        assert owner in declared, f"runner uses {owner} not declared in RUNNER_API"
        assert attrs <= declared[owner], f"{owner}: {sorted(attrs - declared[owner])} undeclared"
    for folder in VERSIONS:
        bound = bindings(folder)
        for enum in dynamic_enums:
            assert enum in bound, f"{folder}: no tensorrt.{enum}"
