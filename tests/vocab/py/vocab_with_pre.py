#!/usr/bin/env python3
"""Write a vocabulary-only copy of a GGUF model with tokenizer.ggml.pre replaced.

Usage: vocab_with_pre.py MODEL.gguf OUT.gguf PRE [KEY=VALUE...]
Every metadata key of MODEL is copied (so llama.cpp still finds the hyper-parameters it reads when
loading a vocabulary only), no tensor is; tokenizer.ggml.pre becomes PRE. KEY=VALUE pairs add or
replace bool keys (tokenizer.ggml.add_bos_token=false) or drop a key (KEY=) - enough for the tests.
"""
import sys

import gguf


def field_value(field):
    t = field.types[0]
    if t == gguf.GGUFValueType.ARRAY:
        sub = field.types[-1]
        if sub == gguf.GGUFValueType.STRING:
            return [bytes(field.parts[i]) for i in field.data], t, sub
        return [field.parts[i].tolist()[0] for i in field.data], t, sub
    if t == gguf.GGUFValueType.STRING:
        return bytes(field.parts[-1]), t, None
    return field.parts[-1].tolist()[0], t, None


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    src, dst, pre = argv[1], argv[2], argv[3]
    edits = dict(a.split("=", 1) for a in argv[4:])
    reader = gguf.GGUFReader(src)
    arch = bytes(reader.fields["general.architecture"].parts[-1]).decode()
    writer = gguf.GGUFWriter(dst, arch)
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture" or name in edits:
            continue
        value, t, sub = field_value(field)
        if name == "tokenizer.ggml.pre":
            value = pre.encode()
        writer.add_key_value(name, value, t, sub_type=sub)
    if "tokenizer.ggml.pre" not in reader.fields:
        writer.add_string("tokenizer.ggml.pre", pre)
    for key, value in edits.items():
        if value:
            writer.add_bool(key, value == "true")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
