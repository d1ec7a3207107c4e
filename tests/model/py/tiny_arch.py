"""Independent oracle for libinfer's architecture table: writes tiny random models of every family
with gguf-py and runs their forward pass in numpy (float64), straight from the maths and from
the file alone (general.architecture and the hyper-parameters decide what is computed).

  tiny_arch.py make OUT.gguf NAME          write model NAME (see MODELS: llama, llama_rope_freqs,
                                           llama_yarn, qwen2, qwen3, phi3, ...; BROKEN: the same
                                           with a tensor of the wrong shape or one too many)
  tiny_arch.py check MODEL.gguf LOGITS.f32 TOL N_CTX FIRST TOKEN...
                                           compare logits written by the C test (rows of n_vocab
                                           float32 for tokens FIRST.. of TOKEN..., decoded in a
                                           session of N_CTX positions); fail above TOL relative
                                           error

The vocabulary is tiny_llama.py's byte-level BPE (265 tokens).
"""
import math
import sys

import numpy as np
import gguf

import tiny_gguf
from tiny_llama import MERGES, vocab

N_EMBD, N_HEAD, N_HEAD_KV, N_FF, N_LAYER, N_CTX = 64, 4, 2, 96, 2, 512
HEAD = N_EMBD // N_HEAD
EPS = 1e-5

# What each model is: its architecture and what differs from a plain block of that family.
#   qkv_bias: attn_q/k/v.bias; fused_qkv: one attn_qkv; qk_norm: attn_q_norm/attn_k_norm;
#   fused_ffn: ffn_up holds gate|up (no ffn_gate); head: head size (attention.key_length, default
#   HEAD); n_rot: rotary dimensions (default the head size);
#   rope: metadata of the rope scaling; factors: rope frequency factor tensors; tied: no output
#   ; output_bias: output.bias; extra: further metadata.
MODELS = {
    "llama": {"arch": "llama"},
    "llama_rope_freqs": {"arch": "llama", "factors": ["rope_freqs.weight"], "base": 500000.0},
    "llama_yarn": {"arch": "llama", "rope": {"type": "yarn", "factor": 4.0, "orig": 64}},
    "llama_fused_qkv": {"arch": "llama", "fused_qkv": True, "tied": True},
    "llama_longrope": {"arch": "llama", "rope": {"type": "longrope", "orig": 64},
                       "factors": ["rope_factors_long.weight", "rope_factors_short.weight"]},
    # type none: the factor is ignored
    "llama_scaling_none": {"arch": "llama", "rope": {"type": "none", "factor": 8.0}},
    "qwen2": {"arch": "qwen2", "qkv_bias": True, "base": 1000000.0},
    "qwen2_output_bias": {"arch": "qwen2", "qkv_bias": True, "output_bias": True, "tied": True},
    "qwen3": {"arch": "qwen3", "qk_norm": True, "tied": True, "base": 1000000.0},
    # Qwen3's heads are wider than n_embd / n_head (0.6B: 16 heads of 128 over 1024)
    "qwen3_wide_heads": {"arch": "qwen3", "qk_norm": True, "head": 2 * HEAD},
    "phi3": {"arch": "phi3", "fused_qkv": True, "fused_ffn": True, "n_rot": HEAD // 2,
             "factors": ["rope_factors_long.weight", "rope_factors_short.weight"],
             "rope": {"orig": 64, "attn_factor": math.sqrt(1 + math.log(8) / math.log(64))},
             "extra": {"attention.sliding_window": 48}},
    "phi3_short": {"arch": "phi3", "fused_qkv": True, "fused_ffn": True, "n_rot": HEAD // 2,
                   "factors": ["rope_factors_long.weight", "rope_factors_short.weight"],
                   "rope": {"orig": N_CTX, "attn_factor": 1.1}},
    # original context 200: a context of 128 takes the long factors, as llama.cpp rounds it to 256
    "phi3_rounded": {"arch": "phi3", "fused_qkv": True, "fused_ffn": True, "n_rot": HEAD // 2,
                     "factors": ["rope_factors_long.weight", "rope_factors_short.weight"],
                     "rope": {"orig": 200, "attn_factor": 1.2}},
}

