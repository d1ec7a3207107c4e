#!/bin/sh
# bench_imatrix.sh - collecting an importance matrix: gguf-eval --imatrix-out against llama.cpp's
# llama-imatrix on the same model, text and settings (-c 512, BENCH_CHUNKS chunks, THREADS
# threads), in the same run; wall time of the whole process (best of BENCH_REPEAT alternating
# runs) and peak RSS. (That the two files agree is tests/imatrix/test_imatrix_llama_cpp.c.)
# Environment: BUILD, MODEL, REF_BIN (see run.sh), BENCH_CHUNKS (default 4), THREADS (default:
# all cores), BENCH_REPEAT (default 2).
set -eu
: "${BUILD:=build}"
: "${MODEL:=models/SmolLM2-135M-Instruct.Q4_1.gguf}"
: "${REF_BIN:=}"
: "${BENCH_CHUNKS:=4}"
: "${BENCH_REPEAT:=2}"
THREADS="${THREADS:-$(nproc)}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gzip -dc tests/eval/data/licenses.txt.gz > "$work/text.txt"

# run OUT_LOG CMD...: prints "<wall seconds> <peak RSS KiB>"
run() {
    log="$1"
    shift
    /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" > "$log" 2>&1 || { cat "$log"; exit 1; }
    cat "$work/time.txt"
}
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }

echo "SmolLM2-135M Q4_1, $BENCH_CHUNKS chunks of 512 tokens, $THREADS threads, best of $BENCH_REPEAT"
ours="" ref="" i=0
while [ "$i" -lt "$BENCH_REPEAT" ]; do
    set -- $(run "$work/ours.log" "$BUILD/bin/gguf-eval" -m "$MODEL" -f "$work/text.txt" -c 512 \
        -t "$THREADS" --chunks "$BENCH_CHUNKS" --imatrix-out "$work/ours.imatrix.gguf")
    ours=$(best "$1" "$ours") ours_rss=$2
    if [ -n "$REF_BIN" ]; then
        set -- $(run "$work/ref.log" "$REF_BIN/llama-imatrix" -m "$MODEL" -f "$work/text.txt" \
            -c 512 -b 512 -t "$THREADS" --chunks "$BENCH_CHUNKS" -o "$work/ref.imatrix.gguf")
        ref=$(best "$1" "$ref") ref_rss=$2
    fi
    i=$((i + 1))
done
printf '%-16s %8s %10s\n' tool "wall s" "peak MiB"
printf '%-16s %8s %10.1f\n' gguf-eval "$ours" "$(awk -v k="$ours_rss" 'BEGIN { print k / 1024 }')"
if [ -z "$REF_BIN" ]; then
    echo "REF_BIN is unset: llama-imatrix comparison skipped"
    exit 0
fi
printf '%-16s %8s %10.1f\n' llama-imatrix "$ref" "$(awk -v k="$ref_rss" 'BEGIN { print k / 1024 }')"
awk -v o="$ours" -v r="$ref" 'BEGIN { printf "speed: ours %.2fx llama-imatrix (goal: > 1)\n", r / o }'
