"""Custom tools in the GUI (U-1, U-2) with real widgets and real processes."""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import onnx
import pytest
from helpers.gui import open_model
from PySide6.QtCore import QObject, Qt
from pytestqt.qtbot import QtBot

from designer.activities.custom_tools import CustomTool, load_tools, save_tools, tools_path
from designer.core.edits import MoveNodes
from designer.core.scope import MAIN_SCOPE
from designer.ui.dialogs.custom_tools_dialog import CustomToolsDialog, ToolEditDialog
from designer.ui.dialogs.tool_run_dialog import ToolRunDialog
from designer.ui.main_window import MainWindow
from designer.ui.settings import Settings
from designer.ui.tools.custom_tools import CustomToolsPlugin

WRITE_MODIFIED = """
import sys, onnx
model = onnx.load(sys.argv[1])
model.graph.name = "modified by tool"
onnx.save(model, sys.argv[2])
print("wrote", sys.argv[2])
"""
PRINT_ARGS = "import sys\nprint(*sys.argv[1:], sep='\\n')\n"


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONNX_DESIGNER_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("ONNX_DESIGNER_RECOVERY_DIR", str(tmp_path / "recovery"))
    temp = tmp_path / "temp"  # temporary copies and outputs stay inside the test
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))


@pytest.fixture
def window(qtbot: QtBot) -> Iterator[MainWindow]:
    win = MainWindow(Settings())
    qtbot.addWidget(win)
    win.errors = []  # type: ignore[attr-defined]
    win.show_error = lambda title, message: win.errors.append(message)  # type: ignore[method-assign, attr-defined]
    win.ask_save_changes = lambda tab: "discard"  # type: ignore[method-assign]
    yield win
    plugin(win).cancel_all()
    for tab in win.document_tabs():
        tab.session.undo_stack.setClean()
    win.close()


def plugin(window: MainWindow) -> CustomToolsPlugin:
    found = window.findChild(QObject, "custom_tools")
    assert isinstance(found, CustomToolsPlugin)
    return found


def script_tool(tmp_path: Path, name: str, code: str, arguments: str, **flags: bool) -> CustomTool:
    script = tmp_path / f"{name.replace(' ', '_')}.py"
    script.write_text(code)
    return CustomTool(name, sys.executable, f"{shlex.quote(str(script))} {arguments}", **flags)


def run_to_end(window: MainWindow, tool: CustomTool, qtbot: QtBot) -> ToolRunDialog:
    dialog = plugin(window).run(tool)
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.run_result is not None, timeout=30_000)
    return dialog


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its parent to reap it counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_tool_writes_output_that_opens_in_a_new_tab(
    window: MainWindow, resnet_path: Path, tmp_path: Path, qtbot: QtBot
) -> None:
    tool = script_tool(tmp_path, "Rename", WRITE_MODIFIED, "$Model $Output", open_output=True)
    save_tools([tool])
    open_model(window, resnet_path, qtbot)
    menu = plugin(window).user_menu
    menu.aboutToShow.emit()
    assert [a.text() for a in menu.actions()] == ["Rename"]
    menu.actions()[0].trigger()
    dialog = plugin(window).runs[-1]
    qtbot.waitUntil(lambda: window.tabs.count() == 2, timeout=30_000)
    result = dialog.run_result
    assert result is not None and result.ok
    assert "Finished with exit code 0" in dialog.status.text()
    assert str(resnet_path) in dialog.command.text()
    assert "wrote" in dialog.stdout_view.toPlainText()
    opened = window.tab()
    assert opened is not None and opened.session.doc.path is not None
    assert opened.session.doc.model.graph.name == "modified by tool"
    assert "Opened the output model" in dialog.outcome.text()
    assert float(dialog.elapsed.text().split()[0]) > 0
    assert not window.errors  # type: ignore[attr-defined]


def test_failing_tool_shows_exit_code_and_stderr(
    window: MainWindow, resnet_path: Path, tmp_path: Path, qtbot: QtBot
) -> None:
    code = "import sys\nprint('half done')\nprint('bad input: no Foo node', file=sys.stderr)\n"
    tool = script_tool(
        tmp_path, "Fails", code + "sys.exit(3)\n", "$Model $Output", open_output=True
    )
    open_model(window, resnet_path, qtbot)
    dialog = run_to_end(window, tool, qtbot)
    assert "exit code 3" in dialog.status.text()
    assert dialog.stderr_view.toPlainText().strip() == "bad input: no Foo node"
    assert dialog.stdout_view.toPlainText().strip() == "half done"
    assert window.tabs.count() == 1
    assert dialog.close_button.isEnabled() and not dialog.cancel_button.isEnabled()


