#!/usr/bin/env python3
"""Check that PyPI `tokenizers` loading an exported tokenizer.json (or PyPI `sentencepiece`
loading an exported tokenizer.model) gives our ids.

Usage: tokenizer_parity.py HF_DIR CORPUS_DIR [--add-special | --sentencepiece]
For every NAME in CORPUS_DIR/list.txt, NAME holds a text and NAME.ids our ids (one a line, from
libinfer's vocabulary: with special tokens parsed for `tokenizers`, and BOS/EOS added when
--add-special; without either for sentencepiece, which never parses control tokens). The
tokenizer is HF_DIR's file exactly as written, nothing configured here. Exits 0 and prints what
was compared when every text gives the same ids; else prints the first difference of each
differing text (at most 10) and exits 1.
"""
import os
import sys

from tokenizers import Tokenizer


class SentencePieceTokenizer:
    """The two calls of `tokenizers`' Tokenizer used below, on a SentencePieceProcessor."""

    class Encoding:
        def __init__(self, ids):
            self.ids = ids

    def __init__(self, sp):
        self.sp = sp

    def encode(self, text, add_special_tokens):
        return self.Encoding(self.sp.encode(text))

    def id_to_token(self, i):
        return self.sp.id_to_piece(i)


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    add_special = len(argv) == 4 and argv[3] == "--add-special"
    if len(argv) == 4 and argv[3] == "--sentencepiece":
        import sentencepiece
        tokenizer = SentencePieceTokenizer(sentencepiece.SentencePieceProcessor(
            model_file=os.path.join(argv[1], "tokenizer.model")))
    else:
        tokenizer = Tokenizer.from_file(os.path.join(argv[1], "tokenizer.json"))
    corpus = argv[2]
    with open(os.path.join(corpus, "list.txt")) as f:
        names = [line.strip() for line in f if line.strip()]
    n_bytes = n_tokens = 0
    bad = []
    for name in names:
        with open(os.path.join(corpus, name), encoding="utf-8", newline="") as f:
            text = f.read()
        with open(os.path.join(corpus, name + ".ids")) as f:
            ours = [int(x) for x in f.read().split()]
        theirs = tokenizer.encode(text, add_special_tokens=add_special).ids
        n_bytes += len(text.encode("utf-8"))
        n_tokens += len(theirs)
        if ours != theirs:
            i = next((k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
            show = lambda ids: " ".join("%d(%r)" % (t, tokenizer.id_to_token(t)) for t in ids[max(0, i - 3):i + 4])
            bad.append("%s: differs at token %d of %d/%d\n  ours: %s\n  hf:   %s" % (name, i, len(ours), len(theirs), show(ours), show(theirs)))
    for line in bad[:10]:
        print(line)
    if bad:
        print("%d of %d texts differ" % (len(bad), len(names)))
        return 1
    print("identical ids for %d texts: %d bytes, %d tokens\n" % (len(names), n_bytes, n_tokens))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
