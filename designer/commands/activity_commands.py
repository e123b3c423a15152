"""``profile ort`` and ``connection add|list|remove|test``: activities from the command line.

Targets: ``local`` (default), a saved connection's name, or ``ssh://user@host[:port][/dir]``
(``/dir`` absolute; ``/~/dir`` in the home folder).
An unknown host key is refused unless ``--accept-new-host-key`` (then it is added to
known_hosts, like OpenSSH's accept-new). A password comes from the keyring, else from
``$ONNX_DESIGNER_SSH_PASSWORD``, else a prompt when stdin is a terminal.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

PASSWORD_ENV = "ONNX_DESIGNER_SSH_PASSWORD"
T = TypeVar("T")


def _err(message: str) -> None:
    print(f"onnx-designer: {message}", file=sys.stderr)


def _ask_secret(prompt: str) -> str | None:
    value = os.environ.get(PASSWORD_ENV)
    if value is not None:
        return value
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass(prompt)
    return None


def _connection(args: argparse.Namespace) -> Any:
    """The Connection named by ``args.target`` with command-line overrides applied."""
    from designer.activities.connections import Connection, ConnectionStore, parse_ssh_url

    spec: str = args.target
    conn: Connection = (
        parse_ssh_url(spec) if spec.startswith("ssh://") else ConnectionStore().get(spec)
    )
    if args.identity:
        conn.key_file, conn.auth = str(args.identity), "key"
    if args.known_hosts:
        conn.known_hosts = str(args.known_hosts)
    if getattr(args, "ssh_config", None):
        conn.ssh_config = str(args.ssh_config)
    if getattr(args, "deploy_dir", None):
        conn.deploy_dir = args.deploy_dir
    return conn


def _open_ssh(args: argparse.Namespace) -> tuple[Any, Any]:
    from designer.activities import secrets
    from designer.activities.targets import SshTarget, accept_new, refuse_unknown

    conn = _connection(args)
    password = None
    if conn.auth == "password" and secrets.get_secret(conn.secret_account()) is None:
        password = _ask_secret(f"password for {conn.name}: ")
        if password is None:
            raise _designer_error(
                f"{conn.name} needs a password: set ${PASSWORD_ENV} or run in a terminal"
            )
    decide = accept_new if args.accept_new_host_key else refuse_unknown
    settings = dataclasses.replace(
        conn.settings(password=password), connect_timeout=args.connect_timeout
    )
    target = SshTarget(settings, decide).connect()
    return conn, target


def _designer_error(message: str) -> Exception:
    from designer.core.errors import DesignerError

    return DesignerError(message)


class VerboseLog:
    """``-v``: the activity log streamed to stderr one line late, so that the log's final
    ``error: …`` line is not printed again above the command's own one-line error."""

    def __init__(self) -> None:
        self._held: str | None = None

    def __call__(self, line: str) -> None:
        if self._held is not None:
            print(self._held, file=sys.stderr)
        self._held = line

    def finish(self, error: str | None) -> None:
        """Print the held last line unless it is ``error: <error>``."""
        held, self._held = self._held, None
        if held is not None and (error is None or held != f"error: {error}"):
            print(held, file=sys.stderr)


# How long Ctrl+C waits for a cancelled activity to stop (kill its process, keep its log).
CANCEL_GRACE_S = 30.0
# The exit code of a run the user cancelled: the one of every other interrupted command
# (``cli.main`` answers KeyboardInterrupt with 1, the README's "1 a failure").
CANCELLED_EXIT = 1


