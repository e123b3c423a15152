"""Crash recovery keeps the arrangement: an autosave writes the document's layout (node
positions, collapsed groups, view-only groups) into its recovery entry, a restored tab shows
that unsaved arrangement, and the user's ``<model>.onnx.designer.json`` beside the model is
only written when the user saves. Entries without a layout (older versions) restore as
before; a layout that cannot be written or read never costs the model part."""

from __future__ import annotations

import errno
import json
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import onnx
import pytest
from helpers.gui import open_model
from onnx import TensorProto, helper
from pytestqt.qtbot import QtBot

from designer.core.edits import SetMetadataProp
from designer.core.edits.nodes import MoveNodes
from designer.core.io.companion import companion_path, positions_to_json
from designer.core.scope import MAIN_SCOPE
from designer.core.view_groups import view_groups
from designer.ui import recovery
from designer.ui.canvas.collapse_view import collapse_group
from designer.ui.canvas.hand_groups import group_selection
from designer.ui.document_tab import DocumentTab
from designer.ui.main_window import MainWindow
from designer.ui.settings import Settings

NAMES = ["/enc/a/Relu", "/enc/b/Relu", "/dec/a/Relu", "/dec/b/Relu", "/head/Relu"]
MOVED = "/head/Relu"


@pytest.fixture
def modules_path(tmp_path: Path) -> Path:
    """A chain of Relus in modules ``enc``, ``dec`` and ``head``, as ``m.onnx``."""
    values = ["X", *(f"t{i}" for i in range(1, len(NAMES))), "Y"]
    nodes = [
        helper.make_node("Relu", [values[i]], [values[i + 1]], name=name)
        for i, name in enumerate(NAMES)
    ]
    graph = helper.make_graph(
        nodes,
        "modules",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])],
    )
    path = tmp_path / "model" / "m.onnx"
    path.parent.mkdir()
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


@pytest.fixture
def new_window(qtbot: QtBot) -> Iterator[Callable[[], MainWindow]]:
    windows: list[MainWindow] = []

    def make() -> MainWindow:
        win = MainWindow(Settings())
        qtbot.addWidget(win)
        win.errors = []  # type: ignore[attr-defined]
        win.show_error = lambda title, message: win.errors.append(message)  # type: ignore[attr-defined,method-assign]
        win.ask_save_changes = lambda tab: "discard"  # type: ignore[method-assign]
        win.resize(1400, 900)
        win.show()
        windows.append(win)
        return win

    yield make
    for win in windows:
        for tab in win.document_tabs():
            tab.session.undo_stack.setClean()
        win.autosave_timer.stop()


def key_of(tab: DocumentTab, name: str) -> int:
    scope = tab.session.doc.scope(MAIN_SCOPE)
    return next(k for k in scope.keys if scope.node(k).name == name)


def saved_position(model_path: Path, name: str) -> list[float]:
    data = json.loads(companion_path(model_path).read_text(encoding="utf-8"))
    position: list[float] = data["scopes"]["main"][name]
    return position


def crash(tab: DocumentTab) -> None:
    """The session that autosaved ``tab`` dies: its entry is left behind for a restart."""
    meta_path = recovery.recovery_dir() / f"{tab.recovery_id}.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    meta["owner"] = {"pid": child.pid, "host": socket.gethostname(), "started": None}
    meta_path.write_text(json.dumps(meta), encoding="utf-8")


def restore(new_window: Callable[[], MainWindow]) -> tuple[MainWindow, DocumentTab]:
    win = new_window()
    win.ask_restore = lambda entries: True  # type: ignore[method-assign]
    win.offer_recovery()
    (tab,) = win.document_tabs()
    assert tab.view.wait_for_layout(30_000)
    return win, tab


def edit_and_autosave(win: MainWindow, tab: DocumentTab, model_path: Path) -> None:
    """Save the node MOVED at 5000, move it to 7000 and edit the model (both unsaved),
    then autosave."""
    session = tab.session
    assert session.push(MoveNodes(MAIN_SCOPE, {key_of(tab, MOVED): (5000.0, 5000.0)}))
    assert win.save(tab)
    assert saved_position(model_path, MOVED) == [5000.0, 5000.0]
    assert session.push(MoveNodes(MAIN_SCOPE, {key_of(tab, MOVED): (7000.0, 7000.0)}))
    assert session.push(SetMetadataProp("important", "work"))
    win.autosave()


def metadata(path: Path) -> dict[str, str]:
    return {p.key: p.value for p in onnx.load(path).metadata_props}


