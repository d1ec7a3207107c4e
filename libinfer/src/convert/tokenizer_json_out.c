/* tokenizer_json_out.c - tokenizer.json from a GGUF vocabulary, in the layout PyPI `tokenizers`
 * writes: a BPE model holding every token (except the [PAD<id>] placeholders of ids the original
 * files did not define), added_tokens for the control, user-defined and unknown tokens, and the
 * pipeline of the vocabulary's family: for byte-level BPE the pre-tokenizer of tokenizer.ggml.pre
 * and ByteLevel decoding; for SentencePiece the Gemma kind (spaces as U+2581, byte fallback, no
 * pre-tokenizer, merges ranked by score). */
#include "convert/tokenizer_export.h"

#include <stdio.h>
#include <string.h>

#include "convert/tokenizer_internal.h"
#include "convert/tokenizer_pre_table.h"

static bool is_placeholder(const gguf_tokenizer *t, uint64_t id)
{
    char name[32];
    int n = snprintf(name, sizeof name, "[PAD%llu]", (unsigned long long)id);
    return export_token_type(t, id) == TOK_UNUSED && t->tokens[id].len == (uint64_t)n &&
           memcmp(t->tokens[id].data, name, (size_t)n) == 0;
}

/* text -> id for every token but placeholders; a text seen twice keeps its first id. */
static json_t *vocab_object(const gguf_tokenizer *t, ggtk_error *err)
{
    json_t *vocab = json_object();
    for (uint64_t id = 0; vocab && id < t->n_tokens; id++) {
        if (is_placeholder(t, id)) {
            continue;
        }
        json_t *text = export_token_string(t, id, err);
        if (!text) {
            json_decref(vocab);
            return NULL;
        }
        if (!json_object_get(vocab, json_string_value(text))) {
            json_object_set_new(vocab, json_string_value(text), json_integer((json_int_t)id));
        }
        json_decref(text);
    }
    return vocab;
}

static json_t *added_tokens(const gguf_tokenizer *t, ggtk_error *err)
{
    json_t *list = json_array();
    for (uint64_t id = 0; list && id < t->n_tokens; id++) {
        bool special;
        if (!export_token_is_added(t, id, &special)) {
            continue;
        }
        json_t *text = export_token_string(t, id, err);
        if (!text) {
            json_decref(list);
            return NULL;
        }
        json_array_append_new(list, json_pack("{s:I, s:o, s:b, s:b, s:b, s:b, s:b}", "id", (json_int_t)id, "content", text,
                                              "single_word", 0, "lstrip", 0, "rstrip", 0, "normalized", 0, "special", special));
    }
    return list;
}

/* GGUF merges "a b" as tokenizers' pairs ["a", "b"]. */
static json_t *bpe_merges(const gguf_tokenizer *t, ggtk_error *err)
{
    json_t *merges = json_array();
    for (uint64_t i = 0; merges && i < t->n_merges; i++) {
        const ggtk_string *m = &t->merges[i];
        const char *space = memchr(m->data, ' ', m->len);
        json_t *pair = space ? json_pack("[s%, s%]", m->data, (size_t)(space - m->data), space + 1,
                                         (size_t)(m->len - (uint64_t)(space - m->data) - 1))
                             : NULL;
        if (!pair) {
            ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "%s: tokenizer.ggml.merges[%llu] is not \"left right\" in UTF-8",
                           t->path, (unsigned long long)i);
            json_decref(merges);
            return NULL;
        }
        json_array_append_new(merges, pair);
    }
    return merges;
}

static json_t *special_item(const gguf_tokenizer *t, int which, int type_id)
{
    const ggtk_string *s = &t->tokens[t->special[which]];
    return json_pack("{s:{s:s%, s:i}}", "SpecialToken", "id", s->data, (size_t)s->len, "type_id", type_id);
}

static json_t *sequence_item(const char *id, int type_id)
{
    return json_pack("{s:{s:s, s:i}}", "Sequence", "id", id, "type_id", type_id);
}

/* TemplateProcessing adding BOS/EOS as the flags say. The pair template has a separator item
 * between the sequences exactly when the file has add_sep_token, so that reading the template
 * back (as the reference does) gives the same set of keys. */
static json_t *template_processing(const gguf_tokenizer *t)
{
    bool bos = t->add_bos == 1 && t->special[SPECIAL_BOS] >= 0, eos = t->add_eos == 1 && t->special[SPECIAL_EOS] >= 0;
    json_t *single = json_array(), *pair = json_array(), *specials = json_object();
    if (bos) {
        json_array_append_new(single, special_item(t, SPECIAL_BOS, 0));
        json_array_append_new(pair, special_item(t, SPECIAL_BOS, 0));
    }
    json_array_append_new(single, sequence_item("A", 0));
    json_array_append_new(pair, sequence_item("A", 0));
    if (t->add_sep >= 0) {
        json_array_append_new(pair, special_item(t, bos ? SPECIAL_BOS : SPECIAL_EOS, 1));
    }
    json_array_append_new(pair, sequence_item("B", 1));
    if (eos) {
        json_array_append_new(single, special_item(t, SPECIAL_EOS, 0));
        json_array_append_new(pair, special_item(t, SPECIAL_EOS, 1));
    }
    for (int which = SPECIAL_BOS; which <= SPECIAL_EOS; which++) {
        if (which == SPECIAL_BOS ? bos : eos) {
            const ggtk_string *s = &t->tokens[t->special[which]];
            json_object_set_new(specials, s->data, json_pack("{s:s%, s:[I], s:[s%]}", "id", s->data, (size_t)s->len, "ids",
                                                             (json_int_t)t->special[which], "tokens", s->data, (size_t)s->len));
        }
    }
    return json_pack("{s:s, s:o, s:o, s:o}", "type", "TemplateProcessing", "single", single, "pair", pair,
                     "special_tokens", specials);
}

