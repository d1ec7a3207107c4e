#!/bin/sh
# Tokenizer speed on ~2 MB of text (license texts and C sources, as perplexity tokenizes a whole
# file) for the model's vocabulary and, when ../shared/testdata is there, the GPT-2 and Llama SPM
# test vocabularies: our in-process throughput and, with REF_BIN, llama.cpp's llama-tokenize on
# the same file (special tokens parsed, no BOS, no escape processing) with its ids compared to
# ours. llama.cpp's tokenize-only time is estimated as its wall time on the file minus its wall
# time on a 1-byte file (its loading cost; for the model it also maps the weights); that estimate
# includes printing the ids, which ours does not time.
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
    cat /usr/share/common-licenses/* libgguf/src/*.c libinfer/src/*/*.c libinfer/src/*/*/*.c 2>/dev/null >> "$text"
done
printf 'x' > "$TMP/tiny.txt"
echo "text: $(stat -c %s "$text") bytes"
[ -n "${REF_BIN:-}" ] && [ -x "$REF_BIN/llama-tokenize" ] ||
    echo "llama.cpp comparison skipped: REF_BIN is unset or has no llama-tokenize"

wall() { # seconds of wall time of a command, output discarded
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s.%N)
    echo "$start $end" | awk '{ printf "%.4f\n", $2 - $1 }'
}
ref() { "$REF_BIN/llama-tokenize" -m "$1" -f "$2" --ids --no-bos --no-escape --log-disable; }

vocabs="$MODEL"
for v in ../shared/testdata/vocab/ggml-vocab-gpt-2.gguf ../shared/testdata/vocab/ggml-vocab-llama-spm.gguf; do
    [ -e "$v" ] && vocabs="$vocabs $v"
done
for vocab in $vocabs; do
    echo "-- $(basename "$vocab")"
    line=$("$bin" "$vocab" "$text" --runs 5 --parse-special --ids "$TMP/ours.ids")
    echo "ours: $line"
    [ -n "${REF_BIN:-}" ] && [ -x "$REF_BIN/llama-tokenize" ] || continue
    ref "$vocab" "$text" 2>/dev/null | tail -n 1 | tr -d '[] ' | tr ',' '\n' > "$TMP/ref.ids"
    if cmp -s "$TMP/ours.ids" "$TMP/ref.ids"; then same="identical"; else same="DIFFERENT"; fi
    ref_wall=$(wall ref "$vocab" "$text")
    ref_fixed=$(wall ref "$vocab" "$TMP/tiny.txt")
    ours_ms=$(echo "$line" | sed 's/.*best of 5 \([0-9.]*\) ms.*/\1/')
    echo "$ref_wall $ref_fixed $ours_ms" | awk -v same="$same" -v n="$(wc -l < "$TMP/ref.ids")" '{
        ref_ms = ($1 - $2) * 1e3
        printf "llama-tokenize: %.0f ms on the file, %.0f ms on 1 byte: tokenize ~%.0f ms;", $1 * 1e3, $2 * 1e3, ref_ms
        printf " ours %.1fx faster; ids %s (%d tokens)\n", ref_ms / $3, same, n }'
done
