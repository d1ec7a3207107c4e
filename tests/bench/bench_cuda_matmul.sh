#!/bin/sh
# MUL_MAT on the CUDA backend (bench_cuda_matmul.c): per weight type, SmolLM2's and gemma3's layer
# shapes (576x1536, 1536x576, and gemma3's 640x262144 output), n = 1 and 8 (token generation:
# weight GB/s against the GPU's memory bandwidth) and 512 (a prompt batch: TOP/s). Prints the
# reason and nothing else when the build has no CUDA device (run it with BUILD=build-cuda).
set -eu
: "${BUILD:=build}"
bin="$BUILD/bench/bench_cuda_matmul"
if [ ! -x "$bin" ]; then
    echo "bench_cuda_matmul: $bin is missing (run make bench)" >&2
    exit 1
fi
"$bin" --seconds 1
