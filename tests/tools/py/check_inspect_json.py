#!/usr/bin/env python3
"""Compare gguf-inspect's JSON report with what gguf-py (an independent reader) finds in the file.

usage: check_inspect_json.py FILE JSON [--full]

Checks the header, every metadata key (order, type, value; arrays in full with --full, else the
first elements and the count), every tensor (name, type, shape, offset, size), the per-type
summary and the model summary. Prints "OK ..." and exits 0, or prints the first mismatch and
exits 1.
"""
import json
import os
import sys

import gguf

PREVIEW = 6


def fail(message):
    print("MISMATCH:", message)
    sys.exit(1)


def expect(what, ours, theirs):
    if ours != theirs:
        fail(f"{what}: gguf-inspect {ours!r}, gguf-py {theirs!r}")


def check_header(reader, path, doc):
    header = doc["header"]
    expect("version", header["version"], reader.fields["GGUF.version"].contents())
    expect("tensor_count", header["tensor_count"], len(reader.tensors))
    expect("kv_count", header["kv_count"], reader.fields["GGUF.kv_count"].contents())
    expect("alignment", header["alignment"], reader.alignment)
    expect("data_offset", header["data_offset"], reader.data_offset)
    expect("file_size", header["file_size"], os.path.getsize(path))


def check_metadata(reader, doc, full):
    fields = [f for f in reader.fields.values() if not f.name.startswith("GGUF.")]
    expect("number of keys", len(doc["metadata"]), len(fields))
    for entry, field in zip(doc["metadata"], fields):
        key = field.name
        expect("key", entry["key"], key)
        expect(f"{key} type", entry["type"], field.types[0].name.lower())
        value = field.contents()
        if field.types[0] == gguf.GGUFValueType.UINT64 and isinstance(entry["value"], str):
            entry["value"] = int(entry["value"])  # beyond JSON's int64: sent as decimal digits
        if field.types[0] == gguf.GGUFValueType.ARRAY:
            expect(f"{key} element type", entry["element_type"], field.types[-1].name.lower())
            expect(f"{key} count", entry["count"], len(field.data))
            value = value if full else value[:PREVIEW]
        expect(f"{key} value", entry["value"], value)


def check_tensors(reader, doc):
    expect("number of tensors", len(doc["tensors"]), len(reader.tensors))
    for entry, tensor in zip(doc["tensors"], reader.tensors):
        name = tensor.name
        expect("tensor name", entry["name"], name)
        expect(f"{name} type", entry["type"].lower(), tensor.tensor_type.name.lower())
        expect(f"{name} shape", entry["shape"], [int(n) for n in tensor.shape])
        expect(f"{name} offset", entry["offset"], tensor.data_offset - reader.data_offset)
        expect(f"{name} bytes", entry["bytes"], tensor.n_bytes)


def check_summaries(reader, doc):
    by_type = {}
    for tensor in reader.tensors:
        count, elements, size = by_type.get(tensor.tensor_type.name.lower(), (0, 0, 0))
        by_type[tensor.tensor_type.name.lower()] = (count + 1, elements + tensor.n_elements,
                                                    size + tensor.n_bytes)
    ours = {t["type"].lower(): (t["tensors"], t["elements"], t["bytes"]) for t in doc["types"]}
    expect("per-type summary", ours, by_type)
    params = sum(t.n_elements for t in reader.tensors)
    size = sum(t.n_bytes for t in reader.tensors)
    model = doc["model"]
    expect("parameters", model["parameters"], params)
    expect("tensor bytes", model["tensor_bytes"], size)
    if abs(model["bits_per_weight"] - size * 8 / params) > 1e-9:
        fail(f"bits per weight {model['bits_per_weight']} != {size * 8 / params}")
    if "general.file_type" in reader.fields:
        expect("file type", model["file_type"], reader.fields["general.file_type"].contents())
    if "general.architecture" in reader.fields:
        expect("architecture", model["architecture"],
               reader.fields["general.architecture"].contents())


def main():
    path, json_path = sys.argv[1], sys.argv[2]
    full = "--full" in sys.argv[3:]
    with open(json_path, encoding="utf-8") as f:
        doc = json.load(f)
    reader = gguf.GGUFReader(path)
    check_header(reader, path, doc)
    check_metadata(reader, doc, full)
    check_tensors(reader, doc)
    check_summaries(reader, doc)
    print(f"OK {len(doc['metadata'])} keys, {len(doc['tensors'])} tensors")


if __name__ == "__main__":
    main()
