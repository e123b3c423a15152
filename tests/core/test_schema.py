"""Tests of the operator schema registry and the palette categories (designer.core.schema)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import onnx
import onnx.defs
import pytest

from designer.core.schema import (
    CATEGORIES,
    UNBOUNDED_ARITY,
    AttributeInfo,
    FormalParameter,
    OpSchemaInfo,
    SchemaRegistry,
    category_of,
    default_registry,
    extract_allowed_values,
)

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def registry() -> SchemaRegistry:
    return SchemaRegistry()


# -- lookups by opset -------------------------------------------------------------------------


def test_conv_version_follows_opset(registry: SchemaRegistry) -> None:
    conv11 = registry.get("Conv", "", 11)
    conv22 = registry.get("Conv", "", 22)
    assert conv11 is not None and conv22 is not None
    assert conv11.since_version == 11
    assert conv22.since_version == 22
    conv10 = registry.get("Conv", "", 10)
    assert conv10 is not None and conv10.since_version == 1
    assert conv11.category == "convolution"
    assert conv11.domain == ""


def test_ai_onnx_alias_is_the_default_domain(registry: SchemaRegistry) -> None:
    assert registry.get("Relu", "ai.onnx", 13) == registry.get("Relu", "", 13)
    assert registry.has_domain("ai.onnx") and registry.has_domain("")
    assert registry.versions("Relu", "ai.onnx") == registry.versions("Relu", "")


def test_versions_and_newest(registry: SchemaRegistry) -> None:
    versions = registry.versions("Conv", "")
    assert versions == sorted(versions)
    assert {1, 11, 22} <= set(versions)
    newest = registry.get("Conv", "")
    assert newest is not None and newest.since_version == versions[-1]


def test_unknown_op_or_too_old_opset_is_none(registry: SchemaRegistry) -> None:
    assert registry.get("NoSuchOperator", "", 17) is None
    assert registry.get("Conv", "no.such.domain", 1) is None
    assert registry.get("Gelu", "", 19) is None  # Gelu arrived in opset 20
    assert registry.versions("NoSuchOperator") == []


def test_domains_report_max_versions(registry: SchemaRegistry) -> None:
    domains = registry.domains()
    assert domains[""] >= onnx.defs.onnx_opset_version()
    assert domains["ai.onnx.ml"] >= 3
    assert registry.has_domain("ai.onnx.ml")
    assert not registry.has_domain("com.microsoft")


# -- ops_for ------------------------------------------------------------------------------------


def test_ops_for_opset_13_has_nothing_newer(registry: SchemaRegistry) -> None:
    ops = registry.ops_for({"": 13})
    names = {op.name for op in ops}
    assert ops and all(op.since_version <= 13 for op in ops)
    assert all(op.domain == "" for op in ops)
    assert {"Conv", "Relu", "Resize", "Loop"} <= names
    assert "Gelu" not in names  # opset 20
    assert "Upsample" not in names  # deprecated since opset 10
    assert all(not op.deprecated for op in ops)
    assert [(op.domain, op.name) for op in ops] == sorted((op.domain, op.name) for op in ops)
    assert len(names) == len(ops)


def test_ops_for_includes_ml_when_imported(registry: SchemaRegistry) -> None:
    without = registry.ops_for({"": 17})
    with_ml = registry.ops_for({"": 17, "ai.onnx.ml": 3})
    assert not any(op.domain == "ai.onnx.ml" for op in without)
    ml_names = {op.name for op in with_ml if op.domain == "ai.onnx.ml"}
    assert {"LinearClassifier", "TreeEnsembleClassifier", "Scaler"} <= ml_names


def test_ops_for_ignores_unknown_domain(registry: SchemaRegistry) -> None:
    assert registry.ops_for({"com.example.unknown": 1}) == []


# -- formal parameters ------------------------------------------------------------------------


def test_concat_inputs_are_variadic(registry: SchemaRegistry) -> None:
    concat = registry.get("Concat", "", 13)
    assert concat is not None
    assert concat.max_input == UNBOUNDED_ARITY
    first = concat.input_param(0)
    assert isinstance(first, FormalParameter)
    assert first.option == "variadic" and first.min_arity == 1 and first.is_homogeneous
    assert concat.input_param(7) is first
    assert concat.is_input_variadic(0) and concat.is_input_variadic(5)
    assert not concat.is_input_optional(3)
    assert concat.input_param(-1) is None


def test_clip_inputs_1_and_2_are_optional(registry: SchemaRegistry) -> None:
    clip = registry.get("Clip", "", 13)
    assert clip is not None
    assert [clip.is_input_optional(i) for i in range(3)] == [False, True, True]
    assert not clip.is_input_variadic(1)
    assert clip.input_param(3) is None
    assert (clip.min_input, clip.max_input) == (1, 3)
    param = clip.input_param(0)
    assert param is not None and param.type_str == "T"
    assert "tensor(float)" in param.allowed_types
    assert list(param.allowed_types) == sorted(param.allowed_types)
    assert any(c.type_param_str == "T" for c in clip.type_constraints)


def test_loop_inputs_and_body_graph(registry: SchemaRegistry) -> None:
    loop = registry.get("Loop", "", 16)
    assert loop is not None
    assert loop.category == "control flow"
    assert loop.is_input_optional(0) and loop.is_input_optional(1)
    assert loop.is_input_variadic(2) and loop.is_input_variadic(9)
    body = loop.attribute("body")
    assert isinstance(body, AttributeInfo)
    assert body.type == onnx.AttributeProto.GRAPH
    assert body.type_name == "GRAPH"
    assert body.required and body.default is None
    assert loop.required_attributes == (body,)


def test_outputs_map_like_inputs(registry: SchemaRegistry) -> None:
    split = registry.get("Split", "", 18)
    assert split is not None
    assert split.is_output_variadic(0) and split.is_output_variadic(4)
    dropout = registry.get("Dropout", "", 13)
    assert dropout is not None
    assert not dropout.is_output_optional(0) and dropout.is_output_optional(1)
    out = dropout.output_param(1)
    assert out is not None and out.name == "mask"


# -- attributes ---------------------------------------------------------------------------------


def test_conv_auto_pad_default_and_values(registry: SchemaRegistry) -> None:
    conv = registry.get("Conv", "", 11)
    assert conv is not None
    auto_pad = conv.attributes["auto_pad"]
    assert auto_pad.type == onnx.AttributeProto.STRING and auto_pad.type_name == "STRING"
    assert auto_pad.default is not None
    assert auto_pad.default.s == b"NOTSET"
    assert auto_pad.default_value == b"NOTSET"
    assert not auto_pad.required
    assert auto_pad.allowed_values == ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
    strides = conv.attributes["strides"]
    assert strides.type_name == "INTS" and strides.default is None
    assert strides.allowed_values == ()


def test_numeric_defaults(registry: SchemaRegistry) -> None:
    leaky = registry.get("LeakyRelu", "", 16)
    assert leaky is not None
    alpha = leaky.attributes["alpha"]
    assert alpha.type_name == "FLOAT"
    assert alpha.default_value == pytest.approx(0.01)
    gemm = registry.get("Gemm", "", 13)
    assert gemm is not None and gemm.attributes["transA"].default_value == 0


@pytest.mark.parametrize(
    ("op_type", "opset", "attribute", "expected"),
    [
        ("Resize", 13, "mode", ("nearest", "linear", "cubic")),
        ("Resize", 19, "mode", ("nearest", "linear", "cubic")),
        (
            "Resize",
            11,
            "nearest_mode",
            ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"),
        ),
        (
            "Resize",
            13,
            "coordinate_transformation_mode",
            (
                "half_pixel",
                "pytorch_half_pixel",
                "align_corners",
                "asymmetric",
                "tf_crop_and_resize",
            ),
        ),
        ("Resize", 18, "keep_aspect_ratio_policy", ("stretch", "not_larger", "not_smaller")),
        ("Pad", 13, "mode", ("constant", "reflect", "edge")),
        ("Pad", 19, "mode", ("constant", "reflect", "edge", "wrap")),
        ("LSTM", 14, "direction", ("forward", "reverse", "bidirectional")),
        ("GridSample", 16, "padding_mode", ("zeros", "border", "reflection")),
        ("ScatterND", 18, "reduction", ("none", "add", "mul", "max", "min")),
        ("Gelu", 20, "approximate", ("tanh", "none")),
        ("DepthToSpace", 13, "mode", ("DCR", "CRD")),
        ("RoiAlign", 16, "coordinate_transformation_mode", ("half_pixel", "output_half_pixel")),
        ("BitShift", 11, "direction", ("RIGHT", "LEFT")),
        ("StringNormalizer", 10, "case_change_action", ("LOWER", "UPPER", "NONE")),
    ],
)
def test_allowed_values(
    registry: SchemaRegistry, op_type: str, opset: int, attribute: str, expected: tuple[str, ...]
) -> None:
    schema = registry.get(op_type, "", opset)
    assert schema is not None
    assert schema.attributes[attribute].allowed_values == expected


def test_ml_allowed_values_with_punctuation_inside_quotes(registry: SchemaRegistry) -> None:
    classifier = registry.get("LinearClassifier", "ai.onnx.ml", 1)
    assert classifier is not None
    assert classifier.attributes["post_transform"].allowed_values == (
        "NONE",
        "SOFTMAX",
        "LOGISTIC",
        "SOFTMAX_ZERO",
        "PROBIT",
    )


def test_free_text_attributes_have_no_allowed_values(registry: SchemaRegistry) -> None:
    einsum = registry.get("Einsum", "", 12)
    lstm = registry.get("LSTM", "", 14)
    ml = registry.get("LinearClassifier", "ai.onnx.ml", 1)
    assert einsum is not None and lstm is not None and ml is not None
    assert einsum.attributes["equation"].allowed_values == ()
    assert lstm.attributes["activations"].allowed_values == ()
    assert ml.attributes["classlabels_strings"].allowed_values == ()


def test_every_extracted_default_is_allowed(registry: SchemaRegistry) -> None:
    """Where both exist, the schema's string default must be one of the extracted values."""
    for domain, top in registry.domains().items():
        for op in registry.ops_for({domain: top}):
            for attr in op.attributes.values():
                if attr.allowed_values and attr.default is not None and attr.type_name == "STRING":
                    assert attr.default.s.decode() in attr.allowed_values, (op.name, attr.name)


