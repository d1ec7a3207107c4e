#!/usr/bin/env python3
"""Write the small GGUF files the gguf-inspect tests read, with gguf-py (an independent writer).

usage: make_inspect_files.py OUTDIR

  small.gguf   every scalar value type, strings that need escaping, long and short arrays, and
               tensors of types f32, f16, q8_0 (raw blocks) and i32; general.file_type = 7
  edited.gguf  small.gguf with general.name changed, test.u8 removed, extra.key added, the data of
               blk.1.w changed, ids removed, new.tensor added, blk.0.w stored as f32
  nan.gguf     small.gguf with a NaN in norm.weight[3]
  nan_q4_k.gguf  small.gguf plus a Q4_K tensor of two blocks, the second with a NaN scale
  guess.gguf   no general.file_type; most tensors are f16 (llama.cpp then guesses MOSTLY_F16)
  bytes.gguf   strings that are not UTF-8 or hold terminal control sequences, a nested array
  hostile.gguf keys, tensor names and the architecture holding newlines, tabs, ESC sequences and
               backslashes (HOSTILE_TENSORS below), to check that no raw control byte is printed;
               element 2 of the second tensor is NaN
  nonfinite.gguf  float keys holding NaN, +Inf (f32) and -Inf (f64)
"""
import os
import sys

import numpy as np
import gguf


def q8_0_blocks(rng, rows):
    """Raw q8_0 data: per 32 weights an f16 scale then 32 int8 values (34 bytes)."""
    blocks = np.zeros((rows, 34), dtype=np.uint8)
    for r in range(rows):
        blocks[r, 0:2] = np.frombuffer(np.float16(0.01 * (r + 1)).tobytes(), dtype=np.uint8)
        blocks[r, 2:] = rng.integers(0, 256, 32, dtype=np.uint8)
    return blocks


def tensors(rng):
    return {
        "tok.weight": (q8_0_blocks(rng, 2), gguf.GGMLQuantizationType.Q8_0),
        "norm.weight": (rng.standard_normal(8).astype(np.float32), None),
        "blk.0.w": (rng.standard_normal((4, 8)).astype(np.float16), None),
        "blk.1.w": (rng.standard_normal((3, 16)).astype(np.float32), None),
        "ids": (np.arange(5, dtype=np.int32), None),
    }


def metadata(writer, name, with_u8=True, with_file_type=True):
    writer.add_name(name)
    if with_file_type:
        writer.add_file_type(7)
    if with_u8:
        writer.add_uint8("test.u8", 200)
    writer.add_int8("test.i8", -100)
    writer.add_uint16("test.u16", 60000)
    writer.add_int16("test.i16", -30000)
    writer.add_uint32("test.u32", 4000000000)
    writer.add_int32("test.i32", -2000000000)
    writer.add_float32("test.f32", 0.1)
    writer.add_uint64("test.u64", 18000000000000000000)
    writer.add_int64("test.i64", -9000000000000000000)
    writer.add_float64("test.f64", 2.5e-300)
    writer.add_bool("test.bool", True)
    writer.add_string("test.escaped", 'say "hi"\n\tnaïve \\ end')
    writer.add_array("test.long", list(range(100)))
    writer.add_array("test.words", ["alpha", "beta", "gamma"])
    writer.add_array("test.floats", [0.5, -1.25, 3.0])


def write(path, name, table, **options):
    writer = gguf.GGUFWriter(path, "testarch")
    metadata(writer, name, **{k: v for k, v in options.items() if k.startswith("with_")})
    if options.get("extra_key"):
        writer.add_string("extra.key", "added")
    for tensor_name, (data, raw_type) in table.items():
        writer.add_tensor(tensor_name, data, raw_dtype=raw_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


# Tensor names of hostile.gguf: each could forge a table row or recolour a terminal if printed raw.
HOSTILE_TENSORS = ["line\nforged  q8_0  [1]", "red\x1b[31mname", "tab\tname", "back\\slash"]


def write_hostile(path):
    writer = gguf.GGUFWriter(path, "evil\x1b[2Jarch\n")
    writer.add_string("key\nforged.row", "value\nforged")
    writer.add_uint32("esc\x1b[31m.key", 1)
    writer.add_bool("tab\tkey", True)
    for i, name in enumerate(HOSTILE_TENSORS):
        data = np.full(4, i, dtype=np.float32)
        if i == 1:
            data[2] = np.nan  # --check then names this tensor
        writer.add_tensor(name, data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def write_nonfinite(path):
    writer = gguf.GGUFWriter(path, "testarch")
    writer.add_float32("test.nan", float("nan"))
    writer.add_float32("test.inf", float("inf"))
    writer.add_float64("test.neg_inf", float("-inf"))
    writer.add_array("test.floats", [1.5, float("nan")])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write(os.path.join(out, "small.gguf"), "small", tensors(np.random.default_rng(1)))

    edited = tensors(np.random.default_rng(1))
    edited["blk.1.w"][0][2, 5] += 1.0
    edited["blk.0.w"] = (edited["blk.0.w"][0].astype(np.float32), None)
    del edited["ids"]
    edited["new.tensor"] = (np.ones(4, dtype=np.float32), None)
    write(os.path.join(out, "edited.gguf"), "small v2", edited, with_u8=False, extra_key=True)

    broken = tensors(np.random.default_rng(1))
    broken["norm.weight"][0][3] = np.nan
    write(os.path.join(out, "nan.gguf"), "small", broken)

    q4_k = tensors(np.random.default_rng(1))
    blocks = np.random.default_rng(2).integers(0, 256, (1, 2 * 144), dtype=np.uint8)
    blocks[0, 0:2] = np.frombuffer(np.float16(0.5).tobytes(), dtype=np.uint8)
    blocks[0, 2:4] = np.frombuffer(np.float16(0.25).tobytes(), dtype=np.uint8)
    blocks[0, 144:146] = np.frombuffer(np.float16(np.nan).tobytes(), dtype=np.uint8)
    blocks[0, 146:148] = np.frombuffer(np.float16(0.25).tobytes(), dtype=np.uint8)
    q4_k["blk.2.k"] = (blocks, gguf.GGMLQuantizationType.Q4_K)
    write(os.path.join(out, "nan_q4_k.gguf"), "small", q4_k)

    guess = {
        "a": (np.ones(4, dtype=np.float16), None),
        "b": (np.ones(4, dtype=np.float16), None),
        "c": (np.ones(4, dtype=np.float32), None),
    }
    write(os.path.join(out, "guess.gguf"), "guess", guess, with_file_type=False)

    writer = gguf.GGUFWriter(os.path.join(out, "bytes.gguf"), "testarch")
    writer.add_key_value("test.invalid", b"ok\xff\xc3!", gguf.GGUFValueType.STRING)
    writer.add_key_value("test.controls", b"\x1b[31mred\xc2\x9b2J", gguf.GGUFValueType.STRING)
    writer.add_array("test.nested", [[1, 2], [3, 4, 5]])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()

    write_hostile(os.path.join(out, "hostile.gguf"))
    write_nonfinite(os.path.join(out, "nonfinite.gguf"))


if __name__ == "__main__":
    main()
