"""Independent oracle for libinfer's Gemma 2 and Gemma 3 text decoders: writes tiny random GGUF
files with gguf-py and runs the forward pass in numpy, straight from the maths as llama.cpp
defines it: embeddings times sqrt(n_embd); RMS norms before and after attention and the FFN (the
file's weights as stored); per-head q/k RMS norms (gemma3); NeoX rotary embedding with the
sliding-window layers' own base; queries scaled by 1/sqrt(head size) (1/sqrt(n_embd/n_head) for the 27B layer counts); attention-logit
soft-capping (gemma2); a causal mask that sliding-window layers narrow to the last `window`
positions; GEGLU with ggml's GELU (input and result rounded to fp16); tied output; final-logit
soft-capping (gemma2).

  tiny_gemma.py make OUT.gguf VARIANT        write a model (see VARIANTS)
  tiny_gemma.py check MODEL.gguf LOGITS.f32 TOL FIRST TOKEN...  compare logits written by the C
                           test (rows of n_vocab float32 for tokens FIRST.. of TOKEN...); fail
                           above TOL relative error
  tiny_gemma.py copy IN.gguf OUT.gguf TYPE   the same model with its matrices in TYPE (F16, Q8_0)
"""
import sys
import os

import numpy as np
import gguf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tiny_gguf  # noqa: E402
from tiny_llama import vocab  # noqa: E402  (the byte vocabulary both oracles share)

N_EMBD, N_HEAD, N_HEAD_KV, HEAD, N_FF, N_CTX, EPS = 64, 4, 2, 32, 96, 512, 1e-6
MERGES = ["\x01 \x02"]  # never applies: one token per byte

# arch, layers, sliding window, window pattern key (None: llama.cpp's default), rope bases,
# softcaps (None: key absent).
VARIANTS = {
    "gemma2": {"arch": "gemma2", "layers": 4, "window": 16, "pattern": None,
               "base": 10000.0, "base_swa": None, "attn_cap": 5.0, "final_cap": 3.0},
    "gemma2_defaults": {"arch": "gemma2", "layers": 2, "window": None, "pattern": None,
                        "base": 10000.0, "base_swa": None, "attn_cap": None, "final_cap": None},
    # 46 layers: llama.cpp takes it for Gemma 2 27B and scales queries by 1/sqrt(n_embd/n_head)
    "gemma2_27b": {"arch": "gemma2", "layers": 46, "window": 16, "pattern": None,
                   "base": 10000.0, "base_swa": None, "attn_cap": None, "final_cap": None},
    "gemma3": {"arch": "gemma3", "layers": 6, "window": 16, "pattern": None,
               "base": 100000.0, "base_swa": None, "attn_cap": None, "final_cap": None},
    "gemma3_pattern": {"arch": "gemma3", "layers": 4, "window": 24, "pattern": 2,
                       "base": 100000.0, "base_swa": 500.0, "attn_cap": None, "final_cap": 4.0},
    "gemma3_global": {"arch": "gemma3", "layers": 2, "window": None, "pattern": None,
                      "base": 100000.0, "base_swa": None, "attn_cap": None, "final_cap": None},
}


