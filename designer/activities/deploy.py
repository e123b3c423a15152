"""Deployment (SPEC A-3): what an activity needs on a target, checked and installed.

An activity declares :class:`Dependency` objects. :meth:`Deployment.check` gives one
:class:`DependencyStatus` per dependency (current / missing / outdated / unavailable) with a
progress callback; :meth:`Deployment.deploy` installs what is not current and records it in
``<deploy dir>/manifest.json`` so later launches skip it.

Layout of a deployment folder::

    manifest.json       what was deployed (requirements, Python, platform, file hashes)
    runners/NAME.py     runner scripts, compared by SHA-256 with the host's copy
    venv/               python3 -m venv, packages installed with pip --no-index
    wheels/             wheels copied from the host cache (pip --find-links)
    work/               inputs and outputs of activities

Wheels are downloaded ON THE HOST for the target's platform and Python
(``pip download --only-binary=:all: --platform … --python-version … --implementation cp``)
into ``<user cache>/wheels/<python>-<platform>/``; a cache that already satisfies the
requirements is used without any network access. Costs of a cached second launch: one SFTP
read of the manifest, one hash round trip for the scripts, one stat for the venv.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Protocol

from designer.activities.paths import wheel_cache_dir
from designer.activities.runners import runner_path
from designer.activities.targets.base import (
    CancelToken,
    LineCallback,
    PlatformInfo,
    Target,
    TargetError,
    sha256_file,
)

__all__ = [
    "DependencyState",
    "DependencyStatus",
    "DeployError",
    "Deployment",
    "PythonDependency",
    "PythonPackages",
    "RunnerScripts",
]

logger = logging.getLogger(__name__)

MANIFEST = "manifest.json"


class DeployError(TargetError):
    """A dependency could not be deployed (one line: what, where, what to do)."""


class DependencyState(Enum):
    CURRENT = "current"
    MISSING = "missing"
    OUTDATED = "outdated"
    UNAVAILABLE = "unavailable"  # cannot be deployed by us (e.g. no Python on the target)


@dataclass(frozen=True)
class DependencyStatus:
    key: str
    label: str
    state: DependencyState
    detail: str = ""

    @property
    def current(self) -> bool:
        return self.state is DependencyState.CURRENT


@dataclass
class DeployContext:
    """What dependencies see: the target, the absolute deployment folder, the manifest."""

    target: Target
    root: str
    platform: PlatformInfo
    manifest: dict[str, Any]
    wheel_cache: Path
    allow_download: bool
    log: LineCallback
    cancel: CancelToken | None
    copied: list[str] = field(default_factory=list)

    def path(self, *parts: str) -> str:
        return "/".join([self.root.rstrip("/"), *parts])

    @property
    def venv_python(self) -> str:
        return self.path("venv", "bin", "python")


class Dependency(Protocol):
    @property
    def key(self) -> str: ...

    @property
    def label(self) -> str: ...

    def check(self, ctx: DeployContext) -> DependencyStatus: ...

    def deploy(self, ctx: DeployContext) -> None: ...


@dataclass(frozen=True)
class PythonDependency:
    """A ``python3`` of at least ``minimum`` on the target (never installed by us)."""

    minimum: tuple[int, int] = (3, 9)
    key: str = "python"

    @property
    def label(self) -> str:
        return f"Python ≥ {self.minimum[0]}.{self.minimum[1]}"

    def check(self, ctx: DeployContext) -> DependencyStatus:
        version = ctx.platform.python_version
        if version is None:
            return DependencyStatus(
                self.key, self.label, DependencyState.UNAVAILABLE, "python3 not found on the target"
            )
        text = ".".join(map(str, version))
        if version[:2] < self.minimum:
            return DependencyStatus(
                self.key, self.label, DependencyState.UNAVAILABLE, f"python3 is {text}"
            )
        return DependencyStatus(
            self.key,
            self.label,
            DependencyState.CURRENT,
            f"{ctx.platform.describe()} ({ctx.platform.python} {text})",
        )

    def deploy(self, ctx: DeployContext) -> None:
        raise DeployError(
            f"{ctx.target.name}: {self.label} is needed; install python3 (with venv) there"
        )


@dataclass(frozen=True)
class RunnerScripts:
    """Runner scripts copied to ``runners/``; current when the SHA-256 matches the host's."""

    names: tuple[str, ...]
    key: str = "runners"
    label: str = "Runner scripts"

    def _pairs(self, ctx: DeployContext) -> list[tuple[Path, str]]:
        return [(runner_path(n), ctx.path("runners", f"{n}.py")) for n in self.names]

    def check(self, ctx: DeployContext) -> DependencyStatus:
        pairs = self._pairs(ctx)
        remote = ctx.target.hashes([r for _, r in pairs])
        stale = [r for local, r in pairs if remote.get(r) != sha256_file(local)]
        if not stale:
            return DependencyStatus(self.key, self.label, DependencyState.CURRENT)
        state = (
            DependencyState.MISSING
            if all(remote.get(r) is None for r in stale)
            else DependencyState.OUTDATED
        )
        names = ", ".join(r.rsplit("/", 1)[-1] for r in stale)
        return DependencyStatus(self.key, self.label, state, names)

    def deploy(self, ctx: DeployContext) -> None:
        ctx.target.mkdir(ctx.path("runners"))
        pairs = self._pairs(ctx)
        remote = ctx.target.hashes([r for _, r in pairs])
        for local, path in pairs:
            digest = sha256_file(local)
            if remote.get(path) != digest:
                ctx.log(f"copying {local.name}")
                ctx.target.put(local, path)
                ctx.copied.append(path)
            ctx.manifest.setdefault("files", {})[path] = digest


