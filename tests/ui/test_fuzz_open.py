"""The GUI's open path with malformed files from the fuzz suite: one message per bad file,
no tab for it, and a valid but deeply nested model opens (issue 11, points 6 and 8)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from helpers.gui import open_model
from pytestqt.qtbot import QtBot

from designer.ui.main_window import MainWindow

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
import fuzz_cases


def _bad_cases(outside: Path) -> list[fuzz_cases.Case]:
    by_name = {b.name: b for b in fuzz_cases.bases(real=False)}
    mobilenet, external = by_name["mobilenet"], by_name["external"]
    out = []
    for mutate in (fuzz_cases.bad_text, fuzz_cases.data_length):
        result = mutate(fuzz_cases._copy(mobilenet.model), random.Random(1))
        assert result is not None
        out.append(mobilenet.case(mutate.__name__, result))
    out.append(
        next(c for c in fuzz_cases.external_cases(external, outside) if "symlink-file" in c.name)
    )
    return out


def test_bad_files_give_one_message_each(window: MainWindow, tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "secret.bin"
    outside.parent.mkdir()
    outside.write_bytes(b"SECRET" * 8)
    paths = [case.write(tmp_path / f"case{i}") for i, case in enumerate(_bad_cases(outside))]
    before = len(window.document_tabs())
    window.open_files(paths)
    errors: list[str] = window.errors  # type: ignore[attr-defined]
    assert len(errors) == 3, errors
    for path, message in zip(paths, errors, strict=True):
        assert str(path) in message and "\n" not in message
    assert len(window.document_tabs()) == before


def test_deeply_nested_model_opens(window: MainWindow, tmp_path: Path, qtbot: QtBot) -> None:
    path = tmp_path / "deep.onnx"
    path.write_bytes(fuzz_cases._nested_if(34).SerializeToString())
    tab = open_model(window, path, qtbot)
    assert not window.errors  # type: ignore[attr-defined]
    result = tab.session.check_result
    assert result is not None and not result.has_errors
