"""TensorRT as a deployment dependency (SPEC A-3), on top of :mod:`designer.activities.deploy`.

* Jetson (L4T) or a target with a system/custom TensorRT: :class:`SystemTensorRT`, checked and
  never installed (JetPack's TensorRT is the only one that fits a Jetson; pip wheels are never
  tried there).
* x86_64 Linux without one: NVIDIA's standalone binary wheels ``tensorrt-cu12-bindings`` and
  ``tensorrt-cu12-libs`` installed into the deployment venv through
  :class:`~designer.activities.deploy.PythonPackages` (``pip download --only-binary``: the
  ``tensorrt`` / ``tensorrt-cu12`` metapackages are source distributions, the binary wheels are
  these two; their module is ``tensorrt_bindings``). They bring the Python API, not trtexec:
  builds then use the runner ``trt_build.py``. ``cuda="13"`` picks the CUDA 13 builds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from designer.activities.deploy import (
    DependencyState,
    DependencyStatus,
    DeployContext,
    DeployError,
    Deployment,
    PythonDependency,
    PythonPackages,
    RunnerScripts,
)
from designer.activities.targets.base import Target
from designer.activities.trt.detect import TrtDetection

__all__ = ["SystemTensorRT", "trt_deployment", "trt_requirements", "wheels_allowed"]


def trt_requirements(version: str | None = None, cuda: str = "12") -> tuple[str, ...]:
    """pip requirements of the standalone TensorRT wheels (``version`` e.g. "10.16": that
    release series)."""
    pin = f"=={version}.*" if version else ""
    return (f"tensorrt-cu{cuda}-bindings{pin}", f"tensorrt-cu{cuda}-libs{pin}")


@dataclass(frozen=True)
class SystemTensorRT:
    """A TensorRT already on the target (system, JetPack or custom path)."""

    detection: TrtDetection
    key: str = "tensorrt"

    @property
    def label(self) -> str:
        return "TensorRT (system)" if self.detection.source != "custom" else "TensorRT (custom)"

    def check(self, ctx: DeployContext) -> DependencyStatus:
        det = self.detection
        if det.found:
            return DependencyStatus(self.key, self.label, DependencyState.CURRENT, det.summary)
        # det.summary: "no TensorRT: <what to do>", the panel's third state by name.
        return DependencyStatus(self.key, self.label, DependencyState.UNAVAILABLE, det.summary)

    def deploy(self, ctx: DeployContext) -> None:
        raise DeployError(f"{ctx.target.name}: {self.detection.reason}")


def wheels_allowed(det: TrtDetection) -> bool:
    """pip wheels only on x86_64 Linux that is not a Jetson."""
    return det.machine == "x86_64" and not det.jetson


def trt_deployment(
    target: Target,
    deploy_dir: str,
    detection: TrtDetection,
    *,
    use_wheels: bool | None = None,
    requirements: tuple[str, ...] | None = None,
    **kwargs: Any,
) -> Deployment:
    """The dependencies of a TensorRT activity. ``use_wheels`` None: wheels when no system or
    custom TensorRT was found and the target allows them."""
    if use_wheels is None:
        use_wheels = detection.source in (None, "deployed") and wheels_allowed(detection)
    if use_wheels and not wheels_allowed(detection):
        what = "a Jetson" if detection.jetson else f"a {detection.machine or 'non-x86_64'} target"
        raise DeployError(
            f"{target.name}: TensorRT wheels are not deployed on {what}: use its system"
            " TensorRT (JetPack) or a custom trtexec path"
        )
    deps: list[Any] = [PythonDependency((3, 9)), RunnerScripts(("trt_build",))]
    if use_wheels:
        deps.append(
            PythonPackages(
                requirements or trt_requirements(), key="tensorrt", label="TensorRT wheels"
            )
        )
    else:
        deps.append(SystemTensorRT(detection))
    return Deployment(target, deploy_dir, deps, **kwargs)
