"""Tests of ONNX Runtime contrib operator schemas (designer.activities.ort_schemas)."""

from __future__ import annotations

import builtins
from typing import Any

import onnx
import pytest

from designer.activities import ort_schemas
from designer.activities.ort_schemas import (
    contrib_schemas_status,
    load_contrib_schemas,
    register_contrib_schemas,
)
from designer.core.schema import OpSchemaInfo, SchemaRegistry

pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def contrib() -> dict[tuple[str, str], OpSchemaInfo]:
    return {(info.domain, info.name): info for info in load_contrib_schemas()}


def test_only_microsoft_domains(contrib: dict[tuple[str, str], OpSchemaInfo]) -> None:
    assert contrib
    domains = {domain for domain, _ in contrib}
    assert "com.microsoft" in domains
    assert all(d == "com.microsoft" or d.startswith("com.microsoft.") for d in domains)
    assert "com.microsoft" in contrib_schemas_status()


def test_fused_conv(contrib: dict[tuple[str, str], OpSchemaInfo]) -> None:
    fused = contrib[("com.microsoft", "FusedConv")]
    assert fused.category == "convolution"
    assert [p.name for p in fused.inputs][:3] == ["X", "W", "B"]
    assert fused.is_input_optional(2)
    assert "tensor(float)" in fused.inputs[0].allowed_types
    activation = fused.attributes["activation"]
    assert activation.type_name == "STRING" and activation.default is None
    auto_pad = fused.attributes["auto_pad"]
    assert auto_pad.default is not None and auto_pad.default.s == b"NOTSET"
    assert auto_pad.allowed_values == ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
    assert fused.attributes["strides"].type == onnx.AttributeProto.INTS


def test_attention_and_skip_layer_norm(contrib: dict[tuple[str, str], OpSchemaInfo]) -> None:
    attention = contrib[("com.microsoft", "Attention")]
    assert attention.inputs and attention.outputs
    num_heads = attention.attributes["num_heads"]
    assert num_heads.required and num_heads.type_name == "INT"
    skip = contrib[("com.microsoft", "SkipLayerNormalization")]
    assert skip.category == "normalization"
    assert [p.name for p in skip.inputs][:3] == ["input", "skip", "gamma"]
    assert not skip.is_input_optional(1) and skip.is_input_optional(3)
    epsilon = skip.attributes["epsilon"]
    assert epsilon.type_name == "FLOAT" and not epsilon.required
    assert any(c.type_param_str == "T" for c in skip.type_constraints)


def test_register_makes_contrib_ops_resolvable() -> None:
    registry = SchemaRegistry()
    assert registry.get("FusedConv", "com.microsoft", 1) is None
    added = register_contrib_schemas(registry)
    assert added == len(load_contrib_schemas()) > 0
    fused = registry.get("FusedConv", "com.microsoft", 1)
    assert fused is not None and fused.domain == "com.microsoft"
    assert registry.has_domain("com.microsoft")
    names = {op.name for op in registry.ops_for({"": 17, "com.microsoft": 1})}
    assert {"FusedConv", "Conv", "SkipLayerNormalization"} <= names
    # ONNX schemas are untouched by the contrib ones of the same name.
    conv = registry.get("Conv", "", 11)
    assert conv is not None and conv.domain == "" and conv.since_version == 11


def test_missing_onnxruntime_gives_empty_list_and_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def fake_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "onnxruntime" or name.startswith("onnxruntime."):
            raise ImportError("No module named 'onnxruntime'")
        return real_import(name, *args, **kwargs)

    ort_schemas._load.cache_clear()
    monkeypatch.setattr(builtins, "__import__", fake_import)
    try:
        assert load_contrib_schemas() == []
        status = contrib_schemas_status()
        assert "unavailable" in status and "onnxruntime" in status
        assert register_contrib_schemas(SchemaRegistry(load_onnx=False)) == 0
    finally:
        monkeypatch.undo()
        ort_schemas._load.cache_clear()
    assert load_contrib_schemas()
