"""A GPU for the TensorRT probe on machines without one (tests only).

The activity refuses to build or profile where the probe sees no GPU. The probe's device
paths are fields of :class:`designer.activities.trt.detect.TrtProbePaths` so tests can point
them elsewhere (as the emulated Jetson tests do); :func:`fake_gpu` points them at a plain
file in the system temp folder (readable by the SSH test user too), so the stand-in trtexec
— which needs no GPU — can run.
"""

from __future__ import annotations

import functools
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def fake_gpu(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    from designer.activities.trt import detect

    device = (
        Path(tempfile.gettempdir()) / f"designer-test-nvidia0-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    )
    device.touch()
    device.chmod(0o644)
    probe = functools.partial(detect.TrtProbePaths, gpu_devices=(str(device),))
    monkeypatch.setattr(detect, "TrtProbePaths", probe)
    try:
        yield device
    finally:
        device.unlink(missing_ok=True)
