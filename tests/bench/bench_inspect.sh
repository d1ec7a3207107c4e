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
        hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$TMP/h.json" -- "$*" >/dev/null 2>&1
        python3 -c 'import json,sys; print("%.6f" % json.load(open(sys.argv[1]))["results"][0]["mean"])' "$TMP/h.json"
    else
        for _ in 1 2 3; do "$@" >/dev/null 2>&1; done
        start=$(date +%s.%N)
        i=0
        while [ "$i" -lt "$RUNS" ]; do "$@" >/dev/null 2>&1; i=$((i + 1)); done
        end=$(date +%s.%N)
        echo "$start $end $RUNS" | awk '{ printf "%.6f\n", ($2 - $1) / $3 }'
    fi
}

timer=$(command -v hyperfine >/dev/null 2>&1 && echo "hyperfine -N, $RUNS runs" || echo "date loop, $RUNS runs")
echo "model: $MODEL ($(stat -c %s "$MODEL") bytes), timing: $timer, OpenMP threads: ${OMP_NUM_THREADS:-$(nproc)}"

ours=$(mean_seconds "$INSPECT" "$MODEL")
if command -v gguf-dump >/dev/null 2>&1; then
    theirs=$(mean_seconds gguf-dump "$MODEL")
    echo "$ours $theirs" | awk '{ printf "report:  gguf-inspect MODEL %8.2f ms   gguf-dump MODEL %8.2f ms   speed-up %.1fx (goal 50x)\n", $1 * 1e3, $2 * 1e3, $2 / $1 }'
else
    echo "report:  gguf-inspect MODEL $(echo "$ours" | awk '{ printf "%.2f ms", $1 * 1e3 }'); gguf-dump not installed (pip install gguf): comparison skipped"
fi

bytes=$("$INSPECT" "$MODEL" | awk '/^  tensor data / { print $3 }')
hash=$(mean_seconds "$INSPECT" --hash "$MODEL")
cat_time=$(mean_seconds cat "$MODEL")
echo "$bytes $hash $cat_time" | awk '{ printf "hash:    gguf-inspect --hash MODEL %7.2f ms = %6.2f GB/s of tensor data   cat MODEL %7.2f ms = %6.2f GB/s   (%.0f%% of the read bound, process start included)\n", $2 * 1e3, $1 / $2 / 1e9, $3 * 1e3, $1 / $3 / 1e9, 100 * $3 / $2 }'
