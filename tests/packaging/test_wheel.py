"""``python -m build`` makes an sdist and, from it, a wheel that works in a clean venv.

Runs when ``ONNX_DESIGNER_WHEEL_TEST`` is set (CI sets it; the build fetches setuptools from
the package index, about 30 s). The clean venv has no system site-packages and no project:

- ``ONNX_DESIGNER_WHEEL_TEST=1``: the wheel is installed with ``--no-deps`` into a venv that
  holds exactly the distributions its ``Requires-Dist`` needs (the transitive closure, markers
  evaluated), linked from the test's own environment. Anything the package imports without
  declaring it is missing there, so the import of every module shows it; ``pip check`` in
  that venv checks the declared versions. Seconds instead of minutes of downloads.
- ``ONNX_DESIGNER_WHEEL_TEST=pypi``: pip resolves and downloads the dependencies from the
  index, as a user's ``pip install`` does (1.5-2.5 minutes here).
"""

from __future__ import annotations

import importlib.metadata as metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODE = os.environ.get("ONNX_DESIGNER_WHEEL_TEST", "")
pytestmark = pytest.mark.skipif(
    MODE not in ("1", "pypi"),
    reason="builds the wheel and sdist (network for setuptools); set ONNX_DESIGNER_WHEEL_TEST=1 "
    "(dependencies linked from this env) or =pypi (downloaded) to run it; CI does",
)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """sdist and wheel, built once for the module (the wheel from the unpacked sdist)."""
    if importlib.util.find_spec("build") is None:
        pytest.fail("needs the build frontend: pip install -e '.[package]' (make package does)")
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    yield out


def the(folder: Path, pattern: str) -> Path:
    (found,) = folder.glob(pattern)
    return found


def closure(requirements: list[str]) -> dict[str, metadata.Distribution]:
    """Installed distributions that ``requirements`` need, transitively (markers evaluated)."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found: dict[str, metadata.Distribution] = {}
    todo = [(Requirement(r), "") for r in requirements]
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(req.name)
        dist = metadata.distribution(req.name)
        assert req.specifier.contains(dist.version, prereleases=True), f"{req} vs {dist.version}"
        extras = sorted(req.extras)
        key = f"{name}[{','.join(extras)}]"
        if key in found:
            continue
        found[key] = dist
        for sub in dist.requires or []:
            todo += [(Requirement(sub), e) for e in ["", *extras]]
    return found


def link_distributions(dists: list[metadata.Distribution], site: Path) -> None:
    """Make ``dists`` importable in ``site`` by linking their top-level files and folders (a
    folder without ``__init__.py``, a namespace like ``google``, one level deeper)."""
    for dist in dists:
        base = Path(str(dist.locate_file("")))
        parts = {Path(str(f)).parts[:2] for f in dist.files or [] if not str(f).startswith("..")}
        for part in sorted(parts):
            top = base / part[0]
            if top.is_dir() and not (top / "__init__.py").exists() and len(part) == 2:
                (site / part[0]).mkdir(exist_ok=True)
                source, target = top / part[1], site / part[0] / part[1]
            else:
                source, target = top, site / part[0]
            if not target.exists() and source.exists():
                target.symlink_to(source)


@pytest.fixture(scope="module")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean venv (no system site-packages, no pip of its own) with the wheel installed."""
    home = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False, system_site_packages=False, symlinks=True).create(home)
    python = home / "bin" / "python"
    wheel = the(dist, "*.whl")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check"]
    if MODE == "pypi":
        command = [*pip, "install", "--quiet", str(wheel)]
    else:
        (site,) = (home / "lib").glob("python3*/site-packages")
        with zipfile.ZipFile(wheel) as archive:
            text = archive.read(next(n for n in archive.namelist() if n.endswith("/METADATA")))
        requires = [
            line.split(":", 1)[1].strip()
            for line in text.decode().splitlines()
            if line.startswith("Requires-Dist:")
        ]
        link_distributions(list(closure(requires).values()), site)
        command = [*pip, "install", "--quiet", "--no-deps", str(wheel)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    check = subprocess.run([*pip, "check"], capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    return home


def clean_env(tmp: Path) -> dict[str, str]:
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "DISPLAY", "WAYLAND_DISPLAY")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(QT_QPA_PLATFORM="offscreen", ONNX_DESIGNER_CONFIG_DIR=str(tmp / "config"))
    return env


def test_sdist_holds_what_the_build_needs_and_no_outputs(dist: Path) -> None:
    with tarfile.open(the(dist, "*.tar.gz")) as archive:
        names = [n.split("/", 1)[1] for n in archive.getnames() if "/" in n]
    for needed in (
        "pyproject.toml",
        "MANIFEST.in",
        "LICENSE",
        "README.md",
        "designer/py.typed",
        "designer/activities/runners/ort_profile.py",
        "resources/examples/tiny_cnn.onnx",
        "packaging/onnx-designer.spec",
        "packaging/io.github.onnx_designer.OnnxDesigner.desktop",
        "packaging/io.github.onnx_designer.OnnxDesigner.metainfo.xml",
        "packaging/onnx-designer.svg",
        "plugins/README.md",
    ):
        assert needed in names, f"the sdist lacks {needed}"
    for name in names:
        first = name.split("/", 1)[0]
        assert first not in (".venv", "build", "dist", "out", ".git"), name
        assert "__pycache__" not in name and not name.endswith(".pyc"), name
        assert not any(c in name for c in (".pytest_cache", ".hypothesis", ".mypy_cache")), name


def test_wheel_holds_the_package_data_and_entry_points(dist: Path) -> None:
    with zipfile.ZipFile(the(dist, "*.whl")) as archive:
        names = archive.namelist()
        entry_points = archive.read(
            next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        ).decode()
    assert "designer/py.typed" in names
    assert "designer/activities/runners/ort_profile.py" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any(n.startswith(("tests/", "bench/", "packaging/")) for n in names)
    assert "onnx-designer = designer.cli:main" in entry_points
    assert "[gui_scripts]\nonnx-designer-gui = designer.cli:gui_main" in entry_points


def test_installed_wheel_runs_in_a_clean_venv(installed: Path, tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    script = installed / "bin" / "onnx-designer"
    done = subprocess.run(
        [str(script), "--help"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "screenshot" in done.stdout and "profile" in done.stdout
    assert (installed / "bin" / "onnx-designer-gui").is_file()
    model = ROOT / "resources" / "examples" / "tiny_cnn.onnx"
    info = subprocess.run(
        [str(script), "info", str(model)], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert info.returncode == 0 and "Nodes:" in info.stdout, info.stderr
    # Every module imports with only the declared dependencies (and from the venv, not ROOT).
    code = (
        "import importlib, pkgutil, designer;"
        f"assert designer.__file__.startswith({str(installed)!r}), designer.__file__;"
        "[importlib.import_module(m.name) for m in "
        "pkgutil.walk_packages(designer.__path__, 'designer.')"
        " if not m.name.startswith('designer.activities.runners.')]"
    )
    imports = subprocess.run(
        [str(installed / "bin" / "python"), "-I", "-c", code],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert imports.returncode == 0, imports.stderr[-3000:]
    assert shutil.which("onnx-designer", path=str(installed / "bin"))
