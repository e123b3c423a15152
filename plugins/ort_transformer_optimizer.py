"""Apply ONNX Runtime's transformer optimizer to a model (a custom tool example).

Fuses attention, LayerNorm, GELU, skip-layernorm and bias patterns of BERT/GPT-2-like models
with ``onnxruntime.transformers.optimizer.optimize_model``. Register it in ONNX Designer
(Tools > Custom Tools… > New):
    Application: the Python interpreter ("Use Python"; it must have onnxruntime)
    Arguments:   /path/to/ort_transformer_optimizer.py $Model $Output --model-type bert
    [x] Automatically open model output

Usage: python ort_transformer_optimizer.py MODEL OUTPUT [--model-type T] [--num-heads N]
[--hidden-size H] [--opt-level L] [--fp16]
Exit codes: 0 written, 2 bad usage or unreadable model, 3 onnxruntime is not installed.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

EXIT_NO_ONNXRUNTIME = 3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run ONNX Runtime's transformer optimizer.")
    parser.add_argument("model", help="the .onnx file to optimize")
    parser.add_argument("output", help="where to write the optimized model")
    parser.add_argument("--model-type", default="bert", help="bert, gpt2, bart, t5, … (bert)")
    parser.add_argument("--num-heads", type=int, default=0, help="attention heads (0: detect)")
    parser.add_argument("--hidden-size", type=int, default=0, help="hidden size (0: detect)")
    parser.add_argument(
        "--opt-level", type=int, default=0, help="onnxruntime graph optimization level (0)"
    )
    parser.add_argument("--fp16", action="store_true", help="also convert to float16")
    args = parser.parse_args(argv)
    try:
        from onnxruntime.transformers.optimizer import optimize_model
    except ImportError as exc:
        print(
            "ort_transformer_optimizer: onnxruntime (with its transformers package) is not "
            f"installed for {sys.executable} ({exc}); install it with "
            f"'{sys.executable} -m pip install onnxruntime' or choose an interpreter that has it",
            file=sys.stderr,
        )
        return EXIT_NO_ONNXRUNTIME
    import onnx

    try:
        model = onnx.load(args.model)
    except Exception as exc:
        print(f"ort_transformer_optimizer: cannot read {args.model}: {exc}", file=sys.stderr)
        return 2
    before = Counter(n.op_type for n in model.graph.node)
    optimized = optimize_model(
        model,
        model_type=args.model_type,
        num_heads=args.num_heads,
        hidden_size=args.hidden_size,
        opt_level=args.opt_level,
    )
    if args.fp16:
        optimized.convert_float_to_float16(keep_io_types=True)
    optimized.save_model_to_file(args.output)
    after = Counter(n.op_type for n in optimized.model.graph.node)
    print(f"nodes: {sum(before.values())} -> {sum(after.values())}")
    for op in sorted(set(before) | set(after)):
        if before[op] != after[op]:
            print(f"  {op}: {before[op]} -> {after[op]}")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