def _run_cancellable(fn: Callable[[Any], T]) -> T:
    """Run ``fn(cancel_token)`` on a worker thread and return what it returns.

    Ctrl+C cancels the token and waits up to :data:`CANCEL_GRACE_S` for ``fn`` to return
    (an activity then returns its "cancelled" result, with its log kept). A second Ctrl+C
    while waiting raises KeyboardInterrupt; ``fn`` not returning in time, DesignerError.

    The wait is on an Event, never ``Thread.join``: on Python 3.11 a KeyboardInterrupt
    raised inside ``join`` releases the running thread's state lock and marks it stopped
    (the bpo-45274 handler in ``Thread._wait_for_tstate_lock``), so every later ``join``
    returns at once, before ``fn`` has returned."""
    from designer.activities.targets import CancelToken

    token = CancelToken()
    done = threading.Event()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = fn(token)
        except BaseException as exc:  # re-raised on the main thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, daemon=True).start()
    try:
        while not done.wait(0.1):
            pass
    except KeyboardInterrupt:
        token.cancel()
        if not done.wait(CANCEL_GRACE_S):
            raise _designer_error(
                f"cancelled by the user, but the run did not stop within {CANCEL_GRACE_S:g} s;"
                " a process may still run on the target: check it and end it there"
            ) from None
    if "error" in box:
        raise box["error"]
    return cast(T, box["value"])


def report_cancelled(kept: str | None) -> int:
    """Say on stderr that the user cancelled the run and what it left (``log kept: PATH``);
    return :data:`CANCELLED_EXIT`."""
    _err("cancelled by the user" + (f" ({kept})" if kept else ""))
    return CANCELLED_EXIT


def unknown_dims(option: str, given: Iterable[str], model: Any) -> str | None:
    """The usage error of a ``option NAME=V`` whose NAME is no free dimension of ``model``
    (one line naming the ones it has), or None when every name is one."""
    from designer.activities.numerics import free_dims

    names = free_dims(model)
    bad = [name for name in given if name not in names]
    if not bad:
        return None
    has = f"its free dims: {', '.join(names)}" if names else "its inputs have none by name"
    options = ", ".join(f"{option} {b}" for b in bad)
    which = ", ".join(repr(b) for b in bad)
    plural = "s" if len(bad) > 1 else ""
    return (
        f"onnx-designer: error: {options}: the model has no free dimension{plural} {which} ({has})"
    )


def _profile_ort(args: argparse.Namespace) -> int:
    from designer.activities.reports import model_nodes, parse_ort_profile
    from designer.activities.runner import OrtProfileOptions, ort_deployment, run_ort_profile
    from designer.activities.targets import LocalTarget
    from designer.core.io import read_model

    dims = {}
    for item in args.dim:
        name, sep, value = item.partition("=")
        if not sep or not value.isdigit():
            raise _designer_error(f"--dim {item!r}: expected NAME=POSITIVE_INTEGER")
        dims[name] = int(value)
    model = read_model(args.model)  # one clear error for a bad model, before any connection
    usage = unknown_dims("--dim", dims, model)
    if usage is not None:  # a name the model lacks would be ignored: the run is not the asked one
        print(usage, file=sys.stderr)
        return 2
    options = OrtProfileOptions(
        model=args.model,
        iterations=args.iterations,
        warmup=args.warmup,
        provider=args.provider,
        optimize=args.optimize,
        threads=args.threads,
        inputs_dir=args.inputs,
        dims=dims,
        output=args.output,
    )
    log = VerboseLog() if args.verbose else None
    if args.target == "local":
        target: Any = LocalTarget()
        deployment = None
    else:
        conn, target = _open_ssh(args)
        deployment = ort_deployment(target, conn.deploy_dir, allow_download=not args.offline)
    try:
        result = _run_cancellable(
            lambda token: run_ort_profile(
                target, options, deployment=deployment, on_log=log, cancel=token
            )
        )
    finally:
        target.close()
    if log is not None:
        log.finish(result.error)
    if result.status == "cancelled":
        return report_cancelled(
            f"partial profile kept: {result.profile}" if result.profile else None
        )
    if result.status != "ok":
        kept = f" (partial profile kept: {result.profile})" if result.profile else ""
        _err(f"error: {result.error}{kept}")
        return 1
    if result.profile is None:  # the profiler exited 0 but wrote nothing
        _err(f"error: the profiler wrote no profile for {args.model}: run again with -v")
        return 1
    report = parse_ort_profile(result.profile, warmup=args.warmup, model_nodes=model_nodes(model))
    s = report.summary
    print(f"profile: {result.profile}")
    print(
        f"model load {s.load_ms:.2f} ms, session init {s.init_ms:.2f} ms, first run "
        f"{s.first_run_ms or 0:.3f} ms"
    )
    if s.median_ms is not None:
        print(
            f"{s.measured_runs} runs: median {s.median_ms:.3f} ms, p90 {s.p90_ms:.3f} ms, "
            f"p99 {s.p99_ms:.3f} ms, min {s.min_ms:.3f} ms, max {s.max_ms:.3f} ms, "
            f"{s.throughput_per_s:.1f}/s"
        )
    for node in report.nodes[:5]:
        print(f"  {node.percent:5.1f}%  {node.op_type:<16} {node.name}")
    for warning in report.warnings:
        _err(f"warning: {result.profile}: {warning}")
    if args.report_dir:
        for path in _write_reports(result.profile, model, report, args.report_dir):
            print(f"wrote {path}")
    return 0