def test_cancel_kills_the_tool_and_its_children(
    window: MainWindow, resnet_path: Path, tmp_path: Path, qtbot: QtBot
) -> None:
    code = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    tool = script_tool(tmp_path, "Sleeps", code, "$Model")
    open_model(window, resnet_path, qtbot)
    dialog = plugin(window).run(tool)
    assert dialog is not None and dialog.process is not None
    qtbot.waitUntil(lambda: dialog.stdout_view.toPlainText().strip() != "", timeout=20_000)
    assert "Running" in dialog.status.text()
    leader, child = dialog.process.pid, int(dialog.stdout_view.toPlainText().strip())
    assert leader is not None and alive(leader) and alive(child)
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.run_result is not None, timeout=10_000)
    assert "Cancelled" in dialog.status.text()
    qtbot.waitUntil(lambda: not alive(leader) and not alive(child), timeout=10_000)


def test_missing_application_is_a_clear_message(
    window: MainWindow, resnet_path: Path, tmp_path: Path, qtbot: QtBot
) -> None:
    missing = tmp_path / "no such folder" / "tool"
    open_model(window, resnet_path, qtbot)
    dialog = run_to_end(window, CustomTool("Ghost", str(missing), "$Model"), qtbot)
    assert dialog.status.text() == f"Failed to start: application {missing} not found"
    assert dialog.close_button.isEnabled()


def test_model_paths_with_spaces_and_quotes(
    window: MainWindow, tmp_path: Path, qtbot: QtBot, resnet_path: Path
) -> None:
    folder = tmp_path / "my models" / 'it\'s a "quoted" dir'
    folder.mkdir(parents=True)
    model = folder / "res net 'v1'.onnx"
    model.write_bytes(resnet_path.read_bytes())
    tool = script_tool(tmp_path, "Print Args", PRINT_ARGS, "$Model \"--in=$Model\" 'x y'")
    open_model(window, model, qtbot)
    dialog = run_to_end(window, tool, qtbot)
    assert dialog.run_result is not None and dialog.run_result.ok
    lines = dialog.stdout_view.toPlainText().splitlines()
    assert lines == [str(model), f"--in={model}", "x y"]


def test_unsaved_changes_save_or_copy(
    window: MainWindow, resnet_path: Path, tmp_path: Path, qtbot: QtBot
) -> None:
    tool = script_tool(tmp_path, "Print Args", PRINT_ARGS, "$Model")
    open_model(window, resnet_path, qtbot)
    tab = window.tab()
    assert tab is not None
    key = tab.session.doc.scope().keys[0]
    assert tab.session.push(MoveNodes(MAIN_SCOPE, {key: (500.0, 500.0)}))
    tools = plugin(window)

    tools.ask_unsaved = lambda tab: "cancel"  # type: ignore[method-assign]
    assert tools.run(tool) is None

    tools.ask_unsaved = lambda tab: "copy"  # type: ignore[method-assign]
    dialog = run_to_end(window, tool, qtbot)
    used = Path(dialog.stdout_view.toPlainText().strip())
    assert used.name == resnet_path.name and used != resnet_path
    assert not used.exists()  # the temporary copy is removed after the run
    assert "temporary copy" in dialog.model_label.text()
    assert tab.session.modified

    tools.ask_unsaved = lambda tab: "save"  # type: ignore[method-assign]
    dialog = run_to_end(window, tool, qtbot)
    assert Path(dialog.stdout_view.toPlainText().strip()) == resnet_path
    assert not tab.session.modified


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("print('did nothing')\n", "wrote no model to"),
        ("import sys\nopen(sys.argv[1], 'wb').write(b'junk')\n", "not a valid model"),
    ],
)
def test_missing_or_invalid_output_is_reported(
    window: MainWindow,
    resnet_path: Path,
    tmp_path: Path,
    qtbot: QtBot,
    code: str,
    message: str,
) -> None:
    tool = script_tool(tmp_path, "Bad Output", code, "$Output", open_output=True)
    open_model(window, resnet_path, qtbot)
    dialog = run_to_end(window, tool, qtbot)
    assert message in dialog.outcome.text() and dialog.outcome.isVisible()
    assert window.tabs.count() == 1


