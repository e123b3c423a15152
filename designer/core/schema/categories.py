"""Operator categories for the Layer Palette (SPEC L-1).

A hand-written table: ONNX gives no category, and names alone are a poor guide (``Clip`` is
math, ``Hardmax`` is an activation, ``ReverseSequence`` works on tensors, not sequences).
Every ``ai.onnx`` operator is listed explicitly; a handful of ``com.microsoft`` contrib
operators are listed too, and other contrib names fall back to the ONNX operator of the same
name, then to a few name patterns. Anything still unknown is ``"other"``.

Lookups are dictionary reads (O(1)); nothing here imports onnx.
"""

from __future__ import annotations

from typing import Final

__all__ = ["CATEGORIES", "OTHER", "category_of"]

CONVOLUTION: Final = "convolution"
POOLING: Final = "pooling"
ACTIVATION: Final = "activation"
NORMALIZATION: Final = "normalization"
MATH: Final = "math"
LOGIC: Final = "logic"
TENSOR: Final = "tensor/shape"
CONTROL_FLOW: Final = "control flow"
QUANTIZATION: Final = "quantization"
REDUCTION: Final = "reduction"
RECURRENT: Final = "recurrent"
IMAGE: Final = "image"
SEQUENCE: Final = "sequence"
OTHER: Final = "other"

#: Every category ``category_of`` can return, in palette order.
CATEGORIES: Final[tuple[str, ...]] = (
    CONVOLUTION,
    POOLING,
    ACTIVATION,
    NORMALIZATION,
    MATH,
    LOGIC,
    TENSOR,
    CONTROL_FLOW,
    QUANTIZATION,
    REDUCTION,
    RECURRENT,
    IMAGE,
    SEQUENCE,
    OTHER,
)


def _table(**groups: str) -> dict[str, str]:
    """Turn ``category=\"Op1 Op2 …\"`` keyword groups into an op → category dict."""
    table: dict[str, str] = {}
    for key, names in groups.items():
        category = _KEYWORD_TO_CATEGORY[key]
        for name in names.split():
            if name in table:
                raise ValueError(f"operator {name!r} listed twice in the category table")
            table[name] = category
    return table


_KEYWORD_TO_CATEGORY: Final[dict[str, str]] = {
    "convolution": CONVOLUTION,
    "pooling": POOLING,
    "activation": ACTIVATION,
    "normalization": NORMALIZATION,
    "math": MATH,
    "logic": LOGIC,
    "tensor": TENSOR,
    "control_flow": CONTROL_FLOW,
    "quantization": QUANTIZATION,
    "reduction": REDUCTION,
    "recurrent": RECURRENT,
    "image": IMAGE,
    "sequence": SEQUENCE,
    "other": OTHER,
}

#: Operators of the ONNX domains ("", "ai.onnx", "ai.onnx.preview*").
_ONNX: Final[dict[str, str]] = _table(
    convolution="Conv ConvTranspose ConvInteger DeformConv CausalConvWithState",
    pooling="""MaxPool AveragePool GlobalAveragePool GlobalMaxPool LpPool GlobalLpPool
        MaxRoiPool MaxUnpool""",
    activation="""Relu Sigmoid Tanh Gelu LeakyRelu Elu Selu Celu Softmax LogSoftmax Hardmax
        HardSigmoid HardSwish Mish Softplus Softsign PRelu ThresholdedRelu Swish SwiGLU
        Shrink""",
    normalization="""BatchNormalization LayerNormalization InstanceNormalization
        GroupNormalization LpNormalization LRN MeanVarianceNormalization RMSNormalization""",
    math="""Add Sub Mul Div Mod Pow Sqrt Exp Log Abs Neg Sign Reciprocal Ceil Floor Round Erf
        Clip Max Min Mean Sum MatMul Gemm Einsum Det CumSum CumProd
        Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh
        DFT STFT MelWeightMatrix BlackmanWindow HammingWindow HannWindow
        Bernoulli Multinomial RandomNormal RandomNormalLike RandomUniform RandomUniformLike
        SoftmaxCrossEntropyLoss NegativeLogLikelihoodLoss
        Attention FlexAttention LinearAttention RotaryEmbedding""",
    logic="""And Or Not Xor Equal Greater GreaterOrEqual Less LessOrEqual Where IsNaN IsInf
        BitShift BitwiseAnd BitwiseOr BitwiseXor BitwiseNot""",
    tensor="""Reshape Transpose Concat Split Slice Gather GatherElements GatherND Scatter
        ScatterElements ScatterND TensorScatter Squeeze Unsqueeze Shape Size Expand Tile Pad
        Flatten Cast CastLike BitCast Identity Constant ConstantOfShape EyeLike Range OneHot
        Compress NonZero Trilu Unique ReverseSequence DepthToSpace SpaceToDepth""",
    control_flow="If Loop Scan",
    quantization="""QuantizeLinear DequantizeLinear DynamicQuantizeLinear QLinearConv
        QLinearMatMul MatMulInteger""",
    reduction="""ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean ReduceMin
        ReduceProd ReduceSum ReduceSumSquare ArgMax ArgMin TopK""",
    recurrent="RNN GRU LSTM",
    image="""Resize Upsample RoiAlign GridSample AffineGrid CenterCropPad ImageDecoder
        NonMaxSuppression Col2Im""",
    sequence="""SequenceAt SequenceConstruct SequenceEmpty SequenceErase SequenceInsert
        SequenceLength SequenceMap ConcatFromSequence SplitToSequence Optional
        OptionalGetElement OptionalHasElement""",
    other="""Dropout StringConcat StringNormalizer StringSplit RegexFullMatch TfIdfVectorizer
        Adagrad Adam Momentum Gradient""",
)

