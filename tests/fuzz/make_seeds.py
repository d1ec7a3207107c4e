#!/usr/bin/env python3
"""Write the seed corpus of each fuzzer into OUTDIR/<fuzzer>:
 - fuzz_reader (GGUF): small valid files made with gguf-py (every value type, string and nested
   arrays, one tensor of many types, odd alignments), the real model's metadata with its long
   arrays cut and a few of its tensors given tiny data, and short prefixes of the real model;
 - fuzz_text_file: plain text, gzip (one and two members), zip (stored, deflated, a directory
   entry first, sizes in a data descriptor);
 - fuzz_kld_base: small valid base log-probability files (llama-perplexity's layout);
 - fuzz_kld_compact: small valid compact base files (docs/eval.md, written here independently of
   libinfer's writer) and one llama-layout file;
 - fuzz_imatrix: small importance matrices in llama-imatrix's GGUF and legacy layouts.
 - fuzz_safetensors: small safetensors files (several dtypes, a scalar, an empty tensor).
Usage: make_seeds.py OUTDIR [MODEL]"""
import gzip
import io
import json
import math
import os
import struct
import sys
import zipfile

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


def gguf_seeds(out, model):
    write(os.path.join(out, "values.gguf"), all_values)
    write(os.path.join(out, "tensors.gguf"), tensors)
    write(os.path.join(out, "tensors_align8.gguf"), tensors, alignment=8)
    write(os.path.join(out, "empty.gguf"), lambda w: None)
    if model and os.path.exists(model):
        model_seeds(out, model)


class Unseekable(io.RawIOBase):
    """A write-only stream that cannot seek, so that zipfile puts sizes in data descriptors."""

    def __init__(self):
        self.data = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.data += b
        return len(b)