def test_a_restored_tab_shows_the_autosaved_arrangement_and_saving_writes_it(
    new_window: Callable[[], MainWindow], modules_path: Path, qtbot: QtBot
) -> None:
    win = new_window()
    tab = open_model(win, modules_path, qtbot)
    view = tab.view
    view.select_keys([key_of(tab, name) for name in NAMES[:2]])
    group = group_selection(view, "mine")  # a view-only group, drawn collapsed
    collapse_group(view, "dec")
    edit_and_autosave(win, tab, modules_path)
    doc = tab.session.doc
    assert doc.collapsed[MAIN_SCOPE] == {group, "dec"}
    arranged = positions_to_json(doc)  # what the user sees at the crash
    crash(tab)
    assert saved_position(modules_path, MOVED) == [5000.0, 5000.0]  # autosave left it alone

    win2, tab2 = restore(new_window)
    doc2 = tab2.session.doc
    assert doc2.path == modules_path.resolve()
    assert tab2.session.modified
    assert metadata(recovery.recovery_dir() / f"{tab2.recovery_id}.onnx") == {"important": "work"}
    assert doc2.positions[MAIN_SCOPE][key_of(tab2, MOVED)] == (7000.0, 7000.0)
    assert positions_to_json(doc2) == arranged  # positions, collapsed and view groups
    assert [g.name for g in view_groups(doc2, MAIN_SCOPE)] == ["mine"]
    assert tab2.view.canvas.collapsed == {group, "dec"}
    assert tab2.session.layout_restored  # shown as arranged, not collapsed afresh
    assert tab2.banner.text().startswith("Restored unsaved changes from")
    assert "arranged anew" not in tab2.banner.text()
    assert saved_position(modules_path, MOVED) == [5000.0, 5000.0]  # restoring left it alone

    assert win2.save(tab2)  # the user saves: now the restored arrangement is written
    assert saved_position(modules_path, MOVED) == [7000.0, 7000.0]
    assert metadata(modules_path) == {"important": "work"}
    assert list(recovery.recovery_dir().iterdir()) == []
    assert win2.errors == []  # type: ignore[attr-defined]


def test_an_entry_without_a_layout_restores_as_before(
    new_window: Callable[[], MainWindow], modules_path: Path, qtbot: QtBot
) -> None:
    win = new_window()
    tab = open_model(win, modules_path, qtbot)
    edit_and_autosave(win, tab, modules_path)
    meta_path = recovery.recovery_dir() / f"{tab.recovery_id}.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    del meta["layout"]  # as an older version wrote it
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    crash(tab)

    _win2, tab2 = restore(new_window)
    doc2 = tab2.session.doc
    assert metadata(recovery.recovery_dir() / f"{tab2.recovery_id}.onnx") == {"important": "work"}
    assert doc2.positions[MAIN_SCOPE][key_of(tab2, MOVED)] != (7000.0, 7000.0)
    assert len(doc2.positions[MAIN_SCOPE]) >= len(NAMES)  # laid out afresh
    assert not tab2.session.layout_restored
    assert tab2.banner.text() == (
        f"Restored unsaved changes from {tab2.recovery_id}.onnx; save to keep them."
    )
    assert saved_position(modules_path, MOVED) == [5000.0, 5000.0]


def test_a_layout_that_cannot_be_written_keeps_the_model_part(
    new_window: Callable[[], MainWindow],
    modules_path: Path,
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_atomic = recovery.write_atomic

    def full_for_layouts(path: Path, data: bytes, mode: int | None = None) -> None:
        if b'"layout"' in data:  # the bigger write does not fit
            raise OSError(errno.ENOSPC, "No space left on device")
        write_atomic(path, data, mode)

    win = new_window()
    tab = open_model(win, modules_path, qtbot)
    with monkeypatch.context() as patch:
        patch.setattr(recovery, "write_atomic", full_for_layouts)
        edit_and_autosave(win, tab, modules_path)
    message = win.statusBar().currentMessage()
    assert "layout of m.onnx was not autosaved" in message
    assert "No space left on device" in message
    assert "save the model to keep its layout" in message
    meta = json.loads((recovery.recovery_dir() / f"{tab.recovery_id}.json").read_text("utf-8"))
    assert "layout" not in meta
    crash(tab)

    _win2, tab2 = restore(new_window)  # the model part is there, arranged anew
    assert metadata(recovery.recovery_dir() / f"{tab2.recovery_id}.onnx") == {"important": "work"}
    assert tab2.session.doc.path == modules_path.resolve()
    assert not tab2.session.layout_restored


def test_a_damaged_layout_in_the_entry_only_warns(
    new_window: Callable[[], MainWindow], modules_path: Path, qtbot: QtBot
) -> None:
    win = new_window()
    tab = open_model(win, modules_path, qtbot)
    edit_and_autosave(win, tab, modules_path)
    meta_path = recovery.recovery_dir() / f"{tab.recovery_id}.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["layout"] = {"format": "something else", "scopes": {}}
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    crash(tab)

    win2, tab2 = restore(new_window)
    assert metadata(recovery.recovery_dir() / f"{tab2.recovery_id}.onnx") == {"important": "work"}
    assert not tab2.session.layout_restored
    assert tab2.session.doc.positions[MAIN_SCOPE][key_of(tab2, MOVED)] != (7000.0, 7000.0)
    banner = tab2.banner.text()
    assert banner.startswith("Restored unsaved changes from")
    assert f"{meta_path}: layout file ignored (not an onnx-designer layout file)" in banner
    assert "the nodes were arranged anew" in banner
    assert win2.errors == []  # type: ignore[attr-defined]
