#!/usr/bin/env python3
"""Check files written by gguf-quantize against gguf-py, the independent oracle.

usage: compare_quantized.py SOURCE OUTPUT TYPE FTYPE [SOURCE OUTPUT TYPE FTYPE ...]

Each group names an input, the file gguf-quantize wrote from it, the type every tensor of 2 or
more dimensions must have ('mixed': no such check) and the expected general.file_type. Every
tensor of OUTPUT must appear in SOURCE's order with the same shape; a tensor whose type changed
must hold exactly the bytes gguf.quants.quantize() makes from SOURCE's F32 data (or, for an F32
output of a quantized tensor, the floats gguf.quants.dequantize() gives), and one that kept its
type the same bytes as in SOURCE. Metadata must be SOURCE's (same keys, order and values), with
general.file_type = FTYPE and general.quantization_version = 2. Each file is parsed once, however
many groups name it. Prints one line per problem and a summary per group; exit 1 on any problem.
"""
import sys

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader
from gguf.quants import dequantize, quantize


def field_value(reader, key):
    field = reader.fields.get(key)
    if field is None:
        return None
    return field.parts[field.data[0]].tolist()


def field_bytes(field):
    return b"".join(part.tobytes() for part in field.parts)


def compare_metadata(src, out, ftype, problems):
    skip = {"general.file_type", "general.quantization_version"}
    src_keys = [k for k in src.fields if k not in skip]
    out_keys = [k for k in out.fields if k not in skip]
    if src_keys != out_keys:
        problems.append(f"metadata keys differ: {set(src_keys) ^ set(out_keys)} or order")
    for key in src_keys:
        if key in out.fields and field_bytes(src.fields[key]) != field_bytes(out.fields[key]):
            problems.append(f"metadata {key} differs")
    if field_value(out, "general.file_type") != [ftype]:
        problems.append(f"general.file_type is {field_value(out, 'general.file_type')}, want {ftype}")
    if field_value(out, "general.quantization_version") != [2]:
        problems.append("general.quantization_version is not 2")
    if src.alignment != out.alignment:
        problems.append(f"alignment {out.alignment}, want {src.alignment}")


def expected_bytes(src_tensor, out_type):
    """What gguf-py makes of a SOURCE tensor: the same bytes, F32 quantized to out_type, or a
    quantized tensor dequantized to F32."""
    src_type = src_tensor.tensor_type
    if src_type == out_type:
        return np.asarray(src_tensor.data).tobytes()
    if src_type == GGMLQuantizationType.F32:
        values = np.asarray(src_tensor.data, dtype=np.float32)
        return np.asarray(quantize(values, out_type)).tobytes()
    if out_type == GGMLQuantizationType.F32:
        return dequantize(np.asarray(src_tensor.data), src_type).astype(np.float32).tobytes()
    raise ValueError(f"no expectation for {src_type.name} -> {out_type.name}")


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
    args = sys.argv[1:]
    if not args or len(args) % 4:
        print(__doc__, file=sys.stderr)
        return 2
    readers = {}

    def reader(path):
        if path not in readers:
            readers[path] = GGUFReader(path)
        return readers[path]

    failed = False
    for i in range(0, len(args), 4):
        source, output, type_name, ftype = args[i:i + 4]
        src, out = reader(source), reader(output)
        want = None if type_name == "mixed" else GGMLQuantizationType[type_name.upper()]
        problems = []
        compare_metadata(src, out, int(ftype), problems)
        counts = compare_tensors(src, out, want, problems)
        for p in problems:
            print("MISMATCH", output, p)
        print(f"{output}: {len(out.tensors)} tensors compared, types {counts}, "
              f"{len(problems)} problems")
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
