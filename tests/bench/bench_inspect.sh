#!/bin/sh
# gguf-inspect speed: the default report against PyPI gguf's gguf-dump on the same model, and
# --hash throughput (XXH64 over all tensor data, page cache warm) against `cat MODEL` as the
# bound set by reading the file. Uses hyperfine when installed, else a timing loop.
# Environment: BUILD, MODEL (see run.sh). REF_BIN is not used: the reference here is gguf-dump.
set -eu
: "${BUILD:=build}"
: "${MODEL:=models/SmolLM2-135M-Instruct.Q4_1.gguf}"
INSPECT="$BUILD/bin/gguf-inspect"
RUNS="${RUNS:-20}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Mean wall time in seconds of a command (its output discarded).
mean_seconds() {
    if command -v hyperfine >/dev/null 2>&1; then
        hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$TMP/h.json" -- "$*" \
            >/dev/null 2>&1
        python3 -c 'import json, sys; doc = json.load(open(sys.argv[1]))
print("%.6f" % doc["results"][0]["mean"])' "$TMP/h.json"
    else
        for _ in 1 2 3; do "$@" >/dev/null 2>&1; done
        start=$(date +%s.%N)
        i=0
        while [ "$i" -lt "$RUNS" ]; do "$@" >/dev/null 2>&1; i=$((i + 1)); done
        end=$(date +%s.%N)
        echo "$start $end $RUNS" | awk '{ printf "%.6f\n", ($2 - $1) / $3 }'
    fi
}

timer="date loop"
command -v hyperfine >/dev/null 2>&1 && timer="hyperfine -N"
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