@dataclass(frozen=True)
class PythonPackages:
    """Packages installed into ``venv/`` from wheels fetched on the host."""

    requirements: tuple[str, ...]
    key: str = "venv"
    label: str = "Python packages"

    def _wanted(self, ctx: DeployContext) -> dict[str, Any]:
        version = ".".join(map(str, ctx.platform.python_version or ()))
        return {
            "requirements": list(self.requirements),
            "python": version,
            "platform": list(ctx.platform.platform_tags[:1]),
        }

    def check(self, ctx: DeployContext) -> DependencyStatus:
        label = f"{self.label} ({', '.join(self.requirements)})"
        recorded = ctx.manifest.get(self.key)
        if recorded is None or not ctx.target.exists(ctx.venv_python):
            return DependencyStatus(self.key, label, DependencyState.MISSING)
        if recorded != self._wanted(ctx):
            return DependencyStatus(
                self.key, label, DependencyState.OUTDATED, "requirements or Python changed"
            )
        return DependencyStatus(self.key, label, DependencyState.CURRENT)

    def deploy(self, ctx: DeployContext) -> None:
        target, p = ctx.target, ctx.platform
        if p.python is None or p.python_version is None:
            raise DeployError(f"{target.name}: no python3 to create a virtual environment with")
        if ctx.manifest.get(self.key, {}).get("python") != self._wanted(ctx)["python"]:
            target.remove(ctx.path("venv"))
        if not target.exists(ctx.venv_python):
            ctx.log(f"creating a virtual environment with {p.python}")
            _checked(
                target.run(
                    [p.python, "-m", "venv", ctx.path("venv")],
                    on_stdout=ctx.log,
                    on_stderr=ctx.log,
                    cancel=ctx.cancel,
                ),
                f"{target.name}: python3 -m venv failed (on Debian/Ubuntu install python3-venv)",
            )
        wheels = self._host_wheels(ctx)
        target.mkdir(ctx.path("wheels"))
        remote = target.hashes([ctx.path("wheels", w.name) for w in wheels])
        for wheel in wheels:
            dest = ctx.path("wheels", wheel.name)
            if remote.get(dest) != sha256_file(wheel):
                ctx.log(f"copying {wheel.name} ({wheel.stat().st_size >> 20} MiB)")
                target.put(wheel, dest)
                ctx.copied.append(dest)
        ctx.log("installing " + ", ".join(self.requirements))
        _checked(
            target.run(
                [
                    ctx.venv_python,
                    "-m",
                    "pip",
                    "install",
                    "--no-index",
                    "--disable-pip-version-check",
                    "--find-links",
                    ctx.path("wheels"),
                    *self.requirements,
                ],
                on_stdout=ctx.log,
                on_stderr=ctx.log,
                cancel=ctx.cancel,
            ),
            f"{target.name}: pip install failed",
        )
        ctx.manifest[self.key] = self._wanted(ctx)

    def _host_wheels(self, ctx: DeployContext) -> list[Path]:
        """Wheels for the target in the host cache; downloaded there first if needed."""
        p = ctx.platform
        assert p.python_version is not None
        folder = (
            ctx.wheel_cache / f"cp{p.python_tag}-{p.platform_tags[0] if p.platform_tags else 'any'}"
        )
        folder.mkdir(parents=True, exist_ok=True)
        base = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--disable-pip-version-check",
            "--only-binary=:all:",
            "--implementation",
            "cp",
            "--python-version",
            f"{p.python_version[0]}.{p.python_version[1]}",
            "--dest",
            str(folder),
        ]
        for tag in p.platform_tags:
            base += ["--platform", tag]
        offline = subprocess.run(
            [*base, "--no-index", "--find-links", str(folder), *self.requirements],
            capture_output=True,
            text=True,
        )
        if offline.returncode != 0:
            if not ctx.allow_download:
                raise DeployError(
                    f"the wheel cache {folder} lacks {', '.join(self.requirements)}"
                    " and downloading is off"
                )
            ctx.log(f"downloading wheels for CPython {p.python_tag} on {p.platform_tags[:1]}")
            online = subprocess.run([*base, *self.requirements], capture_output=True, text=True)
            if online.returncode != 0:
                last = (online.stderr.strip().splitlines() or ["pip failed"])[-1]
                raise DeployError(f"downloading wheels for {ctx.target.name} failed: {last}")
        return sorted(folder.glob("*.whl"))


