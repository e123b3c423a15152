"""Custom user tools (U-1, U-2): any program run on the current model, Qt-free.

A :class:`CustomTool` names an application and a one-line argument string quoted like a shell
line, where ``$Model`` stands for the absolute path of the model and ``$Output`` for the path
the tool should write a model to. Tools persist in ``custom_tools.json`` in the per-user config
folder (:func:`designer.activities.paths.config_dir`), written atomically, so the GUI and the
``onnx-designer tool`` command share them.

:class:`ToolProcess` runs one invocation in its own process group with live line callbacks for
stdout and stderr; :meth:`ToolProcess.cancel` terminates the whole group and kills what is left
after a grace period, without blocking the caller.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from designer.activities.paths import config_dir
from designer.activities.targets.streams import LineSplitter
from designer.core.errors import DesignerError

logger = logging.getLogger(__name__)

TOOLS_FILE = "custom_tools.json"
KILL_GRACE_S = 2.0
_PLACEHOLDER = re.compile(r"\$(?:\{(Model|Output)\}|(Model|Output)(?![A-Za-z0-9_]))")
# A placeholder in a shell's command string (``sh -c "… $Model"``), with the quotes a user
# may have put around it: replaced by the shell-quoted path as a whole.
_QUOTED_PLACEHOLDER = re.compile(
    r"([\"']?)\$(?:\{(Model|Output)\}|(Model|Output)(?![A-Za-z0-9_]))\1"
)
_SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "fish"}

LineCallback = Callable[[str], None]


class ToolError(DesignerError):
    """A tool is badly defined, cannot start, or did not produce what it should have."""


@dataclass(frozen=True)
class CustomTool:
    """One user tool. ``arguments`` is a shell-quoted line with ``$Model``/``$Output``."""

    name: str
    application: str
    arguments: str = ""
    prompt_output: bool = False
    open_output: bool = False

    @property
    def uses_output(self) -> bool:
        """Whether ``$Output`` (or ``${Output}``) appears in the arguments."""
        return any(m.group(1) == "Output" or m.group(2) == "Output" for m in _matches(self))

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> CustomTool:
        if not isinstance(data, dict):
            raise ToolError("each tool must be a JSON object")
        name, app, args = data.get("name"), data.get("application"), data.get("arguments", "")
        if not isinstance(name, str) or not isinstance(app, str) or not isinstance(args, str):
            raise ToolError(f"tool {name!r}: name, application and arguments must be strings")
        return cls(
            name,
            app,
            args,
            bool(data.get("prompt_output", False)),
            bool(data.get("open_output", False)),
        )


def _matches(tool: CustomTool) -> list[re.Match[str]]:
    return list(_PLACEHOLDER.finditer(tool.arguments))


# --- persistence ----------------------------------------------------------------------------
def tools_path() -> Path:
    """``<config>/custom_tools.json`` (``ONNX_DESIGNER_CONFIG_DIR`` moves it)."""
    return config_dir() / TOOLS_FILE


def load_tools(path: Path | None = None) -> list[CustomTool]:
    """The saved tools in their saved order; none when the file does not exist yet.
    Raises ToolError naming the file when it is unreadable or not a valid tool list."""
    path = path or tools_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ToolError(f"{path}: cannot read the tool list ({exc.strerror or exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolError(f"{path}: not valid JSON ({exc}); fix or delete the file") from None
    items = data.get("tools") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ToolError(f'{path}: expected an object with a "tools" list; fix or delete the file')
    try:
        return [CustomTool.from_json(item) for item in items]
    except ToolError as exc:
        raise ToolError(f"{path}: {exc}") from None


def save_tools(tools: Sequence[CustomTool], path: Path | None = None) -> None:
    """Write the tool list atomically (temporary file + rename); names must be unique."""
    names = [t.name.casefold() for t in tools]
    if len(set(names)) != len(names):
        raise ToolError("two tools have the same name; tool names must be unique")
    path = path or tools_path()
    payload = json.dumps({"version": 1, "tools": [t.to_json() for t in tools]}, indent=2)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise ToolError(f"cannot save the tool list in {path.parent}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(payload + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise ToolError(f"cannot save the tool list to {path}: {exc.strerror or exc}") from None


def plugin_tools() -> list[CustomTool]:
    """Tools of the ``onnx_designer.tools`` entry-point group, by plug-in name: each names a
    CustomTool or a callable returning one or a list of them. Broken ones are reported (an
    ERROR log record) and left out."""
    from designer import plugins

    found: list[CustomTool] = []
    for plugin in plugins.load(plugins.TOOLS):
        made = plugins.invoke(plugin, "create", _plugin_tools, plugin.obj)
        if made is not plugins.FAILED:
            found.extend(made)
    return found


def _plugin_tools(obj: object) -> list[CustomTool]:
    made = obj() if callable(obj) and not isinstance(obj, CustomTool) else obj
    items = made if isinstance(made, (list, tuple)) else [made]
    for item in items:
        if not isinstance(item, CustomTool):
            from designer.plugins import PluginError

            raise PluginError(f"gave {type(item).__name__}, not a CustomTool")
        validate_tool(item)
    return list(items)


def all_tools(path: Path | None = None) -> list[CustomTool]:
    """The user's saved tools, then plug-in tools whose names are not taken by them."""
    tools = load_tools(path)
    taken = {t.name.casefold() for t in tools}
    for tool in plugin_tools():
        if tool.name.casefold() in taken:
            logger.warning("plug-in tool %r is hidden by a saved tool of that name", tool.name)
            continue
        taken.add(tool.name.casefold())
        tools.append(tool)
    return tools


