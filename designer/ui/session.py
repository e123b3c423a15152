"""A document as the GUI sees it: the core Document, the Qt face of its one undo history,
its companion layout, and type-check results refreshed in the background after every change."""

from __future__ import annotations

import contextlib
import itertools
import weakref
from collections.abc import Callable
from pathlib import Path

import onnx
import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal

from designer.core.analysis import CheckResult, check_document
from designer.core.analysis.inference import IN_PROCESS
from designer.core.analysis.onnx_process import HELPER_NODES, shared_process
from designer.core.document import ChangeKind, Document, DocumentEvent
from designer.core.edits import Edit
from designer.core.errors import DesignerError
from designer.core.gcpause import gc_paused, thaw
from designer.core.io import open_document, save_document
from designer.core.io.companion import LayoutFileError, load_positions_noted, save_positions
from designer.core.scope import ScopeId
from designer.ui.history import History

CHECK_DELAY_MS = 150


def layout_not_saved(model: Path, exc: OSError) -> str:
    """What to tell when the model was saved and its layout file was not: the layout
    file's own name (not the temporary one the error may name) and what to do."""
    from designer.core.io.companion import companion_path

    layout = companion_path(model)
    if isinstance(exc, IsADirectoryError) or layout.is_dir():
        why = "a folder of that name is in the way; rename or remove it, then save again"
    else:
        why = f"{exc.strerror or exc}; free some space, fix the folder's permissions or Save As"
    return f"the model was saved, but its layout file {layout.name} was not: {why}"


class _CheckSignals(QObject):
    done = Signal(int, object)  # generation, CheckResult


class _CheckJob(QRunnable):
    """Checks a private copy of the model on a pool thread (the GUI keeps editing)."""

    def __init__(
        self,
        generation: int,
        model: onnx.ModelProto,
        keys: dict[ScopeId, list[int]],
        signals: _CheckSignals,
    ) -> None:
        super().__init__()
        self.generation = generation
        self.model = model
        self.keys = keys
        self.signals = signals

    def run(self) -> None:
        # No garbage collection on this thread: it could finalise GUI objects here.
        with gc_paused():
            doc = Document(self.model)
            doc.replace_model(self.model, self.keys)  # same node keys as the live document
            nodes = sum(len(keys) for keys in self.keys.values())
            calls = shared_process() if nodes >= HELPER_NODES else IN_PROCESS
            try:
                result: object = check_document(doc, calls=calls)
            except Exception as exc:  # a checker bug must not take the GUI down
                result = exc
            with contextlib.suppress(RuntimeError):  # the session (and signals) are gone
                self.signals.done.emit(self.generation, result)


def _weak(owner: QObject, method: str) -> Callable[..., None]:
    """A slot calling ``owner.method`` while ``owner`` is alive, and doing nothing after."""
    alive = weakref.ref(owner)

    def call(*args: object) -> None:
        target = alive()
        if target is not None and shiboken6.isValid(target):
            getattr(target, method)(*args)

    return call


