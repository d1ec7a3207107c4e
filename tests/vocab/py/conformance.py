#!/usr/bin/env python3
"""Run llama.cpp's tokenizer conformance vectors through gguf-tokenize.

Usage: conformance.py GGUF_TOKENIZE VECTORS_DIR GGUF_DIR [NAME...]
VECTORS_DIR holds llama.cpp's models/ggml-vocab-NAME.gguf.inp/.out (texts separated by
"\\n__ggml_vocab_test__\\n", one line of expected ids per text); GGUF_DIR holds the vocabularies
ggml-vocab-NAME.gguf. Each text is tokenized as llama.cpp's test-tokenizer-0 does (no BOS/EOS,
special tokens not parsed, text taken literally). Without NAMEs, every NAME with all three files.
Prints one line per vocabulary (texts identical / total) and the differing texts; exits 1 when any
differs, 3 when no vocabulary could be checked.
"""
import os
import subprocess
import sys
import tempfile

SEPARATOR = "\n__ggml_vocab_test__\n"


def check(tool, vectors, gguf_path, name):
    with open(os.path.join(vectors, "ggml-vocab-%s.gguf.inp" % name), encoding="utf-8", newline="") as f:
        texts = f.read().split(SEPARATOR)[:-1]
    with open(os.path.join(vectors, "ggml-vocab-%s.gguf.out" % name)) as f:
        expected = [line.split() for line in f.read().split("\n")][:len(texts)]
    same = 0
    with tempfile.NamedTemporaryFile("wb") as tmp:
        for i, text in enumerate(texts):
            tmp.seek(0)
            tmp.truncate()
            tmp.write(text.encode("utf-8"))
            tmp.flush()
            out = subprocess.run([tool, "-m", gguf_path, "-f", tmp.name, "--ids", "--no-bos",
                                  "--no-parse-special", "--no-escape"], capture_output=True)
            got = out.stdout.decode().strip().strip("[]").replace(",", " ").split()
            if out.returncode == 0 and got == expected[i]:
                same += 1
            else:
                print("  %s text %d %r: got %s, want %s %s" % (name, i, text[:40], " ".join(got[:12]),
                                                              " ".join(expected[i][:12]), out.stderr.decode().strip()))
    print("%s: %d of %d texts identical" % (name, same, len(texts)))
    return same == len(texts)


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    tool, vectors, ggufs = argv[1:4]
    names = argv[4:] or sorted(f[len("ggml-vocab-"):-len(".gguf.inp")] for f in os.listdir(vectors)
                               if f.startswith("ggml-vocab-") and f.endswith(".gguf.inp"))
    names = [n for n in names if os.path.exists(os.path.join(ggufs, "ggml-vocab-%s.gguf" % n))]
    if not names:
        print("no vocabulary with its vectors found")
        return 3
    ok = all([check(tool, vectors, os.path.join(ggufs, "ggml-vocab-%s.gguf" % n), n) for n in names])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
