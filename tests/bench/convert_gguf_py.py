#!/usr/bin/env python3
"""convert_gguf_py.py HF_DIR OUT.gguf: the baseline for bench_convert.sh, since
convert_hf_to_gguf.py needs torch: the same work done with gguf-py and numpy. Reads the Llama
folder's safetensors (PyPI safetensors, numpy), regroups q/k rows as convert_hf_to_gguf.py does,
quantizes every 2-D weight to Q8_0 (norms F32) with gguf.quants, and writes the file with
GGUFWriter (architecture keys only: the tensors are the work being timed)."""
import glob
import json
import os
import sys

import numpy as np
import gguf
from safetensors import safe_open

NAMES = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
         "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
         "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
         "mlp.down_proj": "ffn_down"}


def gguf_name(name):
    glob_names = {"model.embed_tokens.weight": "token_embd.weight",
                  "model.norm.weight": "output_norm.weight", "lm_head.weight": "output.weight"}
    if name in glob_names:
        return glob_names[name]
    _, _, i, rest = name.split(".", 3)
    module, suffix = rest.rsplit(".", 1)
    return f"blk.{i}.{NAMES[module]}.{suffix}"


def permute(w, n_head):
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def main(hf_dir, out):
    cfg = json.load(open(os.path.join(hf_dir, "config.json")))
    n_head, n_kv = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    w = gguf.GGUFWriter(out, "llama")
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    for path in sorted(glob.glob(os.path.join(hf_dir, "*.safetensors"))):
        with safe_open(path, framework="numpy") as f:
            for name in sorted(f.keys()):
                data = f.get_tensor(name).astype(np.float32)
                if name.endswith("q_proj.weight"):
                    data = permute(data, n_head)
                if name.endswith("k_proj.weight"):
                    data = permute(data, n_kv)
                new = gguf_name(name)
                if data.ndim <= 1 or new.endswith("_norm.weight"):
                    w.add_tensor(new, data)
                else:
                    q = gguf.quants.quantize(data, gguf.GGMLQuantizationType.Q8_0)
                    w.add_tensor(new, q, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
