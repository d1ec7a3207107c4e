#!/usr/bin/env python3
"""A tiny random Hugging Face folder per family, with a real tokenizer, for the llama.cpp checks.

  family_kld.py make FAMILY DIR TEXT [spm]
                                       config.json + model.safetensors (tiny_hf.py's config and
                                       tensor shapes at this tokenizer's vocabulary size, random
                                       values of its own), tokenizer.json (a byte-level BPE
                                       trained on TEXT by PyPI tokenizers: the gpt-2
                                       pre-tokenizer) or with spm tokenizer.model (a SentencePiece
                                       BPE trained by PyPI sentencepiece), tokenizer_config.json
  family_kld.py same FAMILY DIR BACK   BACK/model.safetensors (gguf-convert --to-hf) holds DIR's
                                       arrays: equal in float32, Gemma norms within 2^-24 (the
                                       GGUF stores fl(1 + w), docs/convert.md)
  family_kld.py tokens DIR TEXT BASE   the tokens of a llama-format KL-divergence base (written
                                       by gguf-eval from TEXT) are PyPI tokenizers' encoding of
                                       TEXT (PyPI sentencepiece's with tokenizer.model), after BOS
                                       when tokenizer_config.json adds one
Exits 1 with one line per difference.
"""
import io
import json
import os
import sys

import numpy as np
from safetensors.numpy import load_file, save_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tiny_hf  # noqa: E402

# Special tokens: BOS, EOS, and those llama.cpp looks up in a model named "phi3"
SPECIAL = ["<s>", "</s>", "<unk>", "<|endoftext|>"]
BOS, EOS = SPECIAL[0], SPECIAL[1]
N_VOCAB = 320  # 256 bytes, 60 merges, 4 special tokens
N_VOCAB_SPM = 400  # 4 special pieces, 256 bytes, the text's characters, merges
# Weights N(0, 0.1^2), norms near 1 (Gemma: near 0, as it multiplies by 1 + w): attention and
# logits are far from uniform, so one layer's q rows in HF order move the mean KLD against
# llama.cpp to 0.24, while the base's 16-bit log-probabilities alone stay within 3e-7.
WEIGHT_SCALE = 0.1


def train_tokenizer(text_path):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=N_VOCAB, special_tokens=SPECIAL, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train([text_path], trainer)
    return tok


def weights(family, name, shape, rng):
    if "norm" not in name:
        return rng.standard_normal(shape) * WEIGHT_SCALE
    return rng.uniform(-0.5, 0.5, shape) + (0 if family.startswith("gemma") else 1)


def write_bpe(d, text_path):
    """tokenizer.json; returns (vocabulary size, BOS id, EOS id)."""
    tok = train_tokenizer(text_path)
    tok.save(os.path.join(d, "tokenizer.json"))
    return tok.get_vocab_size(), tok.token_to_id(BOS), tok.token_to_id(EOS)


def write_spm(d, text_path):
    """tokenizer.model: a byte-fallback SentencePiece BPE that keeps the text as it is (no
    normalization, no dummy prefix: llama.cpp gives Gemma no space prefix); returns (vocabulary
    size, BOS id, EOS id)."""
    import sentencepiece
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        input=text_path, model_writer=model, vocab_size=N_VOCAB_SPM, model_type="bpe",
        byte_fallback=True, add_dummy_prefix=False, remove_extra_whitespaces=False,
        normalization_rule_name="identity", pad_id=0, eos_id=1, bos_id=2, unk_id=3,
        num_threads=1, minloglevel=2)
    with open(os.path.join(d, "tokenizer.model"), "wb") as f:
        f.write(model.getvalue())
    return N_VOCAB_SPM, 2, 1


def make(family, d, text_path, kind="bpe"):
    os.makedirs(d, exist_ok=True)
    tiny_hf.V, bos, eos = (write_spm if kind == "spm" else write_bpe)(d, text_path)
    cfg = tiny_hf.config(family)
    # The whole trained tokenizer is the vocabulary (tiny_hf's Gemma 3 folder makes its own
    # tokenizer smaller than the embedding, to test the cut; these folders test the maths).
    cfg.update(vocab_size=tiny_hf.V, bos_token_id=bos, eos_token_id=eos)
    rng = np.random.default_rng(tiny_hf.FAMILIES.index(family) + 100)
    tensors = {k: weights(family, k, v.shape, rng).astype(v.dtype)
               for k, v in tiny_hf.hf_tensors(family, cfg, rng).items()}
    save_file(tensors, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        # GPT2Tokenizer: the class with which the reference converter takes Phi-3 (Phi-4) from
        # tokenizer.json rather than tokenizer.model
        json.dump({"tokenizer_class": "GPT2Tokenizer" if kind == "bpe" else "GemmaTokenizer",
                   "bos_token": BOS, "eos_token": EOS, "unk_token": SPECIAL[2],
                   "add_bos_token": True, "add_eos_token": False, "model_max_length": 512},
                  f, indent=2)
    return 0


def same(family, d, back):
    want = load_file(os.path.join(d, "model.safetensors"))
    got = load_file(os.path.join(back, "model.safetensors"))
    bad = []
    if set(want) != set(got):
        bad.append(f"{family}: tensor names differ: {sorted(set(want) ^ set(got))}")
    for name in sorted(set(want) & set(got)):
        w, g = want[name].astype(np.float32), got[name].astype(np.float32)
        tol = 2.0 ** -24 if family.startswith("gemma") and name.endswith("norm.weight") else 0.0
        if w.shape != g.shape or np.max(np.abs(w - g), initial=0.0) > tol:
            bad.append(f"{family}: {name}: shape {g.shape} vs {w.shape} or values differ")
    for line in bad:
        print(line)
    print(f"{family}: {len(want)} tensors compared, {len(bad)} differences")
    return 1 if bad else 0


def encode(d, text):
    """The ids of `text` by the folder's tokenizer (PyPI sentencepiece or tokenizers)."""
    spm_path = os.path.join(d, "tokenizer.model")
    if os.path.exists(spm_path):
        import sentencepiece
        return sentencepiece.SentencePieceProcessor(model_file=spm_path).encode(text)
    return Tokenizer.from_file(os.path.join(d, "tokenizer.json")).encode(text).ids


def tokens(d, text_path, base_path):
    cfg = json.load(open(os.path.join(d, "tokenizer_config.json")))
    want = encode(d, open(text_path, encoding="utf-8").read())
    if cfg.get("add_bos_token"):
        want = [json.load(open(os.path.join(d, "config.json")))["bos_token_id"]] + want
    raw = open(base_path, "rb").read()
    if raw[:8] != b"_logits_":
        print(f"{base_path}: not a llama-format KL-divergence base")
        return 1
    n_ctx, _, n_chunk = np.frombuffer(raw, np.int32, 3, 8)
    got = np.frombuffer(raw, np.int32, n_ctx * n_chunk, 20).tolist()
    if got != want[:len(got)]:
        at = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b)
        print(f"{base_path}: token {at} is {got[at]}, the folder's tokenizer gives {want[at]}")
        return 1
    print(f"{len(got)} tokens as the folder's tokenizer gives them")
    return 0


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd in ("make", "same") and args[0] not in tiny_hf.FAMILIES:
        sys.exit(f"unknown family {args[0]}")
    sys.exit({"make": make, "same": same, "tokens": tokens}[cmd](*args))
