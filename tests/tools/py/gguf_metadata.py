#!/usr/bin/env python3
"""Print a GGUF file's metadata as gguf-py reads it, for the gguf-edit tests to compare with the
values they asked for.

usage: gguf_metadata.py FILE

One line per key in file order: KEY<TAB>TYPE<TAB>VALUE, where TYPE is gguf-py's value type name
(UINT32, STRING, ARRAY[INT16] ...) and VALUE is JSON (floats as Python's repr, which reads back to
the same value; NaN and infinities as nan, inf, -inf; strings with non-ASCII kept as UTF-8). A last
line "tensors N SUM" gives the tensor count and the sum of every tensor's data bytes, so the test
sees gguf-py reached the data at the offsets the header gives.
"""
import json
import math
import sys

import gguf


def scalar_json(value):
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8")
    return json.dumps(value, ensure_ascii=False)


def value_json(field):
    contents = field.contents()
    if isinstance(contents, list):
        return "[" + ", ".join(scalar_json(v) for v in contents) + "]"
    return scalar_json(contents)


def type_name(field):
    names = [t.name for t in field.types]
    if names[0] == "ARRAY":
        return f"ARRAY[{names[1] if len(names) > 1 else 'UINT8'}]"
    return names[0]


def main():
    reader = gguf.GGUFReader(sys.argv[1])
    for field in reader.fields.values():
        if field.name.startswith("GGUF."):
            continue
        print(f"{field.name}\t{type_name(field)}\t{value_json(field)}")
    total = sum(int(t.data.view("uint8").astype("uint64").sum()) for t in reader.tensors)
    print(f"tensors {len(reader.tensors)} {total}")


if __name__ == "__main__":
    main()
