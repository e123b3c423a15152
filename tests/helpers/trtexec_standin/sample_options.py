"""trtexec's option parser, read from TensorRT's real ``samples/common/sampleOptions.cpp``.

Standard library only (Python >= 3.9): this file is copied to emulated targets with the
stand-in ``trtexec``. Nothing is hand-listed: the flags of a version are the string literals
that ``AllOptions::parse`` and the ``*Options::parse`` functions it calls hand to
``getAndDelOption`` & co. (the region from ``BaseModelOptions::parse`` up to the first parser
of another tool, ``TaskInferenceOptions::parse``), and the accepted values of the enumerated
options are read from the comparisons in those functions.

:func:`check_arguments` mirrors trtexec: ``argsToArgumentsMap`` splits each argument at its
first ``=``; every key the parser does not consume is an "Unknown option"; a bad value raises
the parser's ``std::invalid_argument`` message.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

VERSIONS = {"10.16": "v10.16", "11.1": "v11.1"}
BANNER_NUMBERS = {"10.16": 101601, "11.1": 110100}


def fixtures_root() -> Path:
    """``$TRTEXEC_STANDIN_FIXTURES`` or ``../shared/fixtures`` beside the checkout."""
    env = os.environ.get("TRTEXEC_STANDIN_FIXTURES")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"


def source_path(version: str, root: Path | None = None) -> Path:
    folder = VERSIONS[version]
    base = root if root is not None else fixtures_root()
    return base / "NVIDIA" / "TensorRT" / "samples" / "common" / folder / "sampleOptions.cpp"


@dataclass
class OptionParser:
    """What one version's trtexec accepts."""

    version: str
    flags: set[str] = field(default_factory=set)
    values: dict[str, set[str]] = field(default_factory=dict)  # option -> accepted values
    data_types: set[str] = field(default_factory=set)
    mem_pools: set[str] = field(default_factory=set)


def _region(text: str) -> str:
    start = text.index("void BaseModelOptions::parse(Arguments& arguments)")
    end = text.index("void TaskInferenceOptions::parse(Arguments& arguments)")
    return text[start:end]


def _block_after(region: str, anchor: str, stop: str) -> str:
    start = region.index(anchor)
    end = region.index(stop, start)
    return region[start:end]


@functools.cache
def load(version: str, root: str | None = None) -> OptionParser:
    """The parser of ``version`` ("10.16" or "11.1") from its sampleOptions.cpp."""
    text = source_path(version, Path(root) if root else None).read_text(encoding="utf-8")
    region = _region(text)
    parser = OptionParser(version)
    # Every literal handed to a getter: getAndDelOption(arguments, "--x", …),
    # getLayerPrecisions(arguments, "--x", …), getFormats(…, "--x"), … and "-h".
    parser.flags = set(re.findall(r'"(--[A-Za-z][A-Za-z0-9]*|-h)"', region))
    # Enumerated values, read from the comparisons after each option.
    tactics = _block_after(region, '"--tacticSources"', "Unknown tactic source")
    parser.values["--tacticSources"] = set(re.findall(r't == "(\w+)"', tactics))
    verbosity = _block_after(region, '"--profilingVerbosity"', "Unknown profilingVerbosity")
    parser.values["--profilingVerbosity"] = set(
        re.findall(r'profilingVerbosityString == "(\w+)"', verbosity)
    )
    hwc = _block_after(
        region, '"--hardwareCompatibilityLevel"', "Unknown hardwareCompatibilityLevel"
    )
    parser.values["--hardwareCompatibilityLevel"] = {
        v.lower() for v in re.findall(r'hardwareCompatibleArgs\)? == "([\w+]+)"', hwc)
    }
    if '"--precisionConstraints"' in region:
        pc = _block_after(region, '"--precisionConstraints"', "Unknown precision constraints")
        parser.values["--precisionConstraints"] = set(
            re.findall(r'\{"(\w+)", PrecisionConstraints::', pc)
        )
    sparsity = _block_after(
        text, "SparsityFlag stringToValue<SparsityFlag>", "Unknown sparsity mode"
    )
    parser.values["--sparsity"] = set(re.findall(r'"(\w+)", SparsityFlag::', sparsity))
    if "Invalid DataType" in text:  # 11.x has no per-layer precisions, hence no DataType names
        dtypes = _block_after(
            text, "nvinfer1::DataType stringToValue<nvinfer1::DataType>", "Invalid DataType"
        )
        parser.data_types = set(re.findall(r'\{"(\w+)", nvinfer1::DataType::', dtypes))
    pools = _block_after(region, '"--memPoolSize"', "Unknown memory pool")
    parser.mem_pools = set(re.findall(r'memPoolName == "(\w+)"', pools))
    return parser


class OptionError(ValueError):
    """The parser's std::invalid_argument (message as trtexec prints it)."""


