#!/usr/bin/env python3
"""Oracle for libinfer's quantizers: gguf-py's numpy port of ggml's reference quantizers.

usage: check_ggml_ref.py INPUT.f32 TYPE:QUANTIZED:DEQUANTIZED ...

INPUT.f32 holds the float32 values that were quantized (little-endian). For each TYPE (a
GGMLQuantizationType name such as Q8_0), QUANTIZED holds our quantized bytes and DEQUANTIZED our
float32 dequantization of them. The script quantizes INPUT with gguf-py, compares bytes, then
dequantizes our bytes with gguf-py and compares float bits. Q8_1 (absent from gguf-py) is
checked as Q8_0's codes and scale plus s = fp16(float32(sum(q)) * d), as in ggml.
Prints one line per type; exits 1 on any difference.
"""
import sys

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import quants


def q8_1_from_q8_0(q8_0: np.ndarray, x: np.ndarray) -> np.ndarray:
    blocks = q8_0.reshape(-1, 34)
    d16 = blocks[:, :2].copy().view(np.float16)
    qs = blocks[:, 2:].view(np.int8)
    # ggml stores s from the float32 d, not the fp16-rounded one
    d32 = (np.abs(x.reshape(-1, 32)).max(axis=1, keepdims=True) / np.float32(127)).astype(np.float32)
    s = (qs.astype(np.int32).sum(axis=1, keepdims=True).astype(np.float32) * d32).astype(np.float16)
    return np.concatenate([d16.view(np.uint8), s.view(np.uint8), qs.view(np.uint8)], axis=1).ravel()


def blocks_per_row(n_blocks: int) -> int:
    """Long rows make gguf-py's per-row-group Python loop cheap; rows hold whole blocks."""
    return next(k for k in (64, 32, 16, 8, 4, 2, 1) if n_blocks % k == 0)


def reference_bytes(name: str, x: np.ndarray) -> np.ndarray:
    if name == "Q8_1":
        return q8_1_from_q8_0(reference_bytes("Q8_0", x), x)
    rows = x.reshape(-1, 32 * blocks_per_row(x.size // 32))
    return np.asarray(quants.quantize(rows, T[name])).view(np.uint8).ravel()


def reference_floats(name: str, ours: np.ndarray, n: int) -> np.ndarray:
    if name == "Q8_1":  # same codes and d as Q8_0 at offsets 0 and 4
        blocks = ours.reshape(-1, 36)
        as_q8_0 = np.concatenate([blocks[:, :2], blocks[:, 4:]], axis=1)
        return reference_floats("Q8_0", as_q8_0.ravel(), n)
    rows = ours.reshape(n // 32 // blocks_per_row(n // 32), -1)
    return np.asarray(quants.dequantize(rows, T[name]), dtype=np.float32).ravel()


def main() -> int:
    x = np.fromfile(sys.argv[1], dtype="<f4")
    failed = False
    for spec in sys.argv[2:]:
        name, qpath, fpath = spec.split(":")
        ours = np.fromfile(qpath, dtype=np.uint8)
        with np.errstate(all="ignore"):
            want = reference_bytes(name, x)
        if want.shape != ours.shape or not np.array_equal(want, ours):
            bad = np.flatnonzero(want != ours) if want.shape == ours.shape else [0]
            print(f"{name}: quantized bytes differ at {len(bad)} positions, first byte {bad[0]}")
            failed = True
            continue
        back = np.fromfile(fpath, dtype="<f4")
        with np.errstate(all="ignore"):
            ref_back = reference_floats(name, ours, x.size)
        if not np.array_equal(ref_back.view(np.uint32), back.view(np.uint32)):
            bad = np.flatnonzero(ref_back.view(np.uint32) != back.view(np.uint32))
            print(f"{name}: dequantized floats differ at {len(bad)} elements, first {bad[0]}")
            failed = True
            continue
        print(f"{name}: {x.size // 32} blocks identical")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
