"""Three defects of the TensorRT GUI, on real widgets offscreen with the stand-in trtexec and
the real engine files of ../shared/fixtures:

1. TensorRT 11.1 has no cublas / cublasLt / cudnn tactic source (its sampleOptions.cpp knows
   EDGE_MASK_CONVOLUTIONS and JIT_CONVOLUTIONS only): Check disables those boxes, with why.
2. Show Command prints the line Build / Profile runs (timing cache, output paths, profile).
3. Load Profile… refuses another engine's profile, and a loaded log never relabels the engine.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.engine_fixtures import A100
from helpers.engine_fixtures import A100_FP32 as FP32
from helpers.engine_fixtures import A100_QAT as QAT
from helpers.shared import TRT_OPTIONS, TRT_SAMPLES
from helpers.trt_fixtures import (
    EXAMPLE,
    STANDIN,
    checked_dialog,
    dialog_model,  # noqa: F401 (the fixture model)
    trt_isolated,  # noqa: F401 (an autouse fixture)
)
from helpers.trt_gpu import fake_gpu  # noqa: F401 (a fixture)
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from designer.activities.reports.engine_bundle import load_engine, read_profile, with_profile
from designer.activities.trt.version import TrtVersion
from designer.cli import main
from designer.ui.dialogs.trt_dialog import TrtDialog
from designer.ui.dialogs.trt_form import TACTIC_TIP, TrtForm
from designer.ui.engine.tab import EngineTab
from designer.ui.main_window import MainWindow

SAMPLE_OPTIONS_11 = TRT_OPTIONS / "v11.1" / "sampleOptions.cpp"
FP16_PROFILE = A100 / "fp16" / "resnet.onnx.engine.profile.json"
H100_LOG = TRT_SAMPLES / "result-05.log"  # TensorRT 10.16.1 on an H100, --dumpProfile

needs_fixtures = pytest.mark.skipif(
    not (QAT.is_file() and H100_LOG.is_file()), reason="../shared/fixtures is absent"
)


# --- 1. tactic sources TensorRT 11.1 lacks -------------------------------------------------
def test_trt11_tactic_sources_follow_its_sample_options() -> None:
    """The fixture's parser is the authority: 11.1 parses exactly these two sources."""
    if not SAMPLE_OPTIONS_11.is_file():
        pytest.skip(f"{SAMPLE_OPTIONS_11} is absent")
    text = SAMPLE_OPTIONS_11.read_text()
    assert 'if (t == "EDGE_MASK_CONVOLUTIONS")' in text
    assert 't == "JIT_CONVOLUTIONS"' in text
    assert '"CUDNN"' not in text and '"CUBLAS"' not in text and '"CUBLAS_LT"' not in text


def test_form_disables_the_tactic_sources_a_version_lacks(qtbot: QtBot, tmp_path: Path) -> None:
    form = TrtForm(profile=False)
    qtbot.addWidget(form)
    model = tmp_path / "m.onnx"
    shutil.copy(EXAMPLE, model)
    form.set_model(model)
    form.free_dims.setChecked(True)
    boxes = form.tactic_boxes
    boxes["cudnn"].setCheckState(Qt.CheckState.Unchecked)  # chosen before Check
    boxes["jit_convolutions"].setCheckState(Qt.CheckState.Unchecked)
    form.set_version(TrtVersion(11, 1, 0))
    for name in ("cublas", "cublasLt", "cudnn"):
        box = boxes[name]
        assert not box.isEnabled(), name
        assert f"has no {name} tactic source" in box.toolTip()
        assert "leave" in box.toolTip()  # what to do
        assert box.checkState() == Qt.CheckState.PartiallyChecked  # back to the default
    for name in ("edge_mask_convolutions", "jit_convolutions"):
        assert boxes[name].isEnabled() and boxes[name].toolTip() == TACTIC_TIP
    assert form.build_options().tactic_sources == {"jit_convolutions": False}
    form.set_version(TrtVersion(10, 16, 1))  # another target: all five again, with the hint
    assert all(b.isEnabled() and b.toolTip() == TACTIC_TIP for b in boxes.values())


