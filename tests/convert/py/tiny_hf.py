#!/usr/bin/env python3
"""Tiny random Hugging Face models, one per family gguf-convert knows, and their expected GGUF.

  tiny_hf.py make FAMILY DIR       write config.json + model.safetensors (numpy + safetensors)
                                   and a byte-level BPE tokenizer (PyPI tokenizers)
  tiny_hf.py check FAMILY DIR GGUF the GGUF (read by gguf-py) holds what llama.cpp's
                                   convert_hf_to_gguf.py writes for DIR with --outtype f32:
                                   the same keys, types and values, tensor names, shapes and
                                   values (Llama q/k rows regrouped, Gemma norms + 1, Gemma 3's
                                   embedding cut to the tokenizer) and the tokenizer's
                                   tokens (the other tokenizer.* keys are test_convert_tokenizer*'s)
The expectations are written out from convert_hf_to_gguf.py's rules (it needs torch, which the
tests do not install), independently of ggtk's tables. Exits 1 with one line per difference.
"""
import json
import os
import sys

import numpy as np
import gguf
from safetensors.numpy import save_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers

FAMILIES = ("llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3", "phi3")
H, NH, NKV, L, FF, V = 64, 4, 2, 2, 128, 256


def config(family):
    base = {"hidden_size": H, "num_attention_heads": NH, "num_key_value_heads": NKV,
            "num_hidden_layers": L, "intermediate_size": FF, "vocab_size": V,
            "max_position_embeddings": 512, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
            "torch_dtype": "float32"}
    arch = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM",
            "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM",
            "gemma2": "Gemma2ForCausalLM", "gemma3": "Gemma3ForCausalLM",
            "phi3": "Phi3ForCausalLM"}[family]
    base["architectures"] = [arch]
    if family == "mistral":
        base["sliding_window"] = None
    if family == "qwen2":
        base["tie_word_embeddings"] = True
    if family == "qwen3":
        base["head_dim"] = 32
    if family == "gemma2":
        base.update(head_dim=16, attn_logit_softcapping=50.0, final_logit_softcapping=30.0,
                    sliding_window=128, rms_norm_eps=1e-6)
    if family == "gemma3":  # the embedding has more rows than the tokenizer has tokens
        base.update(vocab_size=tokenizer_size(family), head_dim=16, sliding_window=64, sliding_window_pattern=6,
                    rope_local_base_freq=10000.0, rope_theta=1000000.0,
                    final_logit_softcapping=None, query_pre_attn_scalar=16, rms_norm_eps=1e-6)
    if family == "phi3":
        base.update(original_max_position_embeddings=256, sliding_window=2047)
    return base


def head_dim(cfg):
    return cfg.get("head_dim", H // NH)


def hf_tensors(family, cfg, rng):
    hd = head_dim(cfg)
    t = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,)}
    if family not in ("qwen2", "gemma2", "gemma3"):
        t["lm_head.weight"] = (V, H)
    for i in range(L):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = (H,)
        t[p + "post_attention_layernorm.weight"] = (H,)
        t[p + "self_attn.o_proj.weight"] = (H, NH * hd)
        t[p + "mlp.down_proj.weight"] = (H, FF)
        if family == "phi3":
            t[p + "self_attn.qkv_proj.weight"] = ((NH + 2 * NKV) * hd, H)
            t[p + "mlp.gate_up_proj.weight"] = (2 * FF, H)
        else:
            t[p + "self_attn.q_proj.weight"] = (NH * hd, H)
            t[p + "self_attn.k_proj.weight"] = (NKV * hd, H)
            t[p + "self_attn.v_proj.weight"] = (NKV * hd, H)
            t[p + "mlp.gate_proj.weight"] = (FF, H)
            t[p + "mlp.up_proj.weight"] = (FF, H)
        if family == "qwen2":
            for x, n in (("q", NH), ("k", NKV), ("v", NKV)):
                t[p + f"self_attn.{x}_proj.bias"] = (n * hd,)
        if family in ("qwen3", "gemma3"):
            t[p + "self_attn.q_norm.weight"] = (hd,)
            t[p + "self_attn.k_norm.weight"] = (hd,)
        if family in ("gemma2", "gemma3"):
            t[p + "pre_feedforward_layernorm.weight"] = (H,)
            t[p + "post_feedforward_layernorm.weight"] = (H,)
    # Norm values in [-0.5, 0.5]: Gemma's (w + 1) - 1 is then exact in float32.
    dtype = np.float16 if family == "qwen2" else np.float32
    return {k: (rng.uniform(-0.5, 0.5, s) if "norm" in k else rng.standard_normal(s) * 0.05).astype(dtype)
            for k, s in t.items()}


