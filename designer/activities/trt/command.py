"""trtexec command lines for one TensorRT version (pure functions, nothing runs).

Every flag name and value syntax here is the one of trtexec's parser in TensorRT's
``samples/common/sampleOptions.cpp`` for that version (tests check each emitted argument
against the real parsers of 10.16 and 11.1). What a version lacks is refused with
:class:`TrtOptionError` saying what to do instead — never silently dropped.

TensorRT 11 builds strongly typed networks only: it removed ``--fp16/--bf16/--int8/--fp8/--best``,
``--calib``, ``--precisionConstraints``, ``--layerPrecisions`` and ``--layerOutputTypes``, and
the cuBLAS/cuBLASLt/cuDNN tactic sources. Its profiling defaults changed too (no data
transfers, spin wait and CUDA graphs on by default; ``--includeDataTransfers``,
``--noSpinWait``, ``--noCudaGraph`` turn them off).
"""

from __future__ import annotations

import shlex

from designer.activities.trt.options import (
    TrtBuildOptions,
    TrtOptionError,
    TrtProfileOptions,
    format_dims,
)
from designer.activities.trt.version import TrtVersion

__all__ = [
    "STRONGLY_TYPED_ONLY",
    "format_command",
    "trtexec_argv",
    "trtexec_profile_argv",
]

STRONGLY_TYPED_ONLY = TrtVersion(11, 0)
# Tactic sources each version's --tacticSources accepts (our spelling -> trtexec's).
_TACTICS_10 = {
    "cublas": "CUBLAS",
    "cublasLt": "CUBLAS_LT",
    "cudnn": "CUDNN",
    "edge_mask_convolutions": "EDGE_MASK_CONVOLUTIONS",
    "jit_convolutions": "JIT_CONVOLUTIONS",
}
_TACTICS_11 = {k: v for k, v in _TACTICS_10.items() if k not in ("cublas", "cublasLt", "cudnn")}

_CONVERT_HINT = (
    "convert the model instead (Tools > Global Model Modification > Convert to FP16, or"
    " `onnx-designer fp16 MODEL OUT`)"
    " or insert explicit Casts (`onnx-designer cast`), then build it strongly typed"
)


def _strongly_typed_only(version: TrtVersion) -> bool:
    return version >= STRONGLY_TYPED_ONLY


def _refuse_weak_typing(build: TrtBuildOptions, version: TrtVersion) -> None:
    """TensorRT ≥ 11 has no weakly typed builds: say so for each thing that needs one."""
    if not _strongly_typed_only(version):
        return
    lacks = [f"--{p}" for p in build.implicit_precisions]
    if build.typing in ("obey", "prefer"):
        lacks.append(f"--precisionConstraints={build.typing}")
    if build.layer_precisions:
        lacks.append("--layerPrecisions")
    if build.layer_output_types:
        lacks.append("--layerOutputTypes")
    if build.calibration_cache:
        lacks.append("--calib")
    if lacks:
        raise TrtOptionError(
            f"TensorRT {version} builds strongly typed networks only and has no "
            f"{', '.join(lacks)}: {_CONVERT_HINT}"
        )


def _listed_name(name: str, what: str) -> str:
    """A tensor or layer name in a comma-separated trtexec list (``--minShapes``,
    ``--layerPrecisions``): trtexec splits the list at every ',' first and treats single
    quotes specially, so names with those cannot be written; ':' is fine (it splits at the
    last one)."""
    if "," in name or "'" in name:
        raise TrtOptionError(
            f"{what} name {name!r} contains ',' or a quote, which trtexec's option syntax"
            " cannot express: rename it (or build with the Python builder)"
        )
    return name


def _shape_spec(profile: dict[str, list[int]]) -> str:
    return ",".join(
        f"{_listed_name(name, 'input')}:{format_dims(dims)}" for name, dims in profile.items()
    )


