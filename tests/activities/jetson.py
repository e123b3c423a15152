"""The emulated aarch64 root dressed as a Jetson: what JetPack 6 puts where the designer looks.

A read-only overlay layer above the cached Debian arm64 root (see aarch64.py) adds:

* ``/etc/nv_tegra_release`` exactly as L4T R36.4.0 (JetPack 6.1) writes it;
* ``/usr/src/tensorrt/bin/trtexec`` — JetPack's trtexec path — running the stand-in
  (tests/helpers/trtexec_standin: TensorRT 10.16's real option parser, the recorded real
  output) with the root's own aarch64 python3, its fixtures bound read-only from
  ``../shared/fixtures`` at ``/opt/trtexec-standin/fixtures``.

The GPU is the one thing the emulation lacks. The "with GPU" variant makes a character device
where a Jetson has its GPU's control node (``/dev/nvhost-ctrl-gpu``), so detection sees what it
sees on a board; the plain variant has none, as the emulated machine really has none.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STANDIN = ROOT / "tests" / "helpers" / "trtexec_standin"
FIXTURES = ROOT.parent / "shared" / "fixtures"

NV_TEGRA_RELEASE = (
    "# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64, "
    "DATE: Fri Sep 13 04:36:44 UTC 2024\n"
    "# KERNEL_VARIANT: oot\n"
    "TARGET_USERSPACE_LIB_DIR=nvidia\n"
    "TARGET_USERSPACE_LIB_DIR_PATH=usr/lib/aarch64-linux-gnu/nvidia\n"
)
SYSTEM_TRTEXEC = "/usr/src/tensorrt/bin/trtexec"
STANDIN_INSIDE = "/opt/trtexec-standin"
FIXTURES_INSIDE = f"{STANDIN_INSIDE}/fixtures"
GPU_NODE = "nvhost-ctrl-gpu"  # /dev/nvhost-ctrl-gpu on a Jetson


def missing_reason() -> str | None:
    if not (STANDIN / "trtexec").is_file():
        return f"the stand-in trtexec {STANDIN / 'trtexec'} is absent"
    if not FIXTURES.is_dir():
        return f"{FIXTURES}: the shared fixtures are expected beside the checkout"
    return None


def make_l4t_layer(folder: Path, tensorrt: bool = True) -> Path:
    """Write the layer into ``folder`` (a fresh directory) and return it; without
    ``tensorrt`` only the L4T marker (a Jetson whose JetPack lacks TensorRT)."""
    (folder / "etc").mkdir(parents=True)
    (folder / "etc" / "nv_tegra_release").write_text(NV_TEGRA_RELEASE)
    if not tensorrt:
        return folder
    standin = folder / STANDIN_INSIDE.lstrip("/")
    (standin / "fixtures").mkdir(parents=True)  # the bind's mount point
    for name in ("trtexec", "sample_options.py"):
        shutil.copy2(STANDIN / name, standin / name)
    (standin / "trtexec").chmod(0o755)
    wrapper = folder / SYSTEM_TRTEXEC.lstrip("/")
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text(
        "#!/bin/sh\n"
        "# JetPack's trtexec, played by the stand-in (real parser, recorded real output).\n"
        f"TRTEXEC_STANDIN_FIXTURES={FIXTURES_INSIDE} "
        f'exec /usr/bin/python3 {STANDIN_INSIDE}/trtexec "$@"\n'
    )
    wrapper.chmod(0o755)
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir():
            path.chmod(0o755)
    return folder


def binds() -> list[tuple[Path, str]]:
    return [(FIXTURES, FIXTURES_INSIDE)]