def make(path, name):
    v = VARIANTS[name]
    tokens, types = vocab(MERGES)
    n_vocab = len(tokens)
    rng = np.random.default_rng(4321)
    w = gguf.GGUFWriter(path, v["arch"])
    tiny_gguf.add_sizes(w, N_CTX, N_EMBD, v["layers"], N_FF, N_HEAD, N_HEAD_KV)
    w.add_key_length(HEAD)
    w.add_value_length(HEAD)
    w.add_rope_freq_base(v["base"])
    w.add_layer_norm_rms_eps(EPS)
    if v["window"] is not None:
        w.add_sliding_window(v["window"])
    if v["pattern"] is not None:
        w.add_uint32(f"{v['arch']}.attention.sliding_window_pattern", v["pattern"])
    if v["base_swa"] is not None:
        w.add_rope_freq_base_swa(v["base_swa"])
    if v["attn_cap"] is not None:
        w.add_attn_logit_softcapping(v["attn_cap"])
    if v["final_cap"] is not None:
        w.add_final_logit_softcapping(v["final_cap"])
    tiny_gguf.add_byte_tokenizer(w, tokens, types, MERGES, True)
    tensor = tiny_gguf.random_tensors(w, rng)

    tensor("token_embd.weight", (n_vocab, N_EMBD), 0.3)
    tensor("output_norm.weight", (N_EMBD,), 0.1, 1.0)
    q, kv = N_HEAD * HEAD, N_HEAD_KV * HEAD
    for i in range(v["layers"]):
        p = f"blk.{i}."
        tensor(p + "attn_norm.weight", (N_EMBD,), 0.1, 1.0)
        tensor(p + "attn_q.weight", (q, N_EMBD), 0.25)
        tensor(p + "attn_k.weight", (kv, N_EMBD), 0.25)
        tensor(p + "attn_v.weight", (kv, N_EMBD))
        if v["arch"] == "gemma3":
            tensor(p + "attn_q_norm.weight", (HEAD,), 0.1, 1.0)
            tensor(p + "attn_k_norm.weight", (HEAD,), 0.1, 1.0)
        tensor(p + "attn_output.weight", (N_EMBD, q))
        tensor(p + "post_attention_norm.weight", (N_EMBD,), 0.1, 0.5)
        tensor(p + "ffn_norm.weight", (N_EMBD,), 0.1, 1.0)
        tensor(p + "ffn_gate.weight", (N_FF, N_EMBD), 0.3)
        tensor(p + "ffn_up.weight", (N_FF, N_EMBD), 0.15)
        tensor(p + "ffn_down.weight", (N_EMBD, N_FF), 0.15)
        tensor(p + "post_ffw_norm.weight", (N_EMBD,), 0.1, 0.5)
    tiny_gguf.write(w)


def copy(src, dst, type_name):
    """The model of `src` with every matrix but the (tied) embedding stored as `type_name`."""
    r = gguf.GGUFReader(src)
    arch = r.fields["general.architecture"].contents()
    w = gguf.GGUFWriter(dst, arch)
    for f in r.fields.values():
        if f.name.startswith("GGUF.") or f.name == "general.architecture":
            continue
        vtype = f.types[0]
        if vtype == gguf.GGUFValueType.ARRAY:
            w.add_array(f.name, f.contents())
        else:
            w.add_key_value(f.name, f.contents(), vtype)
    qtype = gguf.GGMLQuantizationType[type_name]
    for t in r.tensors:
        data = np.array(t.data).reshape([int(n) for n in reversed(t.shape)])
        if data.ndim == 2 and t.name != "token_embd.weight":
            w.add_tensor(t.name, gguf.quants.quantize(data, qtype), raw_dtype=qtype)
        else:
            w.add_tensor(t.name, data)
    tiny_gguf.write(w)


def load(path):
    r, t = tiny_gguf.load_tensors(path)
    fields = {f.name: f.contents() for f in r.fields.values() if not f.name.startswith("GGUF.")}
    return t, fields


def rms_norm(x, weight):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * weight


def rope_neox(x, positions, base):
    """x: [tokens, heads, HEAD]; rotate pairs (i, i + HEAD/2)."""
    half = HEAD // 2
    theta = positions[:, None] * base ** (-2.0 * np.arange(half) / HEAD)
    cos, sin = np.cos(theta)[:, None, :], np.sin(theta)[:, None, :]
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


def fp16(x):
    return x.astype(np.float32).astype(np.float16).astype(np.float64)


def gelu_ggml(x):
    """ggml's CPU GELU: x rounded to fp16, the tanh formula in float (1 + a x^2 one fused
    rounding), the result rounded to fp16; 0 at or below -10 and x at or above 10. numpy's float
    tanh may differ from the C library's in the last bit, so a rare result still lands one fp16
    step away."""
    h = x.astype(np.float32).astype(np.float16).astype(np.float32)
    f32 = np.float32
    inner = (f32(0.044715) * h).astype(np.float64) * h + 1.0
    inner = inner.astype(np.float32)
    t = np.tanh(f32(0.79788456080286535587989211986876) * h * inner)
    y = (f32(0.5) * h * (f32(1.0) + t)).astype(np.float16).astype(np.float64)
    return np.where(x <= -10, 0.0, np.where(x >= 10, x, y))


