"""Entry script of the frozen app bundle (PyInstaller): ``onnx-designer`` and a small Python.

In the bundle ``sys.executable`` is this binary, not a Python interpreter. The designer runs
"its own interpreter" for local activities (``python -c PROBE``, ``python runner.py …``), for
custom tools set up with *Use Python* (``python script.py …``) and for the wheel cache
(``python -m pip …``). So, frozen, this binary also answers those three forms the way
``python`` does, with the bundled onnx, onnxruntime and numpy; everything else is the
``onnx-designer`` command line. A model path never ends in ``.py``, ``-c`` and ``-m`` are not
options of ``onnx-designer``, so nothing the command line accepts is taken away.
"""

from __future__ import annotations

import runpy
import sys
import traceback
from collections.abc import Sequence


def _interpreter(argv: Sequence[str]) -> int | None:
    """Run ``-c CODE``, ``-m MODULE`` or ``SCRIPT.py`` like ``python`` does and return its
    exit code; None when ``argv`` is an ``onnx-designer`` command line."""
    if not argv:
        return None
    first = argv[0]
    try:
        if first == "-c" and len(argv) >= 2:
            sys.argv = ["-c", *argv[2:]]
            code = compile(argv[1], "<string>", "exec")
            exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
        elif first == "-m" and len(argv) >= 2:
            sys.argv = [argv[1], *argv[2:]]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        elif first.endswith(".py") and not first.startswith("-"):
            sys.argv = list(argv)
            runpy.run_path(first, run_name="__main__")
        else:
            return None
    except SystemExit as exc:  # what sys.exit(x) means to python
        if exc.code is None:
            return 0
        if isinstance(exc.code, int):
            return exc.code
        print(exc.code, file=sys.stderr)
        return 1
    except BaseException:  # what python does with an uncaught exception: traceback, exit 1
        traceback.print_exc()
        return 1
    return 0


def main() -> int:
    argv = sys.argv[1:]
    if getattr(sys, "frozen", False):
        code = _interpreter(argv)
        if code is not None:
            return code
    from designer.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
