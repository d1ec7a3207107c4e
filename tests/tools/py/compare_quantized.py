#!/usr/bin/env python3
"""Check a file written by gguf-quantize against gguf-py, the independent oracle.

usage: compare_quantized.py SOURCE OUTPUT TYPE [--ftype N]

SOURCE is the F32 (or mixed) input, OUTPUT what gguf-quantize wrote from it. Every tensor of
OUTPUT must appear in SOURCE's order with the same shape; a tensor whose type changed must hold
exactly the bytes gguf.quants.quantize() makes from SOURCE's F32 data, and one that kept its type
the same bytes as in SOURCE. Metadata must be SOURCE's, with general.file_type = --ftype and
general.quantization_version = 2. Prints one line per problem and a summary; exit 1 on any.
"""
import argparse
import sys

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader
from gguf.quants import quantize


def field_value(reader, key):
    field = reader.fields.get(key)
    if field is None:
        return None
    return field.parts[field.data[0]].tolist()


def fields_equal(a, b):
    return len(a.parts) == len(b.parts) and all(
        np.array_equal(x, y) for x, y in zip(a.parts, b.parts))


def compare_metadata(src, out, ftype, problems):
    skip = {"general.file_type", "general.quantization_version"}
    src_keys = [k for k in src.fields if k not in skip]
    out_keys = [k for k in out.fields if k not in skip]
    if src_keys != out_keys:
        problems.append(f"metadata keys differ: {set(src_keys) ^ set(out_keys)} or order")
    for key in src_keys:
        if key in out.fields and not fields_equal(src.fields[key], out.fields[key]):
            problems.append(f"metadata {key} differs")
    if field_value(out, "general.file_type") != [ftype]:
        problems.append(f"general.file_type is {field_value(out, 'general.file_type')}, want {ftype}")
    if field_value(out, "general.quantization_version") != [2]:
        problems.append("general.quantization_version is not 2")
    if src.alignment != out.alignment:
        problems.append(f"alignment {out.alignment}, want {src.alignment}")


def expected_bytes(src_tensor, out_type):
    if src_tensor.tensor_type == out_type:
        return np.asarray(src_tensor.data).tobytes()
    if src_tensor.tensor_type != GGMLQuantizationType.F32:
        raise ValueError(f"cannot build expectation from {src_tensor.tensor_type.name}")
    values = np.asarray(src_tensor.data, dtype=np.float32)
    return np.asarray(quantize(values, out_type)).tobytes()


def compare_tensors(src, out, want_type, problems):
    counts = {}
    if [t.name for t in src.tensors] != [t.name for t in out.tensors]:
        problems.append("tensor names or order differ")
        return counts
    for s, o in zip(src.tensors, out.tensors):
        if list(s.shape) != list(o.shape):
            problems.append(f"{o.name}: shape {list(o.shape)}, want {list(s.shape)}")
            continue
        if want_type is not None and len(s.shape) >= 2 and o.tensor_type != want_type:
            problems.append(f"{o.name}: type {o.tensor_type.name}, want {want_type.name}")
        got = np.asarray(o.data).tobytes()
        if got != expected_bytes(s, o.tensor_type):
            problems.append(f"{o.name}: data differs from gguf-py ({o.tensor_type.name})")
        if o.data_offset % out.alignment:
            problems.append(f"{o.name}: data misaligned")
        counts[o.tensor_type.name] = counts.get(o.tensor_type.name, 0) + 1
    return counts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("source")
    parser.add_argument("output")
    parser.add_argument("type", help="type every weight matrix must have (pure), or 'mixed'")
    parser.add_argument("--ftype", type=int, required=True)
    args = parser.parse_args()
    src, out = GGUFReader(args.source), GGUFReader(args.output)
    want = None if args.type == "mixed" else GGMLQuantizationType[args.type.upper()]
    problems = []
    compare_metadata(src, out, args.ftype, problems)
    counts = compare_tensors(src, out, want, problems)
    for p in problems:
        print("MISMATCH", p)
    print(f"{len(out.tensors)} tensors compared, types {counts}, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
