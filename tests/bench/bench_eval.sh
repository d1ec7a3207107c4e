#!/bin/sh
# bench_eval.sh - gguf-eval against llama.cpp's llama-perplexity on the same files, text and
# settings, in the same run: tokens/s (whole process: load, tokenize, evaluate), peak memory
# (max RSS) and the PPL each prints. The runs alternate (ours, theirs, ours, theirs) and the
# faster of each pair is kept, so that load from other processes hits both alike.
# Environment: BUILD, MODEL, REF_BIN, REF_BIN_AVX2 (see run.sh), BENCH_CHUNKS (default 8), THREADS
# (default: all cores), BENCH_REPEAT (default 2). With REF_BIN_AVX2 the goal types run again in
# rows of their own, ours with INF_SIMD=avx2 against that llama.cpp build.
set -eu
: "${BUILD:=build}"
: "${MODEL:=models/SmolLM2-135M-Instruct.Q4_1.gguf}"
: "${REF_BIN:=}"
: "${BENCH_CHUNKS:=8}"
: "${BENCH_REPEAT:=2}"
THREADS="${THREADS:-$(nproc)}"
WORK="$BUILD/bench-eval"
mkdir -p "$WORK"
trap 'rm -f "$WORK/licenses.txt"' EXIT
gzip -dc tests/eval/data/licenses.txt.gz > "$WORK/licenses.txt"

# The models: F32 expanded from the shipped Q4_1, Q8_0, Q4_0 and the Q4_K_M mix from F32, and
# Q4_1 as shipped.
"$BUILD/bin/gguf-quantize" -q --allow-requantize "$MODEL" "$WORK/f32.gguf" f32
"$BUILD/bin/gguf-quantize" -q "$WORK/f32.gguf" "$WORK/q8_0.gguf" q8_0
"$BUILD/bin/gguf-quantize" -q "$WORK/f32.gguf" "$WORK/q4_0.gguf" q4_0
"$BUILD/bin/gguf-quantize" -q "$WORK/f32.gguf" "$WORK/q4_k_m.gguf" q4_k_m 2>/dev/null

# shellcheck source-path=SCRIPTDIR source=timing.sh
. "$(dirname "$0")/timing.sh"

echo "SmolLM2-135M, $BENCH_CHUNKS chunks of 512 tokens (tests/eval/data/licenses.txt.gz), batch 512, $THREADS threads"
probe_ref_flags "$WORK/probe.log" -m "$WORK/q4_0.gguf" -f "$WORK/licenses.txt" -c 512 -b 512 \
    -t "$THREADS" --chunks 2

