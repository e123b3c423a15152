"""Crash-recovery entries are safe: a restored entry stays until its document is saved or
closed (a second crash loses nothing), the entries of a running instance are neither
offered nor deleted by another one, and a malformed entry never stops the app starting."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import onnx
import pytest
from pytestqt.qtbot import QtBot

from designer.core.edits import SetMetadataProp
from designer.core.io import open_document
from designer.ui import recovery
from designer.ui.main_window import MainWindow
from designer.ui.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def dead_pid() -> int:
    """The pid of a process that has exited (what a crashed session leaves behind)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def set_owner(entry_id: str, owner: dict[str, object] | None) -> None:
    meta_path = recovery.recovery_dir() / f"{entry_id}.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if owner is None:
        meta.pop("owner", None)
    else:
        meta["owner"] = owner
    meta_path.write_text(json.dumps(meta), encoding="utf-8")


def crashed_entry(model_path: Path, entry_id: str = "crashed", value: str = "work") -> str:
    """An entry of ``model_path`` with metadata ``important=value``, as a session that has
    since crashed left it."""
    doc = open_document(model_path)
    doc.undo_stack.push(SetMetadataProp("important", value))
    recovery.write_recovery(doc, entry_id)
    set_owner(entry_id, {"pid": dead_pid(), "host": socket.gethostname()})
    return entry_id


def files_of(entry_id: str) -> list[str]:
    return sorted(p.name for p in recovery.recovery_dir().glob(f"{entry_id}.*"))


def metadata(path: Path) -> dict[str, str]:
    return {p.key: p.value for p in onnx.load(path).metadata_props}


def answering(
    answer: bool, asked: list[list[str]]
) -> Callable[[list[recovery.RecoveryEntry]], bool]:
    """An ``ask_restore`` that notes the ids it is asked about and gives ``answer``."""

    def ask(entries: list[recovery.RecoveryEntry]) -> bool:
        asked.append([e.model.stem for e in entries])
        return answer

    return ask


