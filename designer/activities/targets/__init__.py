"""Where activities run: this machine (:class:`LocalTarget`) or an SSH host (:class:`SshTarget`)."""

from designer.activities.targets.base import (
    AuthenticationError,
    Cancelled,
    CancelToken,
    ConnectionLost,
    HostKeyError,
    PlatformInfo,
    RunResult,
    Target,
    TargetError,
)
from designer.activities.targets.hostkeys import (
    HostKeyDecider,
    HostKeyDecision,
    HostKeyInfo,
    accept_new,
    refuse_unknown,
)
from designer.activities.targets.local import LocalTarget
from designer.activities.targets.ssh import SshSettings, SshTarget

__all__ = [
    "AuthenticationError",
    "CancelToken",
    "Cancelled",
    "ConnectionLost",
    "HostKeyDecider",
    "HostKeyDecision",
    "HostKeyError",
    "HostKeyInfo",
    "LocalTarget",
    "PlatformInfo",
    "RunResult",
    "SshSettings",
    "SshTarget",
    "Target",
    "TargetError",
    "accept_new",
    "refuse_unknown",
]
