"""Independent oracle for libinfer's Llama: writes tiny random Llama GGUF files with gguf-py and
runs the forward pass in numpy, straight from the maths (RMS norm, rotary embedding on adjacent
pairs as GGUF's "llama" stores Q/K, grouped-query causal attention, SwiGLU).

  tiny_llama.py make OUT.gguf [--variant NAME]   write a model (see VARIANTS)
  tiny_llama.py ppl MODEL.gguf TEXT N_CTX N_CHUNKS  perplexity as llama-perplexity computes it,
                           for the "bytes" variant (whose merges never apply: token = byte)
  tiny_llama.py check MODEL.gguf LOGITS.f32 TOL FIRST TOKEN...  compare logits written by the
                           C test (rows of n_vocab float32 for tokens FIRST.. of TOKEN...);
                           fail above TOL relative error
"""
import sys

import numpy as np
import gguf

import tiny_gguf

N_EMBD, N_HEAD, N_HEAD_KV, N_FF, N_LAYER, N_CTX = 64, 4, 2, 96, 2, 512
HEAD = N_EMBD // N_HEAD
ROPE_BASE, ROPE_FACTOR, EPS = 10000.0, 2.0, 1e-5

# Variants: what differs from the default (biases, untied output, linear rope scaling, BOS added).
VARIANTS = {
    "default": {},
    "tied": {"tied": True, "biases": False, "rope_factor": None, "add_bos": False},
    "moe_router": {"extra_tensor": "blk.0.ffn_gate_inp.weight"},
    "q5_0": {"weight_type": "Q5_0"},
    "q8_0": {"weight_type": "Q8_0"},
    "bytes": {"merges": ["\x01 \x02"]},
}


