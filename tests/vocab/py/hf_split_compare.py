#!/usr/bin/env python3
"""Compare our pre-tokenizer splits with the original regexes run by HF `tokenizers` (Oniguruma).

Usage: hf_split_compare.py CORPUS_DIR PRE_NAME...
For every NAME in CORPUS_DIR/list.txt and every PRE_NAME, NAME.PRE_NAME.split holds the length in
code points of each word our pre-tokenizer made (one a line). Each pre-tokenizer is rebuilt here
from its regexes as llama.cpp lists them, every one an "isolated" Split applied to the words of the
previous one. Exits 0 when all splits agree, else prints the first difference per text, exits 1.
"""
import os
import sys

from tokenizers import Regex, pre_tokenizers

GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
          r"\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}")
REGEXES = {
    "gpt-2": [GPT2],
    "llama-bpe": [LLAMA3],
    "qwen2": [QWEN2],
    "smollm": [r"\p{N}", GPT2],
    "default": [r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", r"[0-9][0-9][0-9]"],
}


def splitter(pre_name):
    return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(r), behavior="isolated")
                                    for r in REGEXES[pre_name]])


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    corpus = argv[1]
    with open(os.path.join(corpus, "list.txt")) as f:
        names = [line.strip() for line in f if line.strip()]
    n_bad = n_words = 0
    for pre_name in argv[2:]:
        split = splitter(pre_name)
        for name in names:
            with open(os.path.join(corpus, name), encoding="utf-8", newline="") as f:
                text = f.read()
            with open(os.path.join(corpus, "%s.%s.split" % (name, pre_name))) as f:
                ours = [int(x) for x in f.read().split()]
            words = [w for w, _ in split.pre_tokenize_str(text)]
            theirs = [len(w) for w in words]
            n_words += len(theirs)
            if ours != theirs:
                n_bad += 1
                i = next((k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
                start = sum(theirs[:i])
                print("%s %s: word %d differs: ours %s, regex %r (text %r)" % (
                    pre_name, name, i, ours[i:i + 3], words[i:i + 3], text[max(0, start - 5):start + 20]))
    if n_bad:
        print("%d splits differ" % n_bad)
        return 1
    print("identical splits for %d texts x %d pre-tokenizers: %d words" % (len(names), len(argv) - 2, n_words))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
