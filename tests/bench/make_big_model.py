"""Writes a synthetic llama-shaped GGUF model of any size, fast, as a sparse file: the header is
written with gguf-py, the file is extended to its full size without writing the tensor data (the
holes read as zeros and take no disk space), and only a few tensors get values: the token
embeddings, the output matrix, every norm, and the first FILLED layers' matrices, from a cheap
repeating pseudo-random pattern. A forward pass is therefore not trivial (the filled layers and
the output mix the tokens) while the disk holds only a few GB of a ~30 GB model.

  make_big_model.py OUT.gguf [--embd N] [--ff N] [--layers N] [--heads N] [--kv-heads N]
                    [--type f32|f16] [--filled N]

The defaults are Llama-3-8B's shapes in F32 with 34 layers: 29.7 GB. The vocabulary is a GPT-2
byte alphabet, one merge and a BOS token (258 tokens), so the embedding and output matrices are
small and any text tokenizes. Prints the file size and the bytes actually allocated on disk.
"""
import argparse
import os
import sys

import numpy as np
import gguf

# A pattern length prime to every row length, so consecutive rows differ.
PATTERN_ELEMENTS = 1_048_573
N_CTX = 4096
# The one merge a BPE vocabulary needs; it joins two control characters, which text never holds
# side by side, so every byte stays a token.
NEVER_MERGE = "\x01 \x02"
EPS = 1e-5


def byte_alphabet():
    """GPT-2's printable stand-ins for the 256 byte values, in byte order."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1))
                 + list(range(ord("\xae"), ord("\xff") + 1)))
    extra, tokens = 0, []
    for b in range(256):
        if b in printable:
            tokens.append(chr(b))
        else:
            tokens.append(chr(256 + extra))
            extra += 1
    return tokens


def tensor_shapes(a, n_vocab):
    """(name, GGUF ne list, is a norm) in file order."""
    kv = a.kv_heads * (a.embd // a.heads)
    shapes = [("token_embd.weight", [a.embd, n_vocab], False)]
    for i in range(a.layers):
        p = f"blk.{i}."
        shapes += [(p + "attn_norm.weight", [a.embd], True),
                   (p + "attn_q.weight", [a.embd, a.embd], False),
                   (p + "attn_k.weight", [a.embd, kv], False),
                   (p + "attn_v.weight", [a.embd, kv], False),
                   (p + "attn_output.weight", [a.embd, a.embd], False),
                   (p + "ffn_norm.weight", [a.embd], True),
                   (p + "ffn_gate.weight", [a.embd, a.ff], False),
                   (p + "ffn_up.weight", [a.embd, a.ff], False),
                   (p + "ffn_down.weight", [a.ff, a.embd], False)]
    shapes += [("output_norm.weight", [a.embd], True),
               ("output.weight", [a.embd, n_vocab], False)]
    return shapes


def write_header(path, a, tokens):
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("ggtk synthetic big model")
    w.add_context_length(N_CTX)
    w.add_embedding_length(a.embd)
    w.add_block_count(a.layers)
    w.add_feed_forward_length(a.ff)
    w.add_head_count(a.heads)
    w.add_head_count_kv(a.kv_heads)
    w.add_rope_freq_base(500000.0)
    w.add_rope_dimension_count(a.embd // a.heads)
    w.add_layer_norm_rms_eps(EPS)
    f32 = a.type == "f32"
    w.add_file_type(gguf.LlamaFileType.ALL_F32 if f32 else gguf.LlamaFileType.MOSTLY_F16)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types([1] * (len(tokens) - 1) + [3])
    w.add_token_merges([NEVER_MERGE])
    w.add_bos_token_id(len(tokens) - 1)
    w.add_eos_token_id(len(tokens) - 1)
    w.add_add_bos_token(True)
    dtype = np.float32 if a.type == "f32" else np.float16
    data_bytes = 0
    for name, ne, is_norm in tensor_shapes(a, len(tokens)):
        n = int(np.prod(ne))
        # Norms stay F32 as converters write them.
        t = np.float32 if is_norm else dtype
        w.add_tensor_info(name, list(reversed(ne)), np.dtype(t), n * np.dtype(t).itemsize)
        data_bytes += n * np.dtype(t).itemsize
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    return data_bytes


def filled(name, layers_filled):
    if not name.startswith("blk."):
        return True
    return name.endswith("_norm.weight") or int(name.split(".")[1]) < layers_filled


def fill(path, a, data_bytes):
    """Extend the file to its full size (holes), then write the values of the filled tensors."""
    alignment = 32
    with open(path, "r+b") as f:
        # Room for every tensor and its padding, so that the reader finds all the data; cut to
        # the exact end once the reader gave the offsets (only the header is read).
        f.truncate(os.path.getsize(path) + data_bytes + alignment * 1024 * 1024)
        r = gguf.GGUFReader(path)
        end = max(t.data_offset + int(t.n_bytes) for t in r.tensors)
        end = (end + alignment - 1) // alignment * alignment
        f.truncate(end)
    rng = np.random.default_rng(20261123)
    pattern = rng.standard_normal(PATTERN_ELEMENTS)
    with open(path, "r+b") as f:
        for t in r.tensors:
            if not filled(t.name, a.filled):
                continue
            n, dtype = int(t.n_elements), t.data.dtype
            if t.name.endswith("_norm.weight"):
                values = (1.0 + 0.1 * pattern[:n]).astype(dtype)
                os.pwrite(f.fileno(), values.tobytes(), t.data_offset)
                continue
            # Rows of n_in values scaled so that outputs keep the inputs' magnitude.
            scale = 1.0 / np.sqrt(int(t.shape[0]))
            piece = (scale * pattern).astype(dtype).tobytes()
            written, total = 0, n * dtype.itemsize
            while written < total:
                size = min(len(piece), total - written)
                os.pwrite(f.fileno(), piece[:size], t.data_offset + written)
                written += size
    return end


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--embd", type=int, default=4096)
    p.add_argument("--ff", type=int, default=14336)
    p.add_argument("--layers", type=int, default=34)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--type", choices=["f32", "f16"], default="f32")
    p.add_argument("--filled", type=int, default=2, help="layers whose matrices get values")
    a = p.parse_args()
    if a.embd % a.heads or a.heads % a.kv_heads:
        sys.exit("make_big_model.py: embd must divide by heads, heads by kv-heads")
    tmp = a.out + ".partial"
    tokens = byte_alphabet() + [NEVER_MERGE.replace(" ", ""), "<s>"]
    data_bytes = write_header(tmp, a, tokens)
    size = fill(tmp, a, data_bytes)
    os.replace(tmp, a.out)
    st = os.stat(a.out)
    print(f"{a.out}: {size} bytes ({size / 1e9:.1f} GB), {st.st_blocks * 512 / 1e9:.2f} GB on disk")


if __name__ == "__main__":
    main()
