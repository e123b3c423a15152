"""One undo history per document and one notifying path for positions, seen from the GUI.

An edit made in the window is undone by the core history (``doc.undo_stack``) that the
document reports, ``modified`` is the same answer in the core, the session, the tab, the
window title, the close prompt and autosave; every move of a node reaches a listener as a
POSITIONS event (drag, Arrange, first layout, layout file, collapse)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest

from designer.core.document import ChangeKind, DocumentEvent
from designer.core.edits import RenameNode
from designer.core.io.companion import save_positions
from designer.core.scope import MAIN_SCOPE
from designer.ui import recovery
from designer.ui.canvas.collapse_view import collapse_to_depth
from designer.ui.canvas.expand_all import expand_all
from designer.ui.canvas.view import CanvasView
from designer.ui.history import HistoryView
from designer.ui.session import DocumentSession
from tests.helpers.gui import open_model
from tests.helpers.shared import model

LEFT = Qt.MouseButton.LeftButton
NO_MOD = Qt.KeyboardModifier.NoModifier
LLAMA = "llama_24l_h64.dynamo.onnx"


def key_named(session: DocumentSession, name: str) -> int:
    scope = session.doc.scope(MAIN_SCOPE)
    return next(k for k, n in scope.nodes() if n.name == name)


def everywhere_modified(window, tab) -> list[bool]:  # type: ignore[no-untyped-def]
    """``modified`` as the core, the session, the tab text and the window title say it."""
    index = window.tabs.indexOf(tab)
    return [
        tab.session.doc.modified,
        tab.session.modified,
        window.tabs.tabText(index).endswith("*"),
        window.windowTitle().split(" — ")[0].endswith("*"),
    ]


def test_gui_edit_is_undone_by_the_core_history(window, qtbot, resnet_path: Path) -> None:  # type: ignore[no-untyped-def]
    tab = open_model(window, resnet_path, qtbot)
    session, core = tab.session, tab.session.doc.undo_stack
    assert everywhere_modified(window, tab) == [False] * 4
    saved = core.revision
    assert session.push(RenameNode(MAIN_SCOPE, key_named(session, "stem_conv"), "first"))
    assert core.labels() == ["Rename node to first"]
    assert core.revision != saved and core.saved_revision == saved
    assert everywhere_modified(window, tab) == [True] * 4
    assert window.undo_group.activeStack() is session.undo_stack
    assert window.actions_by_name["undo"].text().startswith("&Undo ")

    window.actions_by_name["undo"].trigger()  # the Edit menu acts on the core history
    assert core.index == 0 and core.revision == saved
    assert session.doc.scope(MAIN_SCOPE).node(key_named(session, "stem_conv")) is not None
    assert everywhere_modified(window, tab) == [False] * 4  # back at the saved state
    window.actions_by_name["redo"].trigger()
    assert core.index == 1 and everywhere_modified(window, tab) == [True] * 4

    session.doc.undo_stack.undo()  # a core call: the window follows it
    assert not window.actions_by_name["undo"].isEnabled()
    assert window.actions_by_name["redo"].isEnabled()
    assert everywhere_modified(window, tab) == [False] * 4
    session.doc.undo_stack.redo()

    asked: list[str] = []
    window.ask_save_changes = lambda t: asked.append(t.session.title) or "cancel"
    assert not window.close_tab(window.tabs.indexOf(tab))  # the prompt reads the same flag
    assert asked == [session.doc.title] and asked[0].endswith("*")

    window.autosave()  # autosave writes exactly the modified documents
    assert (recovery.recovery_dir() / f"{tab.recovery_id}.onnx").exists()

    session.save()
    assert core.is_clean and everywhere_modified(window, tab) == [False] * 4
    window.actions_by_name["undo"].trigger()
    assert everywhere_modified(window, tab) == [True] * 4  # undone past the save
    window.actions_by_name["redo"].trigger()
    assert everywhere_modified(window, tab) == [False] * 4


def test_history_window_shows_and_drives_the_core_history(
    window,  # type: ignore[no-untyped-def]
    qtbot,  # type: ignore[no-untyped-def]
    resnet_path: Path,
) -> None:
    tab = open_model(window, resnet_path, qtbot)
    session = tab.session
    for i, name in enumerate(["stem_conv", "stem_bn", "stem_relu"]):
        assert session.push(RenameNode(MAIN_SCOPE, key_named(session, name), f"n{i}"))
    view = window.history.widget()
    assert isinstance(view, HistoryView)
    model = view.model()
    rows = [model.index(r, 0).data() for r in range(model.rowCount())]
    assert rows == ["<empty>", *session.doc.undo_stack.labels()]
    assert view.currentIndex().row() == 3
    assert model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole) == "the saved state"
    rect = view.visualRect(model.index(1, 0))
    QTest.mouseClick(view.viewport(), LEFT, NO_MOD, rect.center())  # back to step 1
    assert session.doc.undo_stack.index == 1
    assert [n.name for n in session.doc.model.graph.node[:3]] == ["n0", "stem_bn", "stem_relu"]
    assert view.currentIndex().row() == 1
    undone = [model.index(r, 0).data(Qt.ItemDataRole.ForegroundRole) for r in range(4)]
    assert undone[:2] == [None, None] and None not in undone[2:]  # redo steps greyed


def test_a_refused_redo_is_reported(window, qtbot, resnet_path: Path) -> None:  # type: ignore[no-untyped-def]
    tab = open_model(window, resnet_path, qtbot)
    session = tab.session
    assert session.push(RenameNode(MAIN_SCOPE, key_named(session, "stem_conv"), "taken"))
    session.undo_stack.undo()
    session.doc.model.graph.node[1].name = "taken"  # (a plug-in broke the rules) redo clashes
    messages: list[str] = []
    session.editRejected.connect(messages.append)
    session.undo_stack.redo()
    assert session.doc.undo_stack.index == 0 and messages and "cannot redo" in messages[0]


# --- positions ------------------------------------------------------------------------------
class Moves:
    """A listener recording every POSITIONS event of a document."""

    def __init__(self, session: DocumentSession) -> None:
        self.keys: set[int] = set()
        self.events = 0
        self._off = session.doc.subscribe(self._on_event)

    def _on_event(self, event: DocumentEvent) -> None:
        if event.kind == ChangeKind.POSITIONS:
            self.events += 1
            self.keys |= event.node_keys

    def reset(self) -> None:
        self.keys, self.events = set(), 0

    def close(self) -> None:
        self._off()


def test_every_move_reaches_a_listener(qtbot, resnet_path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    session = DocumentSession.open(resnet_path)
    moves = Moves(session)
    view = CanvasView(session)  # the first layout: view state, no undo step, but notified
    qtbot.addWidget(view)
    view.resize(900, 1200)
    view.show()
    qtbot.waitExposed(view)
    table = session.doc.positions[MAIN_SCOPE]
    assert moves.events >= 1 and moves.keys == set(table)
    assert session.undo_stack.count() == 0 and not session.modified

    moves.reset()  # a drag in the view
    item = next(i for i in view.canvas.node_items.values() if i.view.name == "block0a_relu")
    start = view.mapFromScene(item.scenePos() + QPointF(item.width / 2, item.height / 2))
    QTest.mousePress(view.viewport(), LEFT, NO_MOD, start)
    for k in range(1, 9):
        QTest.mouseMove(view.viewport(), start + QPoint(8 * k, 4 * k))
    QTest.mouseRelease(view.viewport(), LEFT, NO_MOD, start + QPoint(64, 32))
    assert moves.keys == {item.key} and table[item.key] == (item.x(), item.y())

    moves.reset()  # Arrange nodes: one undo step, every moved node named
    before = dict(table)
    view.arrange_nodes()
    moved = {k for k in table if table[k] != before.get(k)}
    assert moved and moves.keys == moved and session.undo_stack.text(1) == "Arrange nodes"

    moves.reset()  # undo reaches listeners the same way
    session.undo_stack.undo()
    assert moves.keys == moved and dict(table) == before

    moves.close()
    save_positions(session.doc, resnet_path)  # a layout file, loaded by a new session
    loaded: list[DocumentEvent] = []
    from designer.core.io import open_document
    from designer.core.io.companion import load_positions

    doc = open_document(resnet_path)
    doc.subscribe(loaded.append)
    assert load_positions(doc, resnet_path) == len(table)
    assert [e.kind for e in loaded] == [ChangeKind.POSITIONS]
    assert loaded[0].node_keys == frozenset(doc.positions[MAIN_SCOPE])
    view.close()
    session.close()


def test_collapsing_modules_moves_through_the_same_path(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    tab = open_model(window, model(LLAMA), qtbot)
    moves = Moves(tab.session)
    collapse_to_depth(tab.view, 1)
    boxes = {k for k in tab.view.canvas.node_items if k < 0}
    assert boxes and boxes <= moves.keys  # the boxes' positions were announced
    assert set(tab.session.doc.positions[MAIN_SCOPE]) >= moves.keys
    moves.reset()
    expand_all(tab.view)
    assert moves.events >= 1  # what lies below a box moved down to make room
    assert tab.session.undo_stack.count() == 0 and not tab.session.modified
    moves.close()


def test_nothing_outside_the_core_writes_positions() -> None:
    """Positions change in edits (designer.core.edits) or Document.set_positions only; the
    scene's ``positions`` is a read-only Mapping, and no other module writes the table."""
    import re

    root = Path(__file__).resolve().parents[2] / "designer"
    writes = re.compile(
        r"\.positions(\[[^]\n]*\])*\s*(=[^=]|\.(update|clear|pop|setdefault|__setitem__)\()"
    )
    found = [
        f"{path.relative_to(root)}:{n}"
        for folder in ("ui", "activities", "commands")
        for path in sorted((root / folder).rglob("*.py"))
        if "engine" not in path.parts  # the engine explorer keeps its own positions table
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if writes.search(line)
    ]
    assert found == []
