#!/usr/bin/env python3
"""Write the seed corpus of the GGUF fuzzers: small valid files made with gguf-py (every value
type, string and nested arrays, one tensor of many types, odd alignments), the real model's
metadata with its long arrays cut and a few of its tensors given tiny data, and short prefixes
of the real model. Usage: make_seeds.py OUTDIR [MODEL]"""
import os
import sys

import numpy as np

import gguf

T = gguf.GGMLQuantizationType
V = gguf.GGUFValueType


def write(path, fill, alignment=None):
    w = gguf.GGUFWriter(path, arch=None)
    if alignment is not None:
        w.add_uint32("general.alignment", alignment)
    fill(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def all_values(w):
    w.add_uint8("u8", 200)
    w.add_int8("i8", -5)
    w.add_uint16("u16", 60000)
    w.add_int16("i16", -3)
    w.add_uint32("u32", 1 << 31)
    w.add_int32("i32", -7)
    w.add_float32("f32", 1.5)
    w.add_bool("bool", True)
    w.add_string("str", "héllo")
    w.add_uint64("u64", 1 << 40)
    w.add_int64("i64", -(1 << 40))
    w.add_float64("f64", 2.25)
    w.add_array("a.str", ["a", "", "bc"])
    w.add_array("a.i32", [1, -2, 3])
    w.add_array("a.nested", [[1, 2], [3]])
    w.add_array("a.f32", [0.5, 1.5])


def tensors(w):
    """One tensor of each of a range of types, two blocks wide, with raw bytes."""
    for qtype in (T.F32, T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q8_0, T.Q4_K, T.Q6_K,
                  T.IQ4_NL, T.I8, T.I32, T.F64):
        _, size = gguf.GGML_QUANT_SIZES[qtype]
        raw = np.arange(2 * size, dtype=np.uint8)
        w.add_tensor(f"t.{qtype.name.lower()}", raw, raw_dtype=qtype)


def model_seeds(out, model):
    with open(model, "rb") as f:
        head = f.read(4096)
    for n in (64, 1100, 4096):
        with open(os.path.join(out, f"model_prefix_{n}.gguf"), "wb") as f:
            f.write(head[:n])
    reader = gguf.GGUFReader(model)

    def fill(w):
        for field in reader.fields.values():
            if field.name.startswith("GGUF.") or field.name == "general.alignment":
                continue
            value = field.contents()
            if isinstance(value, list):
                value = value[:8]
                w.add_key_value(field.name, value, field.types[0], sub_type=field.types[-1])
            else:
                w.add_key_value(field.name, value, field.types[0])
        for t in reader.tensors[:6]:
            _, size = gguf.GGML_QUANT_SIZES[t.tensor_type]
            raw = np.zeros(size, dtype=np.uint8)
            w.add_tensor(t.name, raw, raw_dtype=t.tensor_type)

    write(os.path.join(out, "model_compact.gguf"), fill)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write(os.path.join(out, "values.gguf"), all_values)
    write(os.path.join(out, "tensors.gguf"), tensors)
    write(os.path.join(out, "tensors_align8.gguf"), tensors, alignment=8)
    write(os.path.join(out, "empty.gguf"), lambda w: None)
    if len(sys.argv) > 2 and os.path.exists(sys.argv[2]):
        model_seeds(out, sys.argv[2])


if __name__ == "__main__":
    main()