# eval_rows SIMD REF_DIR NAME...: one row per model: gguf-eval (with INF_SIMD=SIMD unless SIMD is
# empty) against REF_DIR's llama-perplexity with $ref_flags (none when REF_DIR is empty), best of
# BENCH_REPEAT alternating runs. With a SIMD level the row also gives the CPU time ratio
# (llama.cpp's user + system seconds / ours, each the smaller of its runs).
eval_rows() {
    simd=$1 ref_dir=$2
    shift 2
    for name in "$@"; do
        file="$WORK/$name.gguf"
        [ "$name" = q4_1 ] && file="$MODEL"
        best_ours=""; best_ref=""; cpu_ours=""; cpu_ref=""; rss_ours=0; rss_ref=0
        i=0
        while [ $i -lt "$BENCH_REPEAT" ]; do
            set -- $(measure "$WORK/ours-$name.log" env ${simd:+INF_SIMD=$simd} \
                "$BUILD/bin/gguf-eval" -m "$file" -f "$WORK/licenses.txt" -c 512 -b 512 \
                -t "$THREADS" --chunks "$BENCH_CHUNKS")
            [ "$3" = 0 ] || { echo "gguf-eval failed on $name:"; cat "$WORK/ours-$name.log"; exit 1; }
            best_ours=$(min_seconds "$best_ours" "$1")
            cpu_ours=$(min_seconds "$cpu_ours" "$4")
            rss_ours=$2
            if [ -n "$ref_dir" ]; then
                set -- $(measure "$WORK/ref-$name.log" "$ref_dir/llama-perplexity" $ref_flags \
                    -m "$file" -f "$WORK/licenses.txt" -c 512 -b 512 -t "$THREADS" \
                    --chunks "$BENCH_CHUNKS")
                [ "$3" = 0 ] || { echo "llama-perplexity failed on $name"; exit 1; }
                best_ref=$(min_seconds "$best_ref" "$1")
                cpu_ref=$(min_seconds "$cpu_ref" "$4")
                rss_ref=$2
            fi
            i=$((i + 1))
        done
        python3 - "$name" "$tokens" "$best_ours" "$rss_ours" "${best_ref:-0}" "$rss_ref" \
            "$WORK/ours-$name.log" "$WORK/ref-$name.log" "$simd" "$cpu_ours" "${cpu_ref:-0}" <<'EOF'
import re, sys
name, tokens, t_ours, rss_ours, t_ref, rss_ref, log_ours, log_ref, simd, c_ours, c_ref = sys.argv[1:]
tokens, t_ours, t_ref, c_ours, c_ref = int(tokens), float(t_ours), float(t_ref), float(c_ours), float(c_ref)
def ppl(path):
    try:
        m = re.search(r"Final estimate: PPL = ([0-9.]+)", open(path, errors="replace").read())
        return float(m.group(1)) if m else None
    except OSError:
        return None
p_ours, p_ref = ppl(log_ours), ppl(log_ref) if t_ref else None
ours = tokens / t_ours
ref = tokens / t_ref if t_ref else None
cols = [f"{name:7s}", f"{ours:10.1f}", f"{ref:10.1f}" if ref else f"{'-':>10}",
        f"{ours / ref:6.2f}x" if ref else f"{'-':>7}", f"{int(rss_ours) / 1024:9.1f}",
        f"{int(rss_ref) / 1024:9.1f}" if ref else f"{'-':>9}", f"{p_ours:10.4f}",
        f"{p_ref:10.4f}" if p_ref else f"{'-':>10}",
        f"{100 * (p_ours / p_ref - 1):+7.3f}%" if p_ref else f"{'-':>8}"]
if simd:
    cols.append(f"{c_ref / c_ours:8.2f}x" if c_ref else f"{'-':>9}")
print(" ".join(cols))
EOF
    done
}

header='%-7s %10s %10s %7s %9s %9s %10s %10s %8s'
printf "$header\n" model "ours t/s" "llama t/s" ratio "ours MiB" "llama MiB" "ours PPL" "llama PPL" \
    "PPL diff"
tokens=$((BENCH_CHUNKS * 512))
eval_rows "" "$REF_BIN" f32 q8_0 q4_0 q4_1 q4_k_m
echo "(tokens/s over the whole process: load, tokenization and $tokens evaluated tokens; goals: ours >= 1.25x llama.cpp with no more memory; >= 2x for q8_0, q4_0 and q4_k_m (issue #9))"

# Both AVX2-only: our AVX2 level against llama.cpp built without AVX-512 (REF_BIN_AVX2): what an
# AVX2-only CPU runs, measured on this one.
if [ -n "${REF_BIN_AVX2:-}" ]; then
    echo "-- both AVX2-only: ours with INF_SIMD=avx2, llama.cpp from REF_BIN_AVX2=$REF_BIN_AVX2"
    PROBE_BIN=$REF_BIN_AVX2
    probe_ref_flags "$WORK/probe-avx2.log" -m "$WORK/q4_0.gguf" -f "$WORK/licenses.txt" -c 512 \
        -b 512 -t "$THREADS" --chunks 2
    printf "$header %9s\n" model "ours t/s" "llama t/s" ratio "ours MiB" "llama MiB" "ours PPL" \
        "llama PPL" "PPL diff" "CPU ratio"
    eval_rows avx2 "$REF_BIN_AVX2" q8_0 q4_0 q4_k_m
    echo "(CPU ratio: llama-perplexity's user + system seconds / ours; goal: ours >= 2x llama.cpp's tokens/s (issue #9))"
fi
