"""Passwords and passphrases: the system keyring when available, else memory only.

Never written to disk in plain text by us. ``keyring`` is optional and imported inside
functions; without it (or with no usable backend) a secret lives for this process only and
the user is asked again next session. Accounts are ``"<kind>:<connection name>"``.
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["delete_secret", "get_secret", "keyring_available", "set_secret"]

SERVICE = "onnx-designer"
_memory: dict[str, str] = {}


def _keyring() -> Any | None:
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        logger.debug("keyring is not installed: secrets are kept for this session only")
        return None
    try:
        if isinstance(keyring.get_keyring(), fail.Keyring):
            logger.debug("keyring has no usable backend: secrets are kept for this session only")
            return None
    except Exception as exc:  # a backend that fails to initialise (D-Bus, locked store)
        logger.warning(
            "the system keyring cannot be used (%s: %s); secrets are kept for this session only",
            type(exc).__name__,
            exc,
        )
        return None
    return keyring


def keyring_available() -> bool:
    """True when secrets can persist across sessions in the system keyring."""
    return _keyring() is not None


def get_secret(account: str) -> str | None:
    """The secret for ``account`` from memory, else from the keyring, else None."""
    if account in _memory:
        return _memory[account]
    kr = _keyring()
    if kr is None:
        return None
    try:
        value = kr.get_password(SERVICE, account)
    except Exception as exc:  # the caller asks the user instead
        logger.warning(
            "cannot read the secret of %s from the keyring (%s: %s); asking instead",
            account,
            type(exc).__name__,
            exc,
        )
        return None
    if value is None:
        return None
    _memory[account] = str(value)
    return str(value)


def set_secret(account: str, secret: str, persist: bool = True) -> bool:
    """Remember ``secret``; with ``persist`` also in the keyring. True if it was persisted."""
    _memory[account] = secret
    kr = _keyring() if persist else None
    if kr is None:
        return False
    try:
        kr.set_password(SERVICE, account, secret)
    except Exception as exc:  # kept in memory for this session
        logger.warning(
            "cannot save the secret of %s in the keyring (%s: %s); kept for this session only",
            account,
            type(exc).__name__,
            exc,
        )
        return False
    return True


def delete_secret(account: str) -> None:
    """Forget ``account`` in memory and in the keyring (missing is fine)."""
    _memory.pop(account, None)
    kr = _keyring()
    if kr is None:
        return
    try:
        kr.delete_password(SERVICE, account)
    except Exception as exc:  # keyring raises PasswordDeleteError for a missing one
        from keyring.errors import PasswordDeleteError

        if isinstance(exc, PasswordDeleteError):
            logger.debug("no secret of %s in the keyring to delete", account)
        else:
            logger.warning(
                "cannot delete the secret of %s from the keyring (%s: %s)",
                account,
                type(exc).__name__,
                exc,
            )
