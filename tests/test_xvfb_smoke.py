"""The designer on a real X server (Xvfb, Qt's xcb platform), driven by real keys and mouse
clicks (xdotool's XTEST): it starts where users start it, opens a model, edits, undoes and
quits. Offscreen tests cannot show that the window comes up on X11 at all."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "resources" / "examples" / "tiny_cnn.onnx"
pytestmark = pytest.mark.skipif(
    not (shutil.which("Xvfb") and shutil.which("xdotool")),
    reason="needs Xvfb and xdotool (apt-get install xvfb xdotool; .ci/run installs them)",
)


def wait_for(what: str, check: Callable[[], object], timeout: float = 60.0) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def display() -> Iterator[str]:
    """A fresh Xvfb at 1366x768 (a laptop screen); its number chosen by Xvfb itself."""
    read, write = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1366x768x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    try:
        with os.fdopen(read) as pipe:
            number = pipe.readline().strip()
        assert number.isdigit(), "Xvfb did not start"
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(10)


def test_window_starts_and_answers_keys_and_clicks_on_x11(display: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env.update(
        DISPLAY=display,
        ONNX_DESIGNER_CONFIG_DIR=str(tmp_path / "config"),
        ONNX_DESIGNER_RECOVERY_DIR=str(tmp_path / "recovery"),
        ONNX_DESIGNER_CACHE_DIR=str(tmp_path / "cache"),
    )
    app = subprocess.Popen(
        [sys.executable, "-m", "designer", str(EXAMPLE)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )

    def xdo(*args: str) -> str:
        done = subprocess.run(
            ["xdotool", *args], env=env, capture_output=True, text=True, timeout=30
        )
        return done.stdout.strip()

    def title() -> str:
        return xdo("getwindowname", window)

    try:
        found = wait_for("the window", lambda: xdo("search", "--name", "tiny_cnn.onnx"))
        window = str(found).splitlines()[0]
        assert title() == "tiny_cnn.onnx — ONNX Designer"
        xdo("windowfocus", "--sync", window)  # no window manager: focus it ourselves
        geometry = dict(
            line.split("=") for line in xdo("getwindowgeometry", "--shell", window).splitlines()
        )
        assert int(geometry["WIDTH"]) <= 1366 and int(geometry["HEIGHT"]) <= 768  # it fits
        x = int(geometry["X"]) + int(geometry["WIDTH"]) // 2
        y = int(geometry["Y"]) + int(geometry["HEIGHT"]) // 3
        xdo("mousemove", str(x), str(y), "click", "1")  # a real click on the canvas
        xdo("key", "ctrl+a", "Delete")
        wait_for(
            "the edit to mark the document modified", lambda: title().startswith("tiny_cnn.onnx*")
        )
        xdo("key", "ctrl+z")
        wait_for("undo to make it clean", lambda: not title().startswith("tiny_cnn.onnx*"))
        xdo("key", "ctrl+q")
        assert app.wait(30) == 0
    finally:
        if app.poll() is None:
            app.kill()
        output = app.communicate(timeout=10)[0]
    assert "Traceback" not in output, output