def byte_alphabet():
    """GPT-2's printable stand-ins for the 256 byte values, in byte order."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1))
                 + list(range(ord("\xae"), ord("\xff") + 1)))
    mapping, extra = {}, 0
    for b in range(256):
        if b in printable:
            mapping[b] = chr(b)
        else:
            mapping[b] = chr(256 + extra)
            extra += 1
    return [mapping[b] for b in range(256)]


MERGES = ["\u0120 t", "h e", "\u0120t he", "i n", "e r", "\u0120 a", "o n", "\u0120 s"]


def vocab(merges):
    tokens = byte_alphabet()
    for m in merges:
        tokens.append(m.replace(" ", ""))
    tokens.append("<s>")
    types = [1] * (len(tokens) - 1) + [3]
    return tokens, types


def make(path, variant):
    v = {"tied": False, "biases": True, "rope_factor": ROPE_FACTOR, "add_bos": True,
         "extra_tensor": None, "weight_type": "F32", "merges": MERGES}
    v.update(VARIANTS[variant])
    tokens, types = vocab(v["merges"])
    n_vocab = len(tokens)
    rng = np.random.default_rng(1234)
    w = gguf.GGUFWriter(path, "llama")
    tiny_gguf.add_sizes(w, N_CTX, N_EMBD, N_LAYER, N_FF, N_HEAD, N_HEAD_KV)
    w.add_rope_freq_base(ROPE_BASE)
    w.add_rope_dimension_count(HEAD)
    w.add_layer_norm_rms_eps(EPS)
    if v["rope_factor"]:
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(v["rope_factor"])
    tiny_gguf.add_byte_tokenizer(w, tokens, types, v["merges"], v["add_bos"])
    tensor = tiny_gguf.random_tensors(w, rng, v["weight_type"])

    tensor("token_embd.weight", (n_vocab, N_EMBD), 0.5)
    tensor("output_norm.weight", (N_EMBD,), 0.1, 1.0)
    if not v["tied"]:
        tensor("output.weight", (n_vocab, N_EMBD), 0.2)
    kv = N_HEAD_KV * HEAD
    for i in range(N_LAYER):
        p = f"blk.{i}."
        tensor(p + "attn_norm.weight", (N_EMBD,), 0.1, 1.0)
        tensor(p + "attn_q.weight", (N_EMBD, N_EMBD), 0.25)
        tensor(p + "attn_k.weight", (kv, N_EMBD), 0.25)
        tensor(p + "attn_v.weight", (kv, N_EMBD))
        tensor(p + "attn_output.weight", (N_EMBD, N_EMBD))
        if v["biases"]:
            tensor(p + "attn_q.bias", (N_EMBD,), 0.05)
            tensor(p + "attn_k.bias", (kv,), 0.05)
            tensor(p + "attn_v.bias", (kv,), 0.05)
            tensor(p + "attn_output.bias", (N_EMBD,), 0.05)
            tensor(p + "ffn_gate.bias", (N_FF,), 0.05)
            tensor(p + "ffn_up.bias", (N_FF,), 0.05)
            tensor(p + "ffn_down.bias", (N_EMBD,), 0.05)
        tensor(p + "ffn_norm.weight", (N_EMBD,), 0.1, 1.0)
        tensor(p + "ffn_gate.weight", (N_FF, N_EMBD), 0.15)
        tensor(p + "ffn_up.weight", (N_FF, N_EMBD), 0.15)
        tensor(p + "ffn_down.weight", (N_EMBD, N_FF), 0.15)
    if v["extra_tensor"]:
        tensor(v["extra_tensor"], (HEAD // 2,), 0.0, 1.0)
    tiny_gguf.write(w)


def load(path):
    r, t = tiny_gguf.load_tensors(path)
    fields = {f.name: f for f in r.fields.values()}
    factor = 1.0
    if "llama.rope.scaling.factor" in fields:
        factor = float(fields["llama.rope.scaling.factor"].parts[-1][0])
    return t, 1.0 / factor


def rms_norm(x, weight):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * weight


def rope(x, positions, freq_scale):
    """x: [tokens, heads, HEAD]; rotate adjacent pairs (2i, 2i+1)."""
    i = np.arange(HEAD // 2)
    theta = positions[:, None] * freq_scale * ROPE_BASE ** (-2.0 * i / HEAD)  # [tokens, HEAD/2]
    cos, sin = np.cos(theta)[:, None, :], np.sin(theta)[:, None, :]
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def linear(t, name, x):
    y = x @ t[name + ".weight"].T
    return y + t[name + ".bias"] if name + ".bias" in t else y


def forward(path, tokens):
    t, freq_scale = load(path)
    n = len(tokens)
    pos = np.arange(n, dtype=np.float64)
    x = t["token_embd.weight"][tokens]
    mask = np.triu(np.full((n, n), -np.inf), 1)
    group = N_HEAD // N_HEAD_KV
    for i in range(N_LAYER):
        p = f"blk.{i}."
        h = rms_norm(x, t[p + "attn_norm.weight"])
        q = rope(linear(t, p + "attn_q", h).reshape(n, N_HEAD, HEAD), pos, freq_scale)
        k = rope(linear(t, p + "attn_k", h).reshape(n, N_HEAD_KV, HEAD), pos, freq_scale)
        v = linear(t, p + "attn_v", h).reshape(n, N_HEAD_KV, HEAD)
        out = np.empty((n, N_HEAD, HEAD))
        for hd in range(N_HEAD):
            s = q[:, hd, :] @ k[:, hd // group, :].T / np.sqrt(HEAD) + mask
            s = np.exp(s - s.max(axis=1, keepdims=True))
            s /= s.sum(axis=1, keepdims=True)
            out[:, hd, :] = s @ v[:, hd // group, :]
        x = x + linear(t, p + "attn_output", out.reshape(n, N_EMBD))
        h = rms_norm(x, t[p + "ffn_norm.weight"])
        gate, up = linear(t, p + "ffn_gate", h), linear(t, p + "ffn_up", h)
        x = x + linear(t, p + "ffn_down", gate / (1.0 + np.exp(-gate)) * up)
    x = rms_norm(x, t["output_norm.weight"])
    out_w = t["output.weight"] if "output.weight" in t else t["token_embd.weight"]
    return x @ out_w.T


def perplexity(path, text_path, n_ctx, n_chunks):
    """llama-perplexity's method: BOS first (the model adds it), chunks of n_ctx with BOS in
    place of their first token, the second half of each scored."""
    import gzip
    data = open(text_path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    bos = len(vocab(VARIANTS["bytes"]["merges"])[0]) - 1
    tokens = [bos] + list(data)
    first, nll = n_ctx // 2, []
    for c in range(n_chunks):
        chunk = tokens[c * n_ctx:(c + 1) * n_ctx]
        chunk[0] = bos
        logits = forward(path, chunk)
        for i in range(first, n_ctx - 1):
            row = logits[i] - logits[i].max()
            nll.append(np.log(np.exp(row).sum()) - row[chunk[i + 1]])
    print(f"{np.exp(np.mean(nll)):.6f}")
    return 0


def check(path, logits_path, tolerance, first, tokens):
    return tiny_gguf.compare_logits(forward(path, tokens)[first:], logits_path, tolerance)


def main():
    if sys.argv[1] == "make":
        variant = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--variant" else "default"
        make(sys.argv[2], variant)
        return 0
    if sys.argv[1] == "ppl":
        return perplexity(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    if sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5]),
                     [int(x) for x in sys.argv[6:]])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
