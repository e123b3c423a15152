"""Profile with TensorRT on a prebuilt engine ("Use a prebuilt engine"), on real widgets
offscreen: as ``profile trt MODEL --use-engine ENGINE``, the window asks for no optimization
profile (the engine holds its own), sends ``--shapes`` only for what the user gave (the
free-dims box's 1s), never the model's stored profile, and says what trtexec runs the
dynamic inputs without a shape with (the window has no field for run shapes).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.trt_fixtures import (
    EXAMPLE,
    dialog_model,  # noqa: F401 (the fixture model)
    trt_isolated,  # noqa: F401 (an autouse fixture)
)
from pytestqt.qtbot import QtBot

from designer.activities.trt.command import format_command, trtexec_profile_argv
from designer.activities.trt.version import TrtVersion
from designer.cli import main
from designer.ui.dialogs.trt_dialog import TrtDialog
from designer.ui.dialogs.trt_form import TrtForm
from designer.ui.main_window import MainWindow

V10 = TrtVersion(10, 16, 1)


@pytest.fixture
def stored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """tiny_cnn with a stored optimization profile (opt 4x3x32x32, not what the engine was
    necessarily built with) and a stored layer precision."""
    profiled = tmp_path / "profiled.onnx"
    shape = "input:1x3x32x32:4x3x32x32:8x3x32x32"
    assert main(["trt", "set-profile", str(EXAMPLE), str(profiled), "--shape", shape]) == 0
    out = tmp_path / "stored.onnx"
    assert main(["trt", "set-precision", str(profiled), str(out), "--node", "conv1=fp16"]) == 0
    capsys.readouterr()
    return out


@pytest.fixture
def engine(tmp_path: Path) -> Path:
    path = tmp_path / "prebuilt.engine"
    path.write_bytes(b"an engine built before")
    return path


def _form(qtbot: QtBot, model: Path, engine: Path, free_dims: bool) -> TrtForm:
    form = TrtForm(profile=True)
    qtbot.addWidget(form)
    form.set_model(model)
    form.free_dims.setChecked(free_dims)
    form.use_engine.setChecked(True)
    form.prebuilt.setText(str(engine))
    form.set_version(V10)
    return form


def _cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[str, str]:
    capsys.readouterr()
    assert main([str(a) for a in args]) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    return captured.out.strip(), captured.err


def test_prebuilt_engine_needs_no_profile_and_sends_no_shapes(
    qtbot: QtBot, model: Path, engine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dynamic input without a profile and no free-dims box: no error, no --shapes."""
    form = _form(qtbot, model, engine, free_dims=False)
    options = form.profile_options()  # raised "no TensorRT optimization profile" before
    line = format_command(trtexec_profile_argv(options, V10))
    cli, err = _cli(
        capsys, "profile", "trt", model, "--use-engine", engine, "--print-command",
        "--trt-version", "10.16",
    )  # fmt: skip
    assert line == cli and "--shapes" not in line
    assert "no shape given for dynamic input(s) input" in err  # the CLI's note
    note = form.shapes_note
    assert note is not None and "no shape given for dynamic input(s) input" in note
    assert "free dims to 1" in note and "no field for the shapes to run" in note


def test_prebuilt_engine_ignores_the_stored_profile_and_precisions(
    qtbot: QtBot, stored: Path, engine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stored profile's opt shapes are not sent (the engine may be built with another),
    and the stored precision asks for no typing mode."""
    form = _form(qtbot, stored, engine, free_dims=False)
    line = format_command(trtexec_profile_argv(form.profile_options(), V10))
    cli, _err = _cli(
        capsys, "profile", "trt", stored, "--use-engine", engine, "--print-command",
        "--trt-version", "10.16",
    )  # fmt: skip
    assert line == cli and "4x3x32x32" not in line and "--shapes" not in line
    assert form.shapes_note is not None


def test_prebuilt_engine_with_free_dims_sends_the_ones(
    qtbot: QtBot, stored: Path, engine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    form = _form(qtbot, stored, engine, free_dims=True)
    line = format_command(trtexec_profile_argv(form.profile_options(), V10))
    cli, err = _cli(
        capsys, "profile", "trt", stored, "--use-engine", engine, "--print-command",
        "--trt-version", "10.16", "--free-dims-as-one",
    )  # fmt: skip
    assert line == cli and "--shapes=input:1x3x32x32" in line
    assert form.shapes_note is None and "note:" not in err  # every dynamic input has one


def test_a_build_then_profile_still_uses_the_stored_profile(
    qtbot: QtBot, stored: Path, engine: Path
) -> None:
    """Without a prebuilt engine nothing changes: the stored profile's opt shapes run."""
    form = _form(qtbot, stored, engine, free_dims=False)
    form.use_engine.setChecked(False)
    form.typing.setCurrentIndex(form.typing.findData("obey"))
    line = format_command(trtexec_profile_argv(form.profile_options(), V10))
    assert "--shapes=input:4x3x32x32" in line and form.shapes_note is None


def _missing_dialog(window: MainWindow, qtbot: QtBot, model: Path, engine: Path) -> TrtDialog:
    """A Profile dialog whose Check found no TensorRT: Show Command previews 10.16."""
    dialog = TrtDialog(window, model, profile=True)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    form = dialog.trt_form
    form.source.setCurrentIndex(form.source.findData("custom"))
    form.custom.setText(str(model.with_name("no-such-trtexec")))
    form.use_engine.setChecked(True)
    form.prebuilt.setText(str(engine))
    dialog.check(deploy=False)
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    form.preview_version.setCurrentIndex(form.preview_version.findText("TensorRT 10.16"))
    return dialog


def test_show_command_for_a_prebuilt_engine_says_what_trtexec_uses(
    window: MainWindow,
    qtbot: QtBot,
    stored: Path,
    engine: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    dialog = _missing_dialog(window, qtbot, stored, engine)
    dialog.show_command()
    status = dialog.status.text()
    assert "printed in the log" in status, status
    assert "Note: no shape given for dynamic input(s) input" in status
    assert "trtexec uses those 1s" in status
    cli, _err = _cli(
        capsys, "profile", "trt", stored, "--use-engine", engine, "--print-command",
        "--trt-version", "10.16", "--trtexec", dialog.trt_form.custom.text(),
    )  # fmt: skip
    assert dialog.log.toPlainText().splitlines()[-1] == f"$ {cli}"
    assert dialog.command_line() == cli
    first_line = dialog.describe_run(dialog.trt_form.options(), "this machine")
    assert "\n# note: no shape given" in first_line  # a run's log says it too
    dialog.trt_form.free_dims.setChecked(True)  # 1s sent: nothing left to note
    dialog.show_command()
    assert "Note:" not in dialog.status.text()
    assert "--shapes=input:1x3x32x32" in dialog.log.toPlainText().splitlines()[-1]
    dialog.close()
