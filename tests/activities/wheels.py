"""Offline wheel cache for deployment tests: repack installed distributions as wheels.

The SSH test server is this machine, so wheels of the test venv's own onnxruntime, numpy,
protobuf, flatbuffers and packaging fit the target (same CPython minor and platform) when the
system ``python3`` has the same minor version as the venv. No network is used.
"""

from __future__ import annotations

import re
import zipfile
from importlib import metadata
from pathlib import Path

ORT_CLOSURE = ("onnxruntime", "numpy", "protobuf", "flatbuffers", "packaging")


def repack(name: str, dest: Path) -> Path:
    """Write an installed distribution as a wheel into ``dest`` (stored, not compressed)."""
    dist = metadata.distribution(name)
    wheel_meta = dist.read_text("WHEEL") or ""
    tags = re.findall(r"^Tag: (\S+)", wheel_meta, re.M) or ["py3-none-any"]
    norm = re.sub(r"[-_.]+", "_", dist.metadata["Name"]).lower()
    parts = [t.split("-") for t in tags]
    tag = "-".join(".".join(dict.fromkeys(p[i] for p in parts)) for i in range(3))
    path = dest / f"{norm}-{dist.version}-{tag}.whl"
    if path.exists():
        return path
    root = Path(str(dist.locate_file("")))
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as zf:
        for file in dist.files or []:
            rel = str(file)
            if rel.startswith("..") or "__pycache__" in rel:
                continue
            full = root / rel
            if full.is_file():
                zf.write(full, rel)
    tmp.replace(path)
    return path


def make_wheel_cache(folder: Path, names: tuple[str, ...] = ORT_CLOSURE) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        repack(name, folder)
    return folder
