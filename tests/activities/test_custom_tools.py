"""Custom tools without Qt: persistence, argument expansion, real processes, cancel."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import tempfile
import threading
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from designer.activities.custom_tools import (
    CustomTool,
    ToolError,
    ToolProcess,
    ToolResult,
    check_application,
    check_output,
    expand_arguments,
    find_tool,
    load_tools,
    prepare,
    run_tool,
    save_tools,
    shell_warning,
    tools_path,
    validate_tool,
)

PY = sys.executable


@pytest.fixture(autouse=True)
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config"
    monkeypatch.setenv("ONNX_DESIGNER_CONFIG_DIR", str(folder))
    temp = tmp_path / "temp"  # temporary copies and outputs stay inside the test
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return folder


def tiny_model(path: Path) -> Path:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    onnx.save(helper.make_model(graph), str(path))
    return path


def alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie nobody has reaped yet counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def test_tools_round_trip_atomically(config: Path) -> None:
    assert load_tools() == []
    tools = [
        CustomTool("Histogram", PY, "op_histogram.py $Model"),
        CustomTool("Optimize", PY, "opt.py $Model $Output", prompt_output=True, open_output=True),
    ]
    save_tools(tools)
    assert tools_path() == config / "custom_tools.json"
    assert load_tools() == tools
    assert sorted(p.name for p in config.iterdir()) == ["custom_tools.json"]  # no temp files
    assert json.loads(tools_path().read_text())["tools"][1]["open_output"] is True
    assert find_tool(load_tools(), "optimize") == tools[1]
    with pytest.raises(ToolError, match=r"no custom tool named 'Nope' \(known: Histogram"):
        find_tool(tools, "Nope")
    with pytest.raises(ToolError, match="unique"):
        save_tools([*tools, CustomTool("HISTOGRAM", PY)])
    assert load_tools() == tools  # the refused save changed nothing


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{oops", "not valid JSON"),
        ('{"tools": 3}', 'expected an object with a "tools" list'),
        ('{"tools": [{"name": 1, "application": "x"}]}', "must be strings"),
        ('{"tools": ["x"]}', "must be a JSON object"),
    ],
)
def test_broken_tool_file(config: Path, text: str, message: str) -> None:
    config.mkdir()
    (config / "custom_tools.json").write_text(text)
    with pytest.raises(ToolError, match=message):
        load_tools()


def test_expand_arguments_quotes_and_placeholders(tmp_path: Path) -> None:
    model = tmp_path / "a b" / 'it\'s "m".onnx'
    out = tmp_path / "out put.onnx"
    argv = expand_arguments(
        "-c 'print(1)' $Model --in=$Model ${Output}x \"two words\" $Modelx",
        model,
        out,
    )
    assert argv == [
        "-c",
        "print(1)",
        str(model),
        f"--in={model}",
        f"{out}x",
        "two words",
        "$Modelx",
    ]
    assert expand_arguments("", model, None) == []
    with pytest.raises(ToolError, match="check the quotes"):
        expand_arguments("'open $Model", model, out)
    with pytest.raises(ToolError, match="no output path"):
        expand_arguments("$Output", model, None)


def test_prepare_makes_a_fresh_temporary_output(tmp_path: Path) -> None:
    model = tiny_model(tmp_path / "m.onnx")
    writes = CustomTool("My Tool!", PY, "w.py $Model $Output")
    invocation = prepare(writes, model)
    assert invocation.temporary_output and invocation.output is not None
    assert invocation.output.parent.is_dir() and not invocation.output.exists()
    assert invocation.output.name == "m-My_Tool.onnx"
    assert invocation.argv == [PY, "w.py", str(model), str(invocation.output)]
    invocation.discard_temporary_output()
    assert not invocation.output.parent.exists()
    assert prepare(CustomTool("R", PY, "r.py $Model"), model, tmp_path / "x").output is None
    chosen = prepare(writes, model, tmp_path / "chosen.onnx")
    assert chosen.output == tmp_path / "chosen.onnx" and not chosen.temporary_output


def test_validate_and_check_application(tmp_path: Path) -> None:
    plain = tmp_path / "notes.txt"
    plain.write_text("x")
    assert check_application(PY) is None
    assert check_application("python3") is None or "not found" in str(check_application("python3"))
    assert check_application(str(tmp_path / "none")) == f"application {tmp_path / 'none'} not found"
    assert "is a folder" in str(check_application(str(tmp_path)))
    assert "not executable" in str(check_application(str(plain)))
    validate_tool(CustomTool("A", PY, "$Model"))
    with pytest.raises(ToolError, match="needs a name"):
        validate_tool(CustomTool("  ", PY))
    with pytest.raises(ToolError, match="already exists"):
        validate_tool(CustomTool("a", PY), [CustomTool("A", PY)])
    with pytest.raises(ToolError, match="check the quotes"):
        validate_tool(CustomTool("B", PY, '"half'))


def test_run_streams_lines_and_handles_odd_paths(tmp_path: Path) -> None:
    folder = tmp_path / "sp ace" / "q'uo\"te"
    folder.mkdir(parents=True)
    model = tiny_model(folder / "my model.onnx")
    code = "import sys; print(sys.argv[1]); print('warn', file=sys.stderr); print(sys.argv[2])"
    tool = CustomTool("Echo", PY, f"-c {shlex.quote(code)} $Model $Output")
    invocation = prepare(tool, model, folder / "o u t.onnx")
    out: list[str] = []
    err: list[str] = []
    result = run_tool(invocation, out.append, err.append)
    assert result.ok and result.returncode == 0
    assert out == [str(model), str(folder / "o u t.onnx")]
    assert err == ["warn"]
    assert result.stdout.splitlines() == out


def test_failing_and_missing_tools(tmp_path: Path) -> None:
    code = "import sys; sys.stderr.write('broken model\\n'); sys.exit(4)"
    failed = run_tool(prepare(CustomTool("F", PY, f"-c {shlex.quote(code)}"), tmp_path / "m"))
    assert failed.returncode == 4 and not failed.ok and failed.stderr == "broken model\n"
    missing = tmp_path / "gone" / "tool"
    result = run_tool(prepare(CustomTool("G", str(missing)), tmp_path / "m"))
    assert result.returncode is None and result.error == f"application {missing} not found"
    with pytest.raises(ToolError, match="not found"):
        ToolProcess([str(missing)]).start()


def test_cancel_kills_the_process_group_after_the_grace_period(tmp_path: Path) -> None:
    """The leader ignores SIGTERM and has a child: both are gone after cancel."""
    code = (
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    lines: list[str] = []
    got_pid = threading.Event()
    ended: list[ToolResult] = []

    def on_stdout(line: str) -> None:
        lines.append(line)
        got_pid.set()

    process = ToolProcess([PY, "-c", code], on_stdout=on_stdout, on_exit=ended.append, grace=0.3)
    process.start()
    assert got_pid.wait(20)
    assert process.running and process.pid is not None
    leader, child = process.pid, int(lines[0])
    process.cancel()
    result = process.wait(10)
    assert result is not None and result.cancelled and not result.ok
    assert result.returncode == -signal.SIGKILL  # it ignored SIGTERM
    assert ended == [result]
    for _ in range(100):
        if not alive(leader) and not alive(child):
            break
        threading.Event().wait(0.05)
    assert not alive(leader) and not alive(child)
    process.cancel()  # a second cancel after the end is harmless


def test_check_output(tmp_path: Path) -> None:
    model = tiny_model(tmp_path / "m.onnx")
    tool = CustomTool("W", PY, "$Model $Output")
    invocation = prepare(tool, model, tmp_path / "out.onnx")
    with pytest.raises(ToolError, match="wrote no model to"):
        check_output(invocation)
    (tmp_path / "out.onnx").write_bytes(b"junk")
    with pytest.raises(ToolError, match="not a valid model"):
        check_output(invocation)
    stale = prepare(tool, model, tmp_path / "m.onnx")  # the output existed before the run
    with pytest.raises(ToolError, match="did not write a new model"):
        check_output(stale)
    tiny_model(tmp_path / "out.onnx")
    assert check_output(invocation) == tmp_path / "out.onnx"
    with pytest.raises(ToolError, match="does not use"):
        check_output(prepare(CustomTool("R", PY, "$Model"), model))


@pytest.mark.parametrize(
    "arguments",
    [
        '-c "cp $Model $Output"',
        '-c \'cp "$Model" "$Output"\'',
        "-ec 'cp $Model ${Output}'",
    ],
)
def test_shell_command_strings_get_quoted_paths(
    tmp_path: Path, arguments: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model named like shell code is a file name, never code, inside ``sh -c``."""
    folder = tmp_path / "run"
    folder.mkdir()
    monkeypatch.chdir(folder)  # where injected code would leave its files
    model = tiny_model(folder / "$(touch pwned).onnx")
    other = tiny_model(folder / "`touch pwned2`;x'y\".onnx")
    tool = CustomTool("Copy", "/bin/sh", arguments)
    assert shell_warning(tool) is not None and "quoted" in (shell_warning(tool) or "")
    for source in (model, other):
        out = folder / f"out {source.stem}.onnx"
        invocation = prepare(tool, source, out)
        result = run_tool(invocation)
        assert result.ok, result.stderr
        assert out.read_bytes() == source.read_bytes()
    assert [p.name for p in folder.iterdir() if not p.name.endswith(".onnx")] == []


def test_no_shell_warning_outside_command_strings() -> None:
    assert shell_warning(CustomTool("P", "/usr/bin/python3", "-c 'x' $Model")) is None
    assert shell_warning(CustomTool("S", "/bin/sh", "script.sh $Model")) is None
    assert shell_warning(CustomTool("E", "/bin/bash", "-c 'echo hi' $Model")) is None
