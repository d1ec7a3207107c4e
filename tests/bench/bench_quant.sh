#!/bin/sh
# Quantization throughput (MB/s of F32 input) of Q8_0 and Q4_0 on SmolLM2's token embedding
# shape (49152 x 576), scalar vs AVX2 vs AVX-512, 1 and 2 threads. With REF_BIN, ggml's own
# quantizer (ggml_quantize_chunk from REF_BIN/libggml-base.so, what llama-quantize calls, rows
# split across threads as llama-quantize does) runs on the same data in the same process, and
# each of our rows says its speed ratio and whether its bytes equal ggml's.
set -eu
: "${BUILD:=build}"
bin="$BUILD/bench/bench_quant"
if [ ! -x "$bin" ]; then
    echo "bench_quant: $bin is missing (run make bench)" >&2
    exit 1
fi
if [ -n "${REF_BIN:-}" ] && [ -e "$REF_BIN/libggml-base.so" ]; then
    "$bin" --ggml "$REF_BIN/libggml-base.so"
else
    echo "llama.cpp comparison skipped: REF_BIN is unset or has no libggml-base.so"
    "$bin"
fi