# --- 2. Show Command = the line Build / Profile runs ----------------------------------------
def _ran(dialog: TrtDialog) -> str:
    """The command the stand-in trtexec itself reports it ran (its &&&& PASSED line)."""
    lines = [x for x in dialog.log.toPlainText().splitlines() if x.startswith("&&&& PASSED")]
    assert lines, dialog.log.toPlainText()
    return lines[-1].split(" # ", 1)[1]


@pytest.mark.usefixtures("fake_gpu")
@pytest.mark.parametrize("profile", [False, True])
def test_show_command_prints_the_line_that_runs(
    window: MainWindow,
    qtbot: QtBot,
    model: Path,
    monkeypatch: pytest.MonkeyPatch,
    profile: bool,
) -> None:
    monkeypatch.setenv("TRTEXEC_STANDIN_VERSION", "11.1")
    dialog = checked_dialog(window, qtbot, model, profile)
    dialog.trt_form.opt_level.setValue(4)
    dialog.show_command()
    shown = dialog.log.toPlainText().splitlines()[-1]
    assert shown.startswith("$ ") and "printed" in dialog.status.text()
    assert "--timingCacheFile=" in shown
    assert ("--exportProfile=" in shown) is profile
    dialog.run()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=60_000)
    assert dialog.outcome.result.status == "ok", dialog.outcome.result.error  # type: ignore[union-attr]
    assert shown[2:] == _ran(dialog)
    dialog.close()


