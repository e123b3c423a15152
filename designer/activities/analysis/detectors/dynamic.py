"""Dynamic model inputs without a TensorRT optimization profile (the model's stored
TensorRT settings, designer.core.trt.settings).

It is TensorRT's concern: for a TensorRT profile, or an ONNX Runtime run on its TensorRT
execution provider, it is a medium finding; for any other ONNX Runtime run (CPU, CUDA…),
which handles dynamic shapes by itself, it is only information about a later TensorRT build."""

from __future__ import annotations

from designer.activities.analysis.detectors.base import Context, Detector, Finding, Severity
from designer.core.trt.settings import (
    TrtSettingsError,
    dynamic_inputs,
    inputs_without_profile,
    read_settings,
)

__all__ = ["DynamicInputs"]

_TRT_EP = "TensorrtExecutionProvider"


def _tensorrt_run(context: Context) -> bool:
    profile = context.profile
    return profile.kind == "tensorrt" or _TRT_EP in profile.devices


def _ran_on(context: Context) -> str:
    devices = sorted(context.profile.devices)
    return ", ".join(devices) if devices else "ONNX Runtime"


class DynamicInputs(Detector):
    id = "dynamic-no-profile"
    title = "Dynamic inputs without TensorRT optimization profiles"

    def detect(self, context: Context) -> list[Finding]:
        model = context.model or context.profile.model
        if model is None or not dynamic_inputs(model):
            return []
        try:
            settings = read_settings(model)
        except TrtSettingsError as exc:
            return [
                Finding(
                    self.id,
                    "medium",
                    f"the model's stored TensorRT settings are unreadable: {exc}",
                    "Set the optimization profiles again (TensorRT > Optimization Profiles, or "
                    "onnx-designer trt set-profile)",
                )
            ]
        missing = inputs_without_profile(model, settings)
        if not missing:
            return []
        shapes = dynamic_inputs(model)
        described = ", ".join(
            f"{name} {[str(d) for d in shapes.get(name, [])]}" for name in missing
        )
        problem = (
            f"dynamic input(s) {described} have no TensorRT optimization profile: TensorRT "
            "cannot build an engine for them without one (the designer's build stops, or "
            "fixes every free dimension to 1)"
        )
        fix = (
            "Give each dynamic input min/opt/max shapes (TensorRT > Optimization Profiles, "
            "or onnx-designer trt set-profile MODEL OUT --shape NAME:MIN:OPT:MAX), with opt "
            "the shape you run most"
        )
        severity: Severity = "medium"
        if not _tensorrt_run(context):
            severity = "info"
            problem += (
                f"; this concerns a TensorRT build only: this ONNX Runtime run "
                f"({_ran_on(context)}) takes dynamic shapes as they come"
            )
            fix = f"Before building it with TensorRT: {fix[0].lower()}{fix[1:]}"
        return [Finding(self.id, severity, problem, fix)]
