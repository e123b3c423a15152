"""packaging/entry.py, the bundle's entry script: the ``python`` forms and the command line."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ENTRY = Path(__file__).resolve().parents[2] / "packaging" / "entry.py"


@pytest.fixture
def entry(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.setattr(sys, "argv", list(sys.argv))  # the forms rewrite sys.argv
    spec = importlib.util.spec_from_file_location("bundle_entry", ENTRY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dash_c_runs_code_with_its_arguments(
    entry: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert entry._interpreter(["-c", "import sys; print(sys.argv)", "a", "b"]) == 0
    assert capsys.readouterr().out == "['-c', 'a', 'b']\n"
    assert entry._interpreter(["-c", "raise SystemExit(4)"]) == 4
    assert entry._interpreter(["-c", "raise SystemExit('bad input')"]) == 1
    assert capsys.readouterr().err == "bad input\n"


def test_a_script_runs_as_main_and_keeps_its_exit_code(
    entry: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "tool.py"
    script.write_text("import sys\nif __name__ == '__main__':\n    print(sys.argv[1:])\n")
    assert entry._interpreter([str(script), "x y"]) == 0
    assert capsys.readouterr().out == "['x y']\n"
    script.write_text("import sys\nsys.exit(3)\n")
    assert entry._interpreter([str(script)]) == 3


def test_dash_m_runs_a_module(entry: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert entry._interpreter(["-m", "json.tool", "--help"]) == 0
    assert "json.tool" in capsys.readouterr().out


def test_an_uncaught_error_is_a_traceback_and_exit_1_like_python(
    entry: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert entry._interpreter(["-c", "1/0"]) == 1
    assert "ZeroDivisionError" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv", [[], ["info", "m.onnx"], ["m.onnx"], ["--help"], ["-v", "check", "m.onnx"], ["-c"]]
)
def test_everything_else_is_the_command_line(entry: ModuleType, argv: list[str]) -> None:
    assert entry._interpreter(argv) is None
