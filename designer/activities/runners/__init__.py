"""Scripts copied to a target and run there (standard library + the runtime only).

They are never imported by the host; :func:`runner_path` finds them for deployment.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["runner_path"]


def runner_path(name: str) -> Path:
    """The file of runner ``name`` (e.g. ``"ort_profile"``) inside this package."""
    path = Path(__file__).resolve().parent / f"{name}.py"
    if not path.is_file():
        raise FileNotFoundError(f"no runner script named {name!r}")
    return path
