#!/bin/sh
# Whole-file quantization: gguf-quantize converts SmolLM2 as F32 (made from MODEL once) to Q8_0
# and Q4_0 with --pure, and to the Q4_K_M mix with its per-tensor rules. Throughput is MB/s of
# F32 input data over the wall time of the process (best of REPEAT runs, page cache warm), peak
# RSS from /usr/bin/time -v. Rows: best SIMD level vs INF_SIMD=scalar, 1 and 2 threads. With
# REF_BIN, llama-quantize runs on the same file with the same options and thread count, and each
# of our rows gives the speed and RSS ratios against it. With REF_BIN_AVX2 (a llama.cpp build
# without AVX-512, see run.sh) every comparison runs again in rows of their own, ours with
# INF_SIMD=avx2 against that build's llama-quantize: both AVX2-only.
set -eu
: "${BUILD:=build}"
: "${MODEL:=models/SmolLM2-135M-Instruct.Q4_1.gguf}"
: "${REPEAT:=3}"
tool="$BUILD/bin/gguf-quantize"
if [ ! -x "$tool" ] || [ ! -e "$MODEL" ]; then
    echo "bench_quantize: $tool or $MODEL is missing (run make bench)" >&2
    exit 1
fi
if [ ! -x /usr/bin/time ]; then
    echo "bench_quantize: /usr/bin/time is missing (apt-get install time)" >&2
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
f32="$work/smollm2-f32.gguf"
"$tool" -q --allow-requantize "$MODEL" "$f32" f32 2>/dev/null
# Bytes of F32 input data: the F32 file minus its header, as gguf-quantize reports it.
data_bytes=$("$tool" --dry-run "$f32" q8_0 | sed -n 's/^data: *\([0-9.]*\) MiB.*/\1/p')
data_bytes=$(awk -v m="$data_bytes" 'BEGIN { printf "%.0f", m * 1048576 }')

# best_of CMD...: runs CMD REPEAT times; prints "<best wall seconds> <max peak RSS in KiB>".
best_of() {
    best=""
    rss=0
    i=0
    while [ "$i" -lt "$REPEAT" ]; do
        rm -f "$work/out.gguf"
        /usr/bin/time -v -o "$work/time.txt" "$@" >/dev/null 2>&1
        wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt" |
            awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
        peak=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
        best=$(awk -v a="$wall" -v b="$best" 'BEGIN { print (b == "" || a < b) ? a : b }')
        rss=$(awk -v a="$peak" -v b="$rss" 'BEGIN { print (a > b) ? a : b }')
        i=$((i + 1))
    done
    echo "$best $rss"
}

mbps() { awk -v b="$data_bytes" -v s="$1" 'BEGIN { printf "%.1f", (s > 0 ? b / 1e6 / s : 0) }'; }

echo "input: SmolLM2-135M as F32, $(awk -v b="$data_bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB of tensor data; best of $REPEAT runs; load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
if [ -z "${REF_BIN:-}" ] || [ ! -x "$REF_BIN/llama-quantize" ]; then
    echo "llama.cpp comparison skipped: REF_BIN is unset or has no llama-quantize"
    REF_QUANTIZE=""
else
    REF_QUANTIZE="$REF_BIN/llama-quantize"
fi
# quantize_rows REF_QUANTIZE SIMD...: for each type and thread count, llama-quantize's row (when
# REF_QUANTIZE is set) then ours at each SIMD level ("best": the library's choice), each with its
# speed and RSS ratios against that llama-quantize.
quantize_rows() {
    ref_quantize=$1
    shift
    levels="$*" # "$@" is reused below for the timings
    for type in q8_0 q4_0 q4_k_m; do
        pure=--pure
        [ "$type" = q4_k_m ] && pure=""
        for threads in 1 2; do
            ref_time="" ref_rss=""
            if [ -n "$ref_quantize" ]; then
                set -- $(best_of "$ref_quantize" $pure "$f32" "$work/out.gguf" "$type" "$threads")
                ref_time=$1 ref_rss=$2
                printf '%-6s %-8s %-7s %10.3f %10s %12.1f %12s %10s\n' "$type" llama.cpp "$threads" \
                    "$ref_time" "$(mbps "$ref_time")" "$(awk -v k="$ref_rss" 'BEGIN { print k / 1024 }')" "1.00" "1.00"
            fi
            for simd in $levels; do
                level=""
                [ "$simd" = best ] || level=$simd
                set -- $(best_of env ${level:+INF_SIMD=$level} "$tool" -q $pure -t "$threads" "$f32" \
                    "$work/out.gguf" "$type")
                speed="-" rss_ratio="-"
                if [ -n "$ref_time" ]; then
                    speed=$(awk -v r="$ref_time" -v s="$1" 'BEGIN { printf "%.2f", r / s }')
                    rss_ratio=$(awk -v r="$ref_rss" -v s="$2" 'BEGIN { printf "%.2f", s / r }')
                fi
                printf '%-6s %-8s %-7s %10.3f %10s %12.1f %12s %10s\n' "$type" "$simd" "$threads" "$1" \
                    "$(mbps "$1")" "$(awk -v k="$2" 'BEGIN { print k / 1024 }')" "$speed" "$rss_ratio"
            done
        done
    done
}

header='%-6s %-8s %-7s %10s %10s %12s %12s %10s\n'
printf "$header" type simd threads "wall s" "MB/s" "peak RSS MB" "vs llama x" "RSS ratio"
quantize_rows "$REF_QUANTIZE" best scalar
echo "vs llama x: llama-quantize wall time / ours (>1: we are faster); RSS ratio: our peak RSS / its"

if [ -n "${REF_BIN_AVX2:-}" ]; then
    if [ -x "$REF_BIN_AVX2/llama-quantize" ]; then
        echo "-- both AVX2-only: ours with INF_SIMD=avx2, llama.cpp from REF_BIN_AVX2=$REF_BIN_AVX2"
        printf "$header" type simd threads "wall s" "MB/s" "peak RSS MB" "vs llama x" "RSS ratio"
        quantize_rows "$REF_BIN_AVX2/llama-quantize" avx2
        echo "(goal: q4_k_m >= 2x llama-quantize's MB/s, RSS advantage kept (issue #9))"
    else
        echo "AVX2-only comparison skipped: REF_BIN_AVX2 has no llama-quantize"
    fi
fi
