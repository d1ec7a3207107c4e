#!/usr/bin/env python3
"""Compare gguf-tokenize with llama.cpp's llama-tokenize for many pre-tokenizers on one vocabulary.

Usage: ref_compare.py MODEL.gguf CORPUS_DIR GGUF_TOKENIZE LLAMA_TOKENIZE WORKDIR PRE...
For each PRE, a vocabulary-only copy of MODEL with tokenizer.ggml.pre = PRE is written to WORKDIR
(vocab_with_pre.py) and every text of CORPUS_DIR (make_corpus.py) is tokenized by both tools
(--ids, the default flags, --no-escape); PRE "-" uses MODEL as it is. Prints one line per PRE with the texts that agree; for a
text that differs, the first differing token and the text around it. Exits 1 when any differs.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def ids(tool, model, path, extra):
    out = subprocess.run([tool, "-m", model, "-f", path, "--ids", "--no-escape"] + extra,
                         capture_output=True, check=True).stdout.decode()
    line = [l for l in out.splitlines() if l.startswith("[")][-1]
    return [int(x) for x in line.strip("[]").split(",") if x.strip()]


def main(argv):
    if len(argv) < 7:
        print(__doc__, file=sys.stderr)
        return 2
    model, corpus, ours, ref, work = argv[1:6]
    with open(os.path.join(corpus, "list.txt")) as f:
        names = [l.strip() for l in f if l.strip()]
    bad = 0
    for pre in argv[6:]:
        vocab = model if pre == "-" else os.path.join(work, "vocab-%s.gguf" % pre)
        if pre != "-":
            subprocess.run([sys.executable, os.path.join(HERE, "vocab_with_pre.py"), model, vocab, pre], check=True)
        same = 0
        for name in names:
            path = os.path.join(corpus, name)
            a = ids(ours, vocab, path, [])
            b = ids(ref, vocab, path, ["--log-disable"])
            if a == b:
                same += 1
                continue
            bad += 1
            i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            text = open(path, encoding="utf-8", errors="replace").read()
            print("%s %s: token %d differs: ours %s, llama.cpp %s (%d vs %d tokens) text %r" % (
                pre, name, i, a[i:i + 4], b[i:i + 4], len(a), len(b), text[:60]))
        print("%s: %d of %d texts identical" % (pre, same, len(names)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
