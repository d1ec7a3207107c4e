#!/usr/bin/env python3
"""Compare our token ids under one pre-tokenizer with HF `tokenizers` built from the same vocabulary.

Usage: hf_pre_compare.py VOCAB.gguf PRE CORPUS_DIR
VOCAB is a byte-level BPE vocabulary whose tokenizer.ggml.pre is PRE (vocab_with_pre.py). The HF
tokenizer is built from its tokens and merges: a BPE model (ignore_merges where llama.cpp sets it
for the family), the family's pre-tokenizer regexes as its tokenizer.json has them (each an
"isolated" Split, then ByteLevel without its own regex), no special tokens. For every NAME in
CORPUS_DIR/list.txt, NAME holds the text and NAME.PRE.ids our ids (space-separated, tokenized without
BOS/EOS and without parsing special tokens). Exits 0 when every text gives identical ids; else
prints the first difference of each differing text and exits 1.
"""
import os
import sys

import gguf
from tokenizers import Regex, Tokenizer, models, pre_tokenizers

GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
CONTRACTIONS = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"
LLAMA3 = CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2 = LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}")
BLOOM = " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+"

# The regexes of each family's tokenizer.json, in order; (regexes, ignore_merges).
FAMILIES = {
    "default": ([r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", r"[0-9][0-9][0-9]"], False),
    "gpt-2": ([GPT2], False),
    "llama-bpe": ([LLAMA3], True),
    "dbrx": ([LLAMA3], False),
    "chatglm-bpe": ([LLAMA3], False),
    "qwen2": ([QWEN2], False),
    "qwen35": ([CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|"
                r"\s*[\r\n]+|\s+(?!\S)|\s+"], False),
    "smollm": ([r"\p{N}", GPT2], False),
    "falcon": ([r"[\p{P}\$\+<=>\^~\|`]+", GPT2, r"[0-9][0-9][0-9]"], False),
    "deepseek-coder": (["[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+", r"\p{N}"], False),
    "poro-chat": ([BLOOM], False),
    "viking": ([BLOOM, r"\p{N}"], False),
    "seed-coder": ([CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+"], False),
    "minicpm5": ([r"\p{N}{1,3}", LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}+")], True),
    "laguna": ([r"[^\n]+|[\n]+", QWEN2], False),
    "jais-2": ([LLAMA3.replace(r"\s+(?!\S)|\s+", r"\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|"
                               r"\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}")], False),
    "superbpe": ([r"\p{N}+", r"(?=(\d{3})+(?!\d))"], False),
}


def string_array(reader, key):
    field = reader.fields[key]
    return [bytes(field.parts[i]).decode("utf-8") for i in field.data]


def build_tokenizer(path, pre):
    reader = gguf.GGUFReader(path)
    tokens = string_array(reader, "tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in string_array(reader, "tokenizer.ggml.merges")]
    regexes, ignore_merges = FAMILIES[pre]
    bpe = models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges, byte_fallback=False,
                     ignore_merges=ignore_merges)
    tokenizer = Tokenizer(bpe)
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(r), behavior="isolated") for r in regexes] +
        [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    return tokenizer


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    vocab, pre, corpus = argv[1:]
    tokenizer = build_tokenizer(vocab, pre)
    with open(os.path.join(corpus, "list.txt")) as f:
        names = [line.strip() for line in f if line.strip()]
    n_bad = n_tokens = 0
    for name in names:
        with open(os.path.join(corpus, name), encoding="utf-8", newline="") as f:
            text = f.read()
        with open(os.path.join(corpus, "%s.%s.ids" % (name, pre))) as f:
            ours = [int(x) for x in f.read().split()]
        theirs = tokenizer.encode(text, add_special_tokens=False).ids
        n_tokens += len(theirs)
        if ours != theirs:
            n_bad += 1
            i = next((k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
            print("%s %s: token %d differs: ours %s, HF %s (text %r)" % (
                pre, name, i, ours[i:i + 4], theirs[i:i + 4], text[:40]))
    if n_bad:
        print("%s: %d of %d texts differ" % (pre, n_bad, len(names)))
        return 1
    print("%s: identical ids for %d texts, %d tokens" % (pre, len(names), n_tokens))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
