#!/usr/bin/env python3
"""Round-trip oracle for libinfer's K-quant quantizers: gguf-py dequantizes our bytes.

usage: kquant_roundtrip.py INPUT.f32 TYPE:QUANTIZED:BOUND ...

INPUT.f32 holds the float32 values that were quantized (little-endian). For each TYPE (a
GGMLQuantizationType name such as Q4_K), QUANTIZED holds our quantized bytes. The script
dequantizes them with gguf-py (Q8_K, absent from gguf-py, as d * q) and prints the error's RMS
relative to the input's. Exits 1 when one exceeds its BOUND.
"""
import sys

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import quants


def dequantize(name: str, raw: np.ndarray) -> np.ndarray:
    if name == "Q8_K":  # {float d; int8 qs[256]; int16 bsums[16]}
        blocks = raw.reshape(-1, 292)
        d = blocks[:, :4].copy().view(np.float32)
        return (d * blocks[:, 4:260].view(np.int8).astype(np.float32)).ravel()
    return quants.dequantize(raw, T[name]).ravel()


def main() -> int:
    x = np.fromfile(sys.argv[1], dtype="<f4").astype(np.float64)
    bad = 0
    for arg in sys.argv[2:]:
        name, path, bound = arg.split(":")
        back = dequantize(name, np.fromfile(path, dtype=np.uint8)).astype(np.float64)
        rel = float(np.sqrt(np.sum((back - x) ** 2) / np.sum(x**2)))
        ok = back.shape == x.shape and rel < float(bound)
        print(f"{name}: relative RMS error {rel:.5f} (bound {bound}) {'ok' if ok else 'TOO LARGE'}")
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
