"""What the tiny-model generators share (tiny_llama.py, tiny_arch.py, tiny_gemma.py and
tests/file_quantizer/py/quant_families.py): the byte-level BPE tokenizer keys, random weights
added to a gguf-py writer, writing the file out, and reading its tensors back as float64."""
import numpy as np
import gguf


def add_sizes(w, n_ctx, n_embd, n_layer, n_ff, n_head, n_head_kv):
    """The size keys every family has, in the order the generators write them."""
    w.add_context_length(n_ctx)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)


def add_byte_tokenizer(w, tokens, types, merges, add_bos=None):
    """The gpt2 tokenizer keys of tiny_llama.vocab(); BOS and EOS are the last token. add_bos None
    leaves tokenizer.ggml.add_bos_token out."""
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(len(tokens) - 1)
    w.add_eos_token_id(len(tokens) - 1)
    if add_bos is not None:
        w.add_add_bos_token(add_bos)


def random_tensors(w, rng, type_name="F32"):
    """A function tensor(name, shape, scale=0.08, offset=0.0) that adds offset + scale * N(0, 1)
    of `shape` (numpy order: rows, columns; GGUF's ne is reversed) to w, matrices quantized to
    `type_name` when it is not F32."""
    qtype = gguf.GGMLQuantizationType[type_name]

    def tensor(name, shape, scale=0.08, offset=0.0):
        data = (offset + scale * rng.standard_normal(shape)).astype(np.float32)
        if len(shape) == 2 and qtype != gguf.GGMLQuantizationType.F32:
            w.add_tensor(name, gguf.quants.quantize(data, qtype), raw_dtype=qtype)
        else:
            w.add_tensor(name, data)

    return tensor


def write(w):
    """Write the header, the metadata and the tensors, and close the file."""
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def load_tensors(path):
    """The reader of `path` and its tensors by name, dequantized, as float64 in numpy order."""
    r = gguf.GGUFReader(path)
    t = {}
    for x in r.tensors:
        data = np.array(x.data)
        if x.tensor_type != gguf.GGMLQuantizationType.F32:
            data = gguf.quants.dequantize(data, x.tensor_type)
        t[x.name] = data.reshape([int(n) for n in reversed(x.shape)]).astype(np.float64)
    return r, t


def compare_logits(want, logits_path, tolerance):
    """Compare the oracle's logits `want` with the float32 rows the C test wrote to logits_path:
    print the largest error relative to the largest logit; 0 below `tolerance`, else 1."""
    got = np.fromfile(logits_path, dtype=np.float32).reshape(want.shape)
    err = np.abs(got - want).max() / np.abs(want).max()
    print(f"max relative error {err:.3e}")
    return 0 if err < tolerance else 1
