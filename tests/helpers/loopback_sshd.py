"""The module-scoped fixture ``server`` of the GUI tests that connect to a real OpenSSH
server on loopback (tests/activities/sshd.py): the server, an authorized client key and the
user to log in as. Skips where sshd is missing. A test module picks it up by importing it
(``from helpers.loopback_sshd import loopback_server  # noqa: F401 (the fixture server)``).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.shared import ROOT


@pytest.fixture(scope="module", name="server")
def loopback_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Path, str]]:
    """``(sshd.SshServer, client key, user name)``, stopped and removed after the module."""
    sys.path.append(str(ROOT / "tests" / "activities"))
    import sshd

    reason = sshd.sshd_missing_reason()
    if reason:
        pytest.skip(reason)
    folder = sshd.make_server_folder()
    user = sshd.ensure_test_user()
    key = sshd.keygen(folder / "client_ed25519")
    authorized = folder / "authorized_keys"
    authorized.write_text(Path(f"{key}.pub").read_text())
    authorized.chmod(0o644)
    srv = sshd.SshServer(folder, authorized).start()
    try:
        yield srv, key, user.name
    finally:
        srv.stop()
        shutil.rmtree(folder, ignore_errors=True)
