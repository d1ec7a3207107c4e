#!/usr/bin/env python3
"""Check a gguf-inspect --hash manifest with the xxhash package and gguf-py's offsets.

usage: check_hashes.py FILE MANIFEST

Every "key XXH64  KEY" line must hold XXH64 (seed 0) of that pair's bytes in the file (key,
type, value as stored), one per key in file order; every tensor line must hold XXH64 of the
tensor's data bytes, in file order; the last line "all" must be XXH64 of the concatenated 8-byte
big-endian tensor hashes. Names are unescaped (\\\\, \\n, \\r, \\t, \\xNN) before comparing.
Prints "OK N" (N tensors) and exits 0, or the first mismatch and exits 1.
"""
import re
import sys

import gguf
import xxhash

ESCAPES = {"\\": b"\\", "n": b"\n", "r": b"\r", "t": b"\t"}


def unescape(text):
    """The name bytes a manifest field spells."""
    out, pos = b"", 0
    for match in re.finditer(r"\\(x[0-9a-f]{2}|[\\nrt])", text):
        code = match.group(1)
        out += text[pos:match.start()].encode("utf-8")
        out += ESCAPES[code] if code in ESCAPES else bytes([int(code[1:], 16)])
        pos = match.end()
    return out + text[pos:].encode("utf-8")


def parse(manifest_path):
    keys, tensors = [], []
    with open(manifest_path, encoding="utf-8", newline="\n") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            is_key = line.startswith("key ")
            hex_hash, name = (line[4:] if is_key else line).split("  ", 1)
            (keys if is_key else tensors).append((hex_hash, unescape(name)))
    return keys, tensors


def field_bytes(reader, field):
    size = sum(part.nbytes for part in field.parts)
    return reader.data[field.offset:field.offset + size].tobytes()


def main():
    path, manifest_path = sys.argv[1], sys.argv[2]
    keys, lines = parse(manifest_path)
    reader = gguf.GGUFReader(path)
    fields = [f for f in reader.fields.values() if not f.name.startswith("GGUF.")]
    if [name for _, name in keys] != [f.name.encode("utf-8") for f in fields]:
        print(f"MISMATCH: key lines {[n for _, n in keys]} for keys {[f.name for f in fields]}")
        return 1
    for (hex_hash, name), field in zip(keys, fields):
        expected = xxhash.xxh64(field_bytes(reader, field), seed=0).hexdigest()
        if hex_hash != expected:
            print(f"MISMATCH: key {field.name} {hex_hash}, xxhash says {expected}")
            return 1
    if len(lines) != len(reader.tensors) + 1 or lines[-1][1] != b"all":
        print(f"MISMATCH: {len(lines)} manifest lines for {len(reader.tensors)} tensors + all")
        return 1
    digests = []
    for (hex_hash, name), tensor in zip(lines, reader.tensors):
        data = reader.data[tensor.data_offset:tensor.data_offset + tensor.n_bytes]
        expected = xxhash.xxh64(data.tobytes(), seed=0).hexdigest()
        if name != tensor.name.encode("utf-8") or hex_hash != expected:
            print(f"MISMATCH: {name} {hex_hash}, xxhash says {tensor.name} {expected}")
            return 1
        digests.append(bytes.fromhex(expected))
    total = xxhash.xxh64(b"".join(digests), seed=0).hexdigest()
    if lines[-1][0] != total:
        print(f"MISMATCH: all {lines[-1][0]}, xxhash says {total}")
        return 1
    print(f"OK {len(digests)} tensors, {len(keys)} keys")
    return 0


if __name__ == "__main__":
    sys.exit(main())
