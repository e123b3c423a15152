"""Find TensorRT on a target: where it is, which version, whether a GPU is there.

One ``sh`` probe runs ON THE TARGET (this machine or over SSH) and reports what it sees, so the
same code covers a local machine, an x86_64 server and a Jetson. Order of preference:

1. a custom trtexec (absolute, or relative to the deployment folder);
2. on a Jetson (L4T: ``/etc/nv_tegra_release``, aarch64): the system TensorRT that JetPack
   installs, ``/usr/src/tensorrt/bin/trtexec`` and the system ``python3``'s ``tensorrt`` —
   never pip wheels there;
3. elsewhere: ``/usr/src/tensorrt/bin/trtexec``, ``trtexec`` on PATH, then the ``tensorrt``
   wheels in the deployment venv (Python builder path; the wheels ship no trtexec, and the
   standalone binary wheels' module is ``tensorrt_bindings``), then the system ``python3``'s
   ``tensorrt``.

The version is read from trtexec's banner (``trtexec --help``) or ``tensorrt.__version__``.
GPU: ``nvidia-smi -L``, ``/dev/nvidia0``, on a Jetson ``/dev/nvhost-ctrl-gpu`` or
``/dev/nvgpu/igpu0``. Clock locking:
``jetson_clocks`` (Jetson) or ``nvidia-smi -lgc`` where we are root or ``sudo -n`` works.
All probed paths are fields of :class:`TrtProbePaths` so tests can point them elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from designer.activities.targets.base import CancelToken, Target, TargetError
from designer.activities.trt.options import TrtOptionError
from designer.activities.trt.version import TrtVersion, parse_banner, parse_python_version

__all__ = [
    "SOURCES",
    "TrtDetection",
    "TrtProbePaths",
    "detect_tensorrt",
    "lock_clocks_argv",
    "parse_probe",
]


@dataclass(frozen=True)
class TrtProbePaths:
    """Where the probe looks on the target."""

    nv_tegra_release: str = "/etc/nv_tegra_release"
    system_trtexec: str = "/usr/src/tensorrt/bin/trtexec"
    system_python: str = "python3"
    # dGPU, Jetson (Xavier and earlier: nvhost-ctrl-gpu; Orin / JetPack 6: nvgpu/igpu0).
    gpu_devices: tuple[str, ...] = ("/dev/nvidia0", "/dev/nvhost-ctrl-gpu", "/dev/nvgpu/igpu0")
    nvidia_smi: str = "nvidia-smi"
    jetson_clocks: str = "jetson_clocks"


# $1 tegra file, $2 system trtexec, $3 custom trtexec ("" = none), $4 venv python ("" = none),
# $5 system python, $6 nvidia-smi, $7 jetson_clocks, $8.. GPU device nodes.
PROBE = r"""
TRTPY="import importlib, importlib.util as u
n = 'tensorrt' if u.find_spec('tensorrt') else 'tensorrt_bindings'
print(importlib.import_module(n).__version__)"
tegra=$1; sys_trtexec=$2; custom=$3; venv_py=$4; sys_py=$5; smi=$6; jc=$7; shift 7
echo "machine=$(uname -m)"
if [ -r "$tegra" ]; then echo "tegra=$(head -n 1 "$tegra")"; fi
banner() { "$1" --help 2>&1 | head -n 1; }
if [ -n "$custom" ]; then
  if [ -x "$custom" ]; then
    echo "custom=$custom"; echo "custom_banner=$(banner "$custom")"
  else echo "custom_missing=$custom"; fi
fi
if [ -x "$sys_trtexec" ]; then
  echo "system=$sys_trtexec"; echo "system_banner=$(banner "$sys_trtexec")"
fi
onpath=$(command -v trtexec 2>/dev/null)
if [ -n "$onpath" ]; then echo "path=$onpath"; echo "path_banner=$(banner "$onpath")"; fi
trtpy() { "$1" -c "$TRTPY" 2>/dev/null | tail -n 1; }
if [ -n "$venv_py" ] && [ -x "$venv_py" ]; then
  v=$(trtpy "$venv_py"); [ -n "$v" ] && echo "venv_trt=$v"