def _build_args(build: TrtBuildOptions, version: TrtVersion) -> list[str]:
    build.validate(version)
    _refuse_weak_typing(build, version)
    args = [f"--onnx={build.model}"]
    if build.engine:
        args.append(f"--saveEngine={build.engine}")
    # Profiles: one -> plain triple; several -> --profile=i immediately before its triple
    # (trtexec pairs them by position: getOptimizationProfiles in sampleOptions.cpp).
    several = len(build.profiles) > 1
    for index, profile in enumerate(build.profiles):
        if not profile:
            continue
        if several:
            args.append(f"--profile={index}")
        for which, key in ((0, "--minShapes"), (1, "--optShapes"), (2, "--maxShapes")):
            args.append(
                f"{key}={_shape_spec({name: dims[which] for name, dims in profile.items()})}"
            )
    # Typing and precisions.
    if build.typing == "strong":
        args.append("--stronglyTyped")
    elif build.typing in ("obey", "prefer"):
        args.append(f"--precisionConstraints={build.typing}")
    if not build.tf32:
        args.append("--noTF32")
    args += [f"--{p}" for p in build.implicit_precisions]
    if build.layer_precisions:
        spec = ",".join(
            f"{_listed_name(n, 'layer')}:{p}" for n, p in build.layer_precisions.items()
        )
        args.append(f"--layerPrecisions={spec}")
    if build.layer_output_types:
        spec = ",".join(
            f"{_listed_name(n, 'layer')}:{'+'.join(types)}"
            for n, types in build.layer_output_types.items()
        )
        args.append(f"--layerOutputTypes={spec}")
    if build.calibration_cache:
        args.append(f"--calib={build.calibration_cache}")
    # Tactics.
    if build.sparsity:
        args.append("--sparsity=enable")
    if build.tactic_sources:
        table = _TACTICS_11 if _strongly_typed_only(version) else _TACTICS_10
        missing = [s for s in build.tactic_sources if s not in table]
        if missing:
            raise TrtOptionError(
                f"TensorRT {version} has no {', '.join(missing)} tactic source"
                f" (it knows {', '.join(table)}): leave those tactic sources at their default"
            )
        spec = ",".join(("+" if on else "-") + table[s] for s, on in build.tactic_sources.items())
        args.append(f"--tacticSources={spec}")
    if not build.native_instance_norm:
        args.append("--pluginInstanceNorm")
    # Optimizer.
    if build.builder_optimization_level is not None:
        args.append(f"--builderOptimizationLevel={build.builder_optimization_level}")
    if build.max_aux_streams is not None:
        args.append(f"--maxAuxStreams={build.max_aux_streams}")
    if build.hardware_compatibility != "none":
        args.append(f"--hardwareCompatibilityLevel={build.hardware_compatibility}")
    if build.version_compatible:
        args.append("--versionCompatible")
    if build.workspace_mib is not None:
        args.append(f"--memPoolSize=workspace:{build.workspace_mib}M")
    if build.weights == "refit":
        args.append("--refit")
    elif build.weights == "strip":
        args.append("--stripWeights")
    if build.timing_cache:
        args.append(f"--timingCacheFile={build.timing_cache}")
    # Metadata, system.
    args.append(f"--profilingVerbosity={build.profiling_verbosity}")
    if build.layer_info:
        args.append(f"--exportLayerInfo={build.layer_info}")
    if build.device:
        args.append(f"--device={build.device}")
    args += [f"--staticPlugins={lib}" for lib in build.plugins]
    args += [f"--dynamicPlugins={lib}" for lib in build.dynamic_plugins]
    if build.verbose:
        args.append("--verbose")
    return args


def trtexec_argv(
    build: TrtBuildOptions, version: TrtVersion, trtexec: str = "trtexec"
) -> list[str]:
    """The argument vector building ``build.model`` into ``build.engine`` with that version's
    trtexec (``--skipInference`` unless ``build.skip_inference`` is off)."""
    args = _build_args(build, version)
    if build.skip_inference:
        args.append("--skipInference")
    return [trtexec, *args]


