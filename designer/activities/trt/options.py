"""Options of a TensorRT engine build (SPEC X-3) and of a TensorRT profiling run (X-4).

Plain values only (str, int, lists, dicts) so these dataclasses can be filled from the CLI, the
GUI dialogs or the model's stored settings alike, and turned into a trtexec command line
(:mod:`designer.activities.trt.command`) or Python builder settings for one TensorRT version.
Version-independent checks live in :meth:`TrtBuildOptions.validate`; what a given version lacks
is refused when the command line is made.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from designer.activities.trt.version import TrtVersion
from designer.core.errors import DesignerError

__all__ = [
    "CLEAR_PRECISIONS_HINT",
    "HARDWARE_COMPATIBILITY",
    "IGNORE_PRECISIONS_HINT",
    "PRECISIONS",
    "PROFILING_VERBOSITY",
    "SPARSITY",
    "TACTIC_SOURCES",
    "TYPING_MODES",
    "WEIGHTS_MODES",
    "ShapeProfile",
    "TrtBuildOptions",
    "TrtOptionError",
    "TrtProfileOptions",
    "format_dims",
]

TYPING_MODES = ("default", "strong", "obey", "prefer")
PRECISIONS = ("fp32", "fp16", "bf16", "fp8", "int64", "int32", "int8", "int4", "uint8", "bool")
# trtexec's --tacticSources names (upper-cased by trtexec), in our spelling.
TACTIC_SOURCES = ("cublas", "cublasLt", "cudnn", "edge_mask_convolutions", "jit_convolutions")
HARDWARE_COMPATIBILITY = ("none", "ampere+", "sameComputeCapability")
WEIGHTS_MODES = ("none", "refit", "strip")
PROFILING_VERBOSITY = ("detailed", "layer_names_only", "none")
SPARSITY = ("disable", "enable")

# One optimization profile: input name -> (min, opt, max) shapes.
ShapeProfile = dict[str, tuple[list[int], list[int], list[int]]]
# How a caller that says nothing else names the two ways out of unusable layer precisions.
IGNORE_PRECISIONS_HINT = "ignore the layer precisions stored in the model"
CLEAR_PRECISIONS_HINT = "clear the precisions"


class TrtOptionError(DesignerError):
    """An option cannot be used (with this TensorRT version): what is wrong and what to do."""


def format_dims(dims: list[int] | tuple[int, ...]) -> str:
    """trtexec's shape syntax: ``[1, 3, 224, 224]`` → ``1x3x224x224`` (a scalar is empty)."""
    return "x".join(str(int(d)) for d in dims)


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise TrtOptionError(f"{name} {value!r} is not one of: {', '.join(choices)}")