def _checked(result: Any, message: str) -> None:
    if result.cancelled:
        from designer.activities.targets.base import Cancelled

        raise Cancelled("deployment cancelled")
    if not result.ok:
        raise DeployError(f"{message}: {result.last_error_line()}")


StatusCallback = Callable[[int, int, DependencyStatus], None]


class Deployment:
    """The dependencies of one activity on one target's deployment folder."""

    def __init__(
        self,
        target: Target,
        deploy_dir: str,
        dependencies: Sequence[Dependency],
        *,
        wheel_cache: Path | None = None,
        allow_download: bool = True,
    ) -> None:
        self.target = target
        self.deploy_dir = deploy_dir
        self.dependencies = list(dependencies)
        self.wheel_cache = wheel_cache if wheel_cache is not None else wheel_cache_dir()
        self.allow_download = allow_download
        self._ctx: DeployContext | None = None

    @property
    def root(self) -> str:
        return self.context().root

    @property
    def copied(self) -> list[str]:
        """Remote paths copied by the last :meth:`deploy` (empty when all was current)."""
        return self._ctx.copied if self._ctx else []

    def context(
        self, log: LineCallback | None = None, cancel: CancelToken | None = None
    ) -> DeployContext:
        if self._ctx is None:
            root = self.target.check_writable(self.deploy_dir)
            self._ctx = DeployContext(
                self.target,
                root,
                self.target.platform(),
                self._read_manifest(root),
                self.wheel_cache,
                self.allow_download,
                log or (lambda _: None),
                cancel,
            )
        if log is not None:
            self._ctx.log = log
        self._ctx.cancel = cancel
        return self._ctx

    def _read_manifest(self, root: str) -> dict[str, Any]:
        with tempfile.TemporaryDirectory() as tmp:
            local = Path(tmp) / MANIFEST
            try:
                self.target.get(f"{root.rstrip('/')}/{MANIFEST}", local)
                data = json.loads(local.read_text(encoding="utf-8"))
            except (TargetError, ValueError, OSError) as exc:  # none yet: deploy everything
                logger.debug("no usable deployment manifest under %s (%s)", root, exc)
                return {}
        return data if isinstance(data, dict) else {}

    def _write_manifest(self, ctx: DeployContext) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            local = Path(tmp) / MANIFEST
            local.write_text(json.dumps(ctx.manifest, indent=1, sort_keys=True))
            self.target.put(local, ctx.path(MANIFEST))

    def check(
        self, progress: StatusCallback | None = None, cancel: CancelToken | None = None
    ) -> list[DependencyStatus]:
        """The state of every dependency, in order; ``progress(i, n, status)`` after each."""
        ctx = self.context(cancel=cancel)
        statuses = []
        for i, dep in enumerate(self.dependencies):
            if cancel is not None:
                cancel.raise_if_cancelled()
            status = dep.check(ctx)
            statuses.append(status)
            if progress is not None:
                progress(i + 1, len(self.dependencies), status)
        return statuses

    def deploy(
        self,
        progress: StatusCallback | None = None,
        log: LineCallback | None = None,
        cancel: CancelToken | None = None,
    ) -> list[DependencyStatus]:
        """Check, then deploy what is not current (in order), then write the manifest.
        Returns the statuses after deployment. Raises DeployError/Cancelled."""
        ctx = self.context(log, cancel)
        ctx.copied = []
        result = []
        changed = False
        for i, dep in enumerate(self.dependencies):
            if cancel is not None:
                cancel.raise_if_cancelled()
            status = dep.check(ctx)
            if not status.current:
                ctx.log(f"deploying {status.label} ({status.state.value})")
                dep.deploy(ctx)
                changed = True
                status = DependencyStatus(
                    status.key, status.label, DependencyState.CURRENT, "deployed"
                )
            result.append(status)
            if progress is not None:
                progress(i + 1, len(self.dependencies), status)
        if changed:
            self._write_manifest(ctx)
        return result