def softcap(x, cap):
    return cap * np.tanh(x / cap)


def forward(path, tokens):
    t, f = load(path)
    arch = f["general.architecture"]
    n_layer = f[arch + ".block_count"]
    window = f.get(arch + ".attention.sliding_window", 4096 if arch == "gemma2" else 0)
    period = f.get(arch + ".attention.sliding_window_pattern", 2 if arch == "gemma2" else 6)
    base = f.get(arch + ".rope.freq_base", 10000.0)
    base_swa = f.get(arch + ".rope.freq_base_swa", base if arch == "gemma2" else 10000.0)
    attn_cap = f.get(arch + ".attn_logit_softcapping", 50.0) if arch == "gemma2" else None
    final_cap = f.get(arch + ".final_logit_softcapping", 30.0 if arch == "gemma2" else None)
    big = n_layer == (46 if arch == "gemma2" else 62)  # llama.cpp's 27B rule
    q_scale = 1.0 / np.sqrt(N_EMBD // N_HEAD if big else HEAD)
    n = len(tokens)
    pos = np.arange(n, dtype=np.float64)
    x = t["token_embd.weight"][tokens] * np.sqrt(N_EMBD)
    group = N_HEAD // N_HEAD_KV
    for i in range(n_layer):
        p = f"blk.{i}."
        swa = window > 0 and i % period < period - 1
        dist = pos[:, None] - pos[None, :]
        hidden = (dist < 0) | (swa & (dist >= window))
        mask = np.where(hidden, -np.inf, 0.0)
        h = rms_norm(x, t[p + "attn_norm.weight"])
        q = (h @ t[p + "attn_q.weight"].T).reshape(n, N_HEAD, HEAD)
        k = (h @ t[p + "attn_k.weight"].T).reshape(n, N_HEAD_KV, HEAD)
        v = (h @ t[p + "attn_v.weight"].T).reshape(n, N_HEAD_KV, HEAD)
        if arch == "gemma3":
            q = rms_norm(q, t[p + "attn_q_norm.weight"])
            k = rms_norm(k, t[p + "attn_k_norm.weight"])
        b = base_swa if swa else base
        q = rope_neox(q, pos, b) * q_scale
        k = rope_neox(k, pos, b)
        out = np.empty((n, N_HEAD, HEAD))
        for hd in range(N_HEAD):
            s = q[:, hd, :] @ k[:, hd // group, :].T
            if attn_cap:
                s = softcap(s, attn_cap)
            s = s + mask
            s = np.exp(s - s.max(axis=1, keepdims=True))
            s /= s.sum(axis=1, keepdims=True)
            out[:, hd, :] = s @ v[:, hd // group, :]
        a = out.reshape(n, N_HEAD * HEAD) @ t[p + "attn_output.weight"].T
        x = x + rms_norm(a, t[p + "post_attention_norm.weight"])
        h = rms_norm(x, t[p + "ffn_norm.weight"])
        g = gelu_ggml(h @ t[p + "ffn_gate.weight"].T) * (h @ t[p + "ffn_up.weight"].T)
        d = g @ t[p + "ffn_down.weight"].T
        x = x + rms_norm(d, t[p + "post_ffw_norm.weight"])
    x = rms_norm(x, t["output_norm.weight"])
    logits = x @ t["token_embd.weight"].T
    return softcap(logits, final_cap) if final_cap else logits


def check(path, logits_path, tolerance, first, tokens):
    return tiny_gguf.compare_logits(forward(path, tokens)[first:], logits_path, tolerance)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) == 5 and sys.argv[1] == "copy":
        copy(sys.argv[2], sys.argv[3], sys.argv[4])
        return 0
    if len(sys.argv) > 5 and sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5]),
                     [int(x) for x in sys.argv[6:]])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
