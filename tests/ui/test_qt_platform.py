"""Missing system libraries of Qt's xcb plug-in are named, with the apt-get line, before Qt
would abort (issue 18: a fresh Debian lacks libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1)."""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import pytest

from designer import cli
from designer.ui import qt_platform

LDD_OUTPUT = """\
\tlinux-vdso.so.1 (0x00007ffd9b5f2000)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/plugins/platforms/../../lib/libQt6XcbQpa.so.6 (0x7f)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb.so.1 => /lib/x86_64-linux-gnu/libxcb.so.1 (0x00007f3c1c9b1000)
\tlibxcb-icccm.so.4 => not found
"""


def test_ldd_output_and_the_install_line() -> None:
    missing = qt_platform.missing_from_ldd(LDD_OUTPUT)
    assert missing == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"]
    hint = qt_platform.install_hint([*missing, "libxcb-cursor.so.0", "libfoo-bar.so.3"])
    assert hint.endswith(
        "sudo apt-get install libfoo-bar3 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1"
    )
    assert "libxcb-icccm.so.4" in hint and "\n" not in hint
    assert qt_platform._guess_package("libglib-2.0.so.0") == "libglib-2.0-0"


@pytest.mark.parametrize(
    ("env", "xcb"),
    [
        ({"DISPLAY": ":0"}, True),
        ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, False),
        ({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"}, False),
        ({"QT_QPA_PLATFORM": "xcb"}, True),
        ({}, False),
    ],
)
def test_which_platform_qt_will_use(env: dict[str, str], xcb: bool) -> None:
    assert qt_platform.uses_xcb(env) is xcb


@pytest.mark.skipif(shutil.which("ldd") is None, reason="no ldd on this machine")
def test_missing_libraries_agree_with_ldd_on_the_real_plugin() -> None:
    plugin = qt_platform.xcb_plugin()
    assert plugin is not None and plugin.name == "libqxcb.so"
    out = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True).stdout
    expected = set(qt_platform.missing_from_ldd(out))
    try:  # loaded the way Qt loads it
        ctypes.CDLL("libxcb-cursor.so.0")
    except OSError:
        expected.add("libxcb-cursor.so.0")
    assert set(qt_platform.missing_libraries(plugin)) >= expected
    for name in qt_platform.missing_libraries(plugin):
        assert name in qt_platform.PACKAGES  # every one gets a real package name


def test_the_window_is_not_started_without_them(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(qt_platform, "missing_libraries", lambda: ["libxcb-icccm.so.4"])
    assert cli.main([]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sudo apt-get install libxcb-icccm4" in err[0]
