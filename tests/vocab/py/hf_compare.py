#!/usr/bin/env python3
"""Compare our SmolLM2 token ids with an independent tokenizer built with HF `tokenizers`.

Usage: hf_compare.py MODEL.gguf CORPUS_DIR
The HF tokenizer is built from the GGUF's own tokens and merges: a BPE model without byte
fallback, the pre-tokenizer SmolLM2's tokenizer.json uses (Digits with individual digits, then
ByteLevel with GPT-2's regex and no prefix space), and its CONTROL tokens added as special tokens
(so chat markers in the text become their ids, as our PARSE_SPECIAL does). For every NAME in
CORPUS_DIR/list.txt, NAME holds the text and NAME.ids our ids (space-separated). Exits 0 and prints
the bytes and tokens compared when every text gives identical ids; else prints the first
difference of each differing text and exits 1.
"""
import os
import sys

import gguf
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

TOKEN_TYPE_CONTROL = 3


def string_array(reader, key):
    field = reader.fields[key]
    return [bytes(field.parts[i]).decode("utf-8") for i in field.data]


def build_tokenizer(model_path):
    reader = gguf.GGUFReader(model_path)
    pre = bytes(reader.fields["tokenizer.ggml.pre"].parts[-1]).decode()
    if pre != "smollm":
        raise SystemExit("%s: tokenizer.ggml.pre is %r, this oracle models 'smollm'" % (model_path, pre))
    tokens = string_array(reader, "tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in string_array(reader, "tokenizer.ggml.merges")]
    type_field = reader.fields["tokenizer.ggml.token_type"]
    types = [int(type_field.parts[i][0]) for i in type_field.data]
    bpe = models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges, byte_fallback=False)
    tokenizer = Tokenizer(bpe)
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False)
                                  for t, ty in zip(tokens, types) if ty == TOKEN_TYPE_CONTROL])
    return tokenizer, tokens


def first_difference(ours, theirs):
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a != b:
            return i
    return min(len(ours), len(theirs))


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    tokenizer, tokens = build_tokenizer(argv[1])
    corpus = argv[2]
    with open(os.path.join(corpus, "list.txt")) as f:
        names = [line.strip() for line in f if line.strip()]
    n_bytes = n_tokens = n_bad = 0
    for name in names:
        with open(os.path.join(corpus, name), encoding="utf-8", newline="") as f:
            text = f.read()
        with open(os.path.join(corpus, name + ".ids")) as f:
            ours = [int(x) for x in f.read().split()]
        theirs = tokenizer.encode(text, add_special_tokens=False).ids
        n_bytes += len(text.encode("utf-8"))
        n_tokens += len(theirs)
        if ours != theirs:
            n_bad += 1
            i = first_difference(ours, theirs)
            show = lambda ids: " ".join("%d(%r)" % (t, tokens[t]) for t in ids[max(0, i - 3):i + 4])
            print("%s: differs at token %d\n  ours: %s\n  hf:   %s" % (name, i, show(ours), show(theirs)))
    if n_bad:
        print("%d of %d texts differ" % (n_bad, len(names)))
        return 1
    print("identical ids for %d texts: %d bytes, %d tokens" % (len(names), n_bytes, n_tokens))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
