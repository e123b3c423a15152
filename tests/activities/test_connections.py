"""Saved connections, ssh:// URLs and in-memory secrets (no keyring needed)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from designer.activities import secrets
from designer.activities.connections import Connection, ConnectionStore, parse_ssh_url
from designer.activities.paths import cache_dir, config_dir
from designer.core.errors import DesignerError


def test_store_add_list_remove_never_secrets(tmp_path: Path) -> None:
    store = ConnectionStore(tmp_path / "c" / "connections.json")
    conn = Connection(host="jetson.local", user="nv", auth="password")
    assert conn.name == "nv@jetson.local:22"
    store.add(conn)
    secrets.set_secret(conn.secret_account(), "hunter2", persist=False)
    with pytest.raises(DesignerError, match="exists already"):
        store.add(conn)
    store.add(Connection(host="h", user="u", port=2222, key_file="~/.ssh/id", name="box"))
    assert [c.name for c in store.list()] == ["nv@jetson.local:22", "box"]
    text = store.path.read_text()
    assert "hunter2" not in text and json.loads(text)["version"] == 1
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert store.get("nv@jetson.local:22").settings().password == "hunter2"
    store.remove("nv@jetson.local:22")
    assert secrets.get_secret(conn.secret_account()) is None
    assert [c.name for c in store.list()] == ["box"]
    with pytest.raises(DesignerError, match="no saved connection"):
        store.get("nope")


def test_damaged_store_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "connections.json"
    path.write_text("{not json")
    with pytest.raises(DesignerError, match="damaged connections file"):
        ConnectionStore(path).list()


def test_ssh_urls() -> None:
    conn = parse_ssh_url("ssh://nv@10.0.0.5:2200/work/deploy")
    assert (conn.user, conn.host, conn.port, conn.deploy_dir) == (
        "nv",
        "10.0.0.5",
        2200,
        "/work/deploy",
    )
    assert parse_ssh_url("ssh://nv@h/~/work/deploy").deploy_dir == "work/deploy"
    assert parse_ssh_url("ssh://nv@h/tmp/x%20y").deploy_dir == "/tmp/x y"
    for default in ("ssh://a@b", "ssh://a@b/", "ssh://a@b/~/"):
        assert parse_ssh_url(default).deploy_dir == ".onnx-designer"
    assert parse_ssh_url("ssh://a@b").port == 22
    for bad in ("http://a@b", "ssh://b", "ssh://a@b:xx"):
        with pytest.raises(DesignerError):
            parse_ssh_url(bad)
    with pytest.raises(DesignerError, match="port"):
        Connection(host="h", user="u", port=70000)


def test_dirs_follow_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONNX_DESIGNER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ONNX_DESIGNER_CONFIG_DIR", str(tmp_path / "cfg"))
    assert cache_dir(create=True) == tmp_path / "cache" and (tmp_path / "cache").is_dir()
    assert config_dir() == tmp_path / "cfg"
    assert ConnectionStore().path == tmp_path / "cfg" / "connections.json"