def split_arguments(argv: list[str]) -> list[tuple[str, str]]:
    """argsToArgumentsMap: ``--a=b`` → (``--a``, ``b``); ``--a`` → (``--a``, "")."""
    pairs = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        pairs.append((key, value if sep else ""))
    return pairs


def _dims_ok(spec: str) -> bool:
    return spec == "" or spec == "scalar" or all(re.fullmatch(r"-?\d+", d) for d in spec.split("x"))


def _check_value(parser: OptionParser, key: str, value: str) -> None:
    accepted = parser.values.get(key)
    if key == "--tacticSources":
        for item in value.split(","):
            if not item or item[0] not in "+-":
                raise OptionError(
                    "Tactic source must be prefixed with + or -, indicating whether it should be"
                    " enabled or disabled respectively."
                )
            if item[1:].upper() not in (accepted or set()):
                raise OptionError("Unknown tactic source: " + item[1:].upper())
    elif key == "--hardwareCompatibilityLevel":
        if value and value.lower() not in (accepted or set()):
            raise OptionError("Unknown hardwareCompatibilityLevel: " + value)
    elif key == "--profilingVerbosity":
        if value and value not in (accepted or set()):
            raise OptionError("Unknown profilingVerbosity: " + value)
    elif key == "--precisionConstraints":
        if value and value not in (accepted or set()):
            raise OptionError("Unknown precision constraints: " + value)
    elif key == "--sparsity":
        if value not in (accepted or set()):
            raise OptionError("Unknown sparsity mode: " + value)
    elif key in ("--layerPrecisions", "--layerOutputTypes"):
        for item in value.split(","):
            name, _, types = item.rpartition(":")
            for t in types.split("+") if key == "--layerOutputTypes" else [types]:
                if not name or t not in parser.data_types:
                    raise OptionError("Invalid DataType " + t)
    elif key == "--memPoolSize":
        for item in value.split(","):
            pool, _, size = item.partition(":")
            if not re.fullmatch(r"\d+(\.\d+)?[KMG]?", size):
                raise OptionError("Invalid memPoolSize: " + item)
            if pool not in parser.mem_pools:
                raise OptionError("Unknown memory pool: " + pool)
    elif key in ("--minShapes", "--optShapes", "--maxShapes", "--shapes"):
        for item in value.split(","):
            name, sep, dims = item.rpartition(":")
            if not sep or not name or not _dims_ok(dims):
                raise OptionError("Invalid shape specification: " + item)


def check_arguments(
    argv: list[str], version: str
) -> tuple[dict[str, list[str]], list[tuple[str, str]]]:
    """Check ``argv`` (without the program name) like ``version``'s trtexec.

    Returns (options: key -> values, unknown: [(key, value)]); raises :class:`OptionError`
    for a value the parser rejects.
    """
    parser = load(version)
    options: dict[str, list[str]] = {}
    unknown = []
    pairs = split_arguments(argv)
    # getOptimizationProfiles: each --profile=N takes the shape flags right behind it
    # (positions N+1.., each of min/opt/max once); those are not "repeated" keys.
    behind: set[int] = set()
    seen_profiles: set[str] = set()
    for i, (key, value) in enumerate(pairs):
        if key != "--profile" or key not in parser.flags:
            continue
        if value in seen_profiles:
            raise OptionError("Optimization profile index cannot be the same.")
        seen_profiles.add(value)
        taken: set[str] = set()
        for j in range(i + 1, min(i + 4, len(pairs))):
            shape_key = pairs[j][0]
            if (
                shape_key in ("--minShapes", "--optShapes", "--maxShapes")
                and shape_key not in taken
            ):
                taken.add(shape_key)
                behind.add(j)
                _check_value(parser, shape_key, pairs[j][1])
            else:
                break
    repeatable = ("--staticPlugins", "--dynamicPlugins", "--plugins", "--setPluginsToSerialize")
    for i, (key, value) in enumerate(pairs):
        if i in behind:
            options.setdefault(key, []).append(value)
            continue
        if key not in parser.flags:
            unknown.append((key, value))
            continue
        if key in options and key not in repeatable and key != "--profile":
            # A repeated key: the parser consumes one, the other stays behind.
            unknown.append((key, value))
            continue
        _check_value(parser, key, value)
        options.setdefault(key, []).append(value)
    if "--fp8" in options and "--int8" in options:
        raise OptionError("Invalid usage, fp8 and int8 aren't allowed to be enabled together.")
    if "--best" in options and "--stronglyTyped" in options:
        raise OptionError(
            "--best and --stronglyTyped cannot be both set. --best enables implicit precisions,"
            " while --stronglyTyped enforces explicit precisions."
        )
    if "--loadEngine" in options and "--saveEngine" in options:
        raise OptionError("Incompatible load and save engine options selected")
    return options, unknown