@pytest.mark.usefixtures("fake_gpu")
def test_show_command_matches_the_cli_print_command(
    window: MainWindow, qtbot: QtBot, model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dialog = checked_dialog(window, qtbot, model, profile=False)
    form = dialog.trt_form
    form.fp16.setChecked(True)
    form.workspace.setValue(512)
    form.opt_level.setValue(4)
    form.tactic_boxes["cudnn"].setCheckState(Qt.CheckState.Unchecked)
    engine = model.with_name("out.engine")
    form.engine.setText(str(engine))
    line = dialog.command_line()
    capsys.readouterr()
    code = main(
        ["trt", "build", str(model), "--engine", str(engine), "--free-dims-as-one", "--fp16",
         "--workspace-mib", "512", "--opt-level", "4", "--tactic-source", "cudnn=off",
         "--trtexec", str(STANDIN), "--print-command"]
    )  # fmt: skip
    assert code == 0
    cli = capsys.readouterr().out.strip()
    assert line == cli and "--timingCacheFile=" in line and "--tacticSources=-CUDNN" in line
    dialog.close()


@pytest.mark.usefixtures("fake_gpu")
def test_show_command_after_the_choice_changed_asks_for_check(
    window: MainWindow, qtbot: QtBot, model: Path
) -> None:
    dialog = checked_dialog(window, qtbot, model, profile=False)
    dialog.trt_form.custom.setText(str(STANDIN.with_name("other-trtexec")))
    before = dialog.log.toPlainText()
    dialog.show_command()
    assert "press Check again" in dialog.status.text()
    assert dialog.log.toPlainText() == before
    dialog.close()


def test_a_successful_check_clears_the_press_check_status(
    window: MainWindow, qtbot: QtBot, model: Path
) -> None:
    """The red "press Check again" of a Show Command before Check does not outlive the
    Check that answers it; a locally disabled Deploy says TensorRT, not onnxruntime."""
    dialog = checked_dialog(window, qtbot, model, profile=False)
    dialog.trt_form.custom.setText(str(STANDIN.with_name("other-trtexec")))
    dialog.show_command()
    assert "press Check again" in dialog.status.text()
    dialog.trt_form.custom.setText(str(STANDIN))
    dialog.check(deploy=False)
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    assert "Check" not in dialog.status.text()
    assert dialog.status.styleSheet() == ""
    assert not dialog.deploy_button.isEnabled()
    tip = dialog.deploy_button.toolTip()
    assert "TensorRT" in tip and "onnxruntime" not in tip
    dialog.close()


# --- 3. Load Profile… with another engine's profile ---------------------------------------
def _engine_tab(window: MainWindow, graph: Path) -> EngineTab:
    window.open_files([graph])
    tab = window.tabs.currentWidget()
    assert isinstance(tab, EngineTab), window.errors
    return tab


@needs_fixtures
def test_a_foreign_profile_is_refused_and_the_engine_unchanged(
    window: MainWindow, tmp_path: Path
) -> None:
    graph = tmp_path / "alone.onnx.engine.graph.json"
    shutil.copy(QAT, graph)  # the 8.x A100 QAT engine, nothing beside it
    tab = _engine_tab(window, graph)
    bundle, banner = tab.bundle, tab.banner.text()
    assert not tab.load_profile(H100_LOG)
    text = tab.message.text()
    assert "result-05.log" in text and "profiles another engine" in text
    assert "0 of its 15 layers" in text and "not loaded" in text
    assert "--exportProfile" in text  # what to do instead
    assert tab.bundle is bundle and tab.banner.text() == banner
    assert bundle.profile is None and not tab.engine.profiled
    assert "10.16" not in tab.banner.text() and "H100" not in tab.banner.text()


@needs_fixtures
def test_a_profile_of_a_sibling_build_loads_with_a_warning(
    window: MainWindow, tmp_path: Path
) -> None:
    graph = tmp_path / "fp32.onnx.engine.graph.json"
    shutil.copy(FP32, graph)
    tab = _engine_tab(window, graph)
    assert tab.load_profile(FP16_PROFILE)  # 26 of the FP16 build's 36 layers are the FP32's
    assert "10 of its 36 profiled layers are not in this engine" in tab.message.text()
    assert tab.engine.profiled


@needs_fixtures
def test_a_loaded_log_never_relabels_the_engine(window: MainWindow, tmp_path: Path) -> None:
    """A names-only engine whose layers are those result-05.log profiled, with the device
    record of an A100: the log's TensorRT and H100 are shown as the profile's, never as the
    engine's."""
    profiled, _run = read_profile(H100_LOG)
    graph = tmp_path / "names.onnx.engine.graph.json"
    graph.write_text(json.dumps([p.name for p in profiled.layers]))
    shutil.copy(
        QAT.with_name("resnet-qat.onnx.engine.metadata.json"),
        tmp_path / "names.onnx.engine.metadata.json",
    )
    tab = _engine_tab(window, graph)
    own = tab.bundle
    assert own.device is not None and "A100" in (own.device.name or "")
    family = own.version_family
    assert tab.load_profile(H100_LOG)
    assert tab.message.text() == "Latencies from result-05.log"
    b = tab.bundle
    assert b.trt_version is None and b.version_family == family
    assert b.device is not None and b.device.name == own.device.name
    assert all(i.share is not None for i in tab.engine.info.values() if i.layer is not None)
    engine_part, _, profile_part = tab.banner.text().partition("profile from result-05.log")
    assert "A100" in engine_part and "10.16" not in engine_part and "H100" not in engine_part
    assert "TensorRT 10.16.1 · NVIDIA H100 PCIe" in profile_part
    assert b.profile_run is not None and b.profile_run.trt_version == "10.16.1"  # kept apart


@needs_fixtures
def test_with_profile_keeps_the_bundle_and_says_what_is_missing(tmp_path: Path) -> None:
    bundle = load_engine(QAT, siblings=False)
    with pytest.raises(Exception, match="profiles another engine"):
        with_profile(bundle, H100_LOG)
    with pytest.raises(Exception, match="holds no per-layer profile"):
        with_profile(bundle, QAT)  # a layer JSON, not a profile
    with pytest.raises(Exception, match="no such file"):
        with_profile(bundle, tmp_path / "missing.json")
    own, match = with_profile(bundle, QAT.with_name("resnet-qat.onnx.engine.profile.json"))
    assert (match.matched, match.profiled, match.missing) == (37, 37, ())
    assert own.profile is not None and bundle.profile is None
    assert own.sources["profile"][0].name == "resnet-qat.onnx.engine.profile.json"


@needs_fixtures
def test_opening_an_engine_with_a_foreign_profile_refuses_the_profile(
    window: MainWindow, tmp_path: Path
) -> None:
    """The one-step open (engine and profile together) checks the profile as Load Profile…
    does: the engine opens, unprofiled and labelled as itself, and the user is told why."""
    from designer.ui.engine import open_engine_tab

    graph = tmp_path / "qat.onnx.engine.graph.json"
    shutil.copy(QAT, graph)
    errors: list[str] = []
    window.show_error = lambda title, message: errors.append(message)  # type: ignore[method-assign]
    tab = open_engine_tab(window, graph, profile=H100_LOG)
    assert tab is not None and not tab.engine.profiled
    assert errors and "H100" not in tab.banner.text()
