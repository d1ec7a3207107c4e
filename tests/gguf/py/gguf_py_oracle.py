#!/usr/bin/env python3
"""Cross-check of libgguf's writer and reader against gguf-py, an independent implementation.

  gguf_py_oracle.py write OUT.gguf OUT.json
      Writes a GGUF file with gguf.GGUFWriter holding every metadata value type (nested arrays,
      strings with NUL bytes, general.alignment 64) and one small tensor of each tensor type,
      and describes that content in OUT.json for the C tests. Entries that gguf-py refuses to
      write (empty arrays) are listed with "gguf_py_writes": false and left out of OUT.gguf.

  gguf_py_oracle.py check FILE.gguf [--all]
      Reads FILE.gguf with gguf.GGUFReader and checks it holds exactly the content above:
      keys in order, value types, values, tensor names, shapes, types and data bytes. With
      --all the entries gguf-py cannot write must be present too.

JSON encoding: integers are decimal strings (uint64 does not fit jansson's integers), floats are
numbers whose values are exact in their type, strings are JSON strings (may contain \\u0000),
arrays are {"elem_type": T, "value": [...]} with nested arrays as the same objects, tensor data is
hex. Exit status 0 means the file matched; mismatches are printed one per line.

Q8_1 is left out: gguf-py sizes its block at 40 bytes, ggml (and libgguf) at 36. Q2_0 is left out:
gguf-py 0.19.0 does not know it.
"""
import json
import sys

import numpy as np
import gguf
from gguf import GGUFValueType as V, GGMLQuantizationType as Q

ARCH = "ggtk-test"
ALIGNMENT = 64

INT_TYPES = {V.UINT8, V.INT8, V.UINT16, V.INT16, V.UINT32, V.INT32, V.UINT64, V.INT64}
FLOAT_TYPES = {V.FLOAT32, V.FLOAT64}


def f32(x):
    """The float32 nearest to x, as a Python float (exact in JSON)."""
    return float(np.float32(x))


def arr(elem_type, values):
    return {"elem_type": elem_type, "value": values}


# (key, type, value, gguf_py_writes)
METADATA = [
    ("general.architecture", V.STRING, ARCH, True),
    ("general.alignment", V.UINT32, ALIGNMENT, True),
    ("test.uint8", V.UINT8, 255, True),
    ("test.int8", V.INT8, -128, True),
    ("test.uint16", V.UINT16, 65535, True),
    ("test.int16", V.INT16, -32768, True),
    ("test.uint32", V.UINT32, 4294967295, True),
    ("test.int32", V.INT32, -2147483648, True),
    ("test.float32", V.FLOAT32, f32(-1.5e-3), True),
    ("test.float32_max", V.FLOAT32, f32(3.4028234663852886e38), True),
    ("test.bool_true", V.BOOL, True, True),
    ("test.bool_false", V.BOOL, False, True),
    ("test.string", V.STRING, "hello", True),
    ("test.string_utf8", V.STRING, "h\u00e9llo \u2713 \U0001F600", True),
    ("test.string_empty", V.STRING, "", True),
    ("test.string_nul", V.STRING, "a\u0000b", True),
    ("test.uint64", V.UINT64, 18446744073709551615, True),
    ("test.int64", V.INT64, -9223372036854775808, True),
    ("test.float64", V.FLOAT64, 0.1, True),
    ("test.float64_big", V.FLOAT64, -2.5e300, True),
    ("test.array_uint8", V.ARRAY, arr(V.UINT8, [0, 1, 254, 255]), True),
    ("test.array_int8", V.ARRAY, arr(V.INT8, [-128, -1, 0, 127]), True),
    ("test.array_uint16", V.ARRAY, arr(V.UINT16, [0, 65535]), True),
    ("test.array_int16", V.ARRAY, arr(V.INT16, [-32768, 32767]), True),
    ("test.array_uint32", V.ARRAY, arr(V.UINT32, [0, 4294967295, 7]), True),
    ("test.array_int32", V.ARRAY, arr(V.INT32, [-2147483648, 2147483647]), True),
    ("test.array_float32", V.ARRAY, arr(V.FLOAT32, [0.0, f32(-0.1), f32(1e30)]), True),
    ("test.array_bool", V.ARRAY, arr(V.BOOL, [True, False, True]), True),
    ("test.array_string", V.ARRAY, arr(V.STRING, ["one", "", "thr\u00e9e", "a\u0000b"]), True),
    ("test.array_uint64", V.ARRAY, arr(V.UINT64, [0, 18446744073709551615]), True),
    ("test.array_int64", V.ARRAY, arr(V.INT64, [-9223372036854775808, 9223372036854775807]), True),
    ("test.array_float64", V.ARRAY, arr(V.FLOAT64, [1e-300, -0.0, 3.25]), True),
    ("test.array_nested_int32", V.ARRAY,
     arr(V.ARRAY, [arr(V.INT32, [1, 2, 3]), arr(V.INT32, [-4])]), True),
    ("test.array_nested_string", V.ARRAY,
     arr(V.ARRAY, [arr(V.STRING, ["x", ""]), arr(V.STRING, ["yz"])]), True),
    ("test.array_nested_deep", V.ARRAY,
     arr(V.ARRAY, [arr(V.ARRAY, [arr(V.FLOAT32, [0.5, -2.0])]),
                   arr(V.ARRAY, [arr(V.FLOAT32, [8.0]), arr(V.FLOAT32, [1.25])])]), True),
    ("test.string_after_arrays", V.STRING, "end", True),
    ("test.array_empty_uint32", V.ARRAY, arr(V.UINT32, []), False),
    ("test.array_empty_string", V.ARRAY, arr(V.STRING, []), False),
    ("test.array_nested_empty", V.ARRAY, arr(V.ARRAY, [arr(V.INT32, []), arr(V.BOOL, [])]), False),
]