def _write_reports(profile: Path, model: Any, report: Any, folder: Path) -> list[Path]:
    """What ``onnx-designer report PROFILE --model MODEL`` writes (the six reports, same
    names and layouts), over the runs after the warm-up ones as the printed summary, plus
    the timeline of the typical run. Raises DesignerError (one line)."""
    from designer.activities.analysis.analyze import analyze
    from designer.activities.reports import write_tables

    runs = len(report.iterations)
    start = min(report.summary.warmup_runs, runs - 1) if runs else None
    analysis = analyze(profile, model=model, iter_start=start)
    tables = {**analysis.tables(), "timeline": report.tables()["timeline"]}
    try:
        return write_tables(tables, folder, analysis.profile.name)
    except OSError as exc:
        raise _designer_error(f"{folder}: cannot write ({exc.strerror or exc})") from None


def _connection_add(args: argparse.Namespace) -> int:
    from designer.activities import secrets
    from designer.activities.connections import Connection, ConnectionStore

    auth: Literal["password", "key"] = "password" if args.password else "key"
    conn = Connection(
        host=args.host,
        user=args.user,
        port=args.port,
        auth=auth,
        key_file=str(Path(args.key).expanduser().resolve()) if args.key else None,
        deploy_dir=args.deploy_dir,
        known_hosts=args.known_hosts,
        ssh_config=args.ssh_config,
        name=args.name or "",
    )
    ConnectionStore().add(conn, replace=args.replace)
    if args.password:
        secret = _ask_secret(f"password for {conn.name}: ")
        if secret and not secrets.set_secret(conn.secret_account(), secret):
            _err("note: no system keyring; the password is not saved and will be asked again")
    print(f"saved connection {conn.name}")
    return 0


