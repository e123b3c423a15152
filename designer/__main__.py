"""``python -m designer [MODEL]`` starts the designer; ``python -m designer COMMAND …`` runs a
headless command (see ``onnx-designer --help``)."""

from __future__ import annotations

import sys

from designer.cli import command_names, main


def run(argv: list[str]) -> int:
    if argv and (argv[0] in command_names() or argv[0].startswith("-")):
        return main(argv)
    # The window arrives with the canvas work; until then, opening a model prints its summary.
    print("ONNX Designer: the model window is not built yet; model summary:", file=sys.stderr)
    return main(["info", *argv[:1]]) if argv else main(["--help"])


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
