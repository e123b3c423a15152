"""Set-up shared by the TensorRT dialog and command tests: the stand-in trtexec, a copy of
the tiny_cnn example, an environment the stand-in's switches and the user's folders do not
leak into, and a dialog checked against the stand-in.

A test module picks a fixture up by importing it
(``from helpers.trt_fixtures import dialog_model  # noqa: F401 (the fixture model)``); the
two ``model`` fixtures are named apart here so that the import does not shadow the test
functions' ``model`` argument.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from helpers.shared import ROOT

if TYPE_CHECKING:
    from pytestqt.qtbot import QtBot

    from designer.ui.dialogs.trt_dialog import TrtDialog
    from designer.ui.main_window import MainWindow

EXAMPLE = ROOT / "resources" / "examples" / "tiny_cnn.onnx"
STANDIN = ROOT / "tests" / "helpers" / "trtexec_standin" / "trtexec"
STANDIN_SWITCHES = ("DELAY", "NO_GPU", "FAIL_BUILD", "VERSION")  # TRTEXEC_STANDIN_<name>


def clear_standin_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in trtexec behaves as recorded: none of its TRTEXEC_STANDIN_* switches set."""
    for name in STANDIN_SWITCHES:
        monkeypatch.delenv(f"TRTEXEC_STANDIN_{name}", raising=False)


@pytest.fixture(autouse=True)
def trt_isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Caches and settings in the test's tmp folder, the stand-in's switches cleared
    (autouse in every module that imports it)."""
    monkeypatch.setenv("ONNX_DESIGNER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ONNX_DESIGNER_CONFIG_DIR", str(tmp_path / "config"))
    clear_standin_switches(monkeypatch)


@pytest.fixture(name="model")
def dialog_model(tmp_path: Path) -> Path:
    """The fixture ``model`` of the dialog tests: tiny_cnn copied to ``models/tiny cnn.onnx``
    (a space in the name) under tmp_path."""
    path = tmp_path / "models" / "tiny cnn.onnx"
    path.parent.mkdir()
    shutil.copy(EXAMPLE, path)
    return path


@pytest.fixture(name="model")
def cli_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fixture ``model`` of the command tests: tiny_cnn copied to ``tiny.onnx`` under
    tmp_path, the cache there too, the stand-in's switches cleared."""
    monkeypatch.setenv("ONNX_DESIGNER_CACHE_DIR", str(tmp_path / "cache"))
    clear_standin_switches(monkeypatch)
    path = tmp_path / "tiny.onnx"
    shutil.copy(EXAMPLE, path)
    return path


def checked_dialog(window: MainWindow, qtbot: QtBot, model: Path, profile: bool) -> TrtDialog:
    """An Export TensorRT Engine (or, with ``profile``, Profile with TensorRT) dialog for
    ``model``, shown, pointed at the stand-in trtexec and checked (its version known)."""
    from designer.ui.dialogs.trt_dialog import TrtDialog

    dialog = TrtDialog(window, model, profile=profile)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)  # the automatic local check
    form = dialog.trt_form
    form.source.setCurrentIndex(form.source.findData("custom"))
    form.custom.setText(str(STANDIN))
    form.free_dims.setChecked(True)
    dialog.check(deploy=False)
    qtbot.waitUntil(lambda: dialog.job is None and form.version is not None, timeout=30_000)
    return dialog
