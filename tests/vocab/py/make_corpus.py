#!/usr/bin/env python3
"""Write the text corpus the tokenizer is compared on against HF tokenizers.

Usage: make_corpus.py OUTDIR [--joined N]
With --joined N the same texts are written joined into N files (for tools started once per file).
Writes OUTDIR/NNN.txt (valid UTF-8) and OUTDIR/list.txt (one file name a line). The corpus is
deterministic: the license texts of /usr/share/common-licenses, the project's own C sources, and
generated text (fixed seed) exercising what the pre-tokenizer regexes treat specially: scripts
with letters and marks, emoji, every kind of digit, whitespace runs, contractions, punctuation,
control characters and the chat markers of SmolLM2.
"""
import glob
import os
import random
import sys

LICENSE_DIR = "/usr/share/common-licenses"
SOURCE_GLOBS = ["libgguf/src/*.c", "libinfer/src/**/*.c", "libinfer/src/**/*.h", "tests/**/*.c", "tests/*.h"]
SOURCE_BYTES_MAX = 200_000


def license_texts():
    texts = []
    for path in sorted(glob.glob(os.path.join(LICENSE_DIR, "*"))):
        if os.path.isfile(path):
            with open(path, "rb") as f:
                texts.append(f.read().decode("utf-8", errors="replace"))
    return texts


def source_texts():
    texts, total = [], 0
    paths = sorted({p for g in SOURCE_GLOBS for p in glob.glob(g, recursive=True)})
    for path in paths:
        if "unicode_tables.c" in path:
            continue
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
        if total + len(text) > SOURCE_BYTES_MAX:
            break
        texts.append(text)
        total += len(text)
    return texts


def chars(first, last):
    return [chr(c) for c in range(first, last + 1)]


SCRIPTS = {
    "latin": chars(0x61, 0x7A) + chars(0x41, 0x5A),
    "accented": chars(0xC0, 0xD6) + chars(0xD8, 0xF6) + chars(0x100, 0x17F),
    "cyrillic": chars(0x410, 0x44F),
    "greek": chars(0x3B1, 0x3C9) + chars(0x391, 0x3A9),
    "arabic": chars(0x621, 0x64A),
    "hebrew": chars(0x5D0, 0x5EA),
    "devanagari": chars(0x915, 0x939),
    "thai": chars(0xE01, 0xE2E),
    "cjk": chars(0x4E00, 0x4FFF),
    "hiragana": chars(0x3041, 0x3096),
    "katakana": chars(0x30A1, 0x30FA),
    "hangul": chars(0xAC00, 0xAD00),
}
MARKS = {
    "latin": chars(0x300, 0x36F), "arabic": chars(0x64B, 0x652), "devanagari": chars(0x93E, 0x94D),
    "thai": chars(0xE31, 0xE3A) + chars(0xE47, 0xE4E), "hebrew": chars(0x5B0, 0x5BD),
}
EMOJI = chars(0x1F600, 0x1F64F) + chars(0x1F300, 0x1F3FF) + ["\u2705", "\u2764\ufe0f", "\u2603"]
EMOJI_SEQUENCES = ["\U0001F468\u200d\U0001F469\u200d\U0001F467", "\U0001F44D\U0001F3FD", "\U0001F1EB\U0001F1F7",
                   "\U0001F3F3\ufe0f\u200d\U0001F308", "1\ufe0f\u20e3"]
DIGITS = chars(0x30, 0x39) + chars(0x660, 0x669) + chars(0xFF10, 0xFF19) + chars(0x966, 0x96F) + \
    ["\u00b2", "\u00b3", "\u00bd", "\u2153", "\u2162", "\u216b", "\u2460", "\u3007", "\u4e03"]
SPACES = [" ", " ", " ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2009", "\u202f", "\u2028", "\x0b", "\x0c",
          "\x85", "\x1c", "\x1f"]
PUNCT = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + ["\u2026", "\u00ab", "\u00bb", "\u201c", "\u201d",
                                                       "\u2014", "\u00bf", "\u3002", "\u3001", "\u20ac",
                                                       "\u00a3", "\u00a5", "\u20b9", "\u2211", "\u222b",
                                                       "\u2248", "\u00a9", "\u00ae", "\u2122", "\u00b0"]
CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Ve", "'LL", "'D", "'x", "''"]
ODD = ["\x01", "\x07", "\x7f", "\u200b", "\ufeff", "\u00ad", "\ue000", "\u0300"]
MARKERS = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<file_sep>", "<jupyter_code>"]


def word(rng, script):
    letters = SCRIPTS[script]
    out = []
    for _ in range(rng.randint(1, 9)):
        out.append(rng.choice(letters))
        if script in MARKS and rng.random() < 0.25:
            out.append(rng.choice(MARKS[script]))
    return "".join(out)


def piece(rng):
    kind = rng.random()
    if kind < 0.45:
        return word(rng, rng.choice(list(SCRIPTS)))
    if kind < 0.55:
        return "".join(rng.choice(DIGITS) for _ in range(rng.randint(1, 12)))
    if kind < 0.62:
        return rng.choice(EMOJI) if rng.random() < 0.7 else rng.choice(EMOJI_SEQUENCES)
    if kind < 0.72:
        return "".join(rng.choice(PUNCT) for _ in range(rng.randint(1, 4)))
    if kind < 0.80:
        return word(rng, "latin") + rng.choice(CONTRACTIONS)
    if kind < 0.83:
        return rng.choice(ODD)
    if kind < 0.85:
        return rng.choice(MARKERS)
    return "".join(rng.choice(SPACES) for _ in range(rng.randint(1, 6)))


def generated_texts(rng, count, pieces):
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(pieces):
            parts.append(piece(rng))
            parts.append(rng.choice([" ", " ", " ", "", "\n", "  "]))
        texts.append("".join(parts))
    return texts


def fixed_texts():
    return [
        "", " ", "  ", "\n", "\n\n\n", " \n \n", "\t\t x", "a  b   c    d", "trailing   ",
        "I'm sure you're right, they'll say it's fine; we'd've known. I'M SURE YOU'RE RIGHT.",
        "3.14159265358979 1,000,000 v1.2.3 2024-05-17 0x7fffffff 1e-9 12345678901234567890",
        "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n",
        "<|im_start|><|im_end|><|im_start|>", "x<|endoftext|>y", "<|im_start", "im_end|>",
        "caf\u00e9 cafe\u0301 na\u00efve \u00c5ngstr\u00f6m", "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e",
        "\u4f60\u597d\uff0c\u4e16\u754c\uff01 \u3053\u3093\u306b\u3061\u306f\u4e16\u754c \uc548\ub155\ud558\uc138\uc694",
        "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645",
        "    if (x) {\n        return y;\n    }\n\n\n", "\r\n\r\n  \r\n\t\r\n",
    ]


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--joined"):
        print(__doc__, file=sys.stderr)
        return 2
    outdir = argv[1]
    os.makedirs(outdir, exist_ok=True)
    rng = random.Random(20240517)
    texts = fixed_texts() + license_texts() + source_texts() + generated_texts(rng, 60, 400)
    if len(argv) == 4:
        groups = max(1, int(argv[3]))
        texts = ["\n\n".join(texts[g::groups]) for g in range(groups)]
    names = []
    for i, text in enumerate(texts):
        name = "%03d.txt" % i
        with open(os.path.join(outdir, name), "w", encoding="utf-8", newline="") as f:
            f.write(text)
        names.append(name)
    with open(os.path.join(outdir, "list.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    total = sum(len(t.encode("utf-8")) for t in texts)
    print("corpus: %d texts, %d bytes" % (len(texts), total))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
