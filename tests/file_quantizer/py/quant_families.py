"""Tiny F32 models of every family gguf-eval runs, sized for the file quantizer's rules, and a
per-tensor comparison of two quantized files (ours against llama-quantize's).

  quant_families.py make DIR [NAME...]   write DIR/NAME.gguf for each model (default: all of
                                         MODELS), and print the names written
  quant_families.py record MIX LOG [MIX LOG...]
                                         the C table rows of test_quantize_families.c from the
                                         logs of `llama-quantize --dry-run IN OUT MIX`: per mix
                                         the token_embd type and per kind one letter per layer
  quant_families.py compare A.gguf B.gguf
                                         one line per tensor whose name, type, shape or data
                                         differ, then "N of M tensors identical"; exit 1 when
                                         any differ or the files do not hold the same names

The llama, qwen2, qwen3 and phi3 models are tests/model/py/tiny_arch.py's with wider matrices
(rows of 256 and 512, so that K types are really used; the "_odd" ones have rows of 320 and 640,
which K types do not fit) and 16 layers (so the use_more_bits, first 8th and first 16th layer
rules all occur). gemma2 and gemma3 are written here with the tensor names and keys llama.cpp's
loader reads for them: post-attention and post-FFN norms, q/k norms (gemma3), head size apart
from n_embd / n_head, and tied embeddings (no output.weight).
"""
import os
import re
import sys

import numpy as np
import gguf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "model", "py"))
import tiny_arch  # noqa: E402
import tiny_gguf  # noqa: E402
from tiny_llama import MERGES, vocab  # noqa: E402

N_LAYER = 16

# name -> (tiny_arch model or gemma arch, n_embd, n_head, n_head_kv, n_ff, head size or None)
MODELS = {
    "llama": ("llama", 256, 4, 2, 512, None),
    "llama_rope_freqs": ("llama_rope_freqs", 256, 4, 1, 512, None),
    "llama_fused_qkv": ("llama_fused_qkv", 256, 4, 2, 512, None),
    "qwen2": ("qwen2", 256, 4, 1, 512, None),
    "qwen2_output_bias": ("qwen2_output_bias", 256, 4, 2, 512, None),
    "qwen3": ("qwen3", 256, 4, 2, 512, None),
    "phi3": ("phi3", 256, 4, 4, 512, None),
    "phi3_odd": ("phi3", 320, 4, 4, 640, None),
    "qwen3_odd": ("qwen3", 320, 4, 1, 640, None),
    "gemma2": ("gemma2", 256, 4, 2, 512, 128),
    "gemma3": ("gemma3", 256, 4, 1, 512, 128),
    "gemma3_odd": ("gemma3", 320, 4, 1, 640, 64),
}


def make_tiny_arch(path, model, n_embd, n_head, n_head_kv, n_ff):
    """tiny_arch.make with its module-level sizes set to ours."""
    tiny_arch.N_EMBD, tiny_arch.N_HEAD, tiny_arch.N_HEAD_KV = n_embd, n_head, n_head_kv
    tiny_arch.N_FF, tiny_arch.N_LAYER, tiny_arch.HEAD = n_ff, N_LAYER, n_embd // n_head
    tiny_arch.make(path, model)


def make_gemma(path, arch, n_embd, n_head, n_head_kv, n_ff, head):
    rng = np.random.default_rng(sum(map(ord, path)))
    tokens, types = vocab(MERGES)
    n_vocab = len(tokens)
    w = gguf.GGUFWriter(path, arch)
    tiny_gguf.add_sizes(w, 512, n_embd, N_LAYER, n_ff, n_head, n_head_kv)
    w.add_key_length(head)
    w.add_value_length(head)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(1000000.0)
    w.add_sliding_window(64)
    if arch == "gemma2":
        w.add_attn_logit_softcapping(50.0)
        w.add_final_logit_softcapping(30.0)
    else:
        w.add_float32(f"{arch}.rope.freq_base_swa", 10000.0)
    tiny_gguf.add_byte_tokenizer(w, tokens, types, MERGES)
    tensor = tiny_gguf.random_tensors(w, rng)

    tensor("token_embd.weight", (n_vocab, n_embd), 0.05)
    tensor("output_norm.weight", (n_embd,), 0.1)
    q, kv = n_head * head, n_head_kv * head
    for i in range(N_LAYER):
        p = f"blk.{i}."
        tensor(p + "attn_norm.weight", (n_embd,), 0.1)
        tensor(p + "attn_q.weight", (q, n_embd), 0.25)
        tensor(p + "attn_k.weight", (kv, n_embd), 0.25)
        tensor(p + "attn_v.weight", (kv, n_embd))
        if arch == "gemma3":
            tensor(p + "attn_q_norm.weight", (head,), 0.3)
            tensor(p + "attn_k_norm.weight", (head,), 0.3)
        tensor(p + "attn_output.weight", (n_embd, q))
        tensor(p + "post_attention_norm.weight", (n_embd,), 0.1)
        tensor(p + "ffn_norm.weight", (n_embd,), 0.1)
        tensor(p + "ffn_gate.weight", (n_ff, n_embd), 0.15)
        tensor(p + "ffn_up.weight", (n_ff, n_embd), 0.15)
        tensor(p + "ffn_down.weight", (n_embd, n_ff), 0.15)
        tensor(p + "post_ffw_norm.weight", (n_embd,), 0.1)
    tiny_gguf.write(w)