# (name, type, ne): small tensors, one or two blocks each, some with 3 or 4 dimensions.
TENSORS = [
    ("f32", Q.F32, [3]),
    ("f16", Q.F16, [5, 2]),
    ("bf16", Q.BF16, [4, 1, 3]),
    ("f64", Q.F64, [2, 2, 1, 2]),
    ("i8", Q.I8, [7]),
    ("i16", Q.I16, [3, 3]),
    ("i32", Q.I32, [9]),
    ("i64", Q.I64, [2]),
    ("q4_0", Q.Q4_0, [64]),
    ("q4_1", Q.Q4_1, [32, 2]),
    ("q5_0", Q.Q5_0, [32]),
    ("q5_1", Q.Q5_1, [32]),
    ("q8_0", Q.Q8_0, [32, 3]),
    ("q2_k", Q.Q2_K, [256]),
    ("q3_k", Q.Q3_K, [256]),
    ("q4_k", Q.Q4_K, [256, 2]),
    ("q5_k", Q.Q5_K, [256]),
    ("q6_k", Q.Q6_K, [256]),
    ("q8_k", Q.Q8_K, [256]),
    ("iq2_xxs", Q.IQ2_XXS, [256]),
    ("iq2_xs", Q.IQ2_XS, [256]),
    ("iq3_xxs", Q.IQ3_XXS, [256]),
    ("iq1_s", Q.IQ1_S, [256]),
    ("iq4_nl", Q.IQ4_NL, [32]),
    ("iq3_s", Q.IQ3_S, [256]),
    ("iq2_s", Q.IQ2_S, [256]),
    ("iq4_xs", Q.IQ4_XS, [256]),
    ("iq1_m", Q.IQ1_M, [256]),
    ("tq1_0", Q.TQ1_0, [256]),
    ("tq2_0", Q.TQ2_0, [256]),
    ("mxfp4", Q.MXFP4, [32]),
    ("nvfp4", Q.NVFP4, [64]),
    ("q1_0", Q.Q1_0, [128]),
]


def tensor_bytes(index, ttype, ne):
    block, size = gguf.GGML_QUANT_SIZES[ttype]
    count = int(np.prod(ne)) // block * size
    return np.random.default_rng(1000 + index).integers(0, 256, count, dtype=np.uint8).tobytes()