def trtexec_profile_argv(
    prof: TrtProfileOptions, version: TrtVersion, trtexec: str = "trtexec"
) -> list[str]:
    """The argument vector profiling an engine: ``--loadEngine`` for a prebuilt one, else a
    build of ``prof.build`` followed by the measurement in the same run.

    With ``--loadEngine`` only the system options of ``prof.build`` (device, plugins,
    verbose) and its shapes are used: trtexec ignores build options then ("if loadEngine is
    specified, BuildOptions are N/A", sampleOptions.cpp), and the later passes of a
    multi-pass run load the engine the first pass built with them. Callers that take build
    options from a user refuse them with a prebuilt engine (``profile trt --use-engine``).

    ``--shapes`` is ``prof.shapes``, else the opt shapes of ``prof.build.profiles[0]`` (what
    trtexec itself runs after building with them), else absent. For a user's prebuilt
    engine the profiles must be only the shapes the user gave
    (:func:`~designer.activities.trt.model_settings.with_model_settings` with
    ``prebuilt_engine=True``): the model's stored profile may not be the one the engine was
    built with, and without ``--shapes`` trtexec picks the shapes itself (every free dim 1;
    see :func:`~designer.activities.trt.model_settings.prebuilt_engine_shapes_note`)."""
    prof.validate(version)
    if prof.use_engine:
        args = [f"--loadEngine={prof.use_engine}"]
        build = prof.build
        if build.device:
            args.append(f"--device={build.device}")
        args += [f"--staticPlugins={lib}" for lib in build.plugins]
        args += [f"--dynamicPlugins={lib}" for lib in build.dynamic_plugins]
        if build.verbose:
            args.append("--verbose")
    else:
        args = _build_args(prof.build, version)
    shapes = dict(prof.shapes)
    if not shapes and prof.build.profiles:
        shapes = {name: dims[1] for name, dims in prof.build.profiles[0].items()}
    if shapes:
        args.append(f"--shapes={_shape_spec(shapes)}")
    if prof.iterations is not None:
        args.append(f"--iterations={prof.iterations}")
    if prof.duration_s is not None:
        seconds = prof.duration_s
        args.append(f"--duration={int(seconds) if float(seconds).is_integer() else seconds}")
    if prof.warmup_ms is not None:
        args.append(f"--warmUp={prof.warmup_ms}")
    if prof.avg_runs is not None:
        args.append(f"--avgRuns={prof.avg_runs}")
    args += _measurement_defaults(prof, version)
    if prof.separate_profile_run:
        args.append("--separateProfileRun")
    if prof.dump_profile:
        args.append("--dumpProfile")
    if prof.export_profile:
        args.append(f"--exportProfile={prof.export_profile}")
    if prof.export_times:
        args.append(f"--exportTimes={prof.export_times}")
    if prof.export_layer_info:
        args.append(f"--exportLayerInfo={prof.export_layer_info}")
    # A layer JSON asked for on both sides would be one duplicated flag: keep the first.
    seen: set[str] = set()
    unique = []
    for arg in args:
        key = arg.split("=", 1)[0]
        if key == "--exportLayerInfo" and key in seen:
            continue
        seen.add(key)
        unique.append(arg)
    return [trtexec, *unique]


def _measurement_defaults(prof: TrtProfileOptions, version: TrtVersion) -> list[str]:
    """Data transfers, spin wait, CUDA graphs: 10.x turns them on/off with --noDataTransfers,
    --useSpinWait, --useCudaGraph; 11.x has the opposite defaults and the opposite flags."""
    if _strongly_typed_only(version):
        args = []
        if not prof.hide_non_compute:
            args.append("--includeDataTransfers")
        if not prof.spin_wait:
            args.append("--noSpinWait")
        if not prof.cuda_graph:
            args.append("--noCudaGraph")
        return args
    args = []
    if prof.hide_non_compute:
        args.append("--noDataTransfers")
    if prof.spin_wait:
        args.append("--useSpinWait")
    if prof.cuda_graph:
        args.append("--useCudaGraph")
    return args


def format_command(argv: list[str]) -> str:
    """One shell line for ``--print-command`` (each argument quoted where needed)."""
    return shlex.join(argv)