fi
sp=$(command -v "$sys_py" 2>/dev/null)
if [ -n "$sp" ]; then echo "sys_python=$sp"; v=$(trtpy "$sp"); [ -n "$v" ] && echo "sys_trt=$v"; fi
s=$(command -v "$smi" 2>/dev/null)
if [ -n "$s" ]; then echo "smi=$s"; echo "smi_gpu=$("$s" -L 2>/dev/null | head -n 1)"; fi
for d in "$@"; do if [ -e "$d" ]; then echo "device=$d"; fi; done
j=$(command -v "$jc" 2>/dev/null); [ -n "$j" ] && echo "jetson_clocks=$j"
echo "uid=$(id -u)"
if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then echo "sudo=1"; fi
"""


@dataclass(frozen=True)
class TrtDetection:
    """What the probe found. ``method`` says how a build runs: "trtexec" or "python"."""

    target: str
    machine: str = ""
    jetson: bool = False
    l4t: str | None = None
    source: str | None = None  # custom | system | path | deployed | python
    trtexec: str | None = None
    python: str | None = None  # a python with tensorrt (deployed venv or system)
    version: TrtVersion | None = None
    gpu: bool = False
    gpu_detail: str = ""
    can_lock_clocks: bool = False
    clocks_detail: str = ""
    reason: str = ""
    raw: dict[str, str] = field(default_factory=dict)

    @property
    def found(self) -> bool:
        return self.source is not None

    @property
    def method(self) -> str | None:
        if self.trtexec:
            return "trtexec"
        return "python" if self.python else None

    @property
    def state(self) -> str:
        """``found-gpu`` / ``found-no-gpu`` / ``missing`` (the dependency panel's three)."""
        if not self.found:
            return "missing"
        return "found-gpu" if self.gpu else "found-no-gpu"

    @property
    def summary(self) -> str:
        """One line for the dependency panel."""
        if not self.found:
            return f"no TensorRT: {self.reason}"
        where = {
            "custom": f"custom trtexec {self.trtexec}",
            "system": f"system trtexec {self.trtexec}",
            "path": f"trtexec {self.trtexec}",
            "deployed": f"deployed wheels ({self.python})",
            "python": f"tensorrt of {self.python}",
        }[self.source or "path"]
        version = f"TensorRT {self.version}" if self.version else "TensorRT (version unknown)"
        board = " on a Jetson (JetPack's system TensorRT)" if self.jetson else ""
        gpu = "GPU found" if self.gpu else f"no GPU ({self.gpu_detail})"
        return f"{version} found, {gpu}{board} — {where}"


def _parse_lines(stdout: str) -> dict[str, str]:
    raw: dict[str, str] = {}
    for line in stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.isidentifier() and key not in raw:
            raw[key] = value.strip()
    return raw


SOURCES = ("system", "deployed", "custom")
# Which found kinds each user choice accepts.
_ACCEPTS = {
    "system": ("system", "path", "python"),
    "deployed": ("deployed",),
    "custom": ("custom",),
}


def parse_probe(
    stdout: str,
    target: str,
    *,
    venv_python: str | None = None,
    source: str | None = None,
    deploy_dir: str | None = None,
) -> TrtDetection:
    """A :class:`TrtDetection` from :data:`PROBE`'s output (pure; the tests feed it too).
    ``source`` restricts the choice to "system", "deployed" or "custom" (None: the first found
    in the module's order of preference)."""
    raw = _parse_lines(stdout)
    machine = raw.get("machine", "")
    jetson = "tegra" in raw and machine == "aarch64"
    l4t = raw.get("tegra") if "tegra" in raw else None
    devices = [v for k, v in _all(stdout, "device")]
    smi_gpu = raw.get("smi_gpu", "")
    gpu = bool(smi_gpu.startswith("GPU ")) or bool(devices)
    if gpu:
        gpu_detail = smi_gpu or f"{devices[0]} present"
    elif "smi" in raw:
        gpu_detail = "nvidia-smi lists no GPU"
    else:
        gpu_detail = "no nvidia-smi, no /dev/nvidia0" + (
            ", /dev/nvhost-ctrl-gpu or /dev/nvgpu/igpu0" if jetson else ""
        )
    root = raw.get("uid") == "0"
    can_sudo = raw.get("sudo") == "1"
    if jetson:
        if "jetson_clocks" not in raw:
            can_lock, clocks = False, "jetson_clocks is not installed"
        elif root or can_sudo:
            can_lock, clocks = True, f"{raw['jetson_clocks']} ({'root' if root else 'sudo -n'})"
        else:
            can_lock, clocks = False, "jetson_clocks needs root or passwordless sudo"
    elif "smi" in raw and gpu:
        can_lock = root or can_sudo
        clocks = (
            f"nvidia-smi -lgc ({'root' if root else 'sudo -n'})"
            if can_lock
            else "nvidia-smi -lgc needs root or passwordless sudo"
        )
    else:
        can_lock, clocks = False, "no GPU whose clocks could be locked"
    base = {
        "target": target,
        "machine": machine,
        "jetson": jetson,
        "l4t": l4t,
        "gpu": gpu,
        "gpu_detail": gpu_detail,
        "can_lock_clocks": can_lock,
        "clocks_detail": clocks,
        "raw": raw,
    }
    if "custom_missing" in raw:
        return TrtDetection(
            **base,  # type: ignore[arg-type]
            reason=f"the custom trtexec {raw['custom_missing']} is missing or not executable:"
            " correct the path (absolute, or relative to the deployment folder)",
        )
    sys_python = raw.get("sys_python")
    sys_trt = parse_python_version(raw.get("sys_trt", ""))
    candidates: list[tuple[str, str | None, str | None, TrtVersion | None]] = []
    if "custom" in raw:
        candidates.append(
            ("custom", raw["custom"], None, parse_banner(raw.get("custom_banner", "")))
        )
    if "system" in raw:
        candidates.append(
            ("system", raw["system"], None, parse_banner(raw.get("system_banner", "")))
        )
    if "path" in raw and not jetson:
        candidates.append(("path", raw["path"], None, parse_banner(raw.get("path_banner", ""))))
    venv_trt = parse_python_version(raw.get("venv_trt", ""))
    if venv_trt and not jetson:
        candidates.append(("deployed", None, venv_python, venv_trt))
    if sys_trt and sys_python:
        candidates.append(("python", None, sys_python, sys_trt))
    if jetson and "path" in raw and not candidates:
        candidates.append(("path", raw["path"], None, parse_banner(raw.get("path_banner", ""))))
    if source is not None:
        candidates = [c for c in candidates if c[0] in _ACCEPTS[source]]
        if not candidates:
            if source == "deployed":
                why = (
                    "TensorRT wheels are never deployed on a Jetson: choose the system TensorRT"
                    if jetson
                    else f"no TensorRT deployed in {deploy_dir or 'the deployment folder'}:"
                    " Deploy installs the tensorrt wheels (x86_64 Linux only)"
                )
            elif source == "custom":
                why = "no custom trtexec path given: enter one (absolute or relative to the"
                why += " deployment folder)"
            else:
                why = ""
            if why:
                return TrtDetection(**base, reason=why)  # type: ignore[arg-type]
    if not candidates:
        if jetson:
            why = (
                f"no {raw.get('system') or '/usr/src/tensorrt/bin/trtexec'} and no tensorrt in the"
                " system python3 on this Jetson: install JetPack's TensorRT"
                " (sudo apt install nvidia-jetpack, or nvidia-tensorrt)"
            )
        elif machine == "x86_64":
            why = (
                "no trtexec (/usr/src/tensorrt/bin, PATH) and no tensorrt module: deploy the"
                " tensorrt wheels into the deployment venv, or give a custom trtexec path"
            )
        else:
            why = (
                f"no trtexec and no tensorrt module on this {machine or 'unknown'} machine:"
                " give a custom trtexec path"
            )
        return TrtDetection(**base, reason=why)  # type: ignore[arg-type]
    source, trtexec, python, version = candidates[0]
    # A trtexec found: keep a Python with tensorrt too (for the Python builder path).
    if python is None:
        python = venv_python if venv_trt and not jetson else (sys_python if sys_trt else None)
    version = version or (venv_trt if source == "deployed" else sys_trt)
    reason = ""
    if version is None and trtexec:
        printed = raw.get(f"{source}_banner", "") or "nothing"
        reason = (
            f"{trtexec} --help printed {printed[:80]!r}, not trtexec's version banner: check that"
            " it runs there (its libraries on LD_LIBRARY_PATH)"
        )
    return TrtDetection(
        **base,  # type: ignore[arg-type]
        source=source,
        trtexec=trtexec,
        python=python,
        version=version,
        reason=reason,
    )


def _all(stdout: str, key: str) -> list[tuple[str, str]]:
    prefix = key + "="
    return [
        (key, line[len(prefix) :].strip())
        for line in stdout.splitlines()
        if line.startswith(prefix)
    ]


def detect_tensorrt(
    target: Target,
    *,
    deploy_dir: str | None = None,
    custom: str | None = None,
    source: str | None = None,
    probe: TrtProbePaths | None = None,
    cancel: CancelToken | None = None,
    timeout: float = 60.0,
) -> TrtDetection:
    """Probe ``target`` (one command). ``custom`` may be relative to ``deploy_dir``;
    ``source`` is the user's choice ("system", "deployed", "custom"; None = automatic).
    Never raises for "nothing found" (see ``.found`` / ``.reason``); raises TargetError when
    the probe itself cannot run."""
    if source is not None and source not in SOURCES:
        raise TrtOptionError(f"TensorRT source {source!r} is not one of: {', '.join(SOURCES)}")
    paths = probe or TrtProbePaths()
    root = target.resolve(deploy_dir) if deploy_dir else None
    venv_python = f"{root.rstrip('/')}/venv/bin/python" if root else ""
    custom_path = ""
    if custom:
        if custom.startswith("/") or root is None:
            custom_path = target.resolve(custom)
        else:
            custom_path = f"{root.rstrip('/')}/{custom}"
    argv = [
        "sh",
        "-c",
        PROBE,
        "probe",
        paths.nv_tegra_release,
        paths.system_trtexec,
        custom_path,
        venv_python,
        paths.system_python,
        paths.nvidia_smi,
        paths.jetson_clocks,
        *paths.gpu_devices,
    ]
    result = target.run(argv, cancel=cancel, timeout=timeout)
    if result.cancelled:
        from designer.activities.targets.base import Cancelled

        raise Cancelled("TensorRT detection cancelled")
    if result.exit_code != 0 and "machine=" not in result.stdout:
        raise TargetError(f"{target.name}: the TensorRT probe failed: {result.last_error_line()}")
    return parse_probe(
        result.stdout,
        target.name,
        venv_python=venv_python or None,
        source=source,
        deploy_dir=root,
    )


def lock_clocks_argv(det: TrtDetection, store: str) -> tuple[list[str], list[str]]:
    """(lock, restore) argument vectors for "lock clocks", run on the target around the
    profiling run (restore even when the run fails). ``store`` is a file on the target where
    a Jetson's current clocks are saved (``jetson_clocks --store``) for the restore.

    On a Jetson ``jetson_clocks`` pins the clocks at their maximum (what JetPack offers); on
    other NVIDIA GPUs ``nvidia-smi -lgc tdp,tdp`` locks the graphics clock to its base (TDP)
    clock and ``nvidia-smi -rgc`` resets it. TrtOptionError where the target does not allow
    it (``det.clocks_detail`` says why)."""
    if not det.can_lock_clocks:
        raise TrtOptionError(f"cannot lock the clocks on {det.target}: {det.clocks_detail}")
    sudo = [] if det.raw.get("uid") == "0" else ["sudo", "-n"]
    if det.jetson:
        tool = det.raw.get("jetson_clocks", "jetson_clocks")
        return (
            [*sudo, "sh", "-c", '"$0" --store "$1" && "$0"', tool, store],
            [*sudo, tool, "--restore", store],
        )
    smi = det.raw.get("smi", "nvidia-smi")
    return ([*sudo, smi, "-lgc", "tdp,tdp"], [*sudo, smi, "-rgc"])