@pytest.mark.parametrize(
    ("description", "default", "expected"),
    [
        ("auto_pad must be either NOTSET, SAME_UPPER, SAME_LOWER or VALID. Where", None, None),
        ("Must be one of forward (default), reverse, or bidirectional.", "forward", None),
        ("One of 'NONE,' 'SOFTMAX,' or 'PROBIT.'", "NONE", ("NONE", "SOFTMAX", "PROBIT")),
        ("Two modes are supported: 'avg' and 'max'. Default is 'avg'.", "avg", ("avg", "max")),
        ('It can be either "RIGHT" (for right shift) or "LEFT" (for left).', None, None),
        ("The activation functions must be one of the activation functions above.", None, ()),
        ("One and only one of the 'classlabels_*' attributes must be defined.", None, ()),
        ("Optional: See the equations for default if not specified.", None, ()),
        ("Choose from a, b or c.", None, ()),
        ("Modes: a (default), b.", "z", ()),  # default not listed: do not trust the list
        ("", None, ()),
    ],
)
def test_extract_allowed_values_phrasings(
    description: str, default: str | None, expected: tuple[str, ...] | None
) -> None:
    values = extract_allowed_values("SomeOp", "some_attr", description, default)
    if expected is None:
        assert len(values) >= 2
    else:
        assert values == expected