# Broken models for the error tests: a family's model with tensors of the wrong shape ("shape":
# name -> numpy shape) or tensors it does not read ("add": name -> numpy shape).
BROKEN = {
    "qwen3_bad_q_norm": ("qwen3", {"shape": {"blk.1.attn_q_norm.weight": (HEAD // 2,)}}),
    "llama_bad_rope_freqs": ("llama_rope_freqs", {"shape": {"rope_freqs.weight": (HEAD,)}}),
    "qwen2_rope_freqs": ("qwen2", {"add": {"rope_freqs.weight": (HEAD // 2,)}}),
    "llama_output_bias": ("llama", {"add": {"output.bias": (len(vocab(MERGES)[0]),)}}),
    "phi3_fused_and_separate": ("phi3", {"add": {"blk.0.attn_q.weight": (N_EMBD, N_EMBD)}}),
    "phi3_ffn_gate": ("phi3", {"add": {"blk.0.ffn_gate.weight": (N_FF, N_EMBD)}}),
}


def make(path, name):
    broken = {}
    if name in BROKEN:
        name, broken = BROKEN[name]
    m = MODELS[name]
    arch = m["arch"]
    rng = np.random.default_rng(sum(map(ord, name)))
    tokens, types = vocab(MERGES)
    n_vocab = len(tokens)
    head = m.get("head", HEAD)
    n_rot = m.get("n_rot", head)
    w = gguf.GGUFWriter(path, arch)
    tiny_gguf.add_sizes(w, N_CTX, N_EMBD, N_LAYER, N_FF, N_HEAD, N_HEAD_KV)
    if head != HEAD:
        w.add_key_length(head)
        w.add_value_length(head)
    w.add_rope_freq_base(m.get("base", 10000.0))
    w.add_rope_dimension_count(n_rot)
    w.add_layer_norm_rms_eps(EPS)
    rope = m.get("rope", {})
    if "type" in rope:
        w.add_string(f"{arch}.rope.scaling.type", rope["type"])
    if "factor" in rope:
        w.add_rope_scaling_factor(rope["factor"])
    if "orig" in rope:
        w.add_rope_scaling_orig_ctx_len(rope["orig"])
    if "attn_factor" in rope:
        w.add_float32(f"{arch}.rope.scaling.attn_factor", rope["attn_factor"])
    for key, value in m.get("extra", {}).items():
        w.add_uint32(f"{arch}.{key}", value)
    tiny_gguf.add_byte_tokenizer(w, tokens, types, MERGES, True)
    add = tiny_gguf.random_tensors(w, rng)

    def tensor(tname, shape, scale=0.08, offset=0.0):
        add(tname, broken.get("shape", {}).get(tname, shape), scale, offset)

    # small logits (PPL near the vocabulary size): the KL-divergence base stores log-probabilities
    # in 16 bits over their range, whose rounding is the floor of a KLD comparison
    tensor("token_embd.weight", (n_vocab, N_EMBD), 0.05)
    tensor("output_norm.weight", (N_EMBD,), 0.1, 1.0)
    if not m.get("tied"):
        tensor("output.weight", (n_vocab, N_EMBD), 0.05)
    if m.get("output_bias"):
        tensor("output.bias", (n_vocab,), 0.1)
    for fname in m.get("factors", []):
        # frequency factors divide the angles: spread them over [1, 8]
        size = broken.get("shape", {}).get(fname, (n_rot // 2,))
        w.add_tensor(fname, np.exp(rng.uniform(0, math.log(8), size)).astype(np.float32))
    for tname, shape in broken.get("add", {}).items():
        tensor(tname, shape)
    q, kv = N_HEAD * head, N_HEAD_KV * head
    for i in range(N_LAYER):
        p = f"blk.{i}."
        tensor(p + "attn_norm.weight", (N_EMBD,), 0.1, 1.0)
        if m.get("fused_qkv"):
            tensor(p + "attn_qkv.weight", (q + 2 * kv, N_EMBD), 0.25)
        else:
            tensor(p + "attn_q.weight", (q, N_EMBD), 0.25)
            tensor(p + "attn_k.weight", (kv, N_EMBD), 0.25)
            tensor(p + "attn_v.weight", (kv, N_EMBD))
        if m.get("qkv_bias"):
            tensor(p + "attn_q.bias", (q,), 0.3)
            tensor(p + "attn_k.bias", (kv,), 0.3)
            tensor(p + "attn_v.bias", (kv,), 0.05)
        if m.get("qk_norm"):
            tensor(p + "attn_q_norm.weight", (head,), 0.3, 1.0)
            tensor(p + "attn_k_norm.weight", (head,), 0.3, 1.0)
        tensor(p + "attn_output.weight", (N_EMBD, q))
        tensor(p + "ffn_norm.weight", (N_EMBD,), 0.1, 1.0)
        if m.get("fused_ffn"):
            tensor(p + "ffn_up.weight", (2 * N_FF, N_EMBD), 0.15)
        else:
            tensor(p + "ffn_gate.weight", (N_FF, N_EMBD), 0.15)
            tensor(p + "ffn_up.weight", (N_FF, N_EMBD), 0.15)
        tensor(p + "ffn_down.weight", (N_EMBD, N_FF), 0.15)
    tiny_gguf.write(w)


class Model:
    """A file's tensors (float64, numpy shapes) and hyper-parameters."""

    def __init__(self, path):
        r = gguf.GGUFReader(path)
        self.t = {}
        for x in r.tensors:
            data = np.array(x.data)
            if x.tensor_type != gguf.GGMLQuantizationType.F32:
                data = gguf.quants.dequantize(data, x.tensor_type)
            self.t[x.name] = data.reshape([int(n) for n in reversed(x.shape)]).astype(np.float64)
        fields = {f.name: f for f in r.fields.values()}

        def value(key, default=None):
            f = fields.get(key)
            if f is None:
                return default
            v = f.contents()
            return v

        self.arch = value("general.architecture")
        a = self.arch
        self.n_embd = value(f"{a}.embedding_length")
        self.n_head = value(f"{a}.attention.head_count")
        self.n_head_kv = value(f"{a}.attention.head_count_kv", self.n_head)
        self.head = value(f"{a}.attention.key_length", self.n_embd // self.n_head)
        self.n_rot = value(f"{a}.rope.dimension_count", self.head)
        self.n_layer = value(f"{a}.block_count")
        self.eps = value(f"{a}.attention.layer_norm_rms_epsilon")
        self.base = value(f"{a}.rope.freq_base", 10000.0)
        self.n_ctx_train = value(f"{a}.context_length")
        self.scaling = value(f"{a}.rope.scaling.type", "linear")
        factor = value(f"{a}.rope.scaling.factor", value(f"{a}.rope.scale_linear", 0.0))
        self.freq_scale = 1.0 if factor == 0 or self.scaling == "none" else 1.0 / factor
        self.attn_factor = value(f"{a}.rope.scaling.attn_factor", 1.0)
        self.n_ctx_orig = value(f"{a}.rope.scaling.original_context_length", self.n_ctx_train)
        # llama.cpp's rope pairing per family: adjacent pairs for llama, halves for the others
        self.neox = a != "llama"


def rms_norm(x, weight, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def rope_angles(m, positions, factors):
    """cos and sin [tokens, n_rot/2] as ggml_rope_ext computes them (in float64)."""
    half = m.n_rot // 2
    i = np.arange(half)
    theta_extrap = positions[:, None] * m.base ** (-2.0 * i / m.n_rot)
    if factors is not None:
        theta_extrap = theta_extrap / factors[None, :half]
    theta = m.freq_scale * theta_extrap
    mscale = m.attn_factor
    if m.scaling == "yarn":
        # llama.cpp: ext_factor 1; its context's attention factor cancels the kernel's magnitude
        # correction, which the kernel then applies: the net magnitude is 1 + 0.1 ln(factor)
        def corr_dim(rotations):
            return m.n_rot * math.log(m.n_ctx_orig / (rotations * 2 * math.pi)) / (2 * math.log(m.base))
        low = max(0.0, math.floor(corr_dim(32.0)))
        high = min(m.n_rot - 1.0, math.ceil(corr_dim(1.0)))
        ramp = 1 - np.clip((i - low) / max(0.001, high - low), 0, 1)
        theta = theta * (1 - ramp) + theta_extrap * ramp
        mscale = mscale * (1 + 0.1 * math.log(1 / m.freq_scale))
    return np.cos(theta) * mscale, np.sin(theta) * mscale


def rope(m, x, cos, sin):
    """x: [tokens, heads, head]; rotate the first n_rot elements of every head."""
    half = m.n_rot // 2
    out = x.copy()
    if m.neox:
        a, b = x[..., :half], x[..., half:m.n_rot]
    else:
        a, b = x[..., 0:m.n_rot:2], x[..., 1:m.n_rot:2]
    c, s = cos[:, None, :], sin[:, None, :]
    ra, rb = a * c - b * s, a * s + b * c
    if m.neox:
        out[..., :half], out[..., half:m.n_rot] = ra, rb
    else:
        out[..., 0:m.n_rot:2], out[..., 1:m.n_rot:2] = ra, rb
    return out


def linear(t, name, x):
    y = x @ t[name + ".weight"].T
    return y + t[name + ".bias"] if name + ".bias" in t else y


def rope_factors(m, n_ctx):
    """llama.cpp's choice: rope_freqs, else LongRoPE's long factors when its per-sequence context
    (n_ctx rounded up to 256) exceeds the original context, else the short ones."""
    if "rope_freqs.weight" in m.t:
        return m.t["rope_freqs.weight"]
    n_ctx_seq = (n_ctx + 255) // 256 * 256
    name = "rope_factors_long.weight" if n_ctx_seq > m.n_ctx_orig else "rope_factors_short.weight"
    return m.t.get(name)


def forward(path, tokens, n_ctx):
    m = Model(path)
    t = m.t
    n = len(tokens)
    cos, sin = rope_angles(m, np.arange(n, dtype=np.float64), rope_factors(m, n_ctx))
    x = t["token_embd.weight"][tokens]
    mask = np.triu(np.full((n, n), -np.inf), 1)
    group = m.n_head // m.n_head_kv
    n_q, n_kv = m.head * m.n_head, m.head * m.n_head_kv
    for i in range(m.n_layer):
        p = f"blk.{i}."
        h = rms_norm(x, t[p + "attn_norm.weight"], m.eps)
        if p + "attn_qkv.weight" in t:
            qkv = linear(t, p + "attn_qkv", h)
            q, k, v = qkv[:, :n_q], qkv[:, n_q:n_q + n_kv], qkv[:, n_q + n_kv:]
        else:
            q, k, v = (linear(t, p + "attn_q", h), linear(t, p + "attn_k", h),
                       linear(t, p + "attn_v", h))
        q = q.reshape(n, m.n_head, m.head)
        k = k.reshape(n, m.n_head_kv, m.head)
        v = v.reshape(n, m.n_head_kv, m.head)
        if p + "attn_q_norm.weight" in t:
            q = rms_norm(q, t[p + "attn_q_norm.weight"], m.eps)
            k = rms_norm(k, t[p + "attn_k_norm.weight"], m.eps)
        q, k = rope(m, q, cos, sin), rope(m, k, cos, sin)
        out = np.empty((n, m.n_head, m.head))
        for hd in range(m.n_head):
            s = q[:, hd, :] @ k[:, hd // group, :].T / np.sqrt(m.head) + mask
            s = np.exp(s - s.max(axis=1, keepdims=True))
            s /= s.sum(axis=1, keepdims=True)
            out[:, hd, :] = s @ v[:, hd // group, :]
        x = x + linear(t, p + "attn_output", out.reshape(n, n_q))
        h = rms_norm(x, t[p + "ffn_norm.weight"], m.eps)
        if p + "ffn_gate.weight" in t:
            gate, up = linear(t, p + "ffn_gate", h), linear(t, p + "ffn_up", h)
        else:
            both = linear(t, p + "ffn_up", h)
            gate, up = both[:, :both.shape[1] // 2], both[:, both.shape[1] // 2:]
        x = x + linear(t, p + "ffn_down", gate / (1.0 + np.exp(-gate)) * up)
    x = rms_norm(x, t["output_norm.weight"], m.eps)
    out_w = t["output.weight"] if "output.weight" in t else t["token_embd.weight"]
    logits = x @ out_w.T
    return logits + t["output.bias"] if "output.bias" in t else logits


def check(path, logits_path, tolerance, n_ctx, first, tokens):
    return tiny_gguf.compare_logits(forward(path, tokens, n_ctx)[first:], logits_path, tolerance)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) >= 7 and sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5]),
                     int(sys.argv[6]), [int(x) for x in sys.argv[7:]])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
