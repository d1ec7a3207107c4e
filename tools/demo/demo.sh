#!/bin/sh
# demo.sh - the toolkit end to end, run by `make demo` (which builds the tools and fetches the
# model first): SmolLM2-135M Q4_1 as shipped is expanded to F32, re-quantized to Q8_0, Q4_0 and
# the Q4_K_M mix, and once more to Q4_K_M with an importance matrix that gguf-eval collects from
# the first chunks of the text; each file is inspected, then all are evaluated on the same
# English text with the F32 model as the KL-divergence base. Ends with a table: file, size, PPL,
# KLD vs F32, tokens/s.
#
# Environment: BUILD (build folder, default build), CHUNKS (chunks of 512 tokens per evaluation,
# default 20 of the text's 55), THREADS (default: all cores). Work files go to $BUILD/demo; the
# KL-divergence base (25 MB per chunk) is removed at the end.
set -eu
: "${BUILD:=build}"
: "${CHUNKS:=20}"
THREADS="${THREADS:-$(nproc)}"
MODEL=models/SmolLM2-135M-Instruct.Q4_1.gguf
TEXT=tests/eval/data/licenses.txt.gz
BIN="$BUILD/bin"
WORK="$BUILD/demo"
mkdir -p "$WORK"
trap 'rm -f "$WORK/f32.kld"' EXIT

step() { printf '\n== %s\n' "$*"; }

step "1. quantize: Q4_1 (as shipped) -> F32 -> Q8_0, Q4_0, Q4_K_M; an imatrix; Q4_K_M with it"
"$BIN/gguf-quantize" -q --allow-requantize "$MODEL" "$WORK/smollm2-f32.gguf" f32
"$BIN/gguf-quantize" -q "$WORK/smollm2-f32.gguf" "$WORK/smollm2-q8_0.gguf" q8_0
"$BIN/gguf-quantize" -q "$WORK/smollm2-f32.gguf" "$WORK/smollm2-q4_0.gguf" q4_0
"$BIN/gguf-quantize" -q "$WORK/smollm2-f32.gguf" "$WORK/smollm2-q4_k_m.gguf" q4_k_m
echo "importance matrix from 8 chunks of the text (llama-imatrix's GGUF format)"
"$BIN/gguf-eval" -m "$WORK/smollm2-f32.gguf" -f "$TEXT" -c 512 -t "$THREADS" --chunks 8 \
    --imatrix-out "$WORK/smollm2.imatrix.gguf" > "$WORK/imatrix.log"
"$BIN/gguf-quantize" -q --imatrix "$WORK/smollm2.imatrix.gguf" "$WORK/smollm2-f32.gguf" \
    "$WORK/smollm2-q4_k_m-imat.gguf" q4_k_m

step "2. inspect"
for f in "$MODEL" "$WORK/smollm2-f32.gguf" "$WORK/smollm2-q8_0.gguf" "$WORK/smollm2-q4_0.gguf" \
    "$WORK/smollm2-q4_k_m.gguf"; do
    printf -- '-- %s\n' "$f"
    "$BIN/gguf-inspect" "$f" | sed -n '/^tensor types/,$p'
done

step "3. evaluate: $CHUNKS chunks of 512 tokens of $TEXT, $THREADS threads"
echo "F32 (writing the KL-divergence base)"
"$BIN/gguf-eval" -m "$WORK/smollm2-f32.gguf" -f "$TEXT" -c 512 -b 512 -t "$THREADS" \
    --chunks "$CHUNKS" --kl-divergence-base "$WORK/f32.kld" --json > "$WORK/f32.json"
for q in q8_0 q4_0 q4_1 q4_k_m q4_k_m-imat; do
    model="$WORK/smollm2-$q.gguf"
    [ "$q" = q4_1 ] && model="$MODEL"
    echo "$q (against the F32 base)"
    "$BIN/gguf-eval" -m "$model" --kl-divergence-base "$WORK/f32.kld" --kl-divergence \
        -t "$THREADS" --json --plot "$WORK/$q-vs-f32.svg" > "$WORK/$q.json"
done

step "4. results (PPL: lower is better; KLD: divergence from the F32 model's predictions)"
python3 - "$WORK" "$MODEL" <<'EOF'
import json, os, sys
work, shipped = sys.argv[1], sys.argv[2]
rows = [("F32", f"{work}/smollm2-f32.gguf", "f32"), ("Q8_0", f"{work}/smollm2-q8_0.gguf", "q8_0"),
        ("Q4_1 (shipped)", shipped, "q4_1"), ("Q4_0", f"{work}/smollm2-q4_0.gguf", "q4_0"),
        ("Q4_K_M", f"{work}/smollm2-q4_k_m.gguf", "q4_k_m"),
        ("Q4_K_M imatrix", f"{work}/smollm2-q4_k_m-imat.gguf", "q4_k_m-imat")]
print(f"{'model':<15} {'file':<34} {'MiB':>6} {'PPL':>18} {'KLD vs F32':>20} {'tokens/s':>9}")
for label, path, key in rows:
    d = json.load(open(f"{work}/{key}.json"))
    kld = d.get("kl_divergence")
    if kld:
        ppl = f"{kld['ppl']['value']:.4f} ± {kld['ppl']['error']:.4f}"
        div = f"{kld['kld']['value']:.6f} ± {kld['kld']['error']:.6f}"
    else:
        ppl, div = f"{d['ppl']:.4f} ± {d['ppl_error']:.4f}", "(base)"
    print(f"{label:<15} {os.path.basename(path):<34} {os.path.getsize(path) / 2**20:6.1f} "
          f"{ppl:>18} {div:>20} {d['tokens_per_second']:9.1f}")
EOF
echo "(F32 is the shipped Q4_1 expanded: its weights are exact in F32, so Q4_1 differs from it only"
echo " by the 8-bit activations of its matrix products; the others also round the weights. The"
echo " imatrix was collected on the first 8 chunks, which are also scored: a real check uses other text.)"
echo "plots: $WORK/*-vs-f32.svg"