# -- records ------------------------------------------------------------------------------------


def test_records_are_frozen_and_hashable(registry: SchemaRegistry) -> None:
    conv = registry.get("Conv", "", 11)
    assert conv is not None
    with pytest.raises(AttributeError):
        conv.name = "Other"  # type: ignore[misc]
    assert hash(conv) == hash(registry.get("Conv", "", 11))
    assert hash(conv.attributes["auto_pad"]) is not None
    assert conv.qualified_name == "Conv"


def test_add_schemas_and_lookup() -> None:
    registry = SchemaRegistry(load_onnx=False)
    assert registry.domains() == {}
    info = OpSchemaInfo(
        name="MyOp",
        domain="com.example",
        since_version=2,
        doc="",
        inputs=(FormalParameter("X", "T", ("tensor(float)",), "single", True, 1, ""),),
        outputs=(FormalParameter("Y", "T", ("tensor(float)",), "single", True, 1, ""),),
        attributes={},
        min_input=1,
        max_input=1,
        min_output=1,
        max_output=1,
        category="other",
    )
    assert registry.add_schemas([info]) == 1
    assert registry.get("MyOp", "com.example", 1) is None
    assert registry.get("MyOp", "com.example", 5) is info
    assert registry.domains() == {"com.example": 2}
    assert registry.op_types("com.example") == ["MyOp"]
    assert registry.ops_for({"com.example": 3}) == [info]
    assert info.qualified_name == "com.example::MyOp"