def find_tool(tools: Sequence[CustomTool], name: str) -> CustomTool:
    """The tool called ``name`` (case-insensitive), or ToolError listing the known names."""
    for tool in tools:
        if tool.name.casefold() == name.casefold():
            return tool
    known = ", ".join(t.name for t in tools) or "none defined"
    raise ToolError(f"no custom tool named {name!r} (known: {known})")


# --- validation and expansion ---------------------------------------------------------------
def check_application(application: str) -> str | None:
    """None when ``application`` (a path, or a bare name found on PATH) is an executable
    file; otherwise a one-line reason."""
    if not application.strip():
        return "the application is empty; choose a program to run"
    found = shutil.which(application) if os.sep not in application else None
    path = Path(found or application).expanduser()
    if not path.exists():
        return f"application {application} not found"
    if path.is_dir():
        return f"application {application} is a folder, not a program"
    if not os.access(path, os.X_OK):
        return f"application {application} is not executable (check its permissions)"
    return None


def split_arguments(arguments: str) -> list[str]:
    """Split a shell-quoted argument line into words; ToolError for unbalanced quotes."""
    try:
        if os.name == "nt":  # keep backslashes of Windows paths; strip the quotes ourselves
            return [_unquote(w) for w in shlex.split(arguments, posix=False)]
        return shlex.split(arguments)
    except ValueError as exc:
        raise ToolError(f"arguments {arguments!r}: {exc} (check the quotes)") from None


def _unquote(word: str) -> str:
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "\"'":
        return word[1:-1]
    return word


def validate_tool(tool: CustomTool, others: Sequence[CustomTool] = ()) -> None:
    """ToolError when the name is empty or taken by one of ``others``, the application is not
    an executable, or the arguments do not split."""
    if not tool.name.strip():
        raise ToolError("the tool needs a name")
    if any(o.name.casefold() == tool.name.strip().casefold() for o in others):
        raise ToolError(f"a tool named {tool.name.strip()!r} already exists; choose another name")
    problem = check_application(tool.application)
    if problem is not None:
        raise ToolError(problem)
    split_arguments(tool.arguments)


def _shell_command_index(application: str, words: Sequence[str]) -> int | None:
    """The index of the command string in ``words`` when ``application`` is a shell run as
    ``sh [options] -c STRING …`` (``-ec``, ``-xc`` … too), else None."""
    if Path(application).name not in _SHELLS:
        return None
    for index, word in enumerate(words):
        if not word.startswith("-") or word == "--":
            return None
        if "c" in word[1:] and not word.startswith("--"):
            return index + 1 if index + 1 < len(words) else None
    return None


def shell_warning(tool: CustomTool) -> str | None:
    """A warning when ``$Model``/``$Output`` stand inside a shell's command string, where a
    file name such as ``$(id>x).onnx`` would run as code: there they are inserted quoted."""
    try:
        words = split_arguments(tool.arguments)
    except ToolError:
        return None
    index = _shell_command_index(tool.application, words)
    if index is None or not _PLACEHOLDER.search(words[index]):
        return None
    return (
        f"$Model/$Output stand inside the command string of '{Path(tool.application).name} "
        "-c'; they are inserted shell-quoted there (so a file name cannot run as code): "
        "write them bare, not inside other quotes"
    )