def test_prompted_output_path(
    window: MainWindow, resnet_path: Path, tmp_path: Path, qtbot: QtBot
) -> None:
    tool = script_tool(
        tmp_path, "Rename", WRITE_MODIFIED, "$Model $Output", prompt_output=True, open_output=True
    )
    chosen = tmp_path / "out dir" / "chosen output.onnx"
    chosen.parent.mkdir()
    open_model(window, resnet_path, qtbot)
    tools = plugin(window)
    tools.ask_output_path = lambda tool, model: None  # type: ignore[method-assign]
    assert tools.run(tool) is None
    tools.ask_output_path = lambda tool, model: chosen  # type: ignore[method-assign]
    run_to_end(window, tool, qtbot)
    qtbot.waitUntil(lambda: window.tabs.count() == 2, timeout=30_000)
    assert onnx.load(str(chosen)).graph.name == "modified by tool"
    current = window.tab()
    assert current is not None and current.session.doc.path == chosen


def test_manager_new_edit_delete_rebuilds_user_menu(window: MainWindow, qtbot: QtBot) -> None:
    dialog = plugin(window).manager_dialog()
    qtbot.addWidget(dialog)
    first = CustomTool("Histogram", sys.executable, "plugins/op_histogram.py $Model")
    second = CustomTool("Optimize", sys.executable, "opt.py $Model $Output", open_output=True)
    answers = iter([first, second])
    dialog.edit_tool = lambda tool, others: next(answers)  # type: ignore[method-assign]
    dialog.new()
    dialog.new()
    assert [t.name for t in load_tools()] == ["Histogram", "Optimize"]
    assert dialog.list.count() == 2 and dialog.selected() == second
    assert dialog.app_label.text() == sys.executable
    assert dialog.args_label.text() == "opt.py $Model $Output"
    assert dialog.options_label.text() == "a new temporary file; opened afterwards"
    menu = plugin(window).user_menu
    assert [a.text() for a in menu.actions()] == ["Histogram", "Optimize"]
    assert not menu.actions()[0].isEnabled()  # no document open

    dialog.list.setCurrentRow(0)
    renamed = CustomTool("Op Histogram", sys.executable, "plugins/op_histogram.py $Model")
    dialog.edit_tool = lambda tool, others: renamed  # type: ignore[method-assign]
    dialog.edit()
    assert [t.name for t in load_tools()] == ["Op Histogram", "Optimize"]

    dialog.confirm_delete = lambda tool: False  # type: ignore[method-assign]
    dialog.delete()
    assert len(load_tools()) == 2
    dialog.confirm_delete = lambda tool: True  # type: ignore[method-assign]
    dialog.delete()
    assert [t.name for t in load_tools()] == ["Optimize"]
    assert [a.text() for a in menu.actions()] == ["Optimize"]


def test_broken_tool_file_is_reported_and_left_alone(window: MainWindow, qtbot: QtBot) -> None:
    path = tools_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    dialog = CustomToolsDialog(window)
    qtbot.addWidget(dialog)
    assert "not valid JSON" in dialog.message.text()
    assert not dialog.new_button.isEnabled() and not dialog.edit_button.isEnabled()
    assert path.read_text() == "{not json"


def test_tool_dialog_validates(tmp_path: Path, qtbot: QtBot) -> None:
    existing = CustomTool("Histogram", sys.executable)
    dialog = ToolEditDialog(None, [existing])
    qtbot.addWidget(dialog)
    assert not dialog.prompt_output.isEnabled()  # no $Output yet
    dialog.accept()
    assert dialog.error.text() == "the tool needs a name"
    dialog.name.setText("histogram")
    dialog.use_python.click()
    assert dialog.application.text() == sys.executable
    assert dialog.app_status.text() == "✓ executable"
    dialog.accept()
    assert "already exists" in dialog.error.text()
    dialog.name.setText("Optimize")
    text_file = tmp_path / "notes.txt"
    text_file.write_text("hello")
    dialog.choose_application = lambda: str(text_file)  # type: ignore[method-assign]
    dialog.browse.click()
    assert "not executable" in dialog.app_status.text()
    dialog.accept()
    assert "not executable" in dialog.error.text()
    dialog.use_python.click()
    dialog.arguments.setText("'unbalanced $Model")
    dialog.accept()
    assert "check the quotes" in dialog.error.text()
    assert dialog.result() != ToolEditDialog.DialogCode.Accepted
    dialog.arguments.setText("opt.py $Model")
    dialog.arguments.end(False)
    qtbot.mouseClick(dialog.insert_buttons["$Output"], Qt.MouseButton.LeftButton)
    assert dialog.arguments.text() == "opt.py $Model $Output"
    assert dialog.prompt_output.isEnabled()
    dialog.open_output.setChecked(True)
    assert "/path/to/model.onnx" in dialog.preview.text()
    dialog.accept()
    assert dialog.result() == ToolEditDialog.DialogCode.Accepted
    assert dialog.tool() == CustomTool(
        "Optimize", sys.executable, "opt.py $Model $Output", False, True
    )
    assert json.loads(json.dumps(dialog.tool().to_json()))["open_output"] is True
