"""Example custom-tools plug-in: offers the Op Histogram script as a ready-made tool.

Install it with an entry point in a package's ``pyproject.toml``::

    [project.entry-points."onnx_designer.tools"]
    examples = "example_tools:tools"

The entry point names a ``CustomTool`` or a callable returning one or a list of them. They
appear under Tools > User after the user's own tools and in ``onnx-designer tool list`` and
``tool run``; a saved tool of the same name wins.
"""

from __future__ import annotations

import sys
from pathlib import Path

from designer.activities.custom_tools import CustomTool

HERE = Path(__file__).resolve().parent


def tools() -> list[CustomTool]:
    script = HERE / "op_histogram.py"
    return [CustomTool("Op Histogram (plug-in)", sys.executable, f"'{script}' $Model")]
