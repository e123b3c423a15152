"""The example plug-ins through the command line, installed as a distribution's entry points
(a temporary ``*.dist-info``), and broken plug-ins that must not stop it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from plugin_site import ROOT, doc_strings, documented_model, env_with, install

from designer import cli, commands, plugins

TINY = ROOT / "resources" / "examples" / "tiny_cnn.onnx"

EXAMPLES = {
    plugins.TRANSFORMS: {"strip-doc-strings": "strip_doc_strings:StripDocStrings"},
    plugins.COMMANDS: {"ops": "ops_command:register"},
    plugins.TOOLS: {"examples": "example_tools:tools"},
}
COPIES = ("strip_doc_strings.py", "ops_command.py", "op_histogram.py", "example_tools.py")
BROKEN = {
    plugins.COMMANDS: {
        "missing": "no_such_module_xyz:register",
        "raises": "raising_command:register",
    },
    plugins.TRANSFORMS: {"no-run": "raising_command:NotATransform"},
}
RAISING = (
    "class NotATransform:\n    title = 'No run'\n\n"
    "def register(sub):\n    sub.add_parser('half-made')\n"
    "    raise RuntimeError('register exploded')\n"
)


def designer(*args: str | Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "designer", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
        cwd=ROOT,
    )


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return install(tmp_path / "site", "designer-examples", EXAMPLES, copies=COPIES)


def test_example_command_transform_and_tool(site: Path, tmp_path: Path) -> None:
    env = {**env_with(site), "ONNX_DESIGNER_CONFIG_DIR": str(tmp_path / "config")}
    helped = designer("--help", env=env)
    assert helped.returncode == 0, helped.stderr
    section = helped.stdout.split("positional arguments:")[1].split("options:")[0]
    listed = re.findall(r"^    (\S+)", section, re.MULTILINE)  # not wrapped help text
    assert listed[-1] == "ops" and listed.index("trt") < listed.index("ops")  # after built-ins
    assert listed[:3] == ["check", "info", "resave"]  # the explicit order, not file names

    counted = designer("ops", TINY, "--json", env=env)
    assert counted.returncode == 0, counted.stderr
    assert json.loads(counted.stdout)["Conv"] == 2

    source, out = tmp_path / "doc.onnx", tmp_path / "clean.onnx"
    onnx.save(documented_model(), source)
    done = designer("transform", "strip-doc-strings", source, out, "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["output"]["path"] == str(out)
    assert doc_strings(onnx.load(out)) == []
    assert doc_strings(onnx.load(source))  # the input is untouched
    unknown = designer("transform", "nope", source, out, env=env)
    assert unknown.returncode == 1 and "strip-doc-strings" in unknown.stderr

    tools = designer("tool", "list", env=env)
    assert "Op Histogram (plug-in)" in tools.stdout, tools.stderr
    ran = designer("tool", "run", "Op Histogram (plug-in)", TINY, env=env)
    assert ran.returncode == 0 and "Conv" in ran.stdout, ran.stderr

    shown = designer("plugins", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    names = {(p["group"], p["name"]) for p in json.loads(shown.stdout)["plugins"]}
    assert {(plugins.COMMANDS, "ops"), (plugins.TRANSFORMS, "strip-doc-strings")} <= names


def test_broken_plugins_are_reported_and_skipped(site: Path, tmp_path: Path) -> None:
    install(site, "broken-plugins", BROKEN, {"raising_command": RAISING})
    env = env_with(site)
    helped = designer("--help", env=env)
    assert helped.returncode == 0, helped.stderr
    assert "half-made" not in helped.stdout  # what a failing register added is taken out
    assert " ops " in helped.stdout  # the working plug-in still is there
    for needle in (
        "'missing' (onnx_designer.commands = no_such_module_xyz:register) failed at import",
        "ModuleNotFoundError",
        "'raises' (onnx_designer.commands = raising_command:register) failed at register",
        "register exploded",
    ):
        assert needle in helped.stderr, helped.stderr
    assert "Traceback" not in helped.stderr
    info = designer("info", TINY, env=env)
    assert info.returncode == 0 and "tiny" in info.stdout.lower(), info.stderr

    shown = designer("plugins", env=env)
    assert shown.returncode == 1
    assert "'no-run' (onnx_designer.transforms = raising_command:NotATransform)" in shown.stderr
    assert "has no run(model, base_dir) method" in shown.stderr
    verbose = designer("-v", "--help", env=env)
    assert "Traceback" in verbose.stderr and "register exploded" in verbose.stderr


def test_a_failing_builtin_command_module_is_reported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One built-in command module that fails to import stops neither the CLI nor the
    window (the GUI path builds the parser first)."""
    modules = commands.builtin_modules()
    monkeypatch.setattr(commands, "builtin_modules", lambda: ["no_such_builtin", *modules])
    monkeypatch.setattr(plugins, "_failures", [])
    assert cli.main(["info", str(TINY)]) == 0
    err = capsys.readouterr().err
    assert (
        "built-in module 'no_such_builtin' (designer.commands = "
        "designer.commands.no_such_builtin) failed at import (ModuleNotFoundError" in err
    )
    assert "info" in cli.command_names()


def test_the_window_starts_with_a_broken_dock_plugin(site: Path, tmp_path: Path) -> None:
    """The real program (``onnx-designer screenshot`` builds the whole main window) with a
    dock plug-in that cannot be imported: it starts, the shot is written, stderr names it."""
    install(site, "broken-dock", {plugins.DOCKS: {"gone": "no_such_dock_module:create_dock"}})
    env = {**env_with(site), "QT_QPA_PLATFORM": "offscreen"}
    env["ONNX_DESIGNER_CONFIG_DIR"] = str(tmp_path / "config")
    shot = tmp_path / "shot.png"
    done = designer("screenshot", TINY, shot, "--size", "800x600", env=env)
    assert done.returncode == 0, done.stderr
    assert shot.stat().st_size > 0
    assert (
        "onnx-designer: error: plug-in 'gone' (onnx_designer.docks = "
        "no_such_dock_module:create_dock) failed at import (ModuleNotFoundError" in done.stderr
    )
