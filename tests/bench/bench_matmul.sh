#!/bin/sh
# mul_mat throughput on SmolLM2's layer shapes (K x M = 576x576, 576x1536, 1536x576, 576x49152)
# with 512 activation rows: F32 weights in GFLOP/s, Q8_0/Q4_0 in effective GOP/s (2*K*M*N
# operations per product either way), against the machine's peak and, with REF_BIN, against
# llama.cpp's `test-backend-ops perf` on the same shapes (MUL_MAT cases given with --test-file).
#
# Peak: cores (nproc) x clock (cpu MHz of /proc/cpuinfo) x per-cycle work of two 512-bit FMA
# units: F32 2 units x 16 lanes x 2 flops = 64 flop/cycle; int8 VNNI (vpdpbusd) 2 units x 64
# byte products x 2 ops = 256 op/cycle. Ours: best and mean of repeated runs over 2 s;
# llama.cpp's: its own mean over at least one second. Both use every core. Ours runs at the level
# the library picks (the CPU's best unless INF_SIMD lowers it). With REF_BIN_AVX2 (a llama.cpp build without AVX-512, see run.sh) the quantized
# types run again in rows of their own, ours with INF_SIMD=avx2 against that build's
# test-backend-ops: both AVX2-only.
set -eu
: "${BUILD:=build}"
bin="$BUILD/bench/bench_matmul"
if [ ! -x "$bin" ]; then
    echo "bench_matmul: $bin is missing (run make bench)" >&2
    exit 1
fi
threads=$(nproc)
mhz=$(grep -m1 'cpu MHz' /proc/cpuinfo | awk '{print $4}')
echo "peak on $threads cores at $mhz MHz: F32 $(awk -v c="$threads" -v f="$mhz" 'BEGIN{printf "%.0f", c*f*64/1000}') GFLOP/s, int8 VNNI $(awk -v c="$threads" -v f="$mhz" 'BEGIN{printf "%.0f", c*f*256/1000}') GOP/s (2 AVX-512 FMA units assumed)"
shapes="576x576 576x1536 1536x576 576x49152"
ref="${REF_BIN:-}/test-backend-ops"
if [ -z "${REF_BIN:-}" ] || [ ! -x "$ref" ]; then
    echo "llama.cpp comparison skipped: REF_BIN is unset or has no test-backend-ops"
    ref=""
fi
case_file=$(mktemp)
trap 'rm -f "$case_file"' EXIT
# matmul_rows SIMD TEST_BACKEND_OPS TYPE...: one row per type and shape, ours with INF_SIMD=SIMD
# unless SIMD is empty, against TEST_BACKEND_OPS (none when empty). Each case runs ours, then
# llama.cpp's right after, so both see the same load on a shared machine. The ratio compares
# means (llama.cpp reports a mean); "best" shows what ours reaches when it has the cores to
# itself.
matmul_rows() {
    simd=$1 ref_ops=$2
    shift 2
    for type in "$@"; do
        case $type in
            f32) code=0 bsize=1 bbytes=4 ;;
            q8_0) code=8 bsize=32 bbytes=34 ;;
            q4_0) code=2 bsize=32 bbytes=18 ;;
            q4_k) code=12 bsize=256 bbytes=144 ;;
            q6_k) code=14 bsize=256 bbytes=210 ;;
        esac
        for shape in $shapes; do
            K=${shape%x*} M=${shape#*x} N=512
            [ $((K % bsize)) -eq 0 ] || continue # K-quant rows are whole super-blocks of 256
            line=$(env ${simd:+INF_SIMD=$simd} "$bin" --threads "$threads" --types "$type" \
                --shapes "$shape" --rows "$N" --seconds 2 | tail -1)
            best=$(echo "$line" | awk '{print $8}')
            mean=$(echo "$line" | awk '{print $9}')
            llama="-"
            if [ -n "$ref_ops" ]; then
                row=$((K / bsize * bbytes))
                # One MUL_MAT (ggml op 29) line: out f32 [M,N]; src0 [K,M] of the type; src1 f32 [K,N].
                echo "29 0 $M $N 1 1 0 2 $code $K $M 1 1 $bbytes $row $((row * M)) $((row * M)) 0 $K $N 1 1 4 $((4 * K)) $((4 * K * N)) $((4 * K * N)) $type" >"$case_file"
                us=$(timeout 900 "$ref_ops" perf -b CPU --test-file "$case_file" 2>/dev/null |
                     sed -n 's/.* - *\([0-9.]*\) us\/run.*/\1/p' | head -1)
                llama=$(awk -v k="$K" -v m="$M" -v n="$N" -v us="${us:-0}" 'BEGIN {
                    if (us > 0) printf "%.1f", 2 * k * m * n / (us * 1000); else printf "failed" }')
            fi
            awk -v t="$type" -v k="$K" -v m="$M" -v n="$N" -v b="$best" -v a="$mean" -v l="$llama" 'BEGIN {
                r = (l + 0 > 0) ? sprintf("%.2fx", a / l) : "-"
                printf "%-6s %6d %6d %5d %11.1f %11.1f %11s %8s\n", t, k, m, n, b, a, l, r }'
        done
    done
}

header='%-6s %6s %6s %5s %11s %11s %11s %8s\n'
printf "$header" type K M N "ours best" "ours mean" "llama mean" ratio
matmul_rows "" "$ref" f32 q8_0 q4_0 q4_k q6_k

if [ -n "${REF_BIN_AVX2:-}" ]; then
    ref_avx2="$REF_BIN_AVX2/test-backend-ops"
    if [ -x "$ref_avx2" ]; then
        echo "-- both AVX2-only: ours with INF_SIMD=avx2, llama.cpp from REF_BIN_AVX2=$REF_BIN_AVX2"
        printf "$header" type K M N "ours best" "ours mean" "llama mean" ratio
        matmul_rows avx2 "$ref_avx2" q8_0 q4_0 q4_k q6_k
        echo "(goal: ours >= 1.5x test-backend-ops for the quantized types (issue #9))"
    else
        echo "AVX2-only comparison skipped: REF_BIN_AVX2 has no test-backend-ops"
    fi
fi
