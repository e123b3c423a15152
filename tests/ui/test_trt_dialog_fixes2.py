"""Five defects of the Export TensorRT Engine / Profile with TensorRT dialogs (QA "trt-gui"
findings 1, 3, 4, 6, 10), on real widgets offscreen with the stand-in trtexec:

1. TensorRT 11.1 with layer precisions stored in the model: the form offers ignoring them
   (the CLI's --ignore-layer-precisions) and the message says 11.1 has none, not "choose
   obey or prefer" (which 11.1 refuses).
3. A Check that found no TensorRT says so, and Show Command previews the line for a chosen
   version (as ``trt build --print-command --trt-version``).
4. "Open the metadata as a graph document" without a Metadata output writes the layer JSON
   beside the engine and opens it.
6. The window names its own controls, not CLI verbs, for a missing profile.
10. The Profile dialog has spin wait, CUDA graph and verbose controls, off by default as in
    ``profile trt``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.shots import save_screenshot
from helpers.trt_fixtures import (
    EXAMPLE,
    checked_dialog,
    dialog_model,  # noqa: F401 (the fixture model)
    trt_isolated,  # noqa: F401 (an autouse fixture)
)
from helpers.trt_gpu import fake_gpu  # noqa: F401 (a fixture)
from pytestqt.qtbot import QtBot

from designer.activities.trt.command import format_command, trtexec_argv, trtexec_profile_argv
from designer.activities.trt.options import TrtBuildOptions, TrtOptionError
from designer.activities.trt.version import TrtVersion
from designer.cli import main
from designer.ui.dialogs.trt_dialog import TrtDialog
from designer.ui.dialogs.trt_form import FREE_DIMS_LABEL, IGNORE_LABEL, TrtForm
from designer.ui.main_window import MainWindow

V10, V11 = TrtVersion(10, 16, 1), TrtVersion(11, 1, 0)


@pytest.fixture
def precise(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """tiny_cnn with a layer precision and an output type stored (``trt set-precision``)."""
    out = tmp_path / "precise.onnx"
    args = ["trt", "set-precision", str(EXAMPLE), str(out), "--node", "conv1=fp16"]
    assert main([*args, "--output-type", "conv1=fp32"]) == 0
    capsys.readouterr()
    return out


def _form(qtbot: QtBot, model: Path, profile: bool = False) -> TrtForm:
    form = TrtForm(profile=profile)
    qtbot.addWidget(form)
    form.set_model(model)
    form.free_dims.setChecked(True)
    return form


def _cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> str:
    capsys.readouterr()
    assert main([str(a) for a in args]) == 0, capsys.readouterr().err
    return capsys.readouterr().out.strip()


# --- 1. TensorRT 11.1 and stored layer precisions ----------------------------------------
def test_options_say_that_trt11_has_no_layer_precisions() -> None:
    options = TrtBuildOptions(model="m.onnx", typing="strong", layer_precisions={"a": "fp16"})
    with pytest.raises(TrtOptionError) as info:
        options.validate(V11)
    text = str(info.value)
    assert "TensorRT 11.1 has no layer precisions" in text and "ignore" in text
    assert "obey" not in text
    with pytest.raises(TrtOptionError, match="only honoured with typing mode 'obey'"):
        options.validate(V10)  # 10.x has obey/prefer: still the way out there
    with pytest.raises(TrtOptionError, match="only honoured with typing mode 'obey'"):
        options.validate()  # version unknown: as before


def test_trt11_form_offers_ignoring_the_stored_precisions(qtbot: QtBot, precise: Path) -> None:
    form = _form(qtbot, precise)
    form.set_version(V11)
    with pytest.raises(TrtOptionError) as info:
        form.build_options()
    text = str(info.value)
    assert "TensorRT 11.1 has no layer precisions" in text
    assert f"tick “{IGNORE_LABEL}”" in text
    assert "obey" not in text and "--" not in text  # neither a refused mode nor a CLI flag
    assert form.ignore_precisions.text() == IGNORE_LABEL and form.ignore_precisions.isEnabled()
    assert "no layer precisions" in form.precision_note.text()
    form.ignore_precisions.setChecked(True)
    options = form.build_options()
    assert options.layer_precisions == {} and options.layer_output_types == {}
    argv = trtexec_argv(options, V11)
    assert not any(a.startswith(("--layerPrecisions", "--layerOutputTypes")) for a in argv)


def test_trt10_form_names_obey_and_the_ignore_box(qtbot: QtBot, precise: Path) -> None:
    form = _form(qtbot, precise)
    form.set_version(V10)
    with pytest.raises(TrtOptionError) as info:
        form.build_options()
    text = str(info.value)
    assert "'obey' or 'prefer'" in text and IGNORE_LABEL in text and "Set Layer Precision" in text
    form.typing.setCurrentIndex(form.typing.findData("obey"))
    assert form.build_options().layer_precisions == {"conv1": "fp16"}
    form.ignore_precisions.setChecked(True)  # what --ignore-layer-precisions does
    assert form.build_options().layer_precisions == {}


def test_ignoring_precisions_matches_the_cli(
    qtbot: QtBot, precise: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    form = _form(qtbot, precise, profile=True)
    form.set_version(V11)
    form.ignore_precisions.setChecked(True)
    line = format_command(trtexec_profile_argv(form.profile_options(), V11))
    engine = precise.with_suffix(".engine")
    cli = _cli(
        capsys, "profile", "trt", precise, "--print-command", "--trt-version", "11.1",
        "--free-dims-as-one", "--ignore-layer-precisions", "--save-engine", engine,
    )  # fmt: skip
    assert line == cli and "--layerPrecisions" not in line


@pytest.mark.usefixtures("fake_gpu")
def test_trt11_dialog_builds_a_model_with_stored_precisions(
    window: MainWindow, qtbot: QtBot, precise: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The QA dead end: on 11.1 every typing mode was refused; now the Ignore box builds."""
    monkeypatch.setenv("TRTEXEC_STANDIN_VERSION", "11.1")
    dialog = checked_dialog(window, qtbot, precise, profile=False)
    form = dialog.trt_form
    dialog.show_command()
    assert "TensorRT 11.1 has no layer precisions" in dialog.status.text()
    form.ignore_precisions.setChecked(True)
    dialog.show_command()
    assert "printed" in dialog.status.text(), dialog.status.text()
    assert "--layerPrecisions" not in dialog.log.toPlainText()
    form.tabs.setCurrentIndex(1)
    save_screenshot(dialog, "trt_dialog_trt11_precision.png")
    dialog.run()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=60_000)
    result = dialog.outcome.result
    assert result.status == "ok", result.error
    dialog.close()


