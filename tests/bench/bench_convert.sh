#!/bin/sh
# HF -> GGUF conversion: SmolLM2 as a Hugging Face F32 folder (made from MODEL once, through
# gguf-quantize f32 and gguf-convert --to-hf) converted to Q8_0 in one pass by gguf-convert (1
# and 2 threads) and by gguf-py + numpy doing the same work (convert_gguf_py.py: llama.cpp's
# convert_hf_to_gguf.py needs torch, which is not installed here). Also Q4_K_M in one pass, and
# the export back (--to-hf). Best wall time of REPEAT runs, page cache warm; peak RSS from
# /usr/bin/time -v.
set -eu
: "${BUILD:=build}"
: "${MODEL:=models/SmolLM2-135M-Instruct.Q4_1.gguf}"
: "${REPEAT:=3}"
convert="$BUILD/bin/gguf-convert"
if [ ! -x "$convert" ] || [ ! -e "$MODEL" ] || [ ! -x /usr/bin/time ]; then
    echo "bench_convert: $convert, $MODEL or /usr/bin/time is missing (run make bench)" >&2
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BUILD/bin/gguf-quantize" -q --allow-requantize "$MODEL" "$work/f32.gguf" f32 2>/dev/null
"$convert" --to-hf "$work/f32.gguf" "$work/hf" >/dev/null

# best_of NAME CMD...: runs CMD REPEAT times, prints one row: best wall seconds, peak RSS.
best_of() {
    name=$1
    shift
    best=""
    rss=0
    i=0
    while [ "$i" -lt "$REPEAT" ]; do
        rm -rf "$work/out.gguf" "$work/out-hf"
        /usr/bin/time -v -o "$work/time.txt" "$@" >/dev/null 2>&1
        wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt" |
            awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
        peak=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
        best=$(awk -v a="$wall" -v b="$best" 'BEGIN { print (b == "" || a < b) ? a : b }')
        rss=$(awk -v a="$peak" -v b="$rss" 'BEGIN { print (a > b ? a : b) }')
        i=$((i + 1))
    done
    printf '%-40s %8.2f s %8.1f MiB\n' "$name" "$best" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
}

printf '%-40s %10s %12s\n' "HF F32 SmolLM2 (538 MB) ->" "best wall" "peak RSS"
best_of "gguf-convert q8_0, 1 thread" "$convert" --outtype q8_0 --threads 1 "$work/hf" "$work/out.gguf"
best_of "gguf-convert q8_0, 2 threads" "$convert" --outtype q8_0 --threads 2 "$work/hf" "$work/out.gguf"
if python3 -c 'import gguf, numpy, safetensors' 2>/dev/null; then
    best_of "gguf-py + numpy q8_0 (same tensors)" python3 tests/bench/convert_gguf_py.py "$work/hf" "$work/out.gguf"
else
    echo "gguf-py + numpy: skipped (pip install -r tests/requirements.txt)"
fi
best_of "gguf-convert q4_k_m, 2 threads" "$convert" --outtype q4_k_m --threads 2 "$work/hf" "$work/out.gguf"
best_of "gguf-convert --to-hf f32 (GGUF F32 ->)" "$convert" --to-hf "$work/f32.gguf" "$work/out-hf"
best_of "gguf-convert --to-hf bf16 (GGUF F32 ->)" "$convert" --to-hf --outtype bf16 "$work/f32.gguf" "$work/out-hf"
