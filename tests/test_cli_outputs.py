"""Commands that write a file the user names never write over their input and write it
atomically (layout, export-image, screenshot, compose, extract); messages go where the
README says (the saved line on stdout, one error line on stderr); bad option values are
usage errors (exit 2); ``--grid-color`` draws the grid it colours."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from PySide6.QtGui import QColor, QImage
from test_cli import EXAMPLE, ROOT, assert_one_line_error, run

SAME = "the output path is the input; choose another file"


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "m.onnx"
    shutil.copyfile(EXAMPLE, path)
    return path


def _spellings(source: Path, tmp_path: Path, suffix: str) -> list[Path]:
    """Ways to name ``source`` as an output: itself, another spelling, a symbolic link
    (with the output's suffix), a hard link."""
    (tmp_path / "sub").mkdir()
    link = tmp_path / f"link{suffix}"
    link.symlink_to(source)
    hard = tmp_path / f"hard{suffix}"
    os.link(source, hard)
    return [source, tmp_path / "sub" / ".." / source.name, link, hard]


# --- D1: never over the input ---------------------------------------------------------------
def test_layout_refuses_to_write_over_its_model(tiny: Path, tmp_path: Path) -> None:
    original = tiny.read_bytes()
    for out in _spellings(tiny, tmp_path, ".json"):
        result = run("layout", tiny, out)
        assert_one_line_error(result, f"{out}: {SAME}")
        assert tiny.read_bytes() == original, out
    assert run("layout", tiny, tmp_path / "l.json").returncode == 0
    assert tiny.read_bytes() == original


def test_export_image_refuses_to_write_over_a_model_named_like_an_image(tmp_path: Path) -> None:
    model = tmp_path / "E2.png"  # a model file with an image's name
    shutil.copyfile(EXAMPLE, model)
    original = model.read_bytes()
    for out in _spellings(model, tmp_path, ".png"):
        assert_one_line_error(run("export-image", model, out), f"{out}: {SAME}")
        assert model.read_bytes() == original, out
    svg = tmp_path / "E.svg"
    shutil.copyfile(EXAMPLE, svg)
    assert_one_line_error(run("export-image", svg, svg), SAME)
    assert onnx.load(svg).graph.node  # still the model


def test_screenshot_refuses_to_write_over_its_model(tmp_path: Path) -> None:
    model = tmp_path / "shot.png"
    shutil.copyfile(EXAMPLE, model)
    assert_one_line_error(run("screenshot", model, model), SAME)
    assert model.read_bytes() == EXAMPLE.read_bytes()


def test_compose_refuses_a_hard_link_to_a_model(tiny: Path, tmp_path: Path) -> None:
    hard = tmp_path / "hard.onnx"
    os.link(tiny, hard)
    result = run("compose", tiny, EXAMPLE, hard, "--map", "y:x")
    assert_one_line_error(result, f"{hard}: {SAME}")
    assert tiny.read_bytes() == EXAMPLE.read_bytes()


def _limited(max_bytes: int) -> None:
    """In the child: writing past ``max_bytes`` fails with EFBIG (a full disk, a quota)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
@pytest.mark.parametrize("command,name", [("layout", "old.json"), ("export-image", "old.png")])
def test_a_failed_write_leaves_the_old_output_complete(
    tiny: Path, tmp_path: Path, command: str, name: str
) -> None:
    out = tmp_path / name
    assert run(command, tiny, out).returncode == 0
    old = out.read_bytes()
    assert len(old) > 2048
    result = subprocess.run(
        [sys.executable, "-m", "designer.cli", command, str(tiny), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        preexec_fn=lambda: _limited(1024),
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("onnx-designer: error: ")
    assert out.read_bytes() == old  # the old file, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([tiny.name, name])


# --- D7: one error line; the saved line on stdout -------------------------------------------
def _ordinary_user() -> list[str]:
    """A command prefix without the right to write into a read-only folder (root without
    CAP_DAC_OVERRIDE), as tests/core/test_write_safety.py does."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv is not installed")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}"]


@pytest.mark.parametrize("name", ["x.svg", "x.png", "x.json"])
def test_an_unwritable_folder_is_one_error_line(tiny: Path, tmp_path: Path, name: str) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    prefix = _ordinary_user()
    try:
        probe = subprocess.run([*prefix, "touch", str(folder / "probe")], capture_output=True)
        if probe.returncode == 0:
            pytest.skip("this user can write into a read-only folder")
        command = "layout" if name.endswith(".json") else "export-image"
        result = subprocess.run(
            [*prefix, sys.executable, "-m", "designer.cli", command, str(tiny), str(folder / name)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        )
    finally:
        folder.chmod(0o755)
    assert_one_line_error(result, f"{folder / name}: cannot write into {folder}")
    assert list(folder.iterdir()) == []


def test_an_svg_into_a_missing_folder_is_one_error_line(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "no such folder" / "x.svg"
    assert_one_line_error(run("export-image", tiny, out), "does not exist")  # no Qt lines


def test_resave_prints_its_saved_line_on_stdout(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.onnx"
    result = run("resave", tiny, out)
    assert result.returncode == 0
    assert result.stdout.strip() == f"saved {out}" and result.stderr == ""


# --- D8: usage errors exit 2 ----------------------------------------------------------------
@pytest.mark.parametrize(
    "args,needle",
    [
        (["layout", "{m}", "-", "--collapse", "x"], "argument --collapse: takes a depth"),
        (["layout", "{m}", "-", "--collapse", "-1"], "the depth must be 0 or more, not -1"),
        (["export-image", "{m}", "{o}", "--collapse", "x"], "argument --collapse: takes a"),
        (["export-image", "{m}", "{o}", "--scale", "0"], "argument --scale: must be a number"),
        (["export-image", "{m}", "{o}", "--scale", "nan"], "above 0, not 'nan'"),
        (["export-image", "{m}", "{o}", "--scale", "abc"], "'abc' is not a number"),
        (["compose", "{m}", "{m}", "{o}", "--map", "output"], "'output' is not OUT_A:IN_B"),
        (["compose", "{m}", "{m}", "{o}", "--map", "y:"], "argument --map:"),
    ],
)
def test_bad_option_values_are_usage_errors(
    tiny: Path, tmp_path: Path, args: list[str], needle: str
) -> None:
    out = tmp_path / "o.png"
    result = run(*(a.format(m=tiny, o=out) for a in args))
    assert result.returncode == 2, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert needle in last and "Traceback" not in result.stderr
    assert "_non_negative" not in last and "invalid" not in last  # no internal names
    assert not out.exists()


# --- D9: --grid-color draws the grid --------------------------------------------------------
def _red_pixels(path: Path) -> int:
    image = QImage(str(path))
    count = 0
    for y in range(0, image.height(), 2):
        for x in range(0, image.width(), 2):
            c = QColor(image.pixel(x, y))
            count += c.red() > 200 and c.green() < 80 and c.blue() < 80
    return count


def test_a_grid_colour_implies_the_grid(tiny: Path, tmp_path: Path) -> None:
    plain, coloured, both = tmp_path / "p.png", tmp_path / "c.png", tmp_path / "b.png"
    assert run("export-image", tiny, plain).returncode == 0
    assert run("export-image", tiny, coloured, "--grid-color", "red").returncode == 0
    assert run("export-image", tiny, both, "--grid", "--grid-color", "red").returncode == 0
    assert _red_pixels(plain) == 0
    assert _red_pixels(coloured) > 100
    assert QImage(str(coloured)) == QImage(str(both))
    assert "implies --grid" in " ".join(run("export-image", "--help").stdout.split())
