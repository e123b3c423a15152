"""The Python-builder path: the same build options as tensorrt API names for one version.

:func:`python_builder_settings` gives a JSON-able dict that the target-side runner
``designer/activities/runners/trt_build.py`` applies with ``getattr(trt.BuilderFlag, name)``
& co. Every enum member and attribute the runner may touch is listed in the result's ``"api"``
(tests check each exists in that version's ``pyCore.cpp``/``pyFoundationalTypes.cpp``; names
of the ONNX parser and network bindings, whose sources are not in the fixtures, are listed under
``"api_unchecked"``). Version gaps are refused as for trtexec.
"""

from __future__ import annotations

from typing import Any

from designer.activities.trt.command import STRONGLY_TYPED_ONLY, _refuse_weak_typing
from designer.activities.trt.options import TrtBuildOptions, TrtOptionError
from designer.activities.trt.version import TrtVersion

__all__ = ["DATA_TYPES", "RUNNER_API", "RUNNER_API_UNCHECKED", "python_builder_settings"]

# Our precision names -> tensorrt.DataType members.
DATA_TYPES = {
    "fp32": "FLOAT",
    "fp16": "HALF",
    "bf16": "BF16",
    "fp8": "FP8",
    "int64": "INT64",
    "int32": "INT32",
    "int8": "INT8",
    "int4": "INT4",
    "uint8": "UINT8",
    "bool": "BOOL",
}
_TACTICS = {
    "cublas": "CUBLAS",
    "cublasLt": "CUBLAS_LT",
    "cudnn": "CUDNN",
    "edge_mask_convolutions": "EDGE_MASK_CONVOLUTIONS",
    "jit_convolutions": "JIT_CONVOLUTIONS",
}
_HWC = {
    "none": "NONE",
    "ampere+": "AMPERE_PLUS",
    "sameComputeCapability": "SAME_COMPUTE_CAPABILITY",
}

# Classes and attributes the runner uses whatever the options (pybind names in pyCore.cpp).
RUNNER_API: dict[str, list[str]] = {
    "Logger": ["Severity"],
    "Builder": [
        "create_network",
        "create_builder_config",
        "create_optimization_profile",
        "build_serialized_network",
    ],
    "IBuilderConfig": [
        "set_flag",
        "clear_flag",
        "get_flag",
        "set_memory_pool_limit",
        "add_optimization_profile",
        "profiling_verbosity",
        "builder_optimization_level",
        "max_aux_streams",
        "hardware_compatibility_level",
        "get_tactic_sources",
        "set_tactic_sources",
        "create_timing_cache",
        "set_timing_cache",
        "get_timing_cache",
    ],
    "IOptimizationProfile": ["set_shape"],
    "ITimingCache": ["serialize"],
    "Runtime": ["deserialize_cuda_engine"],
    "ICudaEngine": ["create_engine_inspector"],
    "EngineInspector": ["get_engine_information"],
    "LayerInformationFormat": ["JSON"],
}
# Bound in pyOnnx.cpp / pyGraph.cpp, which the fixtures do not hold.
RUNNER_API_UNCHECKED: dict[str, list[str]] = {
    "OnnxParser": ["parse_from_file", "num_errors", "get_error", "clear_flag"],
    "OnnxParserFlag": ["NATIVE_INSTANCENORM"],
    "INetworkDefinition": ["num_layers", "get_layer", "num_inputs", "get_input"],
    "ILayer": ["name", "precision", "num_outputs", "set_output_type", "get_output"],
    "ITensor": ["set_dynamic_range"],
}


def python_builder_settings(build: TrtBuildOptions, version: TrtVersion) -> dict[str, Any]:
    """What the Python builder would set for ``build`` on ``version`` (JSON-able)."""
    build.validate(version)
    _refuse_weak_typing(build, version)
    if build.calibration_cache:
        raise TrtOptionError(
            "an INT8 calibration cache needs a calibrator in the Python builder path: build"
            " with trtexec instead (the default), which reads the cache with --calib"
        )
    strong_only = version >= STRONGLY_TYPED_ONLY
    set_flags: list[str] = []
    clear_flags: list[str] = []
    network_flags: list[str] = []
    if build.typing == "strong":
        network_flags.append("STRONGLY_TYPED")
    elif build.typing == "obey":
        set_flags.append("OBEY_PRECISION_CONSTRAINTS")
    elif build.typing == "prefer":
        set_flags.append("PREFER_PRECISION_CONSTRAINTS")
    if not build.tf32:
        clear_flags.append("TF32")
    set_flags += [
        {"fp16": "FP16", "bf16": "BF16", "int8": "INT8", "fp8": "FP8"}[p]
        for p in build.implicit_precisions
    ]
    if build.sparsity:
        set_flags.append("SPARSE_WEIGHTS")
    if build.version_compatible:
        set_flags.append("VERSION_COMPATIBLE")
    if build.weights == "refit":
        set_flags.append("REFIT")
    elif build.weights == "strip":
        set_flags += ["STRIP_PLAN", "REFIT_IDENTICAL"]
    tactics: dict[str, bool] = {}
    for source, on in build.tactic_sources.items():
        name = _TACTICS[source]
        if strong_only and name in ("CUBLAS", "CUBLAS_LT", "CUDNN"):
            raise TrtOptionError(
                f"TensorRT {version} has no {source} tactic source: leave it at its default"
            )
        tactics[name] = on
    settings: dict[str, Any] = {
        "version": str(version),
        "model": build.model,
        "engine": build.engine,
        "network_flags": network_flags,
        "set_flags": set_flags,
        "clear_flags": clear_flags,
        "memory_pool_limits": (
            {"WORKSPACE": build.workspace_mib << 20} if build.workspace_mib is not None else {}
        ),
        "profiling_verbosity": build.profiling_verbosity.upper(),
        "builder_optimization_level": build.builder_optimization_level,
        "max_aux_streams": build.max_aux_streams,
        "hardware_compatibility_level": _HWC[build.hardware_compatibility],
        "tactic_sources": tactics,
        "native_instance_norm": build.native_instance_norm,
        "profiles": [
            {name: [list(lo), list(opt), list(hi)] for name, (lo, opt, hi) in p.items()}
            for p in build.profiles
        ],
        "layer_precisions": {n: DATA_TYPES[p] for n, p in build.layer_precisions.items()},
        "layer_output_types": {
            n: [DATA_TYPES[t] for t in types] for n, types in build.layer_output_types.items()
        },
        "timing_cache": build.timing_cache,
        "layer_info": build.layer_info,
        "device": build.device,
        "plugins": [*build.plugins, *build.dynamic_plugins],
        # INT8 without a calibration cache (the Python path has none): placeholder ranges.
        "int8_placeholder_ranges": build.int8,
    }
    enums: dict[str, list[str]] = {
        "NetworkDefinitionCreationFlag": network_flags,
        "BuilderFlag": sorted(set(set_flags + clear_flags)),
        "MemoryPoolType": list(settings["memory_pool_limits"]),
        "ProfilingVerbosity": [settings["profiling_verbosity"]],
        "HardwareCompatibilityLevel": [settings["hardware_compatibility_level"]],
        "TacticSource": list(tactics),
        "DataType": sorted(
            {*settings["layer_precisions"].values()}
            | {t for types in settings["layer_output_types"].values() for t in types}
        ),
    }
    api = {k: list(v) for k, v in RUNNER_API.items()}
    for enum, members in enums.items():
        if members:
            api.setdefault(enum, []).extend(members)
    settings["api"] = api
    settings["api_unchecked"] = RUNNER_API_UNCHECKED
    return settings
