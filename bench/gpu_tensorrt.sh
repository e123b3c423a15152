#!/usr/bin/env bash
# TensorRT through the designer vs plain trtexec, on a machine with one NVIDIA GPU (≤ 5 min).
#
#   bench/gpu_tensorrt.sh [MODEL.onnx]      (default ../shared/models/squeezenet1_0.torchscript.onnx)
#
# Needs: nvidia-smi listing a GPU, trtexec on PATH (or $TRTEXEC, or /usr/src/tensorrt/bin/trtexec),
# the project venv (.venv). For FP32 and FP16 it builds the model's engine and profiles it
# (a) with plain trtexec and (b) with `onnx-designer trt build` / `onnx-designer profile trt`
# on the local target, with the same shapes and measurement settings, then prints the wall
# times, the designer's overhead as a ratio (designer / plain), and per-layer mean times side
# by side. Timing caches: both start cold (a fresh ONNX_DESIGNER_CACHE_DIR; plain trtexec
# gets none), so the build times compare like with like.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODEL="${1:-$ROOT/../shared/models/squeezenet1_0.torchscript.onnx}"
PY="$ROOT/.venv/bin/python"
DESIGNER=("$PY" -m designer)
ITER=200
SHAPE="1x3x224x224"

die() { echo "gpu_tensorrt.sh: $*" >&2; exit 1; }

[ -f "$MODEL" ] || die "model not found: $MODEL"
[ -x "$PY" ] || die "no project venv at $ROOT/.venv (run make run or make test first)"
command -v nvidia-smi >/dev/null 2>&1 || die "nvidia-smi not found: this benchmark needs an NVIDIA GPU and driver"
nvidia-smi -L 2>/dev/null | grep -q '^GPU ' || die "nvidia-smi lists no GPU: this benchmark needs an NVIDIA GPU"
TRTEXEC="${TRTEXEC:-$(command -v trtexec || true)}"
[ -n "$TRTEXEC" ] || { [ -x /usr/src/tensorrt/bin/trtexec ] && TRTEXEC=/usr/src/tensorrt/bin/trtexec; }
[ -n "$TRTEXEC" ] && [ -x "$TRTEXEC" ] || die "trtexec not found: put it on PATH or set TRTEXEC=/path/to/trtexec"
export PATH="$(dirname "$TRTEXEC"):$PATH"

WORK="$(mktemp -d -t od-gpu-trt.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
export ONNX_DESIGNER_CACHE_DIR="$WORK/cache"   # cold timing cache for the designer too
export QT_QPA_PLATFORM=offscreen

INPUT="$("$PY" - "$MODEL" <<'EOF'
import sys, onnx
m = onnx.load(sys.argv[1], load_external_data=False)
inits = {i.name for i in m.graph.initializer}
print(next(i.name for i in m.graph.input if i.name not in inits))
EOF
)"
echo "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
echo "trtexec: $TRTEXEC ($("$TRTEXEC" --help 2>&1 | grep -o 'TensorRT v[0-9]*' | head -1))"
echo "model: $MODEL (input $INPUT:$SHAPE)"

# The designer reads shapes from the model's stored optimization profile (SPEC X-1).
PROFILED="$WORK/model.onnx"
"${DESIGNER[@]}" trt set-profile "$MODEL" "$PROFILED" --shape "$INPUT:$SHAPE:$SHAPE:$SHAPE" >/dev/null

now() { date +%s.%N; }
elapsed() { "$PY" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$2"; }
declare -A T

for PREC in fp32 fp16; do
  FLAG=(); [ "$PREC" = fp16 ] && FLAG=(--fp16)
  D="$WORK/$PREC"; mkdir -p "$D"
  SHAPES=(--minShapes="$INPUT:$SHAPE" --optShapes="$INPUT:$SHAPE" --maxShapes="$INPUT:$SHAPE")

  t0=$(now)
  timeout 120 "$TRTEXEC" --onnx="$MODEL" "${SHAPES[@]}" "${FLAG[@]}" --skipInference \
    --profilingVerbosity=detailed --saveEngine="$D/plain.engine" >"$D/plain.build.log" 2>&1 \
    || die "plain trtexec build ($PREC) failed; see the tail: $(tail -3 "$D/plain.build.log")"
  t1=$(now); T[$PREC.plain.build]=$(elapsed "$t0" "$t1")

  timeout 120 "${DESIGNER[@]}" trt build "$PROFILED" --engine "$D/designer.engine" "${FLAG[@]}" \
    >"$D/designer.build.out" 2>&1 \
    || die "designer build ($PREC) failed: $(tail -3 "$D/designer.build.out")"
  t2=$(now); T[$PREC.designer.build]=$(elapsed "$t1" "$t2")

  timeout 120 "$TRTEXEC" --loadEngine="$D/plain.engine" --shapes="$INPUT:$SHAPE" \
    --iterations=$ITER --noDataTransfers --dumpProfile --exportProfile="$D/plain.profile.json" \
    >"$D/plain.profile.log" 2>&1 \
    || die "plain trtexec profile ($PREC) failed: $(tail -3 "$D/plain.profile.log")"
  t3=$(now); T[$PREC.plain.profile]=$(elapsed "$t2" "$t3")

  timeout 120 "${DESIGNER[@]}" profile trt "$PROFILED" --use-engine "$D/designer.engine" \
    --iterations $ITER --profile-json "$D/designer.profile.json" >"$D/designer.profile.out" 2>&1 \
    || die "designer profile ($PREC) failed: $(tail -3 "$D/designer.profile.out")"
  t4=$(now); T[$PREC.designer.profile]=$(elapsed "$t3" "$t4")
done

echo
printf '%-6s %-8s %10s %12s %9s\n' prec step "plain (s)" "designer (s)" ratio
for PREC in fp32 fp16; do
  for STEP in build profile; do
    P=${T[$PREC.plain.$STEP]}; Q=${T[$PREC.designer.$STEP]}
    printf '%-6s %-8s %10s %12s %9s\n' "$PREC" "$STEP" "$P" "$Q" \
      "$("$PY" -c "import sys; print(f'{float(sys.argv[2]) / max(float(sys.argv[1]), 1e-9):.2f}x')" "$P" "$Q")"
  done
done

for PREC in fp32 fp16; do
  echo
  echo "per-layer mean time, $PREC (ms): plain trtexec vs designer"
  "$PY" - "$WORK/$PREC/plain.profile.json" "$WORK/$PREC/designer.profile.json" <<'EOF'
import json, sys
def layers(path):
    return {r["name"]: r.get("averageMs") for r in json.load(open(path)) if "name" in r}
plain, ours = layers(sys.argv[1]), layers(sys.argv[2])
names = list(plain) + [n for n in ours if n not in plain]
print(f"{'layer':<60} {'plain':>10} {'designer':>10}")
for n in names:
    a, b = plain.get(n), ours.get(n)
    fa = f"{a:10.4f}" if a is not None else f"{'—':>10}"
    fb = f"{b:10.4f}" if b is not None else f"{'—':>10}"
    print(f"{n[:60]:<60} {fa} {fb}")
print(f"{'sum':<60} {sum(v or 0 for v in plain.values()):10.4f} {sum(v or 0 for v in ours.values()):10.4f}")
EOF
done
