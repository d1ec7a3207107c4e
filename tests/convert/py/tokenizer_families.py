#!/usr/bin/env python3
"""Write small Hugging Face tokenizer folders of several families, each with the GGUF tokenizer
keys llama.cpp's converter would write for it.

Usage: tokenizer_families.py OUTDIR
For every family NAME, writes OUTDIR/NAME/ (tokenizer.json saved by PyPI `tokenizers` itself,
tokenizer_config.json, and where the family has them config.json, chat_template.jinja,
added_tokens.json, tokenizer.model trained with PyPI `sentencepiece`) and OUTDIR/NAME.gguf, a
metadata-only GGUF holding the keys as convert_hf_to_gguf.py's Llama path computes them: the
vocabulary as get_vocab_base() (byte-level BPE) or _create_vocab_sentencepiece() (SentencePiece)
builds it - both reimplemented here on `tokenizers` / `sentencepiece` instead of transformers -
and the special ids, add_* flags and chat template from gguf-py's own SpecialVocab. Lists
"NAME PRE" a line in OUTDIR/families.txt, PRE being the expected tokenizer.ggml.pre, or "refuse"
for a pre-tokenizer no family has (then no .gguf is written).
"""
import glob
import json
import logging
import os
import sys

import gguf
import sentencepiece as spm
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

# Regexes as the families' tokenizer.json files spell them.
CONTRACTIONS = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"
LLAMA3 = CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2 = CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
UPPER, LOWER = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
GPT4O = (r"[^\r\n\p{L}\p{N}]?" + UPPER + "*" + LOWER + "+" + CONTRACTIONS + "?|[^\\r\\n\\p{L}\\p{N}]?" + UPPER + "+" +
         LOWER + "*" + CONTRACTIONS + r"?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
TEKKEN = (r"[^\r\n\p{L}\p{N}]?" + UPPER + "*" + LOWER + "+|[^\\r\\n\\p{L}\\p{N}]?" + UPPER + "+" + LOWER +
          r"*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")

TEXT = ("The quick brown fox jumps over the lazy dog. 12345 67890. Hello world, hello there! "
        "Ein Beispiel auf Deutsch. Un exemple en français. Пример на русском. 例子。") * 40

SPM_SPACE = "\u2581"


def byte_level(use_regex):
    return pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=use_regex)


def split_then_bytes(regex):
    return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(regex), behavior="isolated", invert=False),
                                    byte_level(False)])


DIGITS_THEN_BYTES = lambda: pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level(True)])

# name: (pre-tokenizer, expected tokenizer.ggml.pre, extra settings)
BPE_FAMILIES = {
    "gpt2": (lambda: byte_level(True), "gpt-2", {"string_merges": True}),
    "llama3": (lambda: split_then_bytes(LLAMA3), "llama-bpe", {"bos": "<|begin_of_text|>", "template_list": True,
                                                             "config_vocab_pad": 5, "ignore_merges": True}),
    "qwen2": (lambda: split_then_bytes(QWEN2), "qwen2", {"clean": False, "jinja": True,
                                                         "architecture": "Qwen2ForCausalLM"}),
    "smollm": (DIGITS_THEN_BYTES, "smollm", {"clean": False}),
    "starcoder": (DIGITS_THEN_BYTES, "starcoder", {"clean": True}),
    "gpt4o": (lambda: split_then_bytes(GPT4O), "gpt-4o", {}),
    "tekken": (lambda: split_then_bytes(TEKKEN), "tekken", {"ignore_merges": True}),
    "roberta": (lambda: byte_level(True), "gpt-2", {"roberta": True}),
    "unknown": (lambda: split_then_bytes(r"\p{L}+|\p{N}+"), "refuse", {}),
}


def looks_special(text):
    return (text in ("<pad>", "<mask>", "<2mass>", "[@BOS@]") or (text.startswith("<|") and text.endswith("|>"))
            or (text.startswith("<\uff5c") and text.endswith("\uff5c>"))
            or (text.startswith("<unused") and text.endswith(">")))


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, ensure_ascii=False, indent=1)


def training_texts():
    """Varied text to train the small BPE vocabularies on: the license texts every Debian system
    has (as tests/vocab/py/make_corpus.py uses) and the fixed sample above."""
    texts = [TEXT]
    for path in sorted(glob.glob("/usr/share/common-licenses/*"))[:8]:
        if os.path.isfile(path):
            with open(path, "rb") as f:
                texts.append(f.read().decode("utf-8", errors="replace"))
    return texts


