"""ProxyJump / ProxyCommand from the user's OpenSSH config, run by OpenSSH itself.

paramiko parses ``~/.ssh/config`` (or another file); a ``ProxyJump`` becomes
``ssh -F CONFIG -W host:port [-J hop,…] lasthop`` and a ``ProxyCommand`` is used as written
(tokens expanded by paramiko). OpenSSH authenticates to the jump hosts with the user's own
keys/agent and known_hosts; the designer's credentials are only used for the final target.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ResolvedHost", "default_ssh_config", "resolve_host"]


@dataclass(frozen=True)
class ResolvedHost:
    """Where to connect after applying the OpenSSH config: the real host name and port, and
    the proxy command line (None: connect directly)."""

    hostname: str
    port: int
    user: str | None
    proxy_command: str | None


def default_ssh_config() -> Path:
    return Path(os.path.expanduser("~/.ssh/config"))


def resolve_host(
    host: str, port: int | None, user: str | None, config_path: Path | None = None
) -> ResolvedHost:
    """Apply the OpenSSH config to ``host`` (an alias or a name). Explicit ``port``/``user``
    win over the config. Cost: parsing the config file (~1 ms)."""
    import paramiko

    path = config_path if config_path is not None else default_ssh_config()
    options: dict[str, Any] = {}
    if path.is_file():
        try:
            options = dict(paramiko.SSHConfig.from_path(str(path)).lookup(host))
        except Exception as exc:  # a broken config must not stop direct connections
            from designer.activities.targets.base import TargetError

            raise TargetError(f"cannot read OpenSSH config {path}: {exc}") from None
    hostname = str(options.get("hostname", host))
    real_port = port if port is not None else int(options.get("port", 22))
    real_user = user or options.get("user")
    proxy: str | None = None
    jump = options.get("proxyjump")
    if jump and str(jump).lower() != "none":
        hops = [h.strip() for h in str(jump).split(",") if h.strip()]
        argv = ["ssh", "-F", str(path), "-o", "BatchMode=yes", "-W", f"{hostname}:{real_port}"]
        if len(hops) > 1:
            argv += ["-J", ",".join(hops[:-1])]
        argv.append(hops[-1])
        proxy = shlex.join(argv)
    elif options.get("proxycommand") and str(options["proxycommand"]).lower() != "none":
        proxy = str(options["proxycommand"])
    return ResolvedHost(hostname, real_port, real_user, proxy)
