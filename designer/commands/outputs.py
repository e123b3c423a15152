"""What the commands that write a file the user names share: refusing the input as the
output (the check fp16, sanitize, cast, compose and extract make), checking the output's
folder before slow work, and writing atomically, so a failed write leaves the old file
complete (:func:`designer.core.io.atomic.write_atomic`)."""

from __future__ import annotations

import os
from pathlib import Path

from designer.core.errors import DesignerError
from designer.core.io.atomic import same_file


def refuse_input(target: Path, *inputs: Path, error: type[DesignerError] = DesignerError) -> None:
    """Raise ``error`` when ``target`` is one of ``inputs`` (see :func:`same_file`)."""
    if any(same_file(source, target) for source in inputs):
        raise error(f"{target}: the output path is the input; choose another file")


def check_output(target: Path, *inputs: Path) -> None:
    """Refuse, before any slow work, an output that is an input, a folder, or lies in a
    folder that is missing or cannot be written (DesignerError, one line)."""
    refuse_input(target, *inputs)
    if target.is_dir():
        raise DesignerError(f"{target}: is a folder; choose a file name")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        what = "is a file, not a folder" if folder.exists() else "does not exist"
        raise DesignerError(f"{target}: {folder} {what}; choose another folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise DesignerError(f"{target}: cannot write into {folder} (read-only or no permission)")


def refuse_model_output(target: Path, model: Path) -> None:
    """Refuse (DesignerError, one line) an output that is one of ``model``'s files: the
    model, its external data files, its layout file (:mod:`designer.core.io.model_files`).
    A target that does not exist yet is none of them; for one that does, the model is read
    (its external data stays on disk). A model that cannot be read is left to the command
    to report."""
    if not target.exists():
        return
    from designer.core.io import read_model
    from designer.core.io.model_files import refuse_model_files

    try:
        proto = read_model(model)
    except DesignerError:
        return
    refuse_model_files(target, proto, model)
