"""Show Changes: the Compare view of a model before and after a model-wide step.

``before`` is the model object as it was (a global modification replaces the document's
model as one undo step, so the old object is kept by that step anyway: no copy is made to
remember it). When the view opens, the diff is computed at once on the GUI thread (the
live model could otherwise change under it; about a second for 5k nodes), and the canvases
get structural copies without large weights (:func:`designer.core.diff.skeleton.skeleton`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import onnx
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from designer.core.diff import diff_models
from designer.core.diff.skeleton import skeleton
from designer.core.errors import DesignerError

SKELETON_NOTE = (
    "initializers over 4 KiB are compared by name, type and shape only (this step does not "
    "change weight values)"
)

if TYPE_CHECKING:
    from designer.ui.diff.tab import DiffTab
    from designer.ui.main_window import MainWindow


@dataclass(frozen=True)
class Snapshot:
    """One side of a Show Changes: a live model object (copied when shown), a private copy
    (``private``: a structural copy taken before an in-place step) or a file."""

    label: str
    model: onnx.ModelProto | None = None
    base_dir: Path | None = None
    path: Path | None = None
    private: bool = False

    def load(self) -> tuple[onnx.ModelProto, Path | None, bool]:
        """(model, external-data folder, private): a file is read (a private model)."""
        if self.path is not None:
            from designer.core.io import read_model

            return read_model(self.path), self.path.parent, True
        assert self.model is not None
        return self.model, self.base_dir, self.private


def show_changes(
    window: MainWindow, what: str, before: Snapshot, after: Snapshot
) -> DiffTab | None:
    """Open the Compare view of ``before`` → ``after``; an unreadable file: one error line."""
    from designer.ui.diff import open_diff_tab

    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        a, a_dir, a_private = before.load()
        b, b_dir, b_private = after.load()
        structural = before.private or after.private
        if structural:  # one side is a structural copy: compare two of them
            a = a if a_private else skeleton(a)
            b = b if b_private else skeleton(b)
            a_private = b_private = True
        diff = diff_models(a, b, a_dir, b_dir, a_label=before.label, b_label=after.label)
        if structural:
            diff = replace(diff, warnings=(*diff.warnings, SKELETON_NOTE))
        shown_a = a if a_private else skeleton(a)
        shown_b = b if b_private else skeleton(b)
    except DesignerError as exc:
        window.show_error("Cannot show the changes", str(exc))
        return None
    finally:
        QApplication.restoreOverrideCursor()
    return open_diff_tab(
        window,
        diff,
        (before.label, shown_a, a_dir),
        (after.label, shown_b, b_dir),
        f"Changes: {what}",
    )