def test_default_registry_is_cached() -> None:
    assert default_registry() is default_registry()


def test_build_and_full_conversion_are_fast() -> None:
    """Registry construction stays well under 0.5 s (lazy conversion); printed for the log."""
    start = time.perf_counter()
    registry = SchemaRegistry()
    built = time.perf_counter() - start
    ops = registry.ops_for(registry.domains())
    converted = time.perf_counter() - start - built
    print(f"registry build {built * 1000:.1f} ms, ops_for all domains {converted * 1000:.1f} ms")
    assert ops
    assert built < 0.5


# -- categories ---------------------------------------------------------------------------------

#: ai.onnx operators with no better home than "other".
GENUINELY_OTHER = {
    "Dropout",
    "StringConcat",
    "StringNormalizer",
    "StringSplit",
    "RegexFullMatch",
    "TfIdfVectorizer",
}


def test_every_onnx_op_has_a_category() -> None:
    uncategorised = sorted(
        schema.name
        for schema in onnx.defs.get_all_schemas()
        if schema.domain == ""
        and category_of(schema.name, "") == "other"
        and schema.name not in GENUINELY_OTHER
    )
    assert uncategorised == []


@pytest.mark.parametrize(
    ("op_type", "domain", "category"),
    [
        ("Conv", "", "convolution"),
        ("DeformConv", "ai.onnx", "convolution"),
        ("MaxRoiPool", "", "pooling"),
        ("HardSwish", "", "activation"),
        ("RMSNormalization", "", "normalization"),
        ("Einsum", "", "math"),
        ("BitwiseXor", "", "logic"),
        ("CastLike", "", "tensor/shape"),
        ("Scan", "", "control flow"),
        ("QLinearMatMul", "", "quantization"),
        ("ArgMin", "", "reduction"),
        ("GRU", "", "recurrent"),
        ("CenterCropPad", "", "image"),
        ("OptionalHasElement", "", "sequence"),
        ("FusedConv", "com.microsoft", "convolution"),
        ("SkipLayerNormalization", "com.microsoft", "normalization"),
        ("QAttention", "com.microsoft", "quantization"),
        ("QLinearSigmoid", "com.microsoft", "quantization"),
        ("FastGelu", "com.microsoft", "activation"),
        ("Conv", "com.microsoft.nchwc", "convolution"),
        ("Gelu", "com.microsoft", "activation"),
        ("LinearClassifier", "ai.onnx.ml", "other"),
        ("Conv", "com.example", "other"),
        ("Whatever", "", "other"),
    ],
)
def test_category_of(op_type: str, domain: str, category: str) -> None:
    assert category_of(op_type, domain) == category
    assert category in CATEGORIES


def test_schema_category_matches_table(registry: SchemaRegistry) -> None:
    for op in registry.ops_for({"": 21}):
        assert op.category == category_of(op.name, "")


# -- import boundary --------------------------------------------------------------------------


def test_importing_schema_keeps_heavy_modules_out() -> None:
    code = (
        "import sys\n"
        "from designer.core.schema import default_registry\n"
        "default_registry().ops_for({'': 21})\n"
        "heavy = ('onnxruntime', 'PySide6', 'tensorrt', 'paramiko')\n"
        "bad = [m for m in heavy if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