def make(family, d):
    os.makedirs(d, exist_ok=True)
    cfg = config(family)
    rng = np.random.default_rng(FAMILIES.index(family) + 1)
    tensors = hf_tensors(family, cfg, rng)
    save_file(tensors, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    write_tokenizer(d, tokenizer_size(family))


SPECIALS = ["<unk>", "<s>", "</s>", "<|endoftext|>"]


def tokenizer_size(family):
    """Gemma 3's tokenizer is smaller than its embedding, which the converter then cuts."""
    return 252 if family == "gemma3" else V


def write_tokenizer(d, n_tokens):
    """A GPT-2-style byte-level BPE of n_tokens: byte symbols, one merge, then the specials (which
    llama.cpp looks up by text for some families), with tokenizer_config.json naming them."""
    symbols = sorted(pre_tokenizers.ByteLevel.alphabet())[:n_tokens - len(SPECIALS) - 1]
    vocab = {c: i for i, c in enumerate(symbols)}
    vocab[symbols[0] + symbols[1]] = len(vocab)
    tok = Tokenizer(models.BPE(vocab, [(symbols[0], symbols[1])]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(SPECIALS)
    tok.save(os.path.join(d, "tokenizer.json"))
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump({"unk_token": "<unk>", "bos_token": "<s>", "eos_token": "</s>"}, f, indent=2)


def expected_tokens(d, cfg):
    """The vocabulary and added tokens by id, padded to config.json's vocab_size (get_vocab_base)."""
    tok = json.load(open(os.path.join(d, "tokenizer.json")))
    by_id = {i: t for t, i in tok["model"]["vocab"].items()}
    by_id.update({t["id"]: t["content"] for t in tok["added_tokens"]})
    return [by_id.get(i, f"[PAD{i}]") for i in range(cfg["vocab_size"])]


GEMMA_LAYER = {"post_attention_layernorm": "post_attention_norm", "pre_feedforward_layernorm": "ffn_norm",
               "post_feedforward_layernorm": "post_ffw_norm"}
LAYER = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
         "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
         "self_attn.o_proj": "attn_output", "self_attn.qkv_proj": "attn_qkv",
         "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm",
         "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down",
         "mlp.gate_up_proj": "ffn_up"}


def gguf_name(family, name):
    glob = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
            "lm_head.weight": "output.weight"}
    if name in glob:
        return glob[name]
    _, _, i, rest = name.split(".", 3)
    module, suffix = rest.rsplit(".", 1)
    table = dict(LAYER)
    if family.startswith("gemma"):
        table.update(GEMMA_LAYER)
    return f"blk.{i}.{table[module]}.{suffix}"


def permute(w, n_head):  # convert_hf_to_gguf.py's LlamaModel.permute
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def expected_tensors(family, cfg, tensors):
    out = {}
    for name in sorted(tensors):
        w = tensors[name].astype(np.float32)
        if family in ("llama", "mistral") and name.endswith("q_proj.weight"):
            w = permute(w, NH)
        if family in ("llama", "mistral") and name.endswith("k_proj.weight"):
            w = permute(w, NKV)
        if family.startswith("gemma") and name.endswith("norm.weight"):
            w = w + 1
        if family == "gemma3" and name == "model.embed_tokens.weight":
            w = w[:tokenizer_size(family)]
        out[gguf_name(family, name)] = w
    return out


U32, F32, STR = gguf.GGUFValueType.UINT32, gguf.GGUFValueType.FLOAT32, gguf.GGUFValueType.STRING


def expected_keys(family, cfg, n_params):
    a = {"llama": "llama", "mistral": "llama"}.get(family, family)
    hd = head_dim(cfg)
    k = {"general.architecture": (STR, a), "general.type": (STR, "model"),
         "general.quantization_version": (U32, 2), "general.file_type": (U32, 0)}
    def put(key, t, v):
        k[f"{a}.{key}"] = (t, v)
    if family == "gemma2":
        for key, v in (("context_length", 512), ("embedding_length", H), ("block_count", L),
                       ("feed_forward_length", FF), ("attention.head_count", NH),
                       ("attention.head_count_kv", NKV), ("attention.key_length", hd),
                       ("attention.value_length", hd), ("attention.sliding_window", 128)):
            put(key, U32, v)
        for key, v in (("attention.layer_norm_rms_epsilon", 1e-6), ("attn_logit_softcapping", 50.0),
                       ("final_logit_softcapping", 30.0)):
            put(key, F32, v)
    elif family == "phi3":
        for key, v in (("context_length", 512), ("rope.scaling.original_context_length", 256),
                       ("embedding_length", H), ("feed_forward_length", FF), ("block_count", L),
                       ("attention.head_count", NH), ("attention.head_count_kv", NKV),
                       ("rope.dimension_count", H // NH), ("attention.sliding_window", 2047)):
            put(key, U32, v)
        put("attention.layer_norm_rms_epsilon", F32, 1e-5)
        put("rope.freq_base", F32, 10000.0)
    else:  # TextModel.set_gguf_parameters, then the family's additions
        for key, v in (("block_count", L), ("context_length", 512), ("embedding_length", H),
                       ("feed_forward_length", FF), ("attention.head_count", NH),
                       ("attention.head_count_kv", NKV)):
            put(key, U32, v)
        put("rope.freq_base", F32, cfg["rope_theta"])
        put("attention.layer_norm_rms_epsilon", F32, cfg["rms_norm_eps"])
        if "head_dim" in cfg:
            put("attention.key_length", U32, hd)
            put("attention.value_length", U32, hd)
        if a == "llama":
            put("vocab_size", U32, V)
            put("rope.dimension_count", U32, hd)
        if family == "gemma3":
            put("rope.freq_base_swa", F32, 10000.0)
            put("attention.sliding_window", U32, 64)
    name = os.path.basename(os.path.normpath(sys.argv[3]))
    k["general.name"] = (STR, name)
    k["general.size_label"] = (STR, gguf.size_label(n_params, 0, 0, 0))
    return k


def check(family, d, path):
    cfg = json.load(open(os.path.join(d, "config.json")))
    from safetensors.numpy import load_file
    want = expected_tensors(family, cfg, load_file(os.path.join(d, "model.safetensors")))
    r = gguf.GGUFReader(path)
    bad = []
    got = {t.name: t for t in r.tensors}
    if list(got) != list(want):
        bad.append(f"tensor names/order: {list(got)[:6]}... vs {list(want)[:6]}...")
    for name, w in want.items():
        t = got.get(name)
        if t is None:
            continue
        wanted_type = gguf.GGMLQuantizationType.F32
        if t.tensor_type != wanted_type:
            bad.append(f"{name}: type {t.tensor_type.name}, expected F32")
        arr = np.asarray(t.data).reshape([int(n) for n in reversed(t.shape)])
        if arr.shape != w.shape or arr.tobytes() != w.tobytes():
            bad.append(f"{name}: values or shape {arr.shape} differ from {w.shape}")
    n_params = sum(w.size for w in want.values())
    keys = expected_keys(family, cfg, n_params)
    tokens = r.fields.get("tokenizer.ggml.tokens")
    if tokens is None or tokens.contents() != expected_tokens(d, cfg):
        bad.append("tokenizer.ggml.tokens differ from tokenizer.json's vocabulary")
    for key, f in r.fields.items():
        if key.startswith("GGUF.") or key.startswith("tokenizer."):
            continue
        if key not in keys:
            bad.append(f"unexpected key {key}")
            continue
        t, v = keys.pop(key)
        value = f.contents()
        if f.types[0] != t or (t == F32 and np.float32(value) != np.float32(v)) or (t != F32 and value != v):
            bad.append(f"{key}: {f.types[0].name} {value!r}, expected {t.name} {v!r}")
    bad += [f"missing key {key}" for key in keys]
    for line in bad:
        print(f"{family}: {line}")
    print(f"{family}: {len(want)} tensors, {len(r.fields)} fields checked, {len(bad)} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    cmd, family = sys.argv[1], sys.argv[2]
    if family not in FAMILIES:
        sys.exit(f"unknown family {family}")
    sys.exit(make(family, sys.argv[3]) if cmd == "make" else check(family, sys.argv[3], sys.argv[4]))
