#!/bin/sh
# gguf-edit speed: one metadata edit written to a new file (the tensor data copied), against
# gguf-py's gguf_new_metadata script making the same edit, and `cp MODEL` as the bound set by
# copying the file. Both outputs must be the same bytes. Uses hyperfine when installed, else a
# timing loop. Environment: BUILD, MODEL (see run.sh). The reference here is gguf-py.
set -eu
: "${BUILD:=build}"
: "${MODEL:=models/SmolLM2-135M-Instruct.Q4_1.gguf}"
EDIT="$BUILD/bin/gguf-edit"
WARMUP=1
RUNS="${RUNS:-5}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# shellcheck source-path=SCRIPTDIR source=timing.sh
. "$(dirname "$0")/timing.sh"
echo "model: $MODEL ($(stat -c %s "$MODEL") bytes); timing: $timer, mean of $RUNS runs;" \
     "output in $TMP"

ours=$(mean_seconds "$EDIT" -q "$MODEL" "$TMP/ours.gguf" --name Edited)
copy=$(mean_seconds cp "$MODEL" "$TMP/copy.gguf")
if python3 -c 'import gguf.scripts.gguf_new_metadata' >/dev/null 2>&1; then
    theirs=$(mean_seconds python3 -m gguf.scripts.gguf_new_metadata --force \
             --general-name Edited "$MODEL" "$TMP/py.gguf")
    same="different bytes"
    cmp -s "$TMP/ours.gguf" "$TMP/py.gguf" && same="the same bytes"
    echo "$ours $theirs $copy" | awk -v same="$same" '{
        printf "edit: gguf-edit MODEL OUT --name Edited %.1f ms, gguf_new_metadata", $1 * 1e3
        printf " --general-name Edited MODEL OUT %.1f ms: %.1fx faster, %s;", $2 * 1e3, $2 / $1, same
        printf " cp MODEL %.1f ms\n", $3 * 1e3 }'
else
    echo "$ours $copy" | awk '{ printf "edit: gguf-edit MODEL OUT --name Edited %.1f ms;", $1 * 1e3
        printf " cp MODEL %.1f ms;", $2 * 1e3 }'
    echo " gguf-py's scripts are not installed (pip install gguf): comparison skipped"
fi
