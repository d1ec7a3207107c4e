#!/bin/sh
# bench_kld.sh - KL-divergence base files in both formats: file size, the mean KLD of a Q4_0 copy
# against each, and the time and peak memory (max RSS) of writing and reading them.
#  - SmolLM2 (49,152 tokens): gguf-eval writes the base of the shipped Q4_1 in the llama and the
#    compact format, then compares a Q4_0 copy with each.
#  - Gemma 3 270M (262,144 tokens), with REF_BIN: llama-perplexity writes llama-format bases of
#    the shipped Q4_K_M and of a Q4_0 copy (llama-quantize); bench_kld_compact converts the first
#    and computes every position's KLD from both formats (Q's log-probabilities from its own
#    base as logits), since gguf-eval may not run Gemma 3.
# Environment: BUILD, MODEL, REF_BIN (see run.sh), KLD_CHUNKS (default 4), THREADS (default: all
# cores).
set -eu
: "${BUILD:=build}"
: "${MODEL:=models/SmolLM2-135M-Instruct.Q4_1.gguf}"
: "${REF_BIN:=}"
: "${KLD_CHUNKS:=4}"
GEMMA=models/gemma-3-270m-q4_k_m.gguf
THREADS="${THREADS:-$(nproc)}"
WORK="$BUILD/bench-kld"
mkdir -p "$WORK"
trap 'rm -f "$WORK"/*.kld "$WORK"/*.ckld "$WORK/licenses.txt"' EXIT
gzip -dc tests/eval/data/licenses.txt.gz > "$WORK/licenses.txt"

# shellcheck source-path=SCRIPTDIR source=timing.sh
. "$(dirname "$0")/timing.sh"

# measure, printing "SECONDS MAX_RSS_MIB"; a failure is said on stderr and fails the call.
measure_mib() {
    set -- "$1" "$2" $(measure "$@")
    if [ "$5" != 0 ]; then
        echo "$2 failed (exit $5), see $1" >&2
        return 1
    fi
    echo "$3 $4" | awk '{ printf "%.1f %.0f\n", $1, $2 / 1024 }'
}

mean_kld() { sed -n 's/^Mean    KLD: *\([0-9.]*\).*/\1/p' "$1"; }

echo "SmolLM2-135M Q4_1 base, Q4_0 copy, $KLD_CHUNKS chunks of 512 tokens, $THREADS threads"
"$BUILD/bin/gguf-quantize" -q --allow-requantize "$MODEL" "$WORK/q4_0.gguf" q4_0 2>/dev/null
printf '%-8s %12s %8s %9s %9s %9s %9s %10s\n' format bytes ratio "write s" "write MiB" \
    "read s" "read MiB" "mean KLD"
for format in llama compact; do
    base="$WORK/smollm2.$format.kld"
    set -- $(measure_mib "$WORK/write-$format.log" "$BUILD/bin/gguf-eval" -m "$MODEL" \
        -f "$WORK/licenses.txt" -t "$THREADS" --chunks "$KLD_CHUNKS" \
        --kl-divergence-base "$base" --kl-divergence-base-format "$format")
    write_s=$1 write_mib=$2
    set -- $(measure_mib "$WORK/read-$format.log" "$BUILD/bin/gguf-eval" -m "$WORK/q4_0.gguf" \
        -t "$THREADS" --kl-divergence-base "$base" --kl-divergence)
    bytes=$(stat -c %s "$base")
    [ "$format" = llama ] && llama_bytes=$bytes
    printf '%-8s %12s %7.1fx %9s %9s %9s %9s %10s\n' "$format" "$bytes" \
        "$(python3 -c "print($llama_bytes / $bytes)")" "$write_s" "$write_mib" "$1" "$2" \
        "$(mean_kld "$WORK/read-$format.log")"
done
python3 -c "import sys; print(f'KLD difference compact - llama: {float(sys.argv[2]) - float(sys.argv[1]):+.2e}')" \
    "$(mean_kld "$WORK/read-llama.log")" "$(mean_kld "$WORK/read-compact.log")"

echo
if [ -z "$REF_BIN" ] || [ ! -f "$GEMMA" ]; then
    echo "Gemma 3 270M: skipped (needs REF_BIN and $GEMMA)"
    exit 0
fi
echo "Gemma 3 270M Q4_K_M base, Q4_0 copy, $KLD_CHUNKS chunks of 512 tokens (bases by llama-perplexity)"
"$REF_BIN/llama-quantize" --allow-requantize "$GEMMA" "$WORK/gemma-q4_0.gguf" Q4_0 \
    > "$WORK/gemma-quantize.log" 2>&1
for name in base q4_0; do
    model="$GEMMA"
    [ "$name" = q4_0 ] && model="$WORK/gemma-q4_0.gguf"
    # -nr: llama.cpp's repacked (AMX) kernels die with SIGILL where the OS does not grant AMX.
    measure_mib "$WORK/gemma-$name.log" "$REF_BIN/llama-perplexity" -nr -m "$model" \
        -f "$WORK/licenses.txt" -c 512 -b 512 -t "$THREADS" --chunks "$KLD_CHUNKS" \
        --kl-divergence-base "$WORK/gemma-$name.kld" > /dev/null
done
measure_mib "$WORK/gemma-compact.log" "$BUILD/bench/bench_kld_compact" "$WORK/gemma-base.kld" \
    "$WORK/gemma-q4_0.kld" "$WORK/gemma.ckld" > "$WORK/gemma-time.txt"
cat "$WORK/gemma-compact.log"
echo "(convert and compare: $(cut -d' ' -f1 "$WORK/gemma-time.txt") s, max RSS $(cut -d' ' -f2 "$WORK/gemma-time.txt") MiB)"