@pytest.fixture
def running_process() -> Iterator[subprocess.Popen[bytes]]:
    """Another process that is still running (another instance, as the system sees it)."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield child
    child.kill()
    child.wait()


@pytest.fixture
def new_window(qtbot: QtBot) -> Iterator[Callable[[], MainWindow]]:
    windows: list[MainWindow] = []

    def make() -> MainWindow:
        win = MainWindow(Settings())
        qtbot.addWidget(win)
        win.errors = []  # type: ignore[attr-defined]
        win.show_error = lambda title, message: win.errors.append(message)  # type: ignore[attr-defined,method-assign]
        win.ask_save_changes = lambda tab: "discard"  # type: ignore[method-assign]
        windows.append(win)
        return win

    yield make
    for win in windows:
        for tab in win.document_tabs():
            tab.session.undo_stack.setClean()
        win.autosave_timer.stop()


# --- 1: restoring keeps the entry until the document is saved or closed ---------------------
def test_restored_work_survives_a_second_crash(resnet_path: Path, tmp_path: Path) -> None:
    entry_id = crashed_entry(resnet_path)
    script = textwrap.dedent(
        """
        import os, sys
        from PySide6.QtWidgets import QApplication
        app = QApplication(["t"])
        from designer.ui.main_window import MainWindow
        from designer.ui.settings import Settings
        win = MainWindow(Settings())
        win.ask_restore = lambda entries: True
        win.offer_recovery()
        print(len(win.document_tabs()), flush=True)
        os._exit(9)  # crashes again, before its first autosave
        """
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 9, done.stderr
    assert done.stdout.split() == ["1"], done.stderr  # it restored the document
    (entry,) = recovery.pending_recoveries()  # offered again after the second crash
    assert entry.model.stem == entry_id
    assert entry.original == resnet_path.resolve()
    assert metadata(entry.model) == {"important": "work"}


def test_a_restored_tab_keeps_its_entry_until_saved(
    new_window: Callable[[], MainWindow], resnet_path: Path
) -> None:
    entry_id = crashed_entry(resnet_path)
    win = new_window()
    win.ask_restore = lambda entries: True  # type: ignore[method-assign]
    win.offer_recovery()
    (tab,) = win.document_tabs()
    assert tab.recovery_id == entry_id  # its autosaves go to the entry it came from
    assert files_of(entry_id) == [f"{entry_id}.json", f"{entry_id}.onnx"]
    meta = json.loads((recovery.recovery_dir() / f"{entry_id}.json").read_text("utf-8"))
    assert meta["owner"]["pid"] == os.getpid()  # taken over by this process
    assert recovery.pending_recoveries() == []  # held by the open tab, not offered again

    assert tab.session.push(SetMetadataProp("more", "edits"))
    win.autosave()
    assert sorted(p.name for p in recovery.recovery_dir().iterdir()) == [
        f"{entry_id}.json",
        f"{entry_id}.onnx",
    ]  # written over, not beside it
    assert metadata(recovery.recovery_dir() / f"{entry_id}.onnx") == {
        "important": "work",
        "more": "edits",
    }

    assert win.save(tab)
    assert files_of(entry_id) == []
    assert metadata(resnet_path) == {"important": "work", "more": "edits"}


def test_a_restored_tab_closed_without_saving_removes_its_entry(
    new_window: Callable[[], MainWindow], resnet_path: Path
) -> None:
    entry_id = crashed_entry(resnet_path)
    win = new_window()
    win.ask_restore = lambda entries: True  # type: ignore[method-assign]
    win.offer_recovery()
    answers = ["cancel", "discard"]
    win.ask_save_changes = lambda tab: answers.pop(0)  # type: ignore[method-assign]
    assert not win.close_tab(0)
    assert files_of(entry_id) == [f"{entry_id}.json", f"{entry_id}.onnx"]  # cancelled: kept
    assert win.close_tab(0)
    assert answers == []
    assert files_of(entry_id) == []  # the user chose to drop the work


# --- 2: entries of a running instance ---------------------------------------------------
def test_autosave_records_this_process_as_owner_and_another_process_leaves_it_alone(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    window.open_files([resnet_path])
    tab = window.tab()
    assert tab is not None
    assert tab.session.push(SetMetadataProp("author", "me"))
    window.autosave()
    meta = json.loads((recovery.recovery_dir() / f"{tab.recovery_id}.json").read_text("utf-8"))
    assert meta["owner"]["pid"] == os.getpid()
    assert meta["owner"]["host"] == recovery.current_owner().host
    script = (
        "from designer.ui import recovery\n"
        "entries = recovery.pending_recoveries()\n"
        "print(len(entries), [recovery.discard(e) for e in entries])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "[]"]  # this instance runs: nothing to offer
    assert files_of(tab.recovery_id) == [f"{tab.recovery_id}.json", f"{tab.recovery_id}.onnx"]


def test_entries_of_a_running_instance_are_not_offered_nor_deleted(
    new_window: Callable[[], MainWindow],
    resnet_path: Path,
    running_process: subprocess.Popen[bytes],
) -> None:
    entry_id = crashed_entry(resnet_path)
    host = socket.gethostname()
    set_owner(entry_id, {"pid": running_process.pid, "host": host, "started": None})
    win = new_window()
    asked: list[list[str]] = []
    win.ask_restore = answering(False, asked)  # type: ignore[method-assign,assignment]
    win.offer_recovery()
    assert asked == []
    assert files_of(entry_id) == [f"{entry_id}.json", f"{entry_id}.onnx"]

    running_process.kill()  # now that instance crashes: its work is offered
    running_process.wait()
    win.offer_recovery()
    assert asked == [[entry_id]]
    assert files_of(entry_id) == []  # answered No


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_reused_pid_does_not_hide_a_crashed_entry(
    resnet_path: Path, running_process: subprocess.Popen[bytes]
) -> None:
    entry_id = crashed_entry(resnet_path)
    host = socket.gethostname()
    # The pid runs, but it is a process started after the owner: the owner is gone.
    set_owner(entry_id, {"pid": running_process.pid, "host": host, "started": "1"})
    assert [e.model.stem for e in recovery.pending_recoveries()] == [entry_id]


def test_entries_of_another_host_wait_a_day(resnet_path: Path) -> None:
    entry_id = crashed_entry(resnet_path)
    set_owner(entry_id, {"pid": 1, "host": "another-host", "started": None})
    assert recovery.pending_recoveries() == []  # it may still be running there
    meta_path = recovery.recovery_dir() / f"{entry_id}.json"
    meta = json.loads(meta_path.read_text("utf-8"))
    meta["saved_at"] = time.time() - recovery.FOREIGN_STALE_SECONDS - 60
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    assert [e.model.stem for e in recovery.pending_recoveries()] == [entry_id]


def test_entries_without_owner_are_offered_as_before(
    new_window: Callable[[], MainWindow], resnet_path: Path
) -> None:
    entry_id = crashed_entry(resnet_path)
    set_owner(entry_id, None)  # written by an older version
    win = new_window()
    asked: list[list[str]] = []
    win.ask_restore = answering(False, asked)  # type: ignore[method-assign,assignment]
    win.offer_recovery()
    assert asked == [[entry_id]]
    assert files_of(entry_id) == []


def test_an_entry_taken_by_another_instance_during_the_question_is_left_alone(
    new_window: Callable[[], MainWindow],
    resnet_path: Path,
    running_process: subprocess.Popen[bytes],
) -> None:
    host = socket.gethostname()
    live = {"pid": running_process.pid, "host": host, "started": None}
    for answer in (False, True):
        entry_id = crashed_entry(resnet_path, f"taken{answer}")
        win = new_window()

        def ask(entries: list[recovery.RecoveryEntry], answer: bool = answer) -> bool:
            set_owner(entries[0].model.stem, live)  # another instance restored it meanwhile
            return answer

        win.ask_restore = ask  # type: ignore[method-assign]
        win.offer_recovery()
        assert win.document_tabs() == []  # no duplicate of the other instance's tab
        assert files_of(entry_id) == [f"{entry_id}.json", f"{entry_id}.onnx"]  # not deleted


# --- malformed entries ------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "[1, 2]",
        '"just text"',
        '{"original": 5, "saved_at": 1}',
        '{"original": null, "saved_at": "yesterday"}',
        '{"original": null, "saved_at": null}',
        '{"original": null, "saved_at": true}',
        '{"original": null, "saved_at": 1, "base_dir": ["x"]}',
        '{"original": null, "saved_at": 1, "owner": 7}',
        '{"original": null, "saved_at": 1, "owner": {"pid": "12", "host": "h"}}',
        '{"original": null, "saved_at": 1, "owner": {"pid": 12, "host": null}}',
        "{not json",
        "[" * 100_000 + "]" * 100_000,  # nested past the parser's depth: RecursionError
    ],
)
def test_a_malformed_entry_is_skipped_and_logged(
    new_window: Callable[[], MainWindow],
    resnet_path: Path,
    caplog: pytest.LogCaptureFixture,
    text: str,
) -> None:
    good = crashed_entry(resnet_path, "good")
    folder = recovery.recovery_dir()
    (folder / "bad.onnx").write_bytes(resnet_path.read_bytes())
    (folder / "bad.json").write_text(text, encoding="utf-8")
    win = new_window()
    asked: list[list[str]] = []
    win.ask_restore = answering(True, asked)  # type: ignore[method-assign,assignment]
    with caplog.at_level(logging.WARNING, logger="designer.ui.recovery"):
        win.offer_recovery()  # starts: no exception
    assert asked == [[good]]  # the good entry is still offered
    assert len(win.document_tabs()) == 1
    assert any("bad.json" in r.getMessage() for r in caplog.records)
    assert files_of("bad") == ["bad.json", "bad.onnx"]  # left for a look
