"""The stand-in ``trtexec`` (see ``trtexec`` beside this file) and how to put it on a target."""

from __future__ import annotations

from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "trtexec"
FIXTURE_FILES = (
    "NVIDIA/TensorRT/samples/common/v10.16/sampleOptions.cpp",
    "NVIDIA/TensorRT/samples/common/v11.1/sampleOptions.cpp",
    "NVIDIA/trt-samples-for-hackathon-cn/cookbook/07-Tool/trtexec/Help.txt",
    "NVIDIA/trt-samples-for-hackathon-cn/cookbook/07-Tool/trtexec/result-03.log",
    "NVIDIA/trt-samples-for-hackathon-cn/cookbook/07-Tool/trtexec/result-04.log",
    "NVIDIA/trt-samples-for-hackathon-cn/cookbook/07-Tool/trtexec/result-05.log",
    "NVIDIA/trt-samples-for-hackathon-cn/cookbook/07-Tool/trtexec/model-trained-exportLayerInfo.log",
    "NVIDIA/TensorRT/tools/experimental/trt-engine-explorer/examples/pytorch/resnet/A100/fp32/"
    "resnet.onnx.engine.timing.json",
)


def fixtures_root() -> Path:
    return HERE.parents[2].parent / "shared" / "fixtures"


def standin_files() -> list[tuple[Path, str]]:
    """(local file, destination relative to the install folder): the two scripts in ``bin/``,
    the fixtures under ``fixtures/`` (point ``TRTEXEC_STANDIN_FIXTURES`` there)."""
    files = [(SCRIPT, "bin/trtexec"), (HERE / "sample_options.py", "bin/sample_options.py")]
    root = fixtures_root()
    files += [(root / rel, f"fixtures/{rel}") for rel in FIXTURE_FILES]
    return files


def install_standin(target: Any, dest: str) -> str:
    """Copy the stand-in and its fixtures to ``dest`` on a Target; returns the trtexec path.
    Run it with ``TRTEXEC_STANDIN_FIXTURES=<dest>/fixtures`` (or from a wrapper script)."""
    for local, rel in standin_files():
        remote = f"{dest.rstrip('/')}/{rel}"
        target.mkdir(remote.rsplit("/", 1)[0])
        target.put(local, remote)
    trtexec = f"{dest.rstrip('/')}/bin/trtexec"
    result = target.run(["chmod", "755", trtexec])
    if not result.ok:
        raise RuntimeError(f"chmod {trtexec} failed: {result.last_error_line()}")
    return trtexec


def write_wrapper(
    target: Any, path: str, trtexec: str, fixtures: str, version: str = "10.16"
) -> str:
    """A shell script at ``path`` on the target that runs the stand-in with its environment
    set (so detection can find it as a plain ``trtexec``, e.g. /usr/src/tensorrt/bin/trtexec)."""
    import shlex
    import tempfile

    text = (
        "#!/bin/sh\n"
        f"export TRTEXEC_STANDIN_FIXTURES=${{TRTEXEC_STANDIN_FIXTURES:-{shlex.quote(fixtures)}}}\n"
        f"export TRTEXEC_STANDIN_VERSION=${{TRTEXEC_STANDIN_VERSION:-{version}}}\n"
        'export TRTEXEC_STANDIN_ARGV0="$0"\n'
        f'exec python3 {shlex.quote(trtexec)} "$@"\n'
    )
    with tempfile.TemporaryDirectory() as tmp:
        local = Path(tmp) / "trtexec"
        local.write_text(text)
        target.mkdir(path.rsplit("/", 1)[0])
        target.put(local, path)
    result = target.run(["chmod", "755", path])
    if not result.ok:
        raise RuntimeError(f"chmod {path} failed: {result.last_error_line()}")
    return path