def _connection_list(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from designer.activities.connections import ConnectionStore

    items = ConnectionStore().list()
    if args.json:
        print(json.dumps([asdict(c) for c in items], indent=2))
        return 0
    for c in items:
        how = f"key {c.key_file}" if c.auth == "key" else "password"
        print(f"{c.name}\t{c.user}@{c.host}:{c.port}\t{how}\tdeploy: {c.deploy_dir}")
    return 0


def _connection_remove(args: argparse.Namespace) -> int:
    from designer.activities.connections import ConnectionStore

    ConnectionStore().remove(args.name)
    print(f"removed connection {args.name}")
    return 0


def _connection_test(args: argparse.Namespace) -> int:
    conn, target = _open_ssh(args)
    try:
        platform = target.platform()
        deploy = target.check_writable(conn.deploy_dir)
    finally:
        target.close()
    print(f"{conn.name}: OK ({platform.describe()}, deployment folder {deploy} writable)")
    return 0


def _ssh_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--identity", type=Path, metavar="KEY", help="private key file")
    p.add_argument("--known-hosts", type=Path, metavar="FILE", help="known_hosts file")
    p.add_argument(
        "--accept-new-host-key",
        action="store_true",
        help="trust an unknown host key and add it to known_hosts",
    )
    p.add_argument(
        "--ssh-config",
        type=Path,
        metavar="FILE",
        help="OpenSSH config for ProxyJump/ProxyCommand (default ~/.ssh/config)",
    )
    p.add_argument("--deploy-dir", metavar="DIR", help="deployment folder on the target")
    p.add_argument(
        "--connect-timeout",
        type=_positive_seconds,
        default=15.0,
        metavar="SECONDS",
        help="give up connecting (and on the SSH handshake) after this long (default 15)",
    )


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError("give a number of seconds between 0 and 3600")
    return value


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    profile = sub.add_parser(
        "profile",
        help="profile a model (ONNX Runtime, TensorRT)",
        description="Profile a model on this machine or an SSH target.",
    )
    kinds = profile.add_subparsers(dest="profiler", metavar="PROFILER", required=True)
    ort = kinds.add_parser(
        "ort",
        help="profile with ONNX Runtime",
        description="Run ONNX Runtime's profiler on MODEL (random inputs unless --inputs) and "
        "print a summary; --report-dir writes what `onnx-designer report PROFILE --model MODEL` "
        "writes (summary, detail, op_type, iteration, kernel, expert; runs after the warm-up), "
        "plus the timeline, as CSV and JSON.",
    )
    ort.add_argument("model", type=Path, help="the .onnx file")
    ort.add_argument(
        "--target",
        default="local",
        help="local (default), a saved connection name, or ssh://user@host:port[/DIR] "
        "(/DIR absolute, /~/DIR in the home folder)",
    )
    _ssh_options(ort)
    ort.add_argument("--iterations", type=int, default=10, metavar="N")
    ort.add_argument("--warmup", type=int, default=1, metavar="N")
    ort.add_argument("--provider", default="CPUExecutionProvider", metavar="P")
    ort.add_argument("--optimize", action="store_true", help="ORT_ENABLE_ALL graph optimization")
    ort.add_argument("--threads", type=int, default=0, metavar="N", help="intra-op threads")
    ort.add_argument(
        "--inputs",
        type=Path,
        metavar="DIR",
        help="folder of TensorProto .pb files named after the inputs",
    )
    ort.add_argument(
        "--dim",
        action="append",
        default=[],
        metavar="NAME=V",
        help="value of a named free dimension of the model's inputs for random inputs "
        "(default 1; a name the model lacks is a usage error)",
    )
    ort.add_argument(
        "--output",
        type=Path,
        metavar="PROFILE.json",
        help="profile path (default <model>.ort-profile.json)",
    )
    ort.add_argument(
        "--report-dir",
        type=Path,
        metavar="DIR",
        help="write the reports of `report` (and the timeline) into DIR",
    )
    ort.add_argument(
        "--offline",
        action="store_true",
        help="never download wheels; use the host wheel cache only",
    )
    ort.add_argument("-v", "--verbose", action="store_true", help="stream the log to stderr")
    ort.set_defaults(handler=_profile_ort)
    from designer.commands.trt_profile_cli import add_profile_trt

    add_profile_trt(kinds)

    conn = sub.add_parser(
        "connection",
        help="manage SSH connections",
        description="Saved SSH targets (never with passwords in the file).",
    )
    verbs = conn.add_subparsers(dest="verb", metavar="VERB", required=True)
    add = verbs.add_parser("add", help="save a connection")
    add.add_argument("--name", help="default user@host:port")
    add.add_argument("--host", required=True)
    add.add_argument("--user", required=True)
    add.add_argument("--port", type=int, default=22)
    auth = add.add_mutually_exclusive_group()
    auth.add_argument("--key", metavar="FILE", help="private key file")
    auth.add_argument(
        "--password",
        action="store_true",
        help=f"password auth (asked, or ${PASSWORD_ENV}; kept in the keyring)",
    )
    add.add_argument("--deploy-dir", default=".onnx-designer", metavar="DIR")
    add.add_argument("--known-hosts", metavar="FILE")
    add.add_argument("--ssh-config", metavar="FILE")
    add.add_argument("--replace", action="store_true", help="overwrite a connection of that name")
    add.set_defaults(handler=_connection_add)
    lst = verbs.add_parser("list", help="list saved connections")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(handler=_connection_list)
    rm = verbs.add_parser("remove", help="delete a saved connection")
    rm.add_argument("name")
    rm.set_defaults(handler=_connection_remove)
    test = verbs.add_parser("test", help="connect and check the deployment folder")
    test.add_argument("target", help="a saved connection name or ssh://user@host:port")
    _ssh_options(test)
    test.set_defaults(handler=_connection_test)
