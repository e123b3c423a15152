"""Overhead of the ORT profiling activity over a bare onnxruntime run of the same model.

Three timings of the same work (load + warm-up + N profiled runs + writing the profile):
- bare: ``python -c`` doing exactly that with onnxruntime, nothing else;
- local: :func:`run_ort_profile` on :class:`LocalTarget` (runner script in a subprocess);
- ssh: the same on an SSH target (a private sshd on loopback, started here), second launch
  with the deployment cached: connect, check, hash-compare the model, run, copy back.
Target: under 1 s extra per cached launch. Printed as seconds and ratios.

Run: ``.venv/bin/python bench/bench_activities.py [--iterations 10] [--repeat 3] [--no-ssh]``.
The SSH part needs /usr/sbin/sshd and a system python3 of the venv's minor version.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from designer.activities.runner import OrtProfileOptions, ort_deployment, run_ort_profile
from designer.activities.targets import LocalTarget, SshSettings, SshTarget, accept_new

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "activities"))  # the sshd and wheel-cache helpers

MODEL = ROOT / "resources" / "examples" / "tiny_cnn.onnx"
BARE = """
import os, sys, numpy as np, onnxruntime as ort
model, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
so = ort.SessionOptions(); so.enable_profiling = True; so.profile_file_prefix = out
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
feed = {i.name: np.random.rand(*[d if isinstance(d, int) else 1 for d in i.shape])
        .astype(np.float32) for i in s.get_inputs()}
for _ in range(n + 1):
    s.run(None, feed)
os.replace(s.end_profiling(), out + ".json")
"""


def median_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def report(label: str, seconds: float, bare: float) -> None:
    print(f"{label:<28} {seconds:7.3f} s   x{seconds / bare:5.2f}   +{seconds - bare:6.3f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-ssh", action="store_true")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-activities-"))
    model = tmp / "model.onnx"
    shutil.copy(MODEL, model)
    options = OrtProfileOptions(model, iterations=args.iterations, warmup=1, output=tmp / "p.json")

    def bare() -> None:
        subprocess.run(
            [sys.executable, "-c", BARE, str(model), str(tmp / "bare"), str(args.iterations)],
            check=True,
        )

    def local() -> None:
        assert run_ort_profile(LocalTarget(), options).status == "ok"

    t_bare = median_time(bare, args.repeat)
    print(f"model {MODEL.name}, {args.iterations} iterations + 1 warm-up, median of {args.repeat}")
    report("bare onnxruntime (python -c)", t_bare, t_bare)
    report("local activity", median_time(local, args.repeat), t_bare)
    if not args.no_ssh:
        bench_ssh(options, t_bare, args.repeat, tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def bench_ssh(options: OrtProfileOptions, t_bare: float, repeat: int, tmp: Path) -> None:
    from sshd import SshServer, ensure_test_user, keygen, make_server_folder, sshd_missing_reason
    from wheels import make_wheel_cache

    reason = sshd_missing_reason()
    if reason:
        print(f"ssh: skipped ({reason})")
        return
    folder = make_server_folder()
    user = ensure_test_user()
    key = keygen(folder / "client")
    (folder / "authorized_keys").write_text(Path(f"{key}.pub").read_text())
    (folder / "authorized_keys").chmod(0o644)
    server = SshServer(folder, folder / "authorized_keys").start()
    settings = SshSettings(
        "127.0.0.1",
        user.name,
        server.port,
        key_file=key,
        known_hosts=folder / "kh",
        ssh_config=folder / "none",
    )
    deploy_dir = f".designer-bench/{uuid.uuid4().hex[:8]}"
    try:
        with SshTarget(settings, accept_new).connect() as target:
            p = target.platform()
            cache = tmp / "wheels"
            make_wheel_cache(cache / f"cp{p.python_tag}-{p.platform_tags[0]}")
            start = time.perf_counter()
            ort_deployment(target, deploy_dir, wheel_cache=cache, allow_download=False).deploy()
            print(f"ssh first deployment (offline wheels): {time.perf_counter() - start:.1f} s")

        def launch() -> None:
            with SshTarget(settings).connect() as target:
                dep = ort_deployment(target, deploy_dir, wheel_cache=cache, allow_download=False)
                assert run_ort_profile(target, options, deployment=dep).status == "ok"

        launch()  # first launch copies the model
        report("ssh activity (cached launch)", median_time(launch, repeat), t_bare)
        with SshTarget(settings).connect() as target:
            target.remove(target.resolve(deploy_dir))
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
