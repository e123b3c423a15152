"""Fuzzed and mutated models through every command and the GUI's open path.

Each (case, command) pair must end in exit code 1 with exactly one stderr line naming the
problem, or in a correct result: exit 0 and, for commands that write a model, an output
that passes the type checker (resave: as valid as its input). Never an unhandled exception
("internal error"), never a usage error, never an invalid output with exit 0.

A seeded sample of about 150 pairs runs by default; ``ONNX_DESIGNER_FUZZ=full`` runs every
pair (thousands; ``ONNX_DESIGNER_FUZZ_SEED`` picks another seed).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from fuzz_cases import Case, cases

from designer.cli import main
from designer.core.analysis import check_document
from designer.core.errors import ModelLoadError
from designer.core.io import open_document
from designer.core.scope import MAIN_SCOPE
from designer.core.summary import summarize
from designer.core.viewgraph import build_view_graph

FULL = os.environ.get("ONNX_DESIGNER_FUZZ", "") == "full"
SEED = int(os.environ.get("ONNX_DESIGNER_FUZZ_SEED", "20261201"))
SAMPLE = 150
ROOT = Path(__file__).resolve().parents[2]

#: A file outside every case's folder: links to it must never be read.
OUTSIDE = Path(tempfile.gettempdir()) / "onnx-designer-fuzz-outside" / "secret.bin"
OUTSIDE.parent.mkdir(parents=True, exist_ok=True)
OUTSIDE.write_bytes(b"SECRET" * 64)

COMMANDS = ("check", "info", "resave", "export-image", "fp16", "sanitize", "cast", "extract")
WRITERS = {"resave", "fp16", "sanitize", "cast", "extract"}

CASES = cases(SEED, 8 if FULL else 1, OUTSIDE, real=True)


def _argv(command: str, case: Case, model: Path, out: Path) -> list[str] | None:
    if command in ("check", "info"):
        return [command, str(model)]
    if command == "resave":
        return [command, str(model), str(out)]
    if command == "export-image":
        return [command, str(model), str(out.with_suffix(".svg"))]
    if command == "fp16":
        return [command, str(model), str(out), "--no-check"]
    if command == "sanitize":
        return [command, str(model), str(out)]
    if command == "cast":
        if case.initializer is None:
            return None
        return [command, str(model), str(out), "--to", "float16", "--initializer", case.initializer]
    if command == "extract":
        if case.subgraph is not None:
            node, attr = case.subgraph
            return [command, str(model), str(out), "--node", node, "--attribute", attr]
        if case.function is not None:
            return [command, str(model), str(out), "--function", case.function]
        return None
    raise AssertionError(command)


def _pairs() -> list[tuple[int, str]]:
    pairs = [(i, c) for i in range(len(CASES)) for c in COMMANDS]
    if FULL:
        return pairs
    rng = random.Random(SEED)
    # Every case through check (the cheapest; squeezenet's are large), then a random sample
    # of the other commands.
    checks = [(i, "check") for i in range(len(CASES)) if not CASES[i].name.startswith("squeezenet")]
    rest = [p for p in pairs if p[1] != "check"]
    return checks + rng.sample(rest, min(SAMPLE - len(checks) // 2, len(rest)))


def _verdict(path: Path) -> bool | None:
    """Whether the model at ``path`` type-checks (None: it does not open)."""
    try:
        doc = open_document(path)
    except ModelLoadError:
        return None
    return not check_document(doc).has_errors


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def _assert_outcome(
    command: str, case: Case, model: Path, out: Path, code: int, stdout: str, stderr: str
) -> None:
    label = f"{case.name} / {command}"
    assert "internal error" not in stderr, f"{label}: {stderr}"
    assert "Traceback" not in stderr + stdout, f"{label}: {stderr}"
    assert code in (0, 1), f"{label}: exit {code}: {stderr}"
    lines = [line for line in stderr.splitlines() if line.strip()]
    if code == 1:
        if command == "check" and not lines:
            assert " 0 error(s)" not in stdout, f"{label}: exit 1 without errors"
        else:
            assert len(lines) == 1, f"{label}: {stderr!r}"
            assert lines[0].startswith("onnx-designer: error: "), f"{label}: {stderr!r}"
            assert len(lines[0]) > len("onnx-designer: error: ") + 10, label
        if command in WRITERS and "numerical check failed" not in stderr:
            assert not out.exists(), f"{label}: failed but wrote {out}"
        return
    if command not in WRITERS:
        return
    assert out.is_file(), f"{label}: exit 0 but no {out}"
    if command == "resave":
        assert _verdict(out) == _verdict(model), f"{label}: resave changed the verdict"
    else:
        assert _verdict(out) is True, f"{label}: exit 0 with an invalid output"


@pytest.mark.parametrize(
    ("index", "command"),
    _pairs(),
    ids=lambda v: str(v) if not isinstance(v, int) else CASES[v].name,
)
def test_command(
    index: int, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = CASES[index]
    model = case.write(tmp_path / "in")
    out = tmp_path / "out" / "result.onnx"
    out.parent.mkdir()
    argv = _argv(command, case, model, out)
    if argv is None:
        pytest.skip(f"{case.name}: nothing to {command}")
    code, stdout, stderr = _run(argv, capsys)
    _assert_outcome(command, case, model, out, code, stdout, stderr)
    for produced in out.parent.rglob("*"):  # a linked file outside is never copied
        if produced.is_file() and not produced.is_symlink():
            assert b"SECRETSECRET" not in produced.read_bytes(), f"{case.name}: {produced}"


def _gui_indices() -> list[int]:
    if FULL:
        return list(range(len(CASES)))
    rng = random.Random(SEED + 1)
    return sorted(rng.sample(range(len(CASES)), min(60, len(CASES))))


@pytest.mark.parametrize("index", _gui_indices(), ids=lambda i: CASES[i].name)
def test_open_path(index: int, tmp_path: Path) -> None:
    """What the GUI does on open: open_document, then type check, summary and view graph
    of the main scope; a bad file is one ModelLoadError line naming it."""
    case = CASES[index]
    model = case.write(tmp_path)
    try:
        doc = open_document(model)
    except ModelLoadError as exc:
        text = str(exc)
        assert "\n" not in text and str(model) in text, text
        return
    check_document(doc)
    summarize(doc)
    build_view_graph(doc, MAIN_SCOPE)


@pytest.mark.parametrize("kind", ["truncate0", "bad-text0", "ext-symlink-file"])
def test_subprocess(kind: str, tmp_path: Path) -> None:
    """A few cases through a real process: the exit code and the one stderr line."""
    case = next(c for c in CASES if c.name.endswith(":" + kind) or f":{kind}@" in c.name)
    model = case.write(tmp_path)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("ONNX_DESIGNER_DEBUG", None)
    for command in ("check", "sanitize"):
        argv = [sys.executable, "-m", "designer", command, str(model)]
        if command == "sanitize":
            argv.append(str(tmp_path / "out.onnx"))
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 1, proc.stderr
        assert len(lines) == 1 and lines[0].startswith("onnx-designer: error: "), proc.stderr
        assert not (tmp_path / "out.onnx").exists()
