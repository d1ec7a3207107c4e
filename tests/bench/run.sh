#!/bin/sh
# Runs every tests/bench/bench_*.sh in order. Each script prints its own section of results.
# Environment: BUILD (build folder), MODEL (the real test model), REF_BIN (folder of llama.cpp
# reference binaries; when unset each script skips its comparison and says so), REF_BIN_AVX2
# (optional: folder of a llama.cpp build without AVX-512; bench_eval, bench_matmul and
# bench_quantize then repeat their comparisons with ours at INF_SIMD=avx2 against it, in rows
# labelled "both AVX2-only").
set -eu
: "${BUILD:=build}"
: "${MODEL:=models/SmolLM2-135M-Instruct.Q4_1.gguf}"
export BUILD MODEL
export REF_BIN="${REF_BIN:-}"
export REF_BIN_AVX2="${REF_BIN_AVX2:-}"
echo "== ggtk benchmarks ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
if [ -z "$REF_BIN" ]; then
    echo "REF_BIN is unset: comparisons with llama.cpp are skipped (set REF_BIN to its build/bin folder)"
fi
for script in tests/bench/bench_*.sh; do
    [ -e "$script" ] || continue
    echo
    echo "== $(basename "$script" .sh)"
    sh "$script"
done
