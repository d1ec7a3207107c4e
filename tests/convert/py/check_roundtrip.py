#!/usr/bin/env python3
"""Oracle for gguf-convert's round trips, independent of ggtk: gguf-py reads GGUF files, PyPI
safetensors (numpy) reads the exported folder.

  check_roundtrip.py export GGUF HF_DIR [--dtype f32|f16|bf16]
      every tensor of HF_DIR equals GGUF's tensor (gguf-py dequantized, the Llama q/k row
      regrouping and Gemma's norm +1 undone, then rounded to the dtype), names mapped back.
  check_roundtrip.py same GGUF_A GGUF_B [--bf16]
      same metadata (every key, type and value; order ignored: the converter writes keys in
      convert_hf_to_gguf.py's order, which a file from an older converter or from
      llama-quantize need not have) and bit-identical tensors (with --bf16: A's values rounded
      to bf16 equal B's).
Prints one line per difference and exits 1 on any.
"""
import argparse
import glob
import json
import os
import sys

import numpy as np
import gguf
from safetensors import safe_open

LAYER = {
    "attn_norm.weight": "input_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight", "attn_q.bias": "self_attn.q_proj.bias",
    "attn_k.weight": "self_attn.k_proj.weight", "attn_k.bias": "self_attn.k_proj.bias",
    "attn_v.weight": "self_attn.v_proj.weight", "attn_v.bias": "self_attn.v_proj.bias",
    "attn_qkv.weight": "self_attn.qkv_proj.weight",
    "attn_output.weight": "self_attn.o_proj.weight",
    "attn_q_norm.weight": "self_attn.q_norm.weight", "attn_k_norm.weight": "self_attn.k_norm.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight", "ffn_down.weight": "mlp.down_proj.weight",
}
GLOBAL = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
          "output.weight": "lm_head.weight"}


def hf_name(arch, name):
    if name in GLOBAL:
        return GLOBAL[name]
    _, layer, rest = name.split(".", 2)
    gemma = arch in ("gemma2", "gemma3")
    table = dict(LAYER)
    table["ffn_up.weight"] = "mlp.gate_up_proj.weight" if arch == "phi3" else "mlp.up_proj.weight"
    if gemma:
        table.update({"post_attention_norm.weight": "post_attention_layernorm.weight",
                      "ffn_norm.weight": "pre_feedforward_layernorm.weight",
                      "post_ffw_norm.weight": "post_feedforward_layernorm.weight"})
    else:
        table["ffn_norm.weight"] = "post_attention_layernorm.weight"
    return f"model.layers.{layer}.{table[rest]}"


def unpermute(w, n_head):
    """Inverse of convert_hf_to_gguf.py's LlamaModel.permute."""
    shape = w.shape
    return w.reshape(n_head, shape[0] // n_head // 2, 2, *shape[1:]).swapaxes(1, 2).reshape(shape)


def field(reader, key):
    f = reader.fields.get(key)
    return None if f is None else f.contents()


def to_dtype(a, dtype):
    if dtype == "f16":
        return a.astype(np.float16)
    if dtype == "bf16":  # round to nearest even, as ggml's fp32 -> bf16
        u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
        u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
        return u
    return a.astype(np.float32)


def read_bf16(path, name):
    """PyPI safetensors' numpy backend has no bfloat16: the raw uint16 values at the tensor's
    offsets (the header itself was validated by safe_open)."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        info = json.loads(f.read(n))[name]
        begin, end = info["data_offsets"]
        f.seek(8 + n + begin)
        return np.frombuffer(f.read(end - begin), dtype=np.uint16).reshape(info["shape"])


def load_folder(d):
    tensors = {}
    for path in sorted(glob.glob(os.path.join(d, "*.safetensors"))):
        with safe_open(path, framework="numpy") as f:
            for name in f.keys():
                if f.get_slice(name).get_dtype() == "BF16":
                    tensors[name] = read_bf16(path, name)
                else:
                    tensors[name] = f.get_tensor(name)
    return tensors


def export(args):
    r = gguf.GGUFReader(args.gguf)
    arch = field(r, "general.architecture")
    n_head = field(r, f"{arch}.attention.head_count")
    n_head_kv = field(r, f"{arch}.attention.head_count_kv") or n_head
    hf = load_folder(args.hf_dir)
    bad = 0
    seen = set()
    for t in r.tensors:
        want = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        want = want.reshape([int(n) for n in reversed(t.shape)])
        if arch == "llama" and t.name.endswith(("attn_q.weight", "attn_q.bias")):
            want = unpermute(want, n_head)
        if arch == "llama" and t.name.endswith(("attn_k.weight", "attn_k.bias")):
            want = unpermute(want, n_head_kv)
        if arch in ("gemma2", "gemma3") and t.name.endswith("norm.weight"):
            want = want - np.float32(1)
        name = hf_name(arch, t.name)
        seen.add(name)
        if name not in hf:
            print(f"{name}: missing from the export")
            bad += 1
            continue
        got = hf[name]
        if args.dtype == "bf16":
            got = got.view(np.uint16) if got.dtype != np.uint16 else got
        want = to_dtype(want, args.dtype)
        if got.shape != want.shape or got.tobytes() != want.tobytes():
            print(f"{name}: differs (shape {got.shape} vs {want.shape})")
            bad += 1
    for name in hf:
        if name not in seen:
            print(f"{name}: in the export but not in the GGUF file")
            bad += 1
    print(f"{len(r.tensors)} tensors compared, {bad} differ")
    return 1 if bad else 0


def values(r):
    out = {}
    for k, f in r.fields.items():
        if k.startswith("GGUF."):
            continue
        v = f.contents()
        out[k] = (tuple(f.types), v)
    return out


def same(args):
    a, b = gguf.GGUFReader(args.a), gguf.GGUFReader(args.b)
    bad = 0
    va, vb = values(a), values(b)
    for k in sorted(set(va) | set(vb)):
        if va.get(k) != vb.get(k):
            print(f"metadata {k}: {str(va.get(k))[:80]} vs {str(vb.get(k))[:80]}")
            bad += 1
    tb = {t.name: t for t in b.tensors}
    for t in a.tensors:
        u = tb.get(t.name)
        if u is None:
            print(f"tensor {t.name}: missing from {args.b}")
            bad += 1
            continue
        if args.bf16:
            x = to_dtype(gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32), "bf16")
            y = to_dtype(gguf.quants.dequantize(u.data, u.tensor_type).astype(np.float32), "bf16")
            ok = x.tobytes() == y.tobytes()
        else:
            ok = t.tensor_type == u.tensor_type and t.data.tobytes() == u.data.tobytes()
        if not ok or list(t.shape) != list(u.shape):
            print(f"tensor {t.name}: differs")
            bad += 1
    if len(a.tensors) != len(b.tensors):
        print(f"tensor count {len(a.tensors)} vs {len(b.tensors)}")
        bad += 1
    print(f"{len(va)} keys and {len(a.tensors)} tensors compared, {bad} differ")
    return 1 if bad else 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("gguf")
    e.add_argument("hf_dir")
    e.add_argument("--dtype", default="f32", choices=["f32", "f16", "bf16"])
    s = sub.add_parser("same")
    s.add_argument("a")
    s.add_argument("b")
    s.add_argument("--bf16", action="store_true")
    args = p.parse_args()
    sys.exit({"export": export, "same": same}[args.cmd](args))


if __name__ == "__main__":
    main()