def expand_arguments(
    arguments: str, model: Path, output: Path | None, application: str = ""
) -> list[str]:
    """Split like a shell line, then put the absolute model path for ``$Model`` and the output
    path for ``$Output`` inside each word (so ``--in=$Model`` works, and paths with spaces or
    quotes stay one word). In the command string of a shell (``application`` is ``sh``,
    ``bash``, … run with ``-c``) the paths are inserted shell-quoted (:func:`shlex.quote`),
    replacing any quotes written around the placeholder, so no file name runs as code."""
    model_text = str(Path(model).absolute())

    def path_for(match: re.Match[str]) -> str:
        key = next(g for g in match.groups()[-2:] if g)
        if key == "Model":
            return model_text
        if output is None:
            raise ToolError("the arguments use $Output but no output path was given")
        return str(Path(output).absolute())

    words = split_arguments(arguments)
    command = _shell_command_index(application, words)
    return [
        _QUOTED_PLACEHOLDER.sub(lambda m: shlex.quote(path_for(m)), word)
        if index == command
        else _PLACEHOLDER.sub(path_for, word)
        for index, word in enumerate(words)
    ]


def command_line(argv: Sequence[str]) -> str:
    """``argv`` as one line a user could paste into a shell."""
    if os.name == "nt":
        return subprocess.list2cmdline(list(argv))
    return shlex.join(argv)


@dataclass
class ToolInvocation:
    """What to run for one tool on one model, and where its output model is expected."""

    tool: CustomTool
    argv: list[str]
    model: Path
    output: Path | None  # None when the tool does not use $Output
    temporary_output: bool = False  # output lies in a folder of its own made for this run
    output_stamp: tuple[int, int] | None = None  # (mtime_ns, size) before the run, if it existed

    @property
    def command_line(self) -> str:
        return command_line(self.argv)

    def discard_temporary_output(self) -> None:
        """Remove the temporary output folder (when the output is not kept)."""
        if self.temporary_output and self.output is not None:
            shutil.rmtree(self.output.parent, ignore_errors=True)


def prepare(tool: CustomTool, model: Path, output: Path | None = None) -> ToolInvocation:
    """Expand ``tool`` for ``model``. When it uses ``$Output`` and ``output`` is None, the
    output is a new file name in a new temporary folder. Cost: one mkdtemp at most."""
    model = Path(model).absolute()
    temporary = False
    if tool.uses_output and output is None:
        folder = Path(tempfile.mkdtemp(prefix="onnx-designer-tool-"))
        output = folder / f"{model.stem}-{_slug(tool.name)}.onnx"
        temporary = True
    elif not tool.uses_output:
        output = None
    else:
        assert output is not None
        output = Path(output).absolute()
    argv = [tool.application, *expand_arguments(tool.arguments, model, output, tool.application)]
    stamp = _stamp(output) if output is not None else None
    return ToolInvocation(tool, argv, model, output, temporary, stamp)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "tool"


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


def check_output(invocation: ToolInvocation) -> Path:
    """The output model once the tool has succeeded; ToolError when it is missing, was not
    rewritten, or is not a valid ONNX model. Cost: one read and parse of the output file."""
    from designer.core.io import read_model

    output = invocation.output
    if output is None:
        raise ToolError(f"tool {invocation.tool.name!r} does not use $Output; no model to open")
    if not output.exists():
        raise ToolError(f"the tool finished but wrote no model to {output}")
    if invocation.output_stamp is not None and _stamp(output) == invocation.output_stamp:
        raise ToolError(f"the tool finished but did not write a new model to {output}")
    try:
        read_model(output)
    except DesignerError as exc:
        raise ToolError(f"the tool's output is not a valid model: {exc}") from None
    return output


# --- running ------------------------------------------------------------------------------
@dataclass
class ToolResult:
    argv: list[str]
    returncode: int | None  # None when the process could not start
    stdout: str = ""
    stderr: str = ""
    cancelled: bool = False
    elapsed: float = 0.0
    error: str | None = None  # why it failed to start

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.cancelled and self.error is None