def text_seeds(out):
    text = "The quick brown fox jumps over the lazy dog.\n" * 20
    seeds = {"plain.txt": text.encode(), "gzip.gz": gzip.compress(text.encode()),
             "gzip_two_members.gz": gzip.compress(b"first ") + gzip.compress(b"second\n")}
    for name, method in (("stored.zip", zipfile.ZIP_STORED), ("deflated.zip", zipfile.ZIP_DEFLATED)):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", method) as z:
            if name == "deflated.zip":
                z.writestr("dir/", b"")
            z.writestr("dir/text.txt", text)
        seeds[name] = buf.getvalue()
    stream = Unseekable()
    with zipfile.ZipFile(stream, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("streamed.txt", "w") as f:
            f.write(text.encode())
    seeds["descriptor.zip"] = bytes(stream.data)
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


def base_row(logits):
    """One base row as llama-perplexity writes it (inf_logprob_row_encode)."""
    top = max(logits)
    low = max(min(logits), top - 16)
    log_sum = math.log(sum(math.exp(x - top) for x in logits))
    scale = (top - low) / 65535
    q = [round((x - low) / scale) if scale and x > low else 0 for x in logits]
    q += [0] * (len(logits) % 2)
    return struct.pack("<ff", scale, low - top - log_sum) + struct.pack(f"<{len(q)}H", *q)


def base_file(n_ctx, n_vocab, n_chunk, seed):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, n_vocab, n_chunk * n_ctx)
    data = b"_logits_" + struct.pack("<Iii", n_ctx, n_vocab, n_chunk)
    data += struct.pack(f"<{len(tokens)}i", *tokens)
    for _ in range(n_chunk * (n_ctx - 1 - n_ctx // 2)):
        data += base_row([float(x) for x in 6 * rng.standard_normal(n_vocab)])
    return data


def kld_seeds(out):
    for n_ctx, n_vocab, n_chunk in ((8, 5, 2), (6, 16, 1), (3, 1, 3)):
        with open(os.path.join(out, f"base_{n_ctx}_{n_vocab}_{n_chunk}.kld"), "wb") as f:
            f.write(base_file(n_ctx, n_vocab, n_chunk, n_ctx * n_vocab))


def varint(v):
    out = b""
    while True:
        out += bytes([(v & 0x7F) | (0x80 if v >= 0x80 else 0)])
        v >>= 7
        if not v:
            return out


def log_p_code(lp):
    """The 1-2 byte code of a log-probability in (-16, 0] (docs/eval.md)."""
    c = round(-lp * 4096)
    if c <= 0x7FFF:
        return struct.pack(">H", 0x8000 | c)
    return bytes([min(max(int((-lp - 8) * 16), 0), 0x7F)])


def compact_row(logits, token, epsilon, max_entries):
    top = max(logits)
    log_sum = math.log(sum(math.exp(x - top) for x in logits))
    lp = [x - top - log_sum for x in logits]
    order = sorted(range(len(lp)), key=lambda i: (-lp[i], i))
    kept, mass = [], 0.0
    for i in order:
        if len(kept) == max_entries or lp[i] <= -16 or (kept and 1 - mass <= epsilon):
            break
        kept.append(i)
        mass += math.exp(lp[i])
    kept.sort()
    rest = sum(math.exp(lp[i]) for i in range(len(lp)) if i not in kept)
    gaps = [kept[0]] + [b - a - 1 for a, b in zip(kept, kept[1:])]
    return (struct.pack("<ff", lp[token], rest) + varint(len(kept)) +
            b"".join(varint(g) for g in gaps) + b"".join(log_p_code(lp[i]) for i in kept))


def compact_file(n_ctx, n_vocab, n_chunk, seed, epsilon, max_entries):
    rng = np.random.default_rng(seed)
    tokens = [int(t) for t in rng.integers(0, n_vocab, n_chunk * n_ctx)]
    data = b"GGTK-KLD" + struct.pack("<IIiifi", 1, n_ctx, n_vocab, n_chunk, epsilon, max_entries)
    data += struct.pack(f"<{len(tokens)}i", *tokens)
    ends = []
    for c in range(n_chunk):
        for r in range(n_ctx - 1 - n_ctx // 2):
            token = tokens[c * n_ctx + n_ctx // 2 + r + 1]
            data += compact_row([float(x) for x in 6 * rng.standard_normal(n_vocab)], token,
                                epsilon, max_entries)
        ends.append(len(data))
    return data + struct.pack(f"<{n_chunk}Q", *ends)


def kld_compact_seeds(out):
    shapes = ((8, 5, 2, 1e-4, 5), (6, 300, 1, 1e-2, 40), (3, 1, 3, 0.0, 1), (9, 200, 2, 0.5, 3))
    for n_ctx, n_vocab, n_chunk, epsilon, max_entries in shapes:
        name = f"compact_{n_ctx}_{n_vocab}_{n_chunk}.ckld"
        with open(os.path.join(out, name), "wb") as f:
            f.write(compact_file(n_ctx, n_vocab, n_chunk, n_vocab + n_ctx, epsilon, max_entries))
    with open(os.path.join(out, "base_8_5_2.kld"), "wb") as f:
        f.write(base_file(8, 5, 2, 40))


def imatrix_seeds(out):
    """A dense entry and a 2-expert entry with one expert never reached, in both formats."""
    entries = {"blk.0.attn_q.weight": ([5.0, 16.0, 40.0], [8]),
               "blk.1.ffn_up_exps.weight": ([20.0, 45.0, 0.0, 0.0], [5, 0])}

    def fill(w):
        w.add_string("general.type", "imatrix")
        w.add_array("imatrix.datasets", ["data.txt"])
        w.add_uint32("imatrix.chunk_count", 2)
        w.add_uint32("imatrix.chunk_size", 4)
        for name, (sums, counts) in entries.items():
            n_mat = len(counts)
            w.add_tensor(name + ".in_sum2", np.array(sums, dtype=np.float32).reshape(n_mat, -1))
            w.add_tensor(name + ".counts", np.array(counts, dtype=np.float32).reshape(n_mat, 1))

    write(os.path.join(out, "imatrix.gguf"), fill)
    legacy = struct.pack("<i", len(entries))
    for name, (sums, counts) in entries.items():
        per = len(sums) // len(counts)
        ncall = (max(counts) + 3) // 4
        values = [(s / counts[i // per] if counts[i // per] else 1.0) * ncall
                  for i, s in enumerate(sums)]
        legacy += struct.pack("<i", len(name)) + name.encode() + struct.pack("<ii", ncall, len(sums))
        legacy += struct.pack(f"<{len(values)}f", *values)
    legacy += struct.pack("<ii", 2, 8) + b"data.txt"
    with open(os.path.join(out, "imatrix.dat"), "wb") as f:
        f.write(legacy)


def safetensors_seeds(out):
    """Headers written by hand (no safetensors package needed), data bytes counting up."""
    files = {
        "two.safetensors": {"__metadata__": {"format": "pt"},
                            "b": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
                            "a": {"dtype": "BF16", "shape": [4], "data_offsets": [24, 32]}},
        "odd.safetensors": {"s": {"dtype": "I64", "shape": [], "data_offsets": [0, 8]},
                            "e": {"dtype": "F16", "shape": [0, 5], "data_offsets": [8, 8]},
                            "u": {"dtype": "U8", "shape": [3], "data_offsets": [8, 11]}},
    }
    for name, header in files.items():
        text = json.dumps(header).encode()
        text += b" " * (-len(text) % 8)
        end = max(e["data_offsets"][1] for k, e in header.items() if k != "__metadata__")
        with open(os.path.join(out, name), "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text + bytes(range(end)))


def main():
    out = sys.argv[1]
    model = sys.argv[2] if len(sys.argv) > 2 else None
    for name, make in (("fuzz_reader", lambda d: gguf_seeds(d, model)),
                       ("fuzz_text_file", text_seeds), ("fuzz_kld_base", kld_seeds),
                       ("fuzz_kld_compact", kld_compact_seeds),
                       ("fuzz_imatrix", imatrix_seeds), ("fuzz_safetensors", safetensors_seeds)):
        os.makedirs(os.path.join(out, name), exist_ok=True)
        make(os.path.join(out, name))


if __name__ == "__main__":
    main()
