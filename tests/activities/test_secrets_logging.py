"""Keyring failures are logged (with the reason) instead of vanishing; the behaviour stays:
the secret is asked for again (None) or kept in memory for this session."""

from __future__ import annotations

from collections.abc import Iterator

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.errors import KeyringLocked

from designer.activities import secrets


class LockedKeyring(KeyringBackend):
    """A real keyring backend whose store is locked, as a locked GNOME keyring is."""

    priority = 1  # type: ignore[assignment]

    def get_password(self, service: str, username: str) -> str | None:
        raise KeyringLocked("the login keyring is locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise KeyringLocked("the login keyring is locked")

    def delete_password(self, service: str, username: str) -> None:
        raise KeyringLocked("the login keyring is locked")


@pytest.fixture
def locked() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(LockedKeyring())
    yield
    keyring.set_keyring(previous)


def test_keyring_failures_are_logged(locked: None, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG", logger="designer.activities.secrets")
    account = "ssh:logging-test"
    assert secrets.get_secret(account) is None
    assert secrets.set_secret(account, "pw") is False
    assert secrets.get_secret(account) == "pw"  # kept in memory for this session
    secrets.delete_secret(account)
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert [r.name for r in warnings] == ["designer.activities.secrets"] * 3
    text = [r.getMessage() for r in warnings]
    assert "cannot read the secret of ssh:logging-test" in text[0]
    assert "KeyringLocked: the login keyring is locked" in text[0]
    assert "kept for this session only" in text[1]
    assert "cannot delete the secret of ssh:logging-test" in text[2]