def make(directory, names):
    for name in names or MODELS:
        model, n_embd, n_head, n_head_kv, n_ff, head = MODELS[name]
        path = os.path.join(directory, name + ".gguf")
        if model.startswith("gemma"):
            make_gemma(path, model, n_embd, n_head, n_head_kv, n_ff, head)
        else:
            make_tiny_arch(path, model, n_embd, n_head, n_head_kv, n_ff)
        print(name)
    return 0


def tensors(path):
    return {t.name: t for t in gguf.GGUFReader(path).tensors}


def compare(path_a, path_b):
    a, b = tensors(path_a), tensors(path_b)
    same = 0
    for name in sorted(set(a) | set(b)):
        ta, tb = a.get(name), b.get(name)
        if ta is None or tb is None:
            print(f"{name}: only in {path_a if tb is None else path_b}")
            continue
        what = []
        if ta.tensor_type != tb.tensor_type:
            what.append(f"type {ta.tensor_type.name} vs {tb.tensor_type.name}")
        elif list(ta.shape) != list(tb.shape):
            what.append(f"shape {list(ta.shape)} vs {list(tb.shape)}")
        elif np.asarray(ta.data).tobytes() != np.asarray(tb.data).tobytes():
            what.append(f"data differs ({ta.tensor_type.name})")
        if what:
            print(f"{name}: {', '.join(what)}")
        else:
            same += 1
    total = len(set(a) | set(b))
    print(f"{same} of {total} tensors identical")
    return 0 if same == total else 1


# One letter per tensor type in the recorded tables (test_quantize_families.c decodes them).
LETTERS = {"f32": "f", "f16": "h", "q4_0": "a", "q4_1": "b", "q5_0": "c", "q5_1": "d",
           "q8_0": "e", "q2_K": "2", "q3_K": "3", "q4_K": "4", "q5_K": "5", "q6_K": "6"}
KINDS = ["attn_q", "attn_k", "attn_v", "attn_qkv", "attn_output", "ffn_gate", "ffn_up", "ffn_down"]
LINE = re.compile(r"^\[ *\d+/ *\d+\] (\S+) +- \[.*\], type = +(\S+), size = +[\d.]+ MiB"
                  r"(?: -> +[\d.]+ MiB \((\S+)\))?")


def record(pairs):
    for mix, log in pairs:
        types = {}
        for line in open(log):
            m = LINE.match(line)
            if m:
                types[m.group(1)] = LETTERS[m.group(3) or m.group(2)]
        n_layer = 1 + max(int(n.split(".")[1]) for n in types if n.startswith("blk."))
        rows = [f'{{"{k}", "{"".join(types[f"blk.{i}.{k}.weight"] for i in range(n_layer))}"}}'
                for k in KINDS if f"blk.0.{k}.weight" in types]
        output = f"'{types['output.weight']}'" if "output.weight" in types else "0"
        print(f'    {{"{mix}", \'{types["token_embd.weight"]}\', {output}, {{{", ".join(rows)}}}}},')
    return 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "make":
        return make(sys.argv[2], sys.argv[3:])
    if len(sys.argv) >= 4 and sys.argv[1] == "record" and len(sys.argv) % 2 == 0:
        return record(zip(sys.argv[2::2], sys.argv[3::2]))
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        return compare(sys.argv[2], sys.argv[3])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