def bpe_tokenizer(pre, settings):
    """A byte-level BPE of 1500 tokens trained with the family's pre-tokenizer, so that its merges
    cross every kind of boundary the pre-tokenizer draws."""
    tok = Tokenizer(models.BPE(ignore_merges=settings.get("ignore_merges", False)))
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(training_texts(), trainers.BpeTrainer(
        vocab_size=1500, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<s>", "</s>"] + ([settings["bos"]] if "bos" in settings else [])
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    # not special, but looking special (CONTROL), and plain user-defined ones (one with a U+2581,
    # which the GGUF stores as a space: text absent from the corpus, where llama.cpp would match
    # it on spaces and tokenizers on U+2581)
    tok.add_tokens([AddedToken("<|fake|>", special=False, normalized=False), AddedToken("user tok", special=False),
                    AddedToken("zq" + SPM_SPACE + "xj", special=False, normalized=False)])
    if "bos" in settings:
        bos = settings["bos"]
        tok.post_processor = processors.Sequence([
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(single=bos + " $A", pair=bos + " $A " + bos + " $B:1",
                                          special_tokens=[(bos, tok.token_to_id(bos))])])
    elif settings.get("roberta"):
        tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>")))
    return tok


def bpe_config(settings):
    config = {"add_prefix_space": False, "eos_token": "<|im_end|>", "unk_token": "<|endoftext|>",
              "pad_token": {"content": "<|endoftext|>", "special": True}, "tokenizer_class": "GPT2Tokenizer"}
    if "clean" in settings:
        config["clean_up_tokenization_spaces"] = settings["clean"]
    if "bos" in settings:
        config["bos_token"] = settings["bos"]
    if settings.get("roberta"):
        config.update({"bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>", "cls_token": "<s>"})
    if settings.get("template_list"):
        config["chat_template"] = [{"name": "default", "template": "{{ bos_token }}{{ messages }}"},
                                   {"name": "tool use!", "template": "{{ tools }}"}]
    elif not settings.get("jinja"):
        config["chat_template"] = "{% for m in messages %}<|im_start|>{{ m.content }}<|im_end|>{% endfor %}"
    return config


def bpe_expected(folder, tok, pre_name, vocab_size):
    """get_vocab_base() and _set_vocab_gpt2() on `tokenizers` instead of transformers."""
    vocab = tok.get_vocab(with_added_tokens=True)
    vocab_size = vocab_size or len(vocab)
    reverse = {i: t for t, i in vocab.items()}
    added = tok.get_added_tokens_decoder()
    added_texts = {a.content for a in added.values()}
    tokens, types = [], []
    for i in range(vocab_size):
        if i not in reverse:
            tokens.append("[PAD%d]" % i)
            types.append(gguf.TokenType.UNUSED)
            continue
        token = reverse[i]
        if token in added_texts:
            if not added[i].normalized:
                token = tok.decode(tok.encode(token, add_special_tokens=False).ids, skip_special_tokens=False)
            if added[i].special or looks_special(token):
                types.append(gguf.TokenType.CONTROL)
            else:
                token = token.replace(SPM_SPACE, " ")
                types.append(gguf.TokenType.USER_DEFINED)
        else:
            types.append(gguf.TokenType.NORMAL)
        tokens.append(token)
    return tokens, types


def write_expected(path, folder, model, pre, tokens, types, scores=None, n_vocab=None, load_merges=False,
                   prefix_from_config=True, space_prefix_off=False):
    """The keys in the order the reference writes them: its Llama class reads add_prefix_space
    first (`prefix_from_config`), Gemma 2/3 turn the space prefix off last (`space_prefix_off`)."""
    w = gguf.GGUFWriter(path, "llama")
    with open(os.path.join(folder, "tokenizer_config.json"), encoding="utf-8") as f:
        config = json.load(f)
    if prefix_from_config and config.get("add_prefix_space") is not None:
        w.add_add_space_prefix(config["add_prefix_space"])
    w.add_tokenizer_model(model)
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    if scores is not None:
        w.add_token_scores(scores)
    w.add_token_types(types)
    gguf.SpecialVocab(folder, load_merges=load_merges, n_vocab=n_vocab).add_to_gguf(w, quiet=True)
    if space_prefix_off:
        w.add_add_space_prefix(False)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()


def make_bpe(outdir, name, make_pre, pre_name, settings):
    folder = os.path.join(outdir, name)
    os.makedirs(folder, exist_ok=True)
    tok = bpe_tokenizer(make_pre(), settings)
    path = os.path.join(folder, "tokenizer.json")
    tok.save(path)
    if settings.get("string_merges"):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        data["model"]["merges"] = [" ".join(m) for m in data["model"]["merges"]]
        write_json(path, data)
    write_json(os.path.join(folder, "tokenizer_config.json"), bpe_config(settings))
    vocab_size = 0
    if settings.get("config_vocab_pad"):
        vocab_size = tok.get_vocab_size(with_added_tokens=True) + settings["config_vocab_pad"]
        write_json(os.path.join(folder, "config.json"), {"vocab_size": vocab_size, "bos_token_id": 1,
                                                         "eos_token_id": [2, 3]})
    if settings.get("architecture"):
        write_json(os.path.join(folder, "config.json"), {"architectures": [settings["architecture"]]})
    if settings.get("jinja"):
        with open(os.path.join(folder, "chat_template.jinja"), "w", encoding="utf-8") as f:
            f.write("{{ messages }}\n")
    if pre_name != "refuse":
        tokens, types = bpe_expected(folder, tok, pre_name, vocab_size)
        write_expected(os.path.join(outdir, name + ".gguf"), folder, "gpt2", pre_name, tokens, types, load_merges=True,
                       prefix_from_config=not settings.get("architecture"))


def train_spm(folder, **options):
    spm.SentencePieceTrainer.train(sentence_iterator=iter(TEXT.split(". ")), model_prefix=os.path.join(folder, "tokenizer"),
                                   model_type="bpe", vocab_size=500, byte_fallback=True, character_coverage=1.0,
                                   minloglevel=2, **options)
    os.remove(os.path.join(folder, "tokenizer.vocab"))
    return spm.SentencePieceProcessor(model_file=os.path.join(folder, "tokenizer.model"))


def spm_expected(folder, sp, vocab_size, phi3=False):
    """_create_vocab_sentencepiece() on the trained model; with `phi3`, Phi-3's converter's own
    reading of the added tokens (decoder entries as written, then tokenizer.json's added_tokens)."""
    tokens = ["[PAD%d]" % i for i in range(vocab_size)]
    scores = [-10000.0] * vocab_size
    types = [gguf.TokenType.UNUSED] * vocab_size
    for i in range(min(sp.vocab_size(), vocab_size)):
        kind = gguf.TokenType.NORMAL
        if sp.IsUnknown(i):
            kind = gguf.TokenType.UNKNOWN
        elif sp.IsControl(i):
            kind = gguf.TokenType.CONTROL
        elif sp.IsUnused(i):
            kind = gguf.TokenType.UNUSED
        elif sp.IsByte(i):
            kind = gguf.TokenType.BYTE
        tokens[i], scores[i], types[i] = sp.IdToPiece(i), sp.GetScore(i), kind
    path = os.path.join(folder, "added_tokens.json")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            for text, i in json.load(f).items():
                if i < vocab_size:
                    tokens[i], scores[i], types[i] = text, -1000.0, gguf.TokenType.USER_DEFINED
    with open(os.path.join(folder, "tokenizer_config.json"), encoding="utf-8") as f:
        decoder = json.load(f).get("added_tokens_decoder", {})
    if phi3:
        path = os.path.join(folder, "tokenizer.json")
        listed = [(int(k), e) for k, e in decoder.items()]
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                listed += [(e["id"], e) for e in json.load(f).get("added_tokens", [])]
        for i, entry in listed:
            if i < vocab_size:
                tokens[i], scores[i] = entry["content"], -1000.0
                types[i] = gguf.TokenType.CONTROL if entry.get("special") else gguf.TokenType.USER_DEFINED
        return tokens, scores, types
    for key, entry in decoder.items():
        i, text = int(key), entry["content"]
        if i >= vocab_size:
            continue
        if entry.get("special") or looks_special(text):
            types[i] = gguf.TokenType.CONTROL
        else:
            text = text.replace(SPM_SPACE, " ")
            types[i] = gguf.TokenType.USER_DEFINED
        tokens[i], scores[i] = text, -1000.0
    return tokens, scores, types


def make_gemma_spm(outdir):
    folder = os.path.join(outdir, "gemma_spm")
    os.makedirs(folder, exist_ok=True)
    sp = train_spm(folder, pad_id=0, eos_id=1, bos_id=2, unk_id=3, pad_piece="<pad>", eos_piece="<eos>",
                   bos_piece="<bos>", unk_piece="<unk>", add_dummy_prefix=False,
                   user_defined_symbols=["<start_of_turn>", "<end_of_turn>"], control_symbols=["<mask>"])
    specials = {0: "<pad>", 1: "<eos>", 2: "<bos>", 3: "<unk>", 4: "<mask>",
                sp.PieceToId("<start_of_turn>"): "<start_of_turn>", sp.PieceToId("<end_of_turn>"): "<end_of_turn>"}
    decoder = {str(i): {"content": t, "lstrip": False, "normalized": False, "rstrip": False, "single_word": False,
                        "special": True} for i, t in specials.items()}
    decoder[str(sp.PieceToId("<start_of_turn>"))]["special"] = False  # user-defined, stays so
    write_json(os.path.join(folder, "tokenizer_config.json"), {
        "add_bos_token": True, "add_eos_token": False, "bos_token": "<bos>", "eos_token": "<eos>",
        "pad_token": "<pad>", "unk_token": "<unk>", "added_tokens_decoder": decoder,
        "chat_template": "{{ bos_token }}<start_of_turn>{{ messages }}<end_of_turn>"})
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for i, t in specials.items()]
    write_json(os.path.join(folder, "tokenizer.json"), {"version": "1.0", "added_tokens": added, "post_processor": {
        "type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}},
                                                 {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": "<bos>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "<bos>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<bos>": {"id": "<bos>", "ids": [2], "tokens": ["<bos>"]}}}})
    vocab_size = sp.vocab_size() + 4
    write_json(os.path.join(folder, "config.json"), {"architectures": ["Gemma3ForCausalLM"], "vocab_size": vocab_size})
    tokens, scores, types = spm_expected(folder, sp, vocab_size)
    write_expected(os.path.join(outdir, "gemma_spm.gguf"), folder, "llama", "default", tokens, types, scores,
                   n_vocab=len(tokens), prefix_from_config=False, space_prefix_off=True)


def make_phi3_spm(outdir):
    folder = os.path.join(outdir, "phi3_spm")
    os.makedirs(folder, exist_ok=True)
    sp = train_spm(folder, unk_id=0, bos_id=1, eos_id=2, pad_id=-1)
    n = sp.vocab_size()
    write_json(os.path.join(folder, "added_tokens.json"), {"<|user|>": n, "<|end|>": n + 1, "<|assistant|>": n + 2})
    write_json(os.path.join(folder, "tokenizer_config.json"), {
        "add_bos_token": True, "add_eos_token": False, "bos_token": {"content": "<s>", "special": True},
        "eos_token": "</s>", "unk_token": "<unk>", "added_tokens_decoder": {
            str(n + 1): {"content": "<|end|>", "special": True},
            str(n + 9): {"content": "<|past_the_end|>", "special": True}}})
    write_json(os.path.join(folder, "config.json"), {"architectures": ["Phi3ForCausalLM"], "vocab_size": n + 8,
                                                     "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": n + 1})
    write_json(os.path.join(folder, "tokenizer.json"), {"version": "1.0", "added_tokens": [
        {"id": 0, "content": "<unk>", "special": True}, {"id": 1, "content": "<s>", "special": True},
        {"id": 2, "content": "</s>", "special": False}, {"id": n + 2, "content": "<|assistant|>", "special": True},
        {"id": n + 3, "content": "<|placeholder" + SPM_SPACE + "1|>", "special": False}]})
    tokens, scores, types = spm_expected(folder, sp, n + 8, phi3=True)
    write_expected(os.path.join(outdir, "phi3_spm.gguf"), folder, "llama", "default", tokens, types, scores,
                   n_vocab=len(tokens), prefix_from_config=False)


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    logging.disable(logging.WARNING)  # gguf-py reports what it skips; the expected files say it
    outdir = argv[1]
    os.makedirs(outdir, exist_ok=True)
    lines = []
    for name, (make_pre, pre_name, settings) in BPE_FAMILIES.items():
        make_bpe(outdir, name, make_pre, pre_name, settings)
        lines.append("%s %s" % (name, pre_name))
    make_gemma_spm(outdir)
    make_phi3_spm(outdir)
    lines += ["gemma_spm default", "phi3_spm default"]
    with open(os.path.join(outdir, "families.txt"), "w") as f:
        f.write("".join(line + "\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
