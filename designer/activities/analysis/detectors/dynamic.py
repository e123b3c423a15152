"""Dynamic model inputs without a TensorRT optimization profile (the model's stored
TensorRT settings, designer.core.trt.settings)."""

from __future__ import annotations

from designer.activities.analysis.detectors.base import Context, Detector, Finding
from designer.core.trt.settings import (
    TrtSettingsError,
    dynamic_inputs,
    inputs_without_profile,
    read_settings,
)

__all__ = ["DynamicInputs"]


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
        return [
            Finding(
                self.id,
                "medium",
                f"dynamic input(s) {described} have no TensorRT optimization profile: TensorRT "
                "cannot build an engine for them without one (the designer's build stops, or "
                "fixes every free dimension to 1)",
                "Give each dynamic input min/opt/max shapes (TensorRT > Optimization Profiles, "
                "or onnx-designer trt set-profile MODEL OUT --shape NAME:MIN:OPT:MAX), with opt "
                "the shape you run most",
            )
        ]