@dataclass
class TrtBuildOptions:
    """Every option of an engine build. Paths are as seen by trtexec (on the target)."""

    model: str
    engine: str | None = None
    typing: str = "default"
    tf32: bool = True
    fp16: bool = False
    bf16: bool = False
    int8: bool = False
    fp8: bool = False
    sparsity: bool = False
    tactic_sources: dict[str, bool] = field(default_factory=dict)
    native_instance_norm: bool = True
    builder_optimization_level: int | None = None
    max_aux_streams: int | None = None
    hardware_compatibility: str = "none"
    version_compatible: bool = False
    workspace_mib: int | None = None
    calibration_cache: str | None = None
    weights: str = "none"
    profiling_verbosity: str = "detailed"
    layer_info: str | None = None
    device: int = 0
    plugins: list[str] = field(default_factory=list)
    dynamic_plugins: list[str] = field(default_factory=list)
    timing_cache: str | None = None
    profiles: list[ShapeProfile] = field(default_factory=list)
    layer_precisions: dict[str, str] = field(default_factory=dict)
    layer_output_types: dict[str, list[str]] = field(default_factory=dict)
    skip_inference: bool = True
    verbose: bool = False

    @property
    def implicit_precisions(self) -> list[str]:
        """The weakly-typed precision flags set (``["fp16", "int8"]``)."""
        return [n for n in ("fp16", "bf16", "int8", "fp8") if getattr(self, n)]

    def precision_problem(
        self,
        version: TrtVersion | None = None,
        *,
        ignore: str = IGNORE_PRECISIONS_HINT,
        clear: str = CLEAR_PRECISIONS_HINT,
    ) -> str | None:
        """Why the layer precisions / output types these options carry cannot be used, or
        None. ``version`` (the target's TensorRT, None when unknown) picks the way out: a
        strongly-typed-only TensorRT (11.x) has no layer precisions at all, so "choose obey
        or prefer" would send the user to a mode it refuses. ``ignore`` / ``clear`` are how
        the caller's user does those (a flag on the command line, a control in a dialog)."""
        count = len(set(self.layer_precisions) | set(self.layer_output_types))
        if not count:
            return None
        from designer.activities.trt.command import STRONGLY_TYPED_ONLY  # command imports us

        if version is not None and version >= STRONGLY_TYPED_ONLY:
            return (
                f"TensorRT {version.short} has no layer precisions (it builds strongly typed"
                f" networks only), and {count} node(s) of the model have one: {ignore} to"
                " build without them, or convert the model itself to the precisions wanted"
                " (Convert to FP16, or explicit Casts)"
            )
        if self.typing in ("default", "strong"):
            return (
                "layer precisions are only honoured with typing mode 'obey' or 'prefer'"
                f" (it is {self.typing!r}, and {count} node(s) have one): choose one of"
                f" those, {ignore}, or {clear}"
            )
        return None

    def validate(self, version: TrtVersion | None = None) -> None:
        """Version-independent checks, and the layer precisions' for ``version`` when it is
        known (:meth:`precision_problem`); raises :class:`TrtOptionError` with one line."""
        _check_choice("typing mode", self.typing, TYPING_MODES)
        _check_choice("hardware compatibility", self.hardware_compatibility, HARDWARE_COMPATIBILITY)
        _check_choice("weights mode", self.weights, WEIGHTS_MODES)
        _check_choice("profiling verbosity", self.profiling_verbosity, PROFILING_VERBOSITY)
        if not self.model:
            raise TrtOptionError("no ONNX model given")
        if self.fp8 and self.int8:
            raise TrtOptionError("FP8 and INT8 cannot be enabled together: choose one")
        if self.typing == "strong" and self.implicit_precisions:
            flags = ", ".join(p.upper() for p in self.implicit_precisions)
            raise TrtOptionError(
                f"a strongly typed network takes its precisions from the model: drop {flags}"
                " or use typing mode 'default', 'obey' or 'prefer'"
            )
        problem = self.precision_problem(version)
        if problem:
            raise TrtOptionError(problem)
        for source in self.tactic_sources:
            _check_choice("tactic source", source, TACTIC_SOURCES)
        for name, prec in self.layer_precisions.items():
            _check_choice(f"precision of layer {name!r}", prec, PRECISIONS)
        for name, types in self.layer_output_types.items():
            for prec in types:
                _check_choice(f"output type of layer {name!r}", prec, PRECISIONS)
        if self.builder_optimization_level is not None and not (
            0 <= self.builder_optimization_level <= 5
        ):
            raise TrtOptionError("builder optimization level must be 0..5")
        if self.max_aux_streams is not None and self.max_aux_streams < 0:
            raise TrtOptionError("max auxiliary streams must be 0 or more")
        if self.workspace_mib is not None and self.workspace_mib <= 0:
            raise TrtOptionError("workspace pool limit must be a positive number of MiB")
        if self.device < 0:
            raise TrtOptionError("device index must be 0 or more")
        if self.layer_info and self.profiling_verbosity != "detailed":
            raise TrtOptionError("the layer information JSON needs profiling verbosity 'detailed'")
        if not self.native_instance_norm and (
            self.version_compatible or self.hardware_compatibility == "ampere+"
        ):
            raise TrtOptionError(
                "the InstanceNorm plugin cannot be used with version or hardware compatible"
                " engines: keep native instance norm"
            )
        for index, profile in enumerate(self.profiles):
            if not profile:
                raise TrtOptionError(f"profile {index} is empty: give its inputs or remove it")
            for name, (lo, opt, hi) in profile.items():
                if not (len(lo) == len(opt) == len(hi)):
                    raise TrtOptionError(
                        f"profile {index}, input {name!r}: min/opt/max have different ranks"
                    )
                if any(not (a <= b <= c) for a, b, c in zip(lo, opt, hi, strict=True)):
                    raise TrtOptionError(
                        f"profile {index}, input {name!r}: needs min ≤ opt ≤ max in every dim"
                    )


@dataclass
class TrtProfileOptions:
    """A profiling run (X-4): build (or load ``use_engine``) then measure.

    ``lock_clocks`` is no trtexec flag: clocks are locked on the target before the run
    (``jetson_clocks`` on a Jetson, ``nvidia-smi -lgc`` elsewhere) where permitted; see
    :func:`designer.activities.trt.detect.lock_clocks_argv`.
    """

    build: TrtBuildOptions
    use_engine: str | None = None
    iterations: int | None = None
    duration_s: float | None = None
    warmup_ms: int | None = None
    avg_runs: int | None = None
    hide_non_compute: bool = True
    spin_wait: bool = False
    cuda_graph: bool = False
    separate_profile_run: bool = False
    lock_clocks: bool = False
    export_profile: str | None = None
    export_times: str | None = None
    export_layer_info: str | None = None
    dump_profile: bool = True
    shapes: dict[str, list[int]] = field(default_factory=dict)

    def validate(self, version: TrtVersion | None = None) -> None:
        """The build's checks (for ``version`` when known) unless an engine is loaded, and
        the measurement's."""
        if self.use_engine is None:
            self.build.validate(version)
        for name, value in (
            ("iterations", self.iterations),
            ("warm-up", self.warmup_ms),
            ("averaging runs", self.avg_runs),
        ):
            if value is not None and value < (1 if name != "warm-up" else 0):
                raise TrtOptionError(f"{name} must be {'0' if name == 'warm-up' else '1'} or more")
        if self.duration_s is not None and self.duration_s < 0:
            raise TrtOptionError("duration must be 0 s or more")
