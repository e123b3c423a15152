"""The desktop integration files in packaging/ and the PEP 621 metadata agree and validate."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from designer import __version__
from designer.cli import gui_main

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
APP_ID = "io.github.onnx_designer.OnnxDesigner"
DESKTOP = PACKAGING / f"{APP_ID}.desktop"
METAINFO = PACKAGING / f"{APP_ID}.metainfo.xml"
REQUIRED = os.environ.get("ONNX_DESIGNER_PACKAGE_TEST") == "1"


def pyproject() -> dict[str, Any]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        project: dict[str, Any] = tomllib.load(f)["project"]
    return project


def validator(name: str, package: str) -> str:
    found = shutil.which(name)
    if found is None:
        message = f"needs {name} (apt-get install {package}; .ci/run installs it)"
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    return found


def test_metainfo_validates_with_appstreamcli() -> None:
    tool = validator("appstreamcli", "appstream")
    done = subprocess.run(
        [tool, "validate", "--no-net", str(METAINFO)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_desktop_file_validates() -> None:
    tool = validator("desktop-file-validate", "desktop-file-utils")
    done = subprocess.run([tool, str(DESKTOP)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "error:" not in done.stdout


def test_desktop_metainfo_icon_and_project_agree() -> None:
    desktop = configparser.ConfigParser(interpolation=None)
    desktop.optionxform = str  # type: ignore[assignment,method-assign]
    desktop.read(DESKTOP)
    entry = desktop["Desktop Entry"]
    assert entry["Exec"].split()[0] in pyproject()["scripts"]
    assert (PACKAGING / f"{entry['Icon']}.svg").is_file()
    assert (PACKAGING / f"{entry['Icon']}.png").is_file()

    component = ET.parse(METAINFO).getroot()
    assert component.findtext("id") == APP_ID
    assert component.findtext("launchable") == DESKTOP.name
    assert component.findtext("icon") == entry["Icon"]
    assert component.findtext("name") == entry["Name"]
    project = pyproject()
    assert component.findtext("project_license") == project["license"]
    urls = project["urls"]
    assert component.findtext("url[@type='homepage']") == urls["Homepage"]
    assert component.findtext("url[@type='bugtracker']") == urls["Issues"]
    newest = component.find("releases/release")
    assert newest is not None
    assert newest.get("version") == project["version"] == __version__, (
        "add a <release> for the new version to the metainfo file"
    )


def test_icon_png_is_the_rendered_256px_svg() -> None:
    from PySide6.QtGui import QImage

    image = QImage(str(PACKAGING / "onnx-designer.png"))
    assert (image.width(), image.height()) == (256, 256)
    assert image.hasAlphaChannel()


def test_pep621_metadata_is_complete() -> None:
    project = pyproject()
    for key in ("authors", "maintainers", "classifiers", "keywords", "urls", "license-files"):
        assert project.get(key), f"[project] lacks {key}"
    for path in project["license-files"]:
        assert (ROOT / path).is_file()
    assert set(project["urls"]) >= {"Homepage", "Repository", "Issues", "Documentation"}
    assert project["gui-scripts"] == {"onnx-designer-gui": "designer.cli:gui_main"}
    assert "package" in project["optional-dependencies"]


def test_gui_entry_point_refuses_what_is_not_a_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    assert gui_main(["info", str(notes)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("onnx-designer-gui: error: 'info' is not a model file")
    assert len(err.splitlines()) == 1


def test_gui_entry_point_without_a_display_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    assert gui_main([]) == 1
    assert "no display to open the window on" in capsys.readouterr().err