#: Contrib operators of ONNX Runtime (com.microsoft and com.microsoft.*) whose category is not
#: that of an ONNX operator of the same name.
_CONTRIB: Final[dict[str, str]] = _table(
    convolution="""FusedConv NhwcConv NhwcFusedConv ConvTransposeWithDynamicPads
        VarlenCausalConvWithState ConvStateReplay""",
    pooling="MaxpoolWithMask NhwcMaxPool",
    activation="""BiasGelu FastGelu QuickGelu ScaledSiLU BiasSoftmax BiasSplitGelu GemmFastGelu
        GatedAdd""",
    normalization="""SkipLayerNormalization SkipSimplifiedLayerNormalization
        EmbedLayerNormalization SimplifiedLayerNormalization GroupNorm SkipGroupNorm
        GatedRMSNorm BranchwiseRMSNorm RMSNormRotary""",
    math="""FusedGemm FusedMatMul FusedMatMulActivation TransposeMatMul BiasAdd ComplexMul
        ComplexMulConj CDist Inverse Rfft Irfft GemmFloat8 MatMulPacked SparseToDenseMatMul
        Attention MultiHeadAttention GroupQueryAttention DecoderAttention
        DecoderMaskedMultiHeadAttention DecoderMaskedSelfAttention LongformerAttention
        PackedAttention PackedMultiHeadAttention PagedAttention SparseAttention
        DynamicSparseAttention SparsePagedAttention RelativePositionBias
        GatedRelativePositionBias MRotaryEmbedding GemmaRotaryEmbedding MoE MoEPacked""",
    logic="IsAllFinite",
    tensor="""ExpandDims GatherPacked UnfoldTensor RemovePadding RestorePadding ReorderInput
        ReorderOutput TorchEmbedding""",
    quantization="""QAttention QEmbedLayerNormalization QGemm QMoE QOrderedAttention
        QOrderedGelu QOrderedLayerNormalization QOrderedLongformerAttention QOrderedMatMul
        QuantizeBFP DequantizeBFP QuantizeWithOrder DequantizeWithOrder DynamicQuantizeMatMul
        DynamicQuantizeLSTM MatMulInteger16 MatMulIntegerToFloat MulInteger ReduceSumInteger
        MatMulNBits MatMulBnb4 MatMulFpQ4 MatMulBlockQuantizedFp4Weight
        MatMulBlockQuantizedFp8Weight GatherBlockQuantized""",
    control_flow="BeamSearch GreedySearch WhisperBeamSearch Sampling",
    recurrent="AttnLSTM",
    image="CropAndResize",
)

_ONNX_DOMAINS: Final = frozenset({"", "ai.onnx"})

#: Name fragments tried, in order, for contrib operators missing from both tables.
_CONTRIB_PATTERNS: Final[tuple[tuple[str, str], ...]] = (
    ("QLinear", QUANTIZATION),
    ("Quantize", QUANTIZATION),
    ("MatMulNBits", QUANTIZATION),
    ("Attention", MATH),
    ("LayerNorm", NORMALIZATION),
    ("RMSNorm", NORMALIZATION),
    ("Gelu", ACTIVATION),
    ("Conv", CONVOLUTION),
    ("Pool", POOLING),
)


def _is_contrib_domain(domain: str) -> bool:
    return domain == "com.microsoft" or domain.startswith("com.microsoft.")


def category_of(op_type: str, domain: str) -> str:
    """Return the palette category of ``op_type`` in ``domain`` (one of ``CATEGORIES``).

    ``""`` and ``"ai.onnx"`` are the same domain; ``ai.onnx.preview*`` use the ONNX table.
    Contrib operators (``com.microsoft``, ``com.microsoft.*``) use their own table, then the
    ONNX table (``com.microsoft.nchwc::Conv`` is a convolution), then a few name patterns
    (``QLinear…`` is quantization). Every other domain, and every unknown name, is
    ``"other"``. O(1) apart from the short pattern scan for unknown contrib names.
    """
    if domain in _ONNX_DOMAINS or domain.startswith("ai.onnx.preview"):
        return _ONNX.get(op_type, OTHER)
    if _is_contrib_domain(domain):
        found = _CONTRIB.get(op_type) or _ONNX.get(op_type)
        if found is not None:
            return found
        for fragment, category in _CONTRIB_PATTERNS:
            if fragment in op_type:
                return category
    return OTHER
