#!/usr/bin/env python3
"""Print a GGUF file's header as read by gguf-py, in the line format test_reader_model.c prints
for libgguf's view of the same file, so the C test can compare the two texts exactly."""
import sys

import gguf

INT_TYPES = {"UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "UINT64", "INT64"}


def byte_summary(blobs):
    total = sum(len(b) for b in blobs)
    checksum = sum(sum(b) for b in blobs) & 0xFFFFFFFF
    return f"len={total} sum={checksum}"


def kv_line(field):
    types = [t.name for t in field.types]
    kind = types[0].lower()
    if kind == "array":
        elem = types[1] if len(types) > 1 else "UINT8"
        head = f"kv {field.name} array:{elem.lower()} count={len(field.data)}"
        if elem == "STRING":
            return head + " " + byte_summary([bytes(field.parts[i]) for i in field.data])
        if elem in INT_TYPES:
            return head + f" sum={sum(int(field.parts[i][0]) for i in field.data)}"
        return head
    if kind == "string":
        return f"kv {field.name} string " + byte_summary([bytes(field.parts[field.data[0]])])
    value = field.parts[field.data[0]][0]
    if types[0] in INT_TYPES:
        return f"kv {field.name} {kind} {int(value)}"
    if kind == "bool":
        return f"kv {field.name} bool {int(bool(value))}"
    return f"kv {field.name} {kind} {float(value):.9g}"


def main():
    reader = gguf.GGUFReader(sys.argv[1])
    fields = [f for f in reader.fields.values() if not f.name.startswith("GGUF.")]
    version = int(reader.fields["GGUF.version"].parts[-1][0])
    print(f"version {version}")
    print(f"kv_count {len(fields)}")
    print(f"tensor_count {len(reader.tensors)}")
    print(f"data_offset {reader.data_offset}")
    for field in fields:
        print(kv_line(field))
    for t in reader.tensors:
        ne = " ".join(str(int(n)) for n in t.shape)
        print(f"tensor {t.name} {int(t.tensor_type)} {ne} {t.data_offset - reader.data_offset}")


if __name__ == "__main__":
    main()
