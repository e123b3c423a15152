"""The example detector plug-in, loaded the two ways a user installs one: as a file given to
``onnx-designer report --detectors`` and through the ``onnx_designer.detectors`` entry point
of an installed distribution."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.activities.analysis_helpers import profile_model
from tests.helpers.shared import ORT_FIXTURES, model

PLUGINS = Path(__file__).resolve().parents[1]
ROOT = PLUGINS.parent
PLUGIN = PLUGINS / "identity_detector.py"


def _report(
    profile: Path,
    out: Path,
    *extra: str,
    env: dict[str, str] | None = None,
    errors: list[str] | None = None,
) -> dict:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "designer",
            "report",
            str(profile),
            "--reports",
            "expert",
            "--formats",
            "json",
            "--output",
            str(out),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    if errors is not None:
        errors.append(done.stderr)
    return json.loads(next(out.glob("*_expert.json")).read_text())


def test_file_plugin_fires_only_where_identity_nodes_ran(tmp_path: Path) -> None:
    gpt2 = profile_model(model("gpt2_6l_h64.torchscript.onnx"), tmp_path, optimize=False, runs=2)
    rows = _report(gpt2, tmp_path / "a", "--detectors", str(PLUGIN))["rows"]
    found = [r for r in rows if r["detector"] == "identity-nodes"]
    assert len(found) == 1 and "sanitize" in found[0]["fix"] and found[0]["nodes"]
    tiny = next(ORT_FIXTURES.glob("tiny_cnn_opt-disabled_*.json"))
    rows = _report(tiny, tmp_path / "b", "--detectors", str(PLUGIN))["rows"]
    assert not [r for r in rows if r["detector"] == "identity-nodes"]


def test_entry_point_plugin(tmp_path: Path) -> None:
    site = tmp_path / "site"
    dist = site / "identity_detector_plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: identity-detector-plugin\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text(
        "[onnx_designer.detectors]\nidentity = identity_detector:IdentityNodes\n"
        "missing = no_such_detector_module:Nope\nraising = raising_detector:Raising\n"
    )
    (site / "identity_detector.py").write_text(PLUGIN.read_text())
    (site / "raising_detector.py").write_text(
        "from designer.activities.analysis.detectors import Detector\n\n"
        "class Raising(Detector):\n    id = 'raising'\n\n"
        "    def detect(self, context):\n        raise KeyError('no such node')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    gpt2 = profile_model(model("gpt2_6l_h64.torchscript.onnx"), tmp_path, optimize=False, runs=2)
    errors: list[str] = []
    rows = _report(gpt2, tmp_path / "out", env=env, errors=errors)["rows"]
    assert any(r["detector"] == "identity-nodes" for r in rows)  # the broken ones are skipped
    assert "'missing' (onnx_designer.detectors = no_such_detector_module:Nope)" in errors[0]
    assert "detector 'raising' (raising_detector) failed (KeyError" in errors[0]
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n")
    done = subprocess.run(
        [sys.executable, "-m", "designer", "report", str(gpt2), "--detectors", str(broken)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 1 and "boom" in done.stderr and done.stderr.count("\n") == 1
