#!/usr/bin/env python3
"""Oracle for dequantizing rows of a real GGUF file: gguf-py's dequantization (`gguf.quants`).

usage: check_gemma3.py MODEL.gguf ROWS.txt OURS.f32

ROWS.txt has one line per tensor: NAME TYPE OFFSET ROW_BYTES ROW ROW ..., TYPE a
GGMLQuantizationType name, OFFSET the file offset of the tensor's data, then the row indices
that OURS.f32 holds our float32 dequantization of, tensor after tensor. The script reads the
same rows' bytes, dequantizes them with gguf-py and compares float bits. (It does not parse the
file: gguf-py's reader takes seconds on a 262k-token vocabulary, and only the kernels are
under test.) Prints one line per tensor type ("Q4_K: 27 tensors, 432 rows identical"); exits
1 on any difference.
"""
import sys
from collections import defaultdict

import numpy as np
from gguf import GGMLQuantizationType, quants


def main():
    model = np.memmap(sys.argv[1], dtype=np.uint8, mode="r")
    ours = np.fromfile(sys.argv[3], dtype="<f4")
    at = 0
    tensors, rows_checked = defaultdict(int), defaultdict(int)
    failed = False
    with open(sys.argv[2], encoding="utf-8") as f:
        for line in f:
            name, type_name, offset, row_bytes, *rows = line.split()
            offset, row_bytes = int(offset), int(row_bytes)
            data = np.stack([model[offset + int(r) * row_bytes:][:row_bytes] for r in rows])
            with np.errstate(all="ignore"):
                want = quants.dequantize(data, GGMLQuantizationType[type_name])
            want = np.asarray(want, np.float32).ravel()
            got = ours[at:at + want.size]
            at += want.size
            bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32)) \
                if got.size == want.size else [0]
            if len(bad):
                print(f"{name} ({type_name}): {len(bad)} elements differ, first {bad[0]}")
                failed = True
                continue
            tensors[type_name] += 1
            rows_checked[type_name] += len(rows)
    if at != ours.size:
        print(f"{ours.size} floats given, {at} described")
        failed = True
    for type_name in sorted(tensors):
        print(f"{type_name}: {tensors[type_name]} tensors, "
              f"{rows_checked[type_name]} rows identical")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
