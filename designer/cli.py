"""The ``onnx-designer`` command line: headless operations over the core.

Subcommands live in :mod:`designer.commands`. Exit codes: 0 success, 1 findings or failure
(one-line message on stderr), 2 usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from designer import __version__
from designer.commands import register_all
from designer.core.errors import DesignerError
from designer.logs import setup_logging

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="onnx-designer",
        description="Open, check, transform and profile ONNX models without the GUI.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "-v",
        "--verbose",
        dest="log_debug",
        action="store_true",
        help="log debug messages (and plug-in tracebacks) to stderr; before COMMAND",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    register_all(sub)
    return parser


def command_names() -> set[str]:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


def main(argv: Sequence[str] | None = None) -> int:
    """Run a subcommand; with no subcommand (only model paths, or nothing) open the GUI."""
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = bool(argv) and argv[0] in ("-v", "--verbose")
    setup_logging(verbose=verbose)
    rest = argv[1:] if verbose else argv
    wants_gui = not rest or (rest[0] not in command_names() and not rest[0].startswith("-"))
    if wants_gui and all(_looks_like_model(a) for a in rest):
        return _open_gui(rest)
    args = build_parser().parse_args(argv)
    handler: Handler = args.handler
    try:
        code = handler(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except BrokenPipeError:
        return _reader_went_away()
    except DesignerError as exc:
        print(f"onnx-designer: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("onnx-designer: interrupted", file=sys.stderr)
        return 1
    except Exception as exc:  # an internal error: one line, traceback on request
        if os.environ.get("ONNX_DESIGNER_DEBUG"):
            raise
        print(
            f"onnx-designer: internal error: {type(exc).__name__}: {exc} "
            "(set ONNX_DESIGNER_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 1


def gui_main(argv: Sequence[str] | None = None) -> int:
    """``onnx-designer-gui [MODEL...]``: only the window (the gui-scripts entry point that
    desktop launchers start); exit 2 when an argument is not a model file."""
    paths = list(sys.argv[1:] if argv is None else argv)
    setup_logging(verbose=False)
    for path in paths:
        if not _looks_like_model(path):
            print(
                f"onnx-designer-gui: error: {path!r} is not a model file "
                "(usage: onnx-designer-gui [MODEL.onnx ...]; commands: onnx-designer --help)",
                file=sys.stderr,
            )
            return 2
    return _open_gui(paths)


def _reader_went_away() -> int:
    """The output's reader closed the pipe (``… | head``): stop quietly, as ``cat`` does.

    Further writes to stdout would raise again at exit, so stdout is pointed at /dev/null
    (the pattern the Python documentation gives for SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 1


def _looks_like_model(arg: str) -> bool:
    """A GUI argument is a model path: an existing file, or a name ending in .onnx."""
    return arg.lower().endswith(".onnx") or Path(arg).is_file()


def _open_gui(paths: list[str]) -> int:
    headless = not any(os.environ.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY"))
    if sys.platform.startswith("linux") and headless and not os.environ.get("QT_QPA_PLATFORM"):
        print(
            "onnx-designer: error: no display to open the window on; run it in a desktop "
            "session (or use a subcommand, see --help)",
            file=sys.stderr,
        )
        return 1
    from designer.ui.qt_platform import install_hint, missing_libraries, uses_xcb

    missing = missing_libraries() if uses_xcb() else []
    if missing:  # Qt would abort the process with a misleading hint
        print(f"onnx-designer: error: {install_hint(missing)}", file=sys.stderr)
        return 1
    try:
        from designer.ui.main_window import run_app
    except ImportError as exc:
        print(f"onnx-designer: error: the GUI cannot start ({exc})", file=sys.stderr)
        return 1
    return run_app([Path(p) for p in paths])


if __name__ == "__main__":
    sys.exit(main())
