"""``onnx-designer layout``: what the canvas draws, as JSON tools can check (issue 15)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers.gui import open_model
from helpers.shared import model
from pytestqt.qtbot import QtBot

from designer.ui.canvas.layout_json import scene_layout
from designer.ui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "designer.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
    )


def test_layout_matches_what_the_window_draws(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    source = model("llama_24l_h64.torchscript.onnx")
    out = tmp_path / "layout.json"
    result = run("layout", source, out)
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["format"] == "onnx-designer-canvas" and data["scope"] == "main"
    tab = open_model(window, source, qtbot)
    drawn = scene_layout(tab.view.canvas, "main")
    assert data["boxes"] == drawn["boxes"] and data["links"] == drawn["links"]
    kinds = {b["kind"] for b in data["boxes"]}
    assert {"input", "op", "output", "stub"} <= kinds
    boxes = {b["id"]: b for b in data["boxes"]}
    for link in data["links"]:  # from the source's output terminal to the target's input
        first, last = link["points"][0], link["points"][-1]
        src, dst = boxes[link["source"]], boxes[link["target"]]
        assert src["x"] <= first[0] <= src["x"] + src["w"] and first[1] >= src["y"] + src["h"]
        assert dst["x"] <= last[0] <= dst["x"] + dst["w"] and last[1] <= dst["y"]
    for stub in (b for b in data["boxes"] if b["kind"] == "stub"):
        assert stub["target"] in boxes and stub["y"] < boxes[stub["target"]]["y"]


def test_layout_of_a_subgraph_scope_and_bad_input(tmp_path: Path) -> None:
    import onnx
    from helpers.models import subgraph_model

    path = tmp_path / "if.onnx"
    onnx.save(subgraph_model(), path)
    info = run("info", path, "--json")
    assert info.returncode == 0, info.stderr
    whole = json.loads(run("layout", path, "-").stdout)
    if_box = next(b for b in whole["boxes"] if b.get("type") == "If")
    scope = f"main/{if_box['id']}/then_branch"
    inner = run("layout", path, "-", "--scope", scope)
    assert inner.returncode == 0, inner.stderr
    assert json.loads(inner.stdout)["scope"] == scope
    bad = run("layout", path, "-", "--scope", "main/nothing/here")
    assert bad.returncode == 1 and "no graph scope" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
