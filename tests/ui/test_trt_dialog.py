"""Export TensorRT Engine / Profile with TensorRT dialogs, the TensorRT report tab and its
canvas overlay — real widgets offscreen, the stand-in trtexec on this machine."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import onnx
import pytest
from helpers.loopback_sshd import loopback_server  # noqa: F401 (the fixture server)
from helpers.shared import TRT_SAMPLES as TRTEXEC
from helpers.shots import save_screenshot
from helpers.trt_fixtures import (
    EXAMPLE,
    STANDIN,
    checked_dialog,
    dialog_model,  # noqa: F401 (the fixture model)
    trt_isolated,  # noqa: F401 (an autouse fixture)
)
from helpers.trt_gpu import fake_gpu  # noqa: F401 (a fixture)
from pytestqt.qtbot import QtBot

from designer.activities.reports.trt_tables import load_trt_report
from designer.cli import main
from designer.core.scope import MAIN_SCOPE
from designer.ui.dialogs.trt_dialog import TrtDialog
from designer.ui.main_window import MainWindow
from designer.ui.reports.trt_report_tab import TrtReportTab, open_trt_report_tab
from designer.ui.tools import trt_activities

pytestmark = pytest.mark.usefixtures("fake_gpu")

# tiny_cnn's nodes renamed after the recorded engine's ONNX nodes (model-trained.onnx).
RENAMES = {"conv1": "node_conv2d", "relu1": "node_relu", "pool1": "node_max_pool2d",
           "conv2": "node_conv2d_1", "relu2": "node_relu_1"}  # fmt: skip


def test_dialog_fits_and_builds_the_cli_command(
    window: MainWindow, qtbot: QtBot, model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dialog = checked_dialog(window, qtbot, model, profile=False)
    assert dialog.windowTitle() == "Export TensorRT Engine"
    frame = dialog.frameGeometry()
    assert frame.width() <= 1366 and frame.height() <= 740
    assert dialog.minimumSizeHint().height() <= 740
    assert str(dialog.trt_form.version) == "10.16.1"
    assert dialog.deps.state_of("tensorrt").value == "current"  # type: ignore[union-attr]
    form = dialog.trt_form
    form.fp16.setChecked(True)
    form.workspace.setValue(512)
    form.opt_level.setValue(4)
    form.tactic_boxes["cudnn"].setCheckState(form.tactic_boxes["cudnn"].checkState().Unchecked)
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
    assert line == cli  # the line Build runs: timing cache and output paths included
    assert "--timingCacheFile" in line
    save_screenshot(dialog, "trt_export_dialog.png")
    dialog.close()


def test_version_lacking_options_are_disabled(
    window: MainWindow, qtbot: QtBot, model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRTEXEC_STANDIN_VERSION", "11.1")
    dialog = checked_dialog(window, qtbot, model, profile=False)
    form = dialog.trt_form
    assert str(form.version).startswith("11.1")
    for box in (form.fp16, form.bf16, form.int8, form.fp8):
        assert not box.isEnabled() and "strongly typed" in box.toolTip()
    assert not form.calib.isEnabled()
    item = form.typing.model().item(form.typing.findData("obey"))  # type: ignore[attr-defined]
    assert not item.isEnabled()
    assert form.typing.currentData() != "obey"
    # what works there instead: the FP16 conversion of the model, one undoable step
    assert not form.convert_button.isHidden()
    form.convert_button.click()
    tab = window.tab()
    assert tab is not None and tab.session.doc.path == model.resolve()
    from designer.ui.dialogs.fp16_dialog import FP16Dialog

    qtbot.waitUntil(lambda: any(isinstance(w, FP16Dialog) for w in window.findChildren(FP16Dialog)))
    fp16 = window.findChildren(FP16Dialog)[0]
    assert fp16.session is tab.session.root()
    fp16.reject()
    dialog.close()


def test_fp16_conversion_is_not_offered_where_precision_flags_work(
    window: MainWindow, qtbot: QtBot, model: Path
) -> None:
    dialog = checked_dialog(window, qtbot, model, profile=False)
    assert str(dialog.trt_form.version).startswith("10.16")
    assert dialog.trt_form.convert_button.isHidden()
    dialog.close()


def test_build_runs_and_keeps_outputs(window: MainWindow, qtbot: QtBot, model: Path) -> None:
    dialog = checked_dialog(window, qtbot, model, profile=False)
    form = dialog.trt_form
    form.layer_info.setText(str(model.with_name("layers.json")))
    assert form.open_graph.isEnabled(), form.open_graph.toolTip()  # F2's engine explorer
    form.open_graph.setChecked(True)
    tabs_before = window.tabs.count()
    job = dialog.run()
    assert job is not None
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    assert dialog.outcome is not None and dialog.outcome.result.status == "ok"
    assert model.with_suffix(".engine").is_file() and model.with_name("layers.json").is_file()
    assert "Done" in dialog.status.text() and "engine" in dialog.status.text()
    assert any("&&&& PASSED" in line for line in dialog.log.toPlainText().splitlines())
    assert window.tabs.count() == tabs_before + 1  # the layer JSON opened as a graph
    assert dialog.report_button.isEnabled()
    dialog.close()


def test_failure_is_one_line_with_the_log_kept(
    window: MainWindow, qtbot: QtBot, model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dialog = checked_dialog(window, qtbot, model, profile=False)
    monkeypatch.setenv("TRTEXEC_STANDIN_FAIL_BUILD", "1")
    dialog.run()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    result = dialog.outcome.result  # type: ignore[union-attr]
    assert result.status == "failed" and "\n" not in (result.error or "")
    assert dialog.status.text().startswith("Failed:") and "log" in dialog.status.text()
    assert result.outputs["log"].is_file()
    dialog.close()


def test_cancel_stops_the_build(
    window: MainWindow, qtbot: QtBot, model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dialog = checked_dialog(window, qtbot, model, profile=False)
    monkeypatch.setenv("TRTEXEC_STANDIN_DELAY", "60")
    dialog.run()
    qtbot.waitUntil(lambda: "$ " in dialog.log.toPlainText(), timeout=30_000)
    dialog.cancel()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=20_000)
    assert dialog.outcome.result.status == "cancelled"  # type: ignore[union-attr]
    assert dialog.status.text().startswith("Cancelled")
    dialog.close()


def test_profile_opens_the_report_tab(window: MainWindow, qtbot: QtBot, model: Path) -> None:
    dialog = checked_dialog(window, qtbot, model, profile=True)
    assert dialog.windowTitle() == "Profile with TensorRT"
    form = dialog.trt_form
    assert not form.lock_clocks.isEnabled() and "GPU" in form.lock_clocks.toolTip()  # why not
    form.iterations.setValue(20)
    form.passes.setValue(2)
    form.layer_info.setText(str(model.with_name("layers.json")))
    form.tabs.setCurrentIndex(3)
    save_screenshot(dialog, "trt_profile_dialog.png")
    dialog.run()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    assert dialog.outcome.result.status == "ok", dialog.outcome.result.error  # type: ignore[union-attr]
    tabs = [window.tabs.widget(i) for i in range(window.tabs.count())]
    reports = [t for t in tabs if isinstance(t, TrtReportTab)]
    assert len(reports) == 1
    report = reports[0]
    assert report.layer_table.model.rowCount() == 15
    assert len(report.report.profiles) == 2 and report.report.layers[0].min_ms is not None
    assert "TensorRT profile" in report.header.text()
    report.tabs.setCurrentIndex(1)
    report.resize(1200, 700)
    save_screenshot(report, "trt_report_run.png")
    report.tabs.setCurrentIndex(0)
    save_screenshot(report, "trt_report_charts.png")
    dialog.close()


def test_overlay_colours_every_node_of_a_fused_layer(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    proto = onnx.load(str(EXAMPLE))
    for node in proto.graph.node:
        node.name = RENAMES.get(node.name, node.name)
    path = tmp_path / "model-trained-like.onnx"
    onnx.save(proto, str(path))
    graph = json.loads((TRTEXEC / "model-trained-exportLayerInfo.log").read_text())
    names = [layer["Name"] for layer in graph["Layers"]][:4]
    profile = [{"count": 100}] + [
        {"name": n, "timeMs": 1.0, "averageMs": 0.01 * (i + 1), "medianMs": 0.01, "percentage": p}
        for i, (n, p) in enumerate(zip(names, (40.0, 10.0, 40.0, 10.0), strict=True))
    ]  # recorded layer names, made-up times
    profile_path = tmp_path / "p.json"
    profile_path.write_text(json.dumps(profile))
    report = load_trt_report(profile_path, layer_info=TRTEXEC / "model-trained-exportLayerInfo.log")
    tab = open_trt_report_tab(window, report, path)
    tab.show_on_canvas()
    doc_tab = tab.overlay_tab
    assert doc_tab is not None, tab.message.text()
    scope = doc_tab.session.doc.scope(MAIN_SCOPE)
    key = {n.name: k for n, k in zip(scope.proto.node, scope.keys, strict=True)}
    coloured = doc_tab.view.canvas.overlay_keys()
    # "node_conv2d + node_relu" (Metadata: both ONNX nodes) colours both.
    assert {
        key["node_conv2d"],
        key["node_relu"],
        key["node_conv2d_1"],
        key["node_relu_1"],
    } <= coloured
    assert key["node_max_pool2d"] in coloured and key["fc"] not in coloured
    window.tabs.setCurrentWidget(tab)
    tab.tabs.setCurrentIndex(1)
    tab.resize(1200, 700)
    save_screenshot(tab, "trt_report_tab.png")
    save_screenshot(doc_tab, "trt_overlay.png")
    tab.clear_overlay()
    assert doc_tab.view.canvas.overlay_keys() == set()


def test_menus_and_welcome(window: MainWindow, qtbot: QtBot) -> None:
    assert "export_trt_engine" in window.actions_by_name
    assert "profile_trt" in window.actions_by_name
    export = window.actions_by_name["export_trt_engine"]
    assert any(
        a.menu() is not None and export in a.menu().actions()  # type: ignore[union-attr]
        for a in window.menus["File"].actions()
    )
    texts = [a.text() for a in window.welcome.activity_menu.actions()]
    assert texts == [
        "Profile with ONNX Runtime…",
        "Export TensorRT Engine…",
        "Profile with TensorRT…",
    ]
    window.welcome.activityRequested.emit("trt-profile")
    dialogs = window.findChildren(TrtDialog)
    assert len(dialogs) == 1 and dialogs[0].profile_mode
    qtbot.waitUntil(lambda: dialogs[0].job is None, timeout=30_000)
    dialogs[0].close()
    assert trt_activities.trt_activity is not None


def test_chosen_source_without_tensorrt_says_so(
    window: MainWindow, qtbot: QtBot, model: Path
) -> None:
    dialog = TrtDialog(window, model, profile=False)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    form = dialog.trt_form
    form.source.setCurrentIndex(form.source.findData("system"))
    assert not form.custom.isEnabled()
    dialog.check(deploy=False)
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    assert dialog.deps.state_of("tensorrt").value == "unavailable"  # type: ignore[union-attr]
    assert dialog.deps.message.text().startswith("No TensorRT:")
    assert form.version is None
    assert form.version_note.text().startswith("No TensorRT on this target:")
    with pytest.raises(Exception, match="no TensorRT optimization profile"):
        dialog.command_line()  # a preview for a chosen version, once the options are valid
    assert dialog.run() is None  # the dynamic input has no profile: said before anything runs
    assert "no TensorRT optimization profile" in dialog.status.text()
    form.free_dims.setChecked(True)
    dialog.run()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    assert dialog.outcome.result.status == "failed"  # type: ignore[union-attr]
    assert "no TensorRT on local" in (dialog.outcome.result.error or "")  # type: ignore[union-attr]
    dialog.close()


# --- an SSH target chosen at the top (real loopback sshd) -------------------------------------
def test_build_on_an_ssh_target(
    window: MainWindow, qtbot: QtBot, model: Path, tmp_path: Path, server: tuple[object, Path, str]
) -> None:
    from designer.activities.connections import Connection, ConnectionStore
    from designer.activities.targets import HostKeyDecision

    srv, key, user = server
    deploy = f".designer-test/trt-gui-{uuid.uuid4().hex[:10]}"
    conn = Connection(
        host="127.0.0.1",
        user=user,
        port=srv.port,  # type: ignore[attr-defined]
        key_file=str(key),
        known_hosts=str(tmp_path / "known_hosts"),
        ssh_config=str(tmp_path / "no_config"),
        deploy_dir=deploy,
        name="gpu-box",
    )
    ConnectionStore().add(conn)
    dialog = TrtDialog(window, model, profile=False)
    qtbot.addWidget(dialog)
    dialog.decider.ask = lambda info, parent: HostKeyDecision.ACCEPT_ONCE  # type: ignore[method-assign]
    dialog.show()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)
    dialog.reload_targets(select="gpu-box")
    assert dialog.connection() is not None and dialog.deploy_button.isEnabled()
    form = dialog.trt_form
    form.source.setCurrentIndex(form.source.findData("custom"))
    form.custom.setText(str(STANDIN))  # absolute: the same stand-in, seen by the SSH user
    form.free_dims.setChecked(True)
    dialog.check(deploy=False)
    qtbot.waitUntil(lambda: dialog.job is None and form.version is not None, timeout=30_000)
    assert dialog.deps.state_of("tensorrt").value == "current"  # type: ignore[union-attr]
    assert dialog.deps.state_of("runners").value == "missing"  # type: ignore[union-attr]
    assert dialog.command_line().startswith(str(STANDIN))
    save_screenshot(dialog, "trt_export_dialog_ssh.png")
    dialog.run()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=60_000)
    result = dialog.outcome.result  # type: ignore[union-attr]
    assert result.status == "ok", result.error
    assert result.outputs["engine"] == model.with_suffix(".engine")
    assert f"/{deploy}/trt/timing-10.16.1.cache" in result.details["timing_cache"]
    assert any(p.endswith("/model/tiny cnn.onnx") for p in result.copied)
    dialog.close()
    from designer.activities.targets import SshTarget

    with SshTarget(
        conn.settings(password=None), lambda i: HostKeyDecision.ACCEPT_ONCE
    ).connect() as t:
        t.remove(t.resolve(deploy))