static json_t *post_processor(const gguf_tokenizer *t)
{
    if ((t->add_bos == 1 && t->special[SPECIAL_BOS] >= 0) || (t->add_eos == 1 && t->special[SPECIAL_EOS] >= 0)) {
        return template_processing(t);
    }
    return t->spm ? json_null()
                  : json_pack("{s:s, s:b, s:b, s:b}", "type", "ByteLevel", "add_prefix_space", 1, "trim_offsets", 0,
                              "use_regex", 1);
}

static json_t *spm_normalizer(const gguf_tokenizer *t)
{
    json_t *replace = json_pack("{s:s, s:{s:s}, s:s}", "type", "Replace", "pattern", "String", " ", "content", CONV_SPM_SPACE);
    if (t->add_space_prefix == 0) {
        return replace;
    }
    /* llama.cpp's SentencePiece vocabularies add the space prefix unless told not to */
    return json_pack("{s:s, s:[{s:s, s:s}, o]}", "type", "Sequence", "normalizers", "type", "Prepend", "prepend",
                     CONV_SPM_SPACE, replace);
}

static json_t *spm_decoder(const gguf_tokenizer *t)
{
    json_t *steps = json_pack("[{s:s, s:{s:s}, s:s}, {s:s}, {s:s}]", "type", "Replace", "pattern", "String", CONV_SPM_SPACE,
                              "content", " ", "type", "ByteFallback", "type", "Fuse");
    if (t->add_space_prefix != 0) {
        json_array_append_new(steps, json_pack("{s:s, s:s, s:i, s:i}", "type", "Strip", "content", " ", "start", 1, "stop", 0));
    }
    return json_pack("{s:s, s:o}", "type", "Sequence", "decoders", steps);
}

static json_t *model_object(const gguf_tokenizer *t, json_t *vocab, json_t *merges, bool ignore_merges)
{
    json_t *unk = json_null();
    if (t->spm && t->special[SPECIAL_UNK] >= 0) {
        const ggtk_string *s = &t->tokens[t->special[SPECIAL_UNK]];
        unk = json_stringn(s->data, s->len);
    }
    return json_pack("{s:s, s:n, s:o, s:n, s:n, s:b, s:b, s:b, s:o, s:o}", "type", "BPE", "dropout", "unk_token", unk,
                     "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk", t->spm, "byte_fallback", t->spm,
                     "ignore_merges", ignore_merges, "vocab", vocab, "merges", merges);
}

json_t *export_tokenizer_json(const gguf_tokenizer *t, ggtk_error *err)
{
    bool clean_spaces, ignore_merges = false;
    json_t *pre = t->spm ? json_null() : tokenizer_pre_json(t->pre, &clean_spaces, &ignore_merges);
    if (!pre) {
        ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                       "%s: tokenizer.ggml.pre \"%.40s\" has no tokenizer.json pre-tokenizer in the converter's table", t->path,
                       t->pre);
        return NULL;
    }
    json_t *vocab = vocab_object(t, err);
    json_t *merges = !vocab ? NULL : t->spm ? json_array() : bpe_merges(t, err);
    json_t *added = merges ? added_tokens(t, err) : NULL;
    if (added && t->spm && !export_spm_merges(t, vocab, merges, err)) {
        json_decref(added);
        added = NULL;
    }
    if (!added) {
        json_decref(pre);
        json_decref(vocab);
        json_decref(merges);
        return NULL;
    }
    json_t *byte_level = json_pack("{s:s, s:b, s:b, s:b}", "type", "ByteLevel", "add_prefix_space", 1, "trim_offsets", 1,
                                   "use_regex", 1);
    json_t *root = json_pack("{s:s, s:n, s:n, s:o, s:o, s:o, s:o, s:o, s:o}", "version", "1.0", "truncation", "padding",
                             "added_tokens", added, "normalizer", t->spm ? spm_normalizer(t) : json_null(), "pre_tokenizer",
                             pre, "post_processor", post_processor(t), "decoder", t->spm ? spm_decoder(t) : byte_level,
                             "model", model_object(t, vocab, merges, ignore_merges));
    if (t->spm) {
        json_decref(byte_level);
    }
    if (!root) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory building tokenizer.json", t->path);
    }
    return root;
}
