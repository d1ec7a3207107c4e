#!/usr/bin/env python3
"""Oracle for libinfer's dequantizers: gguf-py's numpy dequantization (`gguf.quants`).

usage: check_dequant.py TYPE:BLOCKS:FLOATS ...

For each TYPE (a GGMLQuantizationType name such as Q4_K), BLOCKS holds quantized blocks and
FLOATS our float32 dequantization of them (little-endian). The script dequantizes BLOCKS with
gguf-py and compares float bits. Q8_1 and Q8_K, which gguf-py does not dequantize, are checked
against their definition x = d * q (d fp16 at offset 0 for Q8_1, float32 for Q8_K). A type that
this gguf-py cannot dequantize is reported as such and not counted as a failure.
Prints one line per type; exits 1 on any difference.
"""
import sys

import numpy as np
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, quants


def by_definition(name, blocks):
    """x = d * q for the 8-bit activation types."""
    if name == "Q8_1":
        d = blocks[:, :2].copy().view(np.float16).astype(np.float32)
        q = blocks[:, 4:36].view(np.int8)
    else:  # Q8_K
        d = blocks[:, :4].copy().view(np.float32)
        q = blocks[:, 4:260].view(np.int8)
    return (d * q.astype(np.float32)).ravel()


# Bytes per block where gguf-py's GGML_QUANT_SIZES is wrong (it gives Q8_1 40: ggml's d and s
# are fp16, 36 bytes).
BLOCK_BYTES = {"Q8_1": 36}


def reference(name, blocks):
    with np.errstate(all="ignore"):
        if name in ("Q8_1", "Q8_K"):
            return by_definition(name, blocks)
        return np.asarray(quants.dequantize(blocks, GGMLQuantizationType[name]), np.float32).ravel()


def supported(name):
    qtype = getattr(GGMLQuantizationType, name, None)
    if qtype is None:
        return False
    try:
        quants.dequantize(np.zeros((1, GGML_QUANT_SIZES[qtype][1]), np.uint8), qtype)
    except NotImplementedError:
        return False
    return True


def main():
    failed = False
    for spec in sys.argv[1:]:
        name, bpath, fpath = spec.split(":")
        if name not in ("Q8_1", "Q8_K") and not supported(name):
            print(f"{name}: gguf-py cannot dequantize it")
            continue
        type_size = BLOCK_BYTES.get(name) or GGML_QUANT_SIZES[GGMLQuantizationType[name]][1]
        blocks = np.fromfile(bpath, dtype=np.uint8).reshape(-1, type_size)
        ours = np.fromfile(fpath, dtype="<f4")
        want = reference(name, blocks)
        if want.shape != ours.shape:
            print(f"{name}: {ours.size} floats, gguf-py gives {want.size}")
            failed = True
            continue
        bad = np.flatnonzero(want.view(np.uint32) != ours.view(np.uint32))
        if bad.size:
            i = bad[0]
            print(f"{name}: {bad.size} elements differ, first {i}: "
                  f"ours {ours[i]!r}, gguf-py {want[i]!r}")
            failed = True
            continue
        print(f"{name}: {blocks.shape[0]} blocks identical")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