def byte_shape(ttype, ne):
    block, size = gguf.GGML_QUANT_SIZES[ttype]
    return tuple(reversed(ne[1:])) + (ne[0] // block * size,)


# ---- JSON description -----------------------------------------------------------------------

def json_value(vtype, value):
    if vtype in INT_TYPES:
        return str(value)
    if vtype == V.ARRAY:
        elem = value["elem_type"]
        return {"elem_type": elem.name.lower(),
                "value": [json_value(elem, v) for v in value["value"]]}
    return value


def describe():
    return {
        "metadata": [{"key": k, "type": t.name.lower(), "value": json_value(t, v),
                      "gguf_py_writes": w} for k, t, v, w in METADATA],
        "tensors": [{"name": n, "type": t.name.lower(), "ne": ne,
                     "data_hex": tensor_bytes(i, t, ne).hex()}
                    for i, (n, t, ne) in enumerate(TENSORS)],
    }


# ---- writing with gguf.GGUFWriter -----------------------------------------------------------

def py_value(vtype, value):
    """The Python object GGUFWriter packs as `value` (nested elements typed by Python type)."""
    if vtype == V.ARRAY:
        return [py_value(value["elem_type"], v) for v in value["value"]]
    return value


def write(out_gguf, out_json):
    writer = gguf.GGUFWriter(out_gguf, ARCH)
    for key, vtype, value, writable in METADATA:
        if not writable or key == "general.architecture":
            continue
        if key == "general.alignment":
            writer.add_custom_alignment(value)
            continue
        sub_type = value["elem_type"] if vtype == V.ARRAY else None
        writer.add_key_value(key, py_value(vtype, value), vtype, sub_type=sub_type)
    for i, (name, ttype, ne) in enumerate(TENSORS):
        data = np.frombuffer(tensor_bytes(i, ttype, ne), dtype=np.uint8)
        writer.add_tensor(name, data.reshape(byte_shape(ttype, ne)), raw_dtype=ttype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with open(out_json, "w", encoding="utf-8") as f:
        json.dump(describe(), f, indent=1)


# ---- reading with gguf.GGUFReader -----------------------------------------------------------

def decode(parts, i, vtype):
    """Rebuild a value from GGUFReader's flat list of parts; returns (value, next part)."""
    if vtype == V.STRING:
        return bytes(parts[i + 1]).decode("utf-8"), i + 2
    if vtype == V.ARRAY:
        elem = V(int(parts[i][0]))
        count = int(parts[i + 1][0])
        i += 2
        values = []
        for _ in range(count):
            v, i = decode(parts, i, elem)
            values.append(v)
        return {"elem_type": elem, "value": values}, i
    v = parts[i][0]
    return (bool(v) if vtype == V.BOOL else v.item()), i + 1


def same(vtype, got, want):
    if vtype == V.ARRAY:
        return (got["elem_type"] == want["elem_type"] and len(got["value"]) == len(want["value"])
                and all(same(want["elem_type"], g, w) for g, w in zip(got["value"], want["value"])))
    if vtype in FLOAT_TYPES:
        return np.float64(got).tobytes() == np.float64(want).tobytes()  # -0.0 differs from 0.0
    return type(got) is type(want) and got == want


def check(path, include_all):
    reader = gguf.GGUFReader(path)
    errors = []
    want = [m for m in METADATA if include_all or m[3]]
    keys = [k for k in reader.fields if not k.startswith("GGUF.")]
    if keys != [m[0] for m in want]:
        errors.append(f"keys differ: {keys} != {[m[0] for m in want]}")
    for key, vtype, value, _ in want:
        field = reader.fields.get(key)
        if field is None:
            continue
        if field.types[0] != vtype:
            errors.append(f"{key}: type {field.types[0].name} != {vtype.name}")
            continue
        got, end = decode(field.parts, 3, vtype)
        if end != len(field.parts) or not same(vtype, got, value):
            errors.append(f"{key}: value {got!r} != {value!r}")
    if reader.alignment != ALIGNMENT:
        errors.append(f"alignment {reader.alignment} != {ALIGNMENT}")
    if [t.name for t in reader.tensors] != [t[0] for t in TENSORS]:
        errors.append("tensor names or order differ")
    for i, ((name, ttype, ne), t) in enumerate(zip(TENSORS, reader.tensors)):
        if t.tensor_type != ttype:
            errors.append(f"tensor {name}: type {t.tensor_type.name} != {ttype.name}")
        if [int(d) for d in t.shape] != ne:
            errors.append(f"tensor {name}: shape {t.shape.tolist()} != {ne}")
        if t.data.tobytes() != tensor_bytes(i, ttype, ne):
            errors.append(f"tensor {name}: data bytes differ")
        if (t.data_offset - reader.data_offset) % ALIGNMENT != 0:
            errors.append(f"tensor {name}: data not aligned to {ALIGNMENT}")
    for e in errors:
        print(e)
    if not errors:
        print(f"{path}: gguf-py read {len(want)} keys and {len(TENSORS)} tensors as expected")
    return 1 if errors else 0


def main(argv):
    if len(argv) == 4 and argv[1] == "write":
        write(argv[2], argv[3])
        return 0
    if len(argv) in (3, 4) and argv[1] == "check" and argv[3:] in ([], ["--all"]):
        return check(argv[2], len(argv) == 4)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
