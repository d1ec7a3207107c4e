#!/bin/sh
# gguf-inspect speed: the default report against PyPI gguf's gguf-dump on the same model, and
# --hash throughput (XXH64 over all tensor data, page cache warm) against `cat MODEL` as the
# bound set by reading the file. Uses hyperfine when installed, else a timing loop.
# Environment: BUILD, MODEL (see run.sh). REF_BIN is not used: the reference here is gguf-dump.
set -eu
: "${BUILD:=build}"
: "${MODEL:=models/SmolLM2-135M-Instruct.Q4_1.gguf}"
INSPECT="$BUILD/bin/gguf-inspect"
WARMUP=3
RUNS="${RUNS:-20}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# shellcheck source-path=SCRIPTDIR source=timing.sh
. "$(dirname "$0")/timing.sh"
echo "model: $MODEL ($(stat -c %s "$MODEL") bytes); timing: $timer, mean of $RUNS runs;" \
     "OpenMP threads: ${OMP_NUM_THREADS:-$(nproc)}"

ours=$(mean_seconds "$INSPECT" "$MODEL")
if command -v gguf-dump >/dev/null 2>&1; then
    theirs=$(mean_seconds gguf-dump "$MODEL")
    echo "$ours $theirs" | awk '{
        printf "report: gguf-inspect MODEL %.2f ms, gguf-dump MODEL %.2f ms:", $1 * 1e3, $2 * 1e3
        printf " %.1fx faster (goal 50x)\n", $2 / $1 }'
else
    echo "$ours" | awk '{ printf "report: gguf-inspect MODEL %.2f ms;", $1 * 1e3 }'
    echo " gguf-dump is not installed (pip install gguf): comparison skipped"
fi

bytes=$("$INSPECT" "$MODEL" | awk '/^  tensor data / { print $3 }')
hash=$(mean_seconds "$INSPECT" --hash "$MODEL")
cat_time=$(mean_seconds cat "$MODEL")
echo "$bytes $hash $cat_time $(stat -c %s "$MODEL")" | awk '{
    printf "hash:   gguf-inspect --hash MODEL %.2f ms = %.2f GB/s of tensor data;",
        $2 * 1e3, $1 / $2 / 1e9
    printf " cat MODEL %.2f ms = %.2f GB/s;", $3 * 1e3, $4 / $3 / 1e9
    printf " hashing runs at %.0f%% of the read bound (process start included)\n", 100 * $3 / $2 }'
