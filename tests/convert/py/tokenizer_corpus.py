#!/usr/bin/env python3
"""Add the tokenizer converter's own texts to a corpus folder written by
tests/vocab/py/make_corpus.py.

Usage: tokenizer_corpus.py CORPUS_DIR
Writes CORPUS_DIR/convert_NN.txt and appends their names to list.txt. The texts aim at what an
exported tokenizer.json must reproduce: chat and control markers next to text, user-visible
spaces and newlines of every kind, digits of several scripts, code, emoji sequences (ZWJ,
skin tones, flags), and text that byte-level BPE and SentencePiece split differently.
"""
import os
import sys

TEXTS = [
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n",
    "<start_of_turn>user\nWrite a haiku.<end_of_turn>\n<start_of_turn>model\n",
    "<bos><eos><pad><unk><mask> inline <bos>text<eos>",
    "  leading spaces, trailing spaces   \n\n\n\t\ttabs\r\nwindows\rold mac\u00a0nbsp\u2009thin\u3000ideographic",
    "1 22 333 4444 55555 666666 7777777 3.14159 1e-9 0x7fff_ffff ١٢٣ ४५६ 〇一二三 ①②③ ½",
    "def f(x):\n    return {k: v for k, v in x.items() if v is not None}  # comment\n",
    "int main(void) { printf(\"%d\\n\", a[i++] << 2 >>= 3); return 0; }\n",
    "😀😃😄 👨‍👩‍👧‍👦 👍🏽 🇫🇷🇯🇵 ❤️ 🏳️‍🌈 ✅ 🦙🦙",
    "I've been 'told he's there, 'RE you sure? 'M not sure I'll make it, 'D you like some tea? We'Ve a'lL",
    "нещо на Български · 我想在apple工作1314151天～ · कान्तिपुर · กรุงเทพมหานคร · مرحبا بالعالم",
    "------======= '''''''```````\"\"\"\"......!!!!!!?????? ___ *** ### $$$",
    "a\u0301 e\u0308 \ufb01 \u2126 K \u00c5 ẞ ß İ ı ǅ",
    "",
    " ",
    "\n",
]


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    corpus = argv[1]
    names = []
    for i, text in enumerate(TEXTS):
        name = "convert_%02d.txt" % i
        with open(os.path.join(corpus, name), "w", encoding="utf-8", newline="") as f:
            f.write(text)
        names.append(name)
    with open(os.path.join(corpus, "list.txt"), "a") as f:
        f.write("".join(n + "\n" for n in names))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
