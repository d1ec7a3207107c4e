#!/usr/bin/env python3
"""Check a gguf-inspect --hash manifest with the xxhash package and gguf-py's tensor offsets.

usage: check_hashes.py FILE MANIFEST

Every tensor's line must hold XXH64 (seed 0) of its data bytes, in file order, and the last
line "all" must be XXH64 of the concatenated 8-byte big-endian tensor hashes. Prints "OK N" and
exits 0, or the first mismatch and exits 1.
"""
import sys

import gguf
import xxhash


def main():
    path, manifest_path = sys.argv[1], sys.argv[2]
    with open(manifest_path, encoding="utf-8") as f:
        lines = [line.rstrip("\n").split(None, 1) for line in f if line.strip()]
    reader = gguf.GGUFReader(path)
    if len(lines) != len(reader.tensors) + 1 or lines[-1][1] != "all":
        print(f"MISMATCH: {len(lines)} manifest lines for {len(reader.tensors)} tensors + all")
        return 1
    digests = []
    for (hex_hash, name), tensor in zip(lines, reader.tensors):
        data = reader.data[tensor.data_offset:tensor.data_offset + tensor.n_bytes]
        expected = xxhash.xxh64(data.tobytes(), seed=0).hexdigest()
        if name != tensor.name or hex_hash != expected:
            print(f"MISMATCH: {name} {hex_hash}, xxhash says {tensor.name} {expected}")
            return 1
        digests.append(bytes.fromhex(expected))
    total = xxhash.xxh64(b"".join(digests), seed=0).hexdigest()
    if lines[-1][0] != total:
        print(f"MISMATCH: all {lines[-1][0]}, xxhash says {total}")
        return 1
    print(f"OK {len(digests)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
