"""Before Qt starts: are the system libraries of its platform plug-in there?

Qt's xcb plug-in (the X11 one, used by every Linux desktop without Wayland) links against
``libxcb-*`` libraries that a fresh Debian/Ubuntu often lacks. Without them Qt aborts the
process with a hint ("Reinstalling the application may fix this problem") that misleads. This
module finds the missing ones with ``ldd`` on the plug-in, without loading Qt, and names the
Debian/Ubuntu packages to install. Cost: one ``ldd`` run (~20 ms), only when a window opens.
"""

from __future__ import annotations

import ctypes
import importlib.util
import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

logger = logging.getLogger(__name__)

#: Debian/Ubuntu package of each shared library Qt's xcb platform plug-in needs.
PACKAGES = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-xinput.so.0": "libxcb-xinput0",
    "libxcb.so.1": "libxcb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libSM.so.6": "libsm6",
    "libICE.so.6": "libice6",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libOpenGL.so.0": "libopengl0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
    "libglib-2.0.so.0": "libglib2.0-0",
}
_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)


def uses_xcb(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """Whether Qt will pick its xcb plug-in: Linux, and the platform is unset or xcb
    (Qt prefers Wayland only when asked or in a Wayland session without X)."""
    if not sys.platform.startswith("linux"):
        return False
    platform = environ.get("QT_QPA_PLATFORM", "")
    if platform:
        return platform.split(":")[0] == "xcb" or platform.startswith("xcb;")
    return bool(environ.get("DISPLAY")) and not environ.get("WAYLAND_DISPLAY")


def xcb_plugin() -> Path | None:
    """PySide6's ``libqxcb.so``, found without importing Qt; None when absent."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        plugin = Path(folder) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
        if plugin.is_file():
            return plugin
    return None


def missing_from_ldd(output: str) -> list[str]:
    """Sonames ``ldd`` printed as ``not found``, in order, without repeats."""
    return list(dict.fromkeys(_NOT_FOUND.findall(output)))


def missing_libraries(plugin: Path | None = None) -> list[str]:
    """Shared libraries the xcb plug-in needs and the system lacks ([] when all are there,
    or when this cannot be told: no plug-in, no ``ldd``)."""
    plugin = plugin or xcb_plugin()
    ldd = shutil.which("ldd")
    if plugin is None or ldd is None:
        return []
    found: list[str] = []
    for library in (plugin, plugin.parents[2] / "lib" / "libQt6XcbQpa.so.6"):
        if not library.is_file():
            continue
        try:
            out = subprocess.run(
                [ldd, str(library)], capture_output=True, text=True, timeout=20, check=False
            ).stdout
        except (OSError, subprocess.SubprocessError) as exc:  # cannot tell: let Qt try
            logger.debug("ldd %s failed (%s); not checking Qt's libraries", library, exc)
            return []
        found += missing_from_ldd(out)
    # Qt 6.5+ loads xcb-cursor at run time (not a link-time dependency) and aborts without it.
    # Asked the way Qt asks (dlopen), so a copy in an app bundle's LD_LIBRARY_PATH counts too.
    try:
        ctypes.CDLL("libxcb-cursor.so.0")
    except OSError:
        found.append("libxcb-cursor.so.0")
    return list(dict.fromkeys(found))


def install_hint(missing: list[str]) -> str:
    """One line: what is missing and the ``apt-get install`` line that brings it."""
    packages = sorted({PACKAGES.get(name, _guess_package(name)) for name in missing})
    return (
        f"Qt's X11 (xcb) platform plug-in needs system libraries this machine lacks "
        f"({', '.join(missing)}); on Debian/Ubuntu install them with: "
        f"sudo apt-get install {' '.join(packages)}"
    )


def _guess_package(soname: str) -> str:
    """Debian's usual naming: ``libfoo-bar.so.3`` → ``libfoo-bar3``."""
    match = re.match(r"(lib[\w+.-]+?)\.so\.(\d+)", soname)
    if match is None:
        return soname
    stem, major = match.groups()
    stem = stem.lower()
    return f"{stem}-{major}" if stem[-1].isdigit() else f"{stem}{major}"