# --- 3. no TensorRT on the target: say so, preview a version -------------------------------
def _missing_dialog(window: MainWindow, qtbot: QtBot, model: Path, profile: bool) -> TrtDialog:
    """A dialog whose Check found no TensorRT (a custom trtexec that does not exist)."""
    dialog = TrtDialog(window, model, profile=profile)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    form = dialog.trt_form
    form.source.setCurrentIndex(form.source.findData("custom"))
    form.custom.setText(str(model.with_name("no-such-trtexec")))
    form.free_dims.setChecked(True)
    dialog.check(deploy=False)
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    assert dialog.deps.state_of("tensorrt").value == "unavailable"  # type: ignore[union-attr]
    return dialog


def test_a_check_without_tensorrt_says_so_and_previews_a_version(
    window: MainWindow, qtbot: QtBot, model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dialog = _missing_dialog(window, qtbot, model, profile=False)
    form = dialog.trt_form
    note = form.version_note.text()
    assert note.startswith("No TensorRT on this target: ") and "not checked" not in note
    assert form.missing_reason and "no-such-trtexec is missing" in note
    assert form.missing_reason in form.version_note.toolTip()  # the advice too
    assert form.preview_version.isVisibleTo(dialog) and form.version is None
    save_screenshot(dialog, "trt_dialog_no_tensorrt.png")
    custom = form.custom.text()
    for version in ("10.16", "11.1"):
        form.preview_version.setCurrentIndex(form.preview_version.findText(f"TensorRT {version}"))
        dialog.show_command()
        status = dialog.status.text()
        assert status.startswith("No TensorRT on this target: ") and "press Check" not in status
        assert f"TensorRT {version}" in status
        shown = dialog.log.toPlainText().splitlines()[-1]
        cli = _cli(
            capsys, "trt", "build", model, "--print-command", "--trt-version", version,
            "--free-dims-as-one", "--trtexec", custom,
        )  # fmt: skip
        assert shown == f"$ {cli}"
        assert dialog.command_line() == cli
    # 11.1 chosen: the form disables what 11.1 lacks, as for a target that has it
    assert not form.fp16.isEnabled() and "strongly typed" in form.fp16.toolTip()
    form.custom.setText(str(model.with_name("other")))
    with pytest.raises(Exception, match="press Check again"):
        dialog.command_line()  # the check answered for another trtexec
    dialog.close()


def test_the_profile_preview_matches_profile_trt(
    window: MainWindow, qtbot: QtBot, model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dialog = _missing_dialog(window, qtbot, model, profile=True)
    form = dialog.trt_form
    form.preview_version.setCurrentIndex(form.preview_version.findText("TensorRT 11.1"))
    cli = _cli(
        capsys, "profile", "trt", model, "--print-command", "--trt-version", "11.1",
        "--free-dims-as-one", "--trtexec", form.custom.text(),
        "--save-engine", model.with_suffix(".engine"),
    )  # fmt: skip
    assert dialog.command_line() == cli
    dialog.close()


def test_a_new_target_forgets_the_missing_tensorrt(
    window: MainWindow, qtbot: QtBot, model: Path
) -> None:
    dialog = _missing_dialog(window, qtbot, model, profile=False)
    dialog.reset_for_target()
    form = dialog.trt_form
    assert "not checked yet" in form.version_note.text()
    assert not form.preview_version.isVisibleTo(dialog) and form.effective_version() is None
    with pytest.raises(Exception, match="press Check first"):
        dialog.command_line()
    dialog.close()


# --- 4. open the metadata as a graph without a Metadata output ---------------------------
def test_open_graph_disabled_without_detailed_metadata(qtbot: QtBot, model: Path) -> None:
    form = _form(qtbot, model)
    form.set_graph_opener(True, "open the layer JSON")
    assert form.open_graph.isEnabled()
    form.verbosity.setCurrentIndex(form.verbosity.findData("none"))
    assert not form.open_graph.isEnabled() and "detailed" in form.open_graph.toolTip()
    form.verbosity.setCurrentIndex(form.verbosity.findData("detailed"))
    assert form.open_graph.isEnabled() and form.open_graph.toolTip() == "open the layer JSON"


@pytest.mark.usefixtures("fake_gpu")
def test_open_graph_without_a_metadata_output_writes_and_opens_it(
    window: MainWindow, qtbot: QtBot, model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dialog = checked_dialog(window, qtbot, model, profile=False)
    form = dialog.trt_form
    assert form.layer_info.text() == "" and form.open_graph.isEnabled()
    default = model.with_name("tiny cnn.engine.graph.json")
    assert form.build_options().layer_info is None  # not asked for: none, as the CLI
    form.open_graph.setChecked(True)
    assert str(default) in form.layer_info.placeholderText()
    assert form.build_options().layer_info == str(default)
    local = format_command(trtexec_argv(form.build_options(), V10))
    cli = _cli(
        capsys, "trt", "build", model, "--print-command", "--trt-version", "10.16",
        "--free-dims-as-one", "--layer-json", default,
    )  # fmt: skip
    assert local == cli and "--exportLayerInfo=" in cli  # the CLI's --layer-json
    tabs_before = window.tabs.count()
    dialog.run()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    result = dialog.outcome.result
    assert result.status == "ok", result.error
    assert default.is_file() and result.outputs["layer_info"] == default
    assert window.tabs.count() == tabs_before + 1  # the engine graph opened
    assert dialog.report_button.isEnabled()
    dialog.close()


# --- 6. the window names its controls ------------------------------------------------------
def test_missing_profile_message_names_the_window_controls(
    qtbot: QtBot, model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    form = _form(qtbot, model)
    form.free_dims.setChecked(False)
    with pytest.raises(TrtOptionError) as info:
        form.build_options()
    text = str(info.value)
    assert "no TensorRT optimization profile" in text
    assert "right-click the input > Set TensorRT Optimization Profile…" in text
    assert f"tick “{FREE_DIMS_LABEL}”" in text and form.free_dims.text() == FREE_DIMS_LABEL
    assert "trt set-profile" not in text and "free dims" not in text
    capsys.readouterr()  # the CLI keeps its own wording
    code = main(["trt", "build", str(model), "--print-command", "--trt-version", "10.16"])
    assert code != 0 and "trt set-profile" in capsys.readouterr().err


# --- 10. spin wait, CUDA graph, verbose in the Profile dialog ------------------------------
def test_profile_form_has_the_cli_measurement_switches(
    qtbot: QtBot, model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    form = _form(qtbot, model, profile=True)
    assert not (form.spin_wait.isChecked() or form.cuda_graph.isChecked())  # profile trt's
    assert not form.trt_verbose.isChecked()
    defaults = trtexec_profile_argv(form.profile_options(), V11)
    assert "--noSpinWait" in defaults and "--noCudaGraph" in defaults  # 11.1: off = flags
    form.spin_wait.setChecked(True)
    form.cuda_graph.setChecked(True)
    form.trt_verbose.setChecked(True)
    options = form.profile_options()
    assert options.spin_wait and options.cuda_graph and options.build.verbose
    on11 = trtexec_profile_argv(options, V11)
    assert not {"--noSpinWait", "--noCudaGraph"} & set(on11) and "--verbose" in on11
    on10 = trtexec_profile_argv(options, V10)
    assert "--useSpinWait" in on10 and "--useCudaGraph" in on10
    cli = _cli(
        capsys, "profile", "trt", model, "--print-command", "--trt-version", "11.1",
        "--free-dims-as-one", "--spin-wait", "--cuda-graph", "--trt-verbose",
        "--save-engine", model.with_suffix(".engine"),
    )  # fmt: skip
    assert format_command(on11) == cli


@pytest.mark.usefixtures("fake_gpu")
def test_profile_dialog_profiler_tab_fits(window: MainWindow, qtbot: QtBot, model: Path) -> None:
    dialog = checked_dialog(window, qtbot, model, profile=True)
    form = dialog.trt_form
    form.tabs.setCurrentIndex(3)
    page = form.tabs.currentWidget()

    def fits() -> bool:  # once the shown tab is laid out (a loaded machine takes a while)
        boxes = (form.spin_wait, form.cuda_graph)
        cut = any(b.width() < b.sizeHint().width() for b in boxes)  # nothing cut
        return not cut and page.height() >= page.minimumSizeHint().height()  # none squeezed

    assert form.spin_wait.isVisibleTo(dialog) and form.cuda_graph.isVisibleTo(dialog)
    qtbot.waitUntil(fits, timeout=5_000)
    form.tabs.setCurrentIndex(0)
    qtbot.waitUntil(
        lambda: form.trt_verbose.width() >= form.trt_verbose.sizeHint().width(), timeout=5_000
    )
    save_screenshot(dialog, "trt_profile_dialog_general.png")
    form.tabs.setCurrentIndex(3)
    save_screenshot(dialog, "trt_profile_dialog_profiler.png")
    dialog.close()
