"""``tool list|add|remove|run``: the custom user tools (U-1, U-2) without the GUI.

The tools are the ones the GUI shows under Tools > User (``custom_tools.json`` in the config
folder). ``tool run`` streams the tool's stdout and stderr live and exits with its exit code.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _list(args: argparse.Namespace) -> int:
    from designer.activities.custom_tools import all_tools, tools_path

    tools = all_tools()  # the saved ones, then the plug-ins' (onnx_designer.tools)
    if args.json:
        print(json.dumps([t.to_json() for t in tools], indent=2))
        return 0
    if not tools:
        print(
            f"no custom tools yet (add them in the GUI under Tools > Custom Tools… or with "
            f"'onnx-designer tool add'); they are kept in {tools_path()}",
            file=sys.stderr,
        )
        return 0
    width = max(len(t.name) for t in tools)
    for tool in tools:
        flags = [
            f
            for f, on in (("prompt output", tool.prompt_output), ("open output", tool.open_output))
            if on
        ]
        extra = f"  [{', '.join(flags)}]" if flags else ""
        print(f"{tool.name:<{width}}  {tool.application} {tool.arguments}".rstrip() + extra)
    return 0


def _add(args: argparse.Namespace) -> int:
    from designer.activities.custom_tools import (
        CustomTool,
        load_tools,
        save_tools,
        shell_warning,
        tools_path,
        validate_tool,
    )

    tools = load_tools()
    tool = CustomTool(
        args.name.strip(),
        args.application,
        args.arguments,
        prompt_output=args.prompt_output,
        open_output=args.open_output,
    )
    others = (
        [t for t in tools if t.name.casefold() != tool.name.casefold()] if args.replace else tools
    )
    validate_tool(tool, others)
    replaced = len(others) != len(tools)
    updated = [tool if t.name.casefold() == tool.name.casefold() else t for t in tools]
    save_tools(updated if replaced else [*tools, tool])
    print(f"{'replaced' if replaced else 'added'} tool {tool.name!r} in {tools_path()}")
    warning = shell_warning(tool)
    if warning:
        print(f"onnx-designer: warning: {warning}", file=sys.stderr)
    return 0


def _remove(args: argparse.Namespace) -> int:
    from designer.activities.custom_tools import find_tool, load_tools, save_tools

    tools = load_tools()
    tool = find_tool(tools, args.name)
    save_tools([t for t in tools if t is not tool])
    print(f"removed tool {tool.name!r}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from designer.activities.custom_tools import (
        ToolError,
        all_tools,
        check_output,
        find_tool,
        prepare,
        run_tool,
    )

    tool = find_tool(all_tools(), args.name)
    model: Path = args.model
    if not model.is_file():
        raise ToolError(f"{model}: model file not found")
    if args.output is not None and not tool.uses_output:
        raise ToolError(f"tool {tool.name!r} does not use $Output in its arguments; drop --output")
    if args.output is not None and not args.output.parent.is_dir():
        raise ToolError(f"{args.output.parent}: the output folder does not exist")
    invocation = prepare(tool, model, args.output)
    print(f"running: {invocation.command_line}", file=sys.stderr)
    result = run_tool(
        invocation,
        on_stdout=lambda line: print(line, flush=True),
        on_stderr=lambda line: print(line, file=sys.stderr, flush=True),
    )
    if result.error is not None:
        invocation.discard_temporary_output()
        raise ToolError(result.error)
    if result.returncode != 0:
        invocation.discard_temporary_output()
        print(
            f"onnx-designer: tool {tool.name!r} failed with exit code {result.returncode}",
            file=sys.stderr,
        )
        code = result.returncode if result.returncode is not None else 1
        return code if 0 < code < 256 else 1
    if invocation.output is not None:
        try:
            output = check_output(invocation)
        except ToolError:
            invocation.discard_temporary_output()
            raise
        print(f"output model: {output}", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    tool = sub.add_parser(
        "tool",
        help="list, add, remove and run custom user tools",
        description="Custom tools run any program on a model: the application gets the "
        "arguments line, split like a shell line, with $Model replaced by the model's absolute "
        "path and $Output by the path of the model the tool should write.",
    )
    verbs = tool.add_subparsers(dest="tool_command", metavar="ACTION", required=True)

    listing = verbs.add_parser("list", help="list the custom tools")
    listing.add_argument("--json", action="store_true", help="print JSON instead of text")
    listing.set_defaults(handler=_list)

    add = verbs.add_parser(
        "add",
        help="add a custom tool",
        description="Add a tool (as Tools > Custom Tools… > New does). Example: "
        "onnx-designer tool add Histogram /usr/bin/python3 "
        "--arguments 'plugins/op_histogram.py $Model'",
    )
    add.add_argument("name", help="the tool's name (unique)")
    add.add_argument("application", help="the program to run (for a script: the interpreter)")
    add.add_argument(
        "--arguments",
        default="",
        help="one line quoted like a shell line; $Model and $Output are replaced",
    )
    add.add_argument("--prompt-output", action="store_true", help="the GUI asks where $Output goes")
    add.add_argument(
        "--open-output", action="store_true", help="the GUI opens the $Output model afterwards"
    )
    add.add_argument("--replace", action="store_true", help="replace a tool of the same name")
    add.set_defaults(handler=_add)

    remove = verbs.add_parser("remove", help="remove a custom tool")
    remove.add_argument("name", help="the tool's name")
    remove.set_defaults(handler=_remove)

    run = verbs.add_parser(
        "run",
        help="run a custom tool on a model",
        description="Run tool NAME on MODEL, streaming its output; exits with the tool's exit "
        "code. $Output is --output when given, else a new temporary file (printed at the end).",
    )
    run.add_argument("name", help="the tool's name")
    run.add_argument("model", type=Path, help="the .onnx file ($Model)")
    run.add_argument("--output", type=Path, help="where the tool writes its model ($Output)")
    run.set_defaults(handler=_run)