class DocumentSession(QObject):
    """Everything the window needs of one open document.

    Changes go through :meth:`push`; listeners connect to ``changed`` (a DocumentEvent)
    instead of subscribing to the Document directly. ``undo_stack`` shows and drives the
    document's own history (``doc.undo_stack``); ``modified`` and ``title`` are the
    document's.
    """

    changed = Signal(object)  # DocumentEvent
    checked = Signal(object)  # CheckResult
    titleChanged = Signal(str)
    editRejected = Signal(str)  # message of an EditError
    warning = Signal(str)
    lockChanged = Signal()  # a working copy below got or lost unconfirmed changes

    _generations = itertools.count(1)

    def __init__(self, doc: Document, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.undo_stack = History(doc.undo_stack, self)
        self.check_result: CheckResult | None = None
        self.layout_warning: str | None = None
        #: Whether the layout file beside the model placed nodes when it opened: what the
        #: user arranged (and collapsed, or not) is shown as saved.
        self.layout_restored = False
        #: working copies editing a subgraph or function of this document (tabs)
        self.working_copies: list[DocumentSession] = []
        #: bumped on every event of the document, positions included (working copies
        #: compare it to know whether they are still in step); not the history's revision
        self.change_count = 0
        self._generation = 0
        # Signals reach the session through weak references: a check or timer may still
        # fire while a session nobody closed is being garbage-collected, and must then find
        # nobody instead of a slot on a half-deleted object.
        self._check_signals = _CheckSignals(self)  # deleted with the session, on this thread
        self._check_signals.done.connect(_weak(self, "_on_checked"))
        self._check_timer = QTimer(self)
        self._check_timer.setSingleShot(True)
        self._check_timer.setInterval(CHECK_DELAY_MS)
        self._check_timer.timeout.connect(_weak(self, "check_now"))
        self._unsubscribe = doc.subscribe(self._on_document_event)
        self._clean_slot = _weak(self, "_on_clean_changed")
        self.undo_stack.cleanChanged.connect(self._clean_slot)
        self._failed_slot = _weak(self, "_on_history_failed")
        self.closed = False  # close() ran: no more checks
        self.undo_stack.failed.connect(self._failed_slot)

    # --- opening and saving -----------------------------------------------------------------
    @classmethod
    def open(
        cls, path: Path | str, parent: QObject | None = None, base_dir: Path | None = None
    ) -> DocumentSession:
        """Open a model and its companion layout (a bad layout file only warns)."""
        with gc_paused(freeze=True):  # a big model's objects: frozen, not traversed again
            doc = open_document(path, base_dir)
        session = cls(doc, parent)
        assert doc.path is not None
        try:
            restored, note = load_positions_noted(doc, doc.path)
            session.layout_restored = restored > 0
            session.layout_warning = note
        except LayoutFileError as exc:
            doc.clear_positions()
            session.layout_warning = f"{exc}; the nodes were arranged anew"
        return session

    def save(self, path: Path | str | None = None) -> None:
        """Save atomically (and the layout beside it); raises DesignerError on failure.
        Marks the document's history clean (``save_document`` does)."""
        save_document(self.doc, path)
        assert self.doc.path is not None
        try:
            save_positions(self.doc, self.doc.path)
        except OSError as exc:
            self.warning.emit(layout_not_saved(self.doc.path, exc))
        self.titleChanged.emit(self.title)  # the name may have changed too

    # --- state ---------------------------------------------------------------------------
    @property
    def modified(self) -> bool:
        """The document's own answer: its revision differs from the saved one."""
        return self.doc.modified

    @property
    def title(self) -> str:
        return self.doc.title

    @property
    def location(self) -> str:
        """Where the document lives, for tooltips."""
        return str(self.doc.path or "not saved yet")

    def _on_clean_changed(self, _clean: bool) -> None:
        self.titleChanged.emit(self.title)

    def _on_history_failed(self, message: str) -> None:
        self.editRejected.emit(message)

    @property
    def has_unconfirmed(self) -> bool:
        """True for a working copy with edits not yet written into its parent (a plain
        document has no parent to confirm into)."""
        return False

    def blocking_session(self) -> DocumentSession | None:
        """The working copy below this document whose unconfirmed edits make it read-only
        (the deepest one), or None when it may be edited."""
        for child in self.working_copies:
            deeper = child.blocking_session()
            if deeper is not None:
                return deeper
            if child.has_unconfirmed:
                return child
        return None

    @property
    def locked(self) -> bool:
        return self.blocking_session() is not None

    # --- editing -------------------------------------------------------------------------
    def push(self, edit: Edit) -> bool:
        """Apply ``edit`` and put it on the undo stack; False (and editRejected) if refused,
        e.g. while a subgraph tab of this document has unconfirmed edits."""
        blocker = self.blocking_session()
        if blocker is not None:
            self.editRejected.emit(
                f"{self.title.rstrip('*')} is read-only while {blocker.title.rstrip('*')} has "
                "unconfirmed edits: confirm or discard them in that tab first"
            )
            return False
        return self.push_unlocked(edit)

    def push_unlocked(self, edit: Edit) -> bool:
        """:meth:`push` without the read-only check (a working copy confirming its edits)."""
        try:
            self.doc.undo_stack.push(edit)
        except DesignerError as exc:
            self.editRejected.emit(str(exc))
            return False
        return True

    def root(self) -> DocumentSession:
        """The session of the model itself (a subgraph/function tab's working copy answers
        its model tab's session)."""
        return self

    def try_push(self, edit: Edit) -> str | None:
        """:meth:`push`, returning why it was refused (None when applied) so that an editor
        can show the reason beside its field."""
        reasons: list[str] = []
        slot = reasons.append
        self.editRejected.connect(slot)
        try:
            applied = self.push(edit)
        finally:
            self.editRejected.disconnect(slot)
        if applied:
            return None
        return reasons[-1] if reasons else "the change was refused"

    def _on_document_event(self, event: DocumentEvent) -> None:
        if event.kind != ChangeKind.SAVED:
            self.change_count += 1
        self.changed.emit(event)
        if event.kind not in (ChangeKind.POSITIONS, ChangeKind.SAVED):
            self.schedule_check()

    # --- type checking -------------------------------------------------------------------
    def schedule_check(self) -> None:
        """Check again shortly (edits in quick succession cause one check)."""
        self._check_timer.start()

    def check_now(self) -> None:
        self._check_timer.stop()
        self._generation = next(self._generations)
        snapshot = onnx.ModelProto()
        snapshot.CopyFrom(self.doc.model)
        job = _CheckJob(self._generation, snapshot, self.doc.all_keys(), self._check_signals)
        QThreadPool.globalInstance().start(job)

    def _on_checked(self, generation: int, result: object) -> None:
        if generation != self._generation:
            return  # a newer check is on its way
        if isinstance(result, Exception):
            self.warning.emit(f"the type checker failed: {type(result).__name__}: {result}")
            return
        assert isinstance(result, CheckResult)
        self.check_result = result
        self.checked.emit(result)

    def close(self) -> None:
        """Stop background work and detach from the document (the tab is going away)."""
        self.closed = True
        self._check_timer.stop()
        self._generation = -1
        self._unsubscribe()
        self.undo_stack.cleanChanged.disconnect(self._clean_slot)
        self.undo_stack.failed.disconnect(self._failed_slot)
        self.undo_stack.close()
        thaw()  # what the document's objects left in cycles can be collected again
