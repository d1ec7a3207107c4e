#!/usr/bin/env python3
"""add_test_vocab.py IN.gguf OUT.gguf: a copy of IN with a minimal byte-level BPE vocabulary (one
token per embedding row, one merge), so that llama.cpp can load a tiny converted model whose
tokenizer is not converted (until the tokenizer converter lands). F32/F16 tensors only."""
import sys

import numpy as np
import gguf


def main(src, dst):
    r = gguf.GGUFReader(src)
    arch = r.fields["general.architecture"].contents()
    w = gguf.GGUFWriter(dst, arch)
    for key, f in r.fields.items():
        if key.startswith("GGUF.") or key.startswith("tokenizer.") or key == "general.architecture":
            continue
        if f.types[0] == gguf.GGUFValueType.ARRAY:
            w.add_array(key, f.contents())
        else:
            w.add_key_value(key, f.contents(), f.types[0])
    n_vocab = next(int(t.shape[1]) for t in r.tensors if t.name == "token_embd.weight")
    tokens = [bytes([i]).decode("latin-1") if i < 256 else f"<t{i}>" for i in range(n_vocab)]
    tokens = [t if t.isprintable() and t != " " else f"<0x{i:02X}>" for i, t in enumerate(tokens)]
    # llama.cpp looks these up by text in models named "phi3".
    for i, special in enumerate(("<unk>", "<s>", "</s>", "<|endoftext|>")):
        tokens[n_vocab - 4 + i] = special
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types([1] * n_vocab)
    w.add_token_merges(["a b"])
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    for t in r.tensors:
        data = np.asarray(t.data).reshape([int(n) for n in reversed(t.shape)])
        w.add_tensor(t.name, data, raw_dtype=t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