@dataclass
class ToolProcess:
    """One run of ``argv`` in its own process group. :meth:`start` returns at once; line
    callbacks and ``on_exit`` are called on worker threads."""

    argv: list[str]
    on_stdout: LineCallback | None = None
    on_stderr: LineCallback | None = None
    on_exit: Callable[[ToolResult], None] | None = None
    cwd: str | None = None
    grace: float = KILL_GRACE_S
    pid: int | None = field(default=None, init=False)
    result: ToolResult | None = field(default=None, init=False)
    _proc: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)
    _cancelled: threading.Event = field(default_factory=threading.Event, init=False)
    _done: threading.Event = field(default_factory=threading.Event, init=False)
    _start_time: float = field(default=0.0, init=False, repr=False)

    def start(self) -> None:
        """Start the process; ToolError with a clear reason when it cannot start."""
        problem = check_application(self.argv[0])
        if problem is not None:
            raise ToolError(problem)
        flags = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) if os.name == "nt" else 0
        self._start_time = time.monotonic()
        try:
            self._proc = subprocess.Popen(
                self.argv,
                cwd=self.cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=os.name != "nt",
                creationflags=flags,
            )
        except OSError as exc:
            raise ToolError(f"cannot start {self.argv[0]}: {exc.strerror or exc}") from None
        self.pid = self._proc.pid
        threading.Thread(target=self._watch, name=f"tool-{self.pid}", daemon=True).start()

    def _watch(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None and proc.stderr is not None
        out, err = LineSplitter(self.on_stdout), LineSplitter(self.on_stderr)
        pumps = [
            threading.Thread(target=_pump, args=(proc.stdout, out), daemon=True),
            threading.Thread(target=_pump, args=(proc.stderr, err), daemon=True),
        ]
        for pump in pumps:
            pump.start()
        code = proc.wait()
        if self._cancelled.is_set():  # children may outlive the leader: finish the group
            _signal_group(proc, signal.SIGKILL)
        for pump in pumps:
            pump.join(5 if not self._cancelled.is_set() else 1)
        self.result = ToolResult(
            list(self.argv),
            code,
            out.close(),
            err.close(),
            self._cancelled.is_set(),
            time.monotonic() - self._start_time,
        )
        self._done.set()
        if self.on_exit is not None:
            self.on_exit(self.result)

    @property
    def running(self) -> bool:
        return self._proc is not None and not self._done.is_set()

    def cancel(self) -> None:
        """Terminate the process group now and kill it after ``grace`` seconds; returns at
        once (``on_exit`` reports the end with ``cancelled=True``)."""
        proc = self._proc
        if proc is None or self._done.is_set() or self._cancelled.is_set():
            return
        self._cancelled.set()
        _signal_group(proc, signal.SIGTERM)

        def kill_later() -> None:
            if not self._done.wait(self.grace):
                _signal_group(proc, signal.SIGKILL)

        threading.Thread(target=kill_later, daemon=True).start()

    def wait(self, timeout: float | None = None) -> ToolResult | None:
        """Block until the run ended and callbacks were made; the result, or None on timeout."""
        self._done.wait(timeout)
        return self.result


def _pump(stream: object, splitter: LineSplitter) -> None:
    read = stream.read1 if hasattr(stream, "read1") else stream.read  # type: ignore[attr-defined]
    with contextlib.suppress(OSError, ValueError):
        while data := read(65536):
            splitter.feed(data)


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    """Send ``sig`` to the process group of ``proc`` (the whole tree on Windows)."""
    if os.name == "nt":
        if sig == signal.SIGTERM:
            with contextlib.suppress(OSError):
                proc.terminate()
        else:
            subprocess.run(
                ["taskkill", "/T", "/F", "/PID", str(proc.pid)], capture_output=True, check=False
            )
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def run_tool(
    invocation: ToolInvocation,
    on_stdout: LineCallback | None = None,
    on_stderr: LineCallback | None = None,
) -> ToolResult:
    """Run ``invocation`` to the end (headless use); Ctrl+C cancels the whole process group.
    A tool that cannot start gives a result with ``error`` set."""
    process = ToolProcess(invocation.argv, on_stdout, on_stderr)
    try:
        process.start()
    except ToolError as exc:
        return ToolResult(invocation.argv, None, error=str(exc))
    try:
        while (result := process.wait(0.1)) is None:
            pass
    except KeyboardInterrupt:
        process.cancel()
        process.wait()
        raise
    return result
