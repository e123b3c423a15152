"""``python -m designer``: the same as the ``onnx-designer`` command."""

from __future__ import annotations

import sys

from designer.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
