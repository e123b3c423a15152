"""The emulated aarch64 target's fixture logic that needs no emulation: what counts as a
cached root, where it lives, skip versus CI failure, and the platform summary it is checked by."""

from __future__ import annotations

import json
from pathlib import Path

import aarch64
import pytest

from designer.activities.targets.base import os_name_from_release, parse_platform_probe


def test_only_a_stamped_root_of_this_recipe_is_a_cache(tmp_path: Path) -> None:
    draft = tmp_path / "aarch64-root.build-123"  # what a killed build leaves: no stamp
    (draft / "etc").mkdir(parents=True)
    assert not aarch64.root_ready(draft)
    (draft / aarch64.STAMP).write_text(json.dumps({"recipe": aarch64.RECIPE - 1}))
    assert not aarch64.root_ready(draft)  # an older recipe is rebuilt
    (draft / aarch64.STAMP).write_text("{not json")
    assert not aarch64.root_ready(draft)
    (draft / aarch64.STAMP).write_text(json.dumps({"recipe": aarch64.RECIPE}))
    assert aarch64.root_ready(draft)


def test_cache_folders_are_outside_the_checkout_and_overridable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    checkout = Path(__file__).resolve().parents[2]
    monkeypatch.delenv("ONNX_DESIGNER_AARCH64_ROOT", raising=False)
    monkeypatch.delenv("ONNX_DESIGNER_TEST_CACHE", raising=False)
    assert not aarch64.root_path().is_relative_to(checkout)
    monkeypatch.setenv("ONNX_DESIGNER_TEST_CACHE", str(tmp_path / "c"))
    assert aarch64.root_path() == tmp_path / "c" / "aarch64-root"
    assert aarch64.wheel_cache() == tmp_path / "c" / "wheels"
    monkeypatch.setenv("ONNX_DESIGNER_AARCH64_ROOT", str(tmp_path / "r"))
    assert aarch64.root_path() == tmp_path / "r"


def test_unavailable_skips_here_and_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no binfmt"):
        aarch64.unavailable("no binfmt")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="unavailable in CI: no binfmt"):
        aarch64.unavailable("no binfmt")


def test_os_release_names() -> None:
    debian = (
        'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\n'
    )
    ubuntu = 'NAME="Ubuntu"\nVERSION_ID="22.04"\nVERSION="22.04.4 LTS (Jammy Jellyfish)"\n'
    assert os_name_from_release(debian) == "Debian 12"
    assert os_name_from_release(ubuntu) == "Ubuntu 22.04"
    assert os_name_from_release("") == ""
    assert os_name_from_release("NAME='broken\n") == ""


def test_platform_summary_from_the_probe() -> None:
    probe = json.dumps(
        {
            "system": "Linux",
            "machine": "aarch64",
            "python": "/usr/bin/python3",
            "version": [3, 10, 12],
            "platform": "linux-aarch64",
            "libc": ["glibc", "2.35"],
            "home": "/home/u",
            "os_release": 'NAME="Ubuntu"\nVERSION_ID="22.04"\n',
        }
    )
    info = parse_platform_probe(probe, "/")
    assert info.describe() == "Linux aarch64, Ubuntu 22.04, Python 3.10"
    old = parse_platform_probe(probe.replace('"os_release"', '"other"'), "/")
    assert old.describe() == "Linux aarch64, Python 3.10"  # an older probe: no OS name
