#!/bin/sh
# Tokenizer speed on ~2 MB of text (license texts and C sources, as perplexity tokenizes a whole
# file): our in-process throughput, and with REF_BIN llama.cpp's llama-tokenize on the same file
# and model (special tokens parsed, no BOS, no escape processing), its ids compared with ours.
# Whole-process times include loading (llama-tokenize also maps the weights); llama.cpp's
# tokenize-only time is estimated as its time on the file minus its time on a 1-byte file.
set -eu
: "${BUILD:=build}"
: "${MODEL:=models/SmolLM2-135M-Instruct.Q4_1.gguf}"
bin="$BUILD/bench/bench_tokenize"
if [ ! -x "$bin" ]; then
    echo "bench_vocab: $bin is missing (run make bench)" >&2
    exit 1
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
text="$TMP/text.txt"
while [ "$(stat -c %s "$text" 2>/dev/null || echo 0)" -lt 2000000 ]; do
    cat /usr/share/common-licenses/* libgguf/src/*.c libinfer/src/*/*.c 2>/dev/null >> "$text"
done
echo "text: $(stat -c %s "$text") bytes; model: $MODEL"
"$bin" "$MODEL" "$text" --runs 5 --parse-special --ids "$TMP/ours.ids"

wall() { # seconds of wall time of a command, output discarded
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s.%N)
    echo "$start $end" | awk '{ printf "%.4f\n", $2 - $1 }'
}
ours_wall=$(wall "$bin" "$MODEL" "$text" --runs 1 --parse-special --ids "$TMP/ours2.ids")
echo "ours, whole process (load, tokenize once, write ids): $(echo "$ours_wall" | awk '{ printf "%.1f ms", $1 * 1e3 }')"

if [ -z "${REF_BIN:-}" ] || [ ! -x "$REF_BIN/llama-tokenize" ]; then
    echo "llama.cpp comparison skipped: REF_BIN is unset or has no llama-tokenize"
    exit 0
fi
printf 'x' > "$TMP/tiny.txt"
ref() { "$REF_BIN/llama-tokenize" -m "$MODEL" -f "$1" --ids --no-bos --no-escape --log-disable; }
ref "$text" 2>/dev/null | tail -n 1 | tr -d '[] ' | tr ',' '\n' > "$TMP/ref.ids"
ref_wall=$(wall ref "$text")
ref_fixed=$(wall ref "$TMP/tiny.txt")
ours_best=$("$bin" "$MODEL" "$text" --runs 5 --parse-special | sed 's/.*best of 5 \([0-9.]*\) ms.*/\1/')
if cmp -s "$TMP/ours.ids" "$TMP/ref.ids"; then same="identical"; else same="DIFFERENT"; fi
echo "llama-tokenize, whole process: $(echo "$ref_wall" | awk '{ printf "%.1f ms", $1 * 1e3 }')" \
     "(1-byte file: $(echo "$ref_fixed" | awk '{ printf "%.1f ms", $1 * 1e3 }'));" \
     "ids $same ($(wc -l < "$TMP/ref.ids") tokens)"
echo "$ours_wall $ref_wall $ref_fixed $ours_best" | awk '{
    printf "whole process: ours %.1fx faster; tokenize only: ours %.1f ms vs llama.cpp ~%.1f ms = %.1fx\n",
        $2 / $1, $4, ($2 - $3) * 1e3, ($2 - $3) * 1e3 / $4 }'
