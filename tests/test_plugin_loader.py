"""designer.plugins: entry points loaded in name order, each failure reported once (one
ERROR record naming the plug-in, its entry point and the error) and skipped."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from designer import plugins


def test_load_in_name_order_and_report_each_failure_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    info = tmp_path / "order_test-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: order-test\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[onnx_designer.test_group]\nzeta = order_mod:ZETA\nAlpha = order_mod:ALPHA\n"
        "broken = order_mod:MISSING\nexits = order_exit:X\n"
    )
    (tmp_path / "order_mod.py").write_text("ALPHA = 1\nZETA = 2\n")
    (tmp_path / "order_exit.py").write_text("raise SystemExit(3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    monkeypatch.setattr(plugins, "_failures", [])
    caplog.set_level("ERROR", logger="designer.plugins")

    for _ in range(2):
        loaded = plugins.load("onnx_designer.test_group")
        assert [(p.name, p.obj, p.distribution) for p in loaded] == [
            ("Alpha", 1, "order-test"),
            ("zeta", 2, "order-test"),
        ]
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2  # once each, however often the group is loaded
    assert lines[0].startswith(
        "plug-in 'broken' (onnx_designer.test_group = order_mod:MISSING) failed at import "
        "(AttributeError"
    )
    assert (
        "'exits' (onnx_designer.test_group = order_exit:X) failed at import (SystemExit: 3)"
        in (lines[1])
    )

    def explode(value: int) -> int:
        raise ValueError(f"bad {value}")

    assert plugins.invoke(loaded[0], "create", explode, 7) is plugins.FAILED
    assert plugins.invoke(loaded[0], "create", lambda v: v + 1, 7) == 8
    assert plugins.failures()[-1].line() == (
        "plug-in 'Alpha' (onnx_designer.test_group = order_mod:ALPHA) failed at create "
        "(ValueError: bad 7); skipped"
    )
