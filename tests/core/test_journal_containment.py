"""A stale save journal removes the leftovers it lists inside its own folder, and nothing
outside it: not through a linked sub-folder (a folder unpacked from elsewhere can carry
both), not through a link that leads back inside."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from designer.core.io.atomic import clean_stale


def _stale_journal(folder: Path, files: list[str]) -> Path:
    journal = folder / ".m.onnx.~od1@deadbeef~abc.journal.tmp"  # another host's, a day old
    journal.write_text(json.dumps({"model": "m.onnx", "files": files, "temps": []}))
    old = time.time() - 3 * 24 * 3600
    os.utime(journal, (old, old))
    return journal


def _nothing_in_use(folder: Path, model: str, files: list[str]) -> set[str]:
    return set()


def test_a_journal_removes_its_leftovers_but_nothing_through_links(tmp_path: Path) -> None:
    folder, outside = tmp_path / "models", tmp_path / "elsewhere"
    folder.mkdir()
    outside.mkdir()
    (folder / "m.onnx").write_bytes(b"model")
    (folder / "left.bin").write_bytes(b"leftover of a killed save")
    (folder / "sub").mkdir()
    (folder / "sub" / "deep.bin").write_bytes(b"leftover too")
    (outside / "victim.txt").write_text("precious")
    (folder / "link").symlink_to(outside)
    (folder / "back").symlink_to(folder / "sub")  # leads back inside, still a link
    journal = _stale_journal(
        folder, ["left.bin", "sub/deep.bin", "link/victim.txt", "back/deep.bin", "../x"]
    )
    removed = clean_stale(folder, _nothing_in_use)
    assert (outside / "victim.txt").read_text() == "precious"
    assert not (folder / "left.bin").exists() and not (folder / "sub" / "deep.bin").exists()
    assert set(removed) == {folder / "left.bin", folder / "sub" / "deep.bin", journal}
    assert (folder / "link").is_symlink() and (folder / "back").is_symlink()


def test_a_linked_model_folder_is_its_own_root(tmp_path: Path) -> None:
    """The folder itself reached through a link: its own files are still inside it."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "m.onnx").write_bytes(b"model")
    (real / "left.bin").write_bytes(b"leftover")
    (tmp_path / "alias").symlink_to(real)
    _stale_journal(real, ["left.bin"])
    clean_stale(tmp_path / "alias", _nothing_in_use)
    assert not (real / "left.bin").exists()
