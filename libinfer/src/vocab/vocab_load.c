/* vocab_load.c - building an inf_vocab from a GGUF file's tokenizer.* metadata: the token
 * table, the special tokens and flags (with llama.cpp's defaults), and the lookup tables the
 * tokenizers use. Every array length and id from the file is checked before use. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unicode.h"
#include "vocab_internal.h"

#define KEY_MODEL "tokenizer.ggml.model"
#define KEY_PRE "tokenizer.ggml.pre"
#define KEY_TOKENS "tokenizer.ggml.tokens"
#define KEY_SCORES "tokenizer.ggml.scores"
#define KEY_TYPES "tokenizer.ggml.token_type"
#define KEY_MERGES "tokenizer.ggml.merges"

/* Texts that mark the end of a turn: such tokens end generation and count as CONTROL tokens
 * whatever their stored type says (llama.cpp's list). */
static const char *const end_of_generation_texts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\xef\xbd\x9c" "end\xe2\x96\x81" "of\xe2\x96\x81" "sentence\xef\xbd\x9c>", "[e~[",
};

typedef struct loader {
    const ggtk_file *file;
    inf_vocab *v;
    ggtk_error *err;
} loader;

static bool fail(loader *ld, ggtk_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Fill the caller's error with `status` and "<file>: <message>"; always returns false. */
static bool fail(loader *ld, ggtk_status status, const char *fmt, ...)
{
    char message[sizeof ld->err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    ggtk_error_set(ld->err, status, GGTK_NO_OFFSET, "%s: %s", ggtk_path(ld->file), message);
    return false;
}

static bool out_of_memory(loader *ld) { return fail(ld, GGTK_ERR_NOMEM, "out of memory while loading the vocabulary"); }

/* The array under `key` with elements of `type`; *arr = NULL when absent and !required. */
static bool get_array(loader *ld, const char *key, ggtk_value_type type, bool required, const ggtk_array **arr)
{
    *arr = NULL;
    ggtk_status st = ggtk_get_array(ld->file, key, arr);
    if (st == GGTK_ERR_NOT_FOUND && !required) {
        return true;
    }
    if (st == GGTK_ERR_NOT_FOUND) {
        return fail(ld, GGTK_ERR_NOT_FOUND, "%s: missing", key);
    }
    if (st != GGTK_OK || (*arr)->elem_type != type) {
        return fail(ld, GGTK_ERR_TYPE, "%s: expected an array of %s", key, ggtk_value_type_name(type));
    }
    return true;
}

static bool load_model_type(loader *ld)
{
    const char *model = NULL;
    ggtk_status st = ggtk_get_string(ld->file, KEY_MODEL, &model);
    if (st == GGTK_ERR_NOT_FOUND) {
        return fail(ld, GGTK_ERR_NOT_FOUND, "%s: missing; the file has no tokenizer", KEY_MODEL);
    }
    if (st != GGTK_OK) {
        return fail(ld, GGTK_ERR_TYPE, "%s: expected a string", KEY_MODEL);
    }
    if (strcmp(model, "llama") == 0) {
        ld->v->type = INF_VOCAB_SPM;
        return true;
    }
    if (strcmp(model, "gpt2") == 0) {
        ld->v->type = INF_VOCAB_BPE;
        return true;
    }
    return fail(ld, GGTK_ERR_UNSUPPORTED, "%s: unsupported tokenizer '%s' (supported: llama, gpt2)", KEY_MODEL, model);
}

static bool load_pre_tokenizer(loader *ld)
{
    if (ld->v->type != INF_VOCAB_BPE) {
        return true;
    }
    const char *pre = "default"; /* ggtk_get_string() leaves it alone when the key is absent */
    ggtk_status st = ggtk_get_string(ld->file, KEY_PRE, &pre);
    if (st != GGTK_OK && st != GGTK_ERR_NOT_FOUND) {
        return fail(ld, GGTK_ERR_TYPE, "%s: expected a string", KEY_PRE);
    }
    const inf_pretokenizer *def = inf_pretokenizer_find(pre);
    if (!def) {
        return fail(ld, GGTK_ERR_UNSUPPORTED, "%s: unsupported pre-tokenizer '%s'", KEY_PRE, pre);
    }
    const char *why;
    if (!inf_pre_program_init(&ld->v->pre, def, &why)) {
        return fail(ld, why ? GGTK_ERR_UNSUPPORTED : GGTK_ERR_NOMEM, "%s: pre-tokenizer '%s': %s", KEY_PRE, pre, why ? why : "out of memory");
    }
    snprintf(ld->v->pre_name, sizeof ld->v->pre_name, "%s", pre);
    return true;
}

/* Token texts into one arena; an empty text becomes "[EMPTY_<id>]" as in llama.cpp, so that
 * every token has a distinct, non-empty text. */
static bool load_tokens(loader *ld)
{
    const ggtk_array *arr;
    if (!get_array(ld, KEY_TOKENS, GGTK_VALUE_STRING, true, &arr)) {
        return false;
    }
    if (arr->count == 0 || arr->count > INT32_MAX - 1) {
        return fail(ld, GGTK_ERR_INVALID, "%s: %llu tokens; expected 1 to %d", KEY_TOKENS, (unsigned long long)arr->count,
                    INT32_MAX - 1);
    }
    inf_vocab *v = ld->v;
    const ggtk_string *texts = arr->data;
    v->n_tokens = (int32_t)arr->count;
    uint64_t total = 0;
    for (int32_t i = 0; i < v->n_tokens; i++) {
        total += (texts[i].len ? texts[i].len : 24) + 1; /* string lengths are bounded by the file */
    }
    v->text_offsets = malloc(((size_t)v->n_tokens + 1) * sizeof *v->text_offsets);
    v->text_arena = total < SIZE_MAX ? malloc((size_t)total) : NULL;
    if (!v->text_offsets || !v->text_arena) {
        return out_of_memory(ld);
    }
    uint64_t pos = 0;
    for (int32_t i = 0; i < v->n_tokens; i++) {
        v->text_offsets[i] = pos;
        if (texts[i].len) {
            memcpy(v->text_arena + pos, texts[i].data, (size_t)texts[i].len);
            pos += texts[i].len;
        } else {
            pos += (uint64_t)sprintf(v->text_arena + pos, "[EMPTY_%d]", (int)i);
        }
        v->text_arena[pos++] = '\0';
    }
    v->text_offsets[v->n_tokens] = pos;
    return true;
}

static bool load_scores(loader *ld)
{
    inf_vocab *v = ld->v;
    const ggtk_array *arr;
    v->scores = calloc((size_t)v->n_tokens, sizeof *v->scores);
    if (!v->scores) {
        return out_of_memory(ld);
    }
    if (!get_array(ld, KEY_SCORES, GGTK_VALUE_FLOAT32, false, &arr)) {
        return false;
    }
    if (!arr) {
        return true;
    }
    if (arr->count != (uint64_t)v->n_tokens) {
        return fail(ld, GGTK_ERR_INVALID, "%s: %llu scores for %d tokens", KEY_SCORES, (unsigned long long)arr->count, (int)v->n_tokens);
    }
    memcpy(v->scores, arr->data, (size_t)v->n_tokens * sizeof(float));
    return true;
}

/* Element i of an integer array of any integer element type, as int64. */
static bool array_int(const ggtk_array *arr, uint64_t i, int64_t *out)
{
    const unsigned char *p = (const unsigned char *)arr->data + i * ggtk_value_type_size(arr->elem_type);
    switch (arr->elem_type) {
    case GGTK_VALUE_INT8: *out = *(const int8_t *)p; return true;
    case GGTK_VALUE_UINT8: *out = *(const uint8_t *)p; return true;
    case GGTK_VALUE_INT16: { int16_t x; memcpy(&x, p, 2); *out = x; return true; }
    case GGTK_VALUE_UINT16: { uint16_t x; memcpy(&x, p, 2); *out = x; return true; }
    case GGTK_VALUE_INT32: { int32_t x; memcpy(&x, p, 4); *out = x; return true; }
    case GGTK_VALUE_UINT32: { uint32_t x; memcpy(&x, p, 4); *out = x; return true; }
    case GGTK_VALUE_INT64: { int64_t x; memcpy(&x, p, 8); *out = x; return true; }
    case GGTK_VALUE_UINT64: { uint64_t x; memcpy(&x, p, 8); *out = x > INT64_MAX ? -1 : (int64_t)x; return true; }
    default: return false;
    }
}

static bool load_types(loader *ld)
{
    inf_vocab *v = ld->v;
    v->types = malloc((size_t)v->n_tokens);
    v->is_eog = calloc((size_t)v->n_tokens, 1);
    if (!v->types || !v->is_eog) {
        return out_of_memory(ld);
    }
    memset(v->types, INF_TOKEN_NORMAL, (size_t)v->n_tokens);
    const ggtk_array *arr = NULL;
    if (ggtk_get_array(ld->file, KEY_TYPES, &arr) == GGTK_ERR_NOT_FOUND) {
        return true;
    }
    if (!arr || arr->elem_type == GGTK_VALUE_STRING || ggtk_value_type_size(arr->elem_type) == 0 ||
        arr->elem_type == GGTK_VALUE_FLOAT32 || arr->elem_type == GGTK_VALUE_FLOAT64 ||
        arr->elem_type == GGTK_VALUE_BOOL) {
        return fail(ld, GGTK_ERR_TYPE, "%s: expected an array of integers", KEY_TYPES);
    }
    if (arr->count != (uint64_t)v->n_tokens) {
        return fail(ld, GGTK_ERR_INVALID, "%s: %llu types for %d tokens", KEY_TYPES, (unsigned long long)arr->count, (int)v->n_tokens);
    }
    for (int32_t i = 0; i < v->n_tokens; i++) {
        int64_t type = -1;
        array_int(arr, (uint64_t)i, &type);
        if (type < INF_TOKEN_UNDEFINED || type > INF_TOKEN_BYTE) {
            return fail(ld, GGTK_ERR_INVALID, "%s[%d]: token type %lld; expected 0..6", KEY_TYPES, (int)i, (long long)type);
        }
        v->types[i] = (uint8_t)type;
    }
    return true;
}

/* A special token id from `key` into *id (left alone when the key is absent). */
static bool load_special_id(loader *ld, const char *key, inf_token *id)
{
    int64_t value;
    ggtk_status st = ggtk_get_int(ld->file, key, &value);
    if (st == GGTK_ERR_NOT_FOUND) {
        return true;
    }
    if (st != GGTK_OK) {
        return fail(ld, GGTK_ERR_TYPE, "%s: expected an integer", key);
    }
    if (value < 0 || value >= ld->v->n_tokens) {
        return fail(ld, GGTK_ERR_INVALID, "%s: token id %lld is outside the vocabulary of %d tokens", key, (long long)value,
                    (int)ld->v->n_tokens);
    }
    *id = (inf_token)value;
    return true;
}

static bool load_bool(loader *ld, const char *key, bool *flag)
{
    ggtk_status st = ggtk_get_bool(ld->file, key, flag);
    if (st == GGTK_OK || st == GGTK_ERR_NOT_FOUND) {
        return true;
    }
    return fail(ld, GGTK_ERR_TYPE, "%s: expected a bool", key);
}

/* Default special tokens are llama.cpp's; one outside the vocabulary is dropped. */
static inf_token default_id(const inf_vocab *v, inf_token id) { return id < v->n_tokens ? id : INF_TOKEN_NONE; }

static bool load_specials(loader *ld)
{
    inf_vocab *v = ld->v;
    bool spm = v->type == INF_VOCAB_SPM;
    v->bos = (!spm && v->pre.def->no_bos) ? INF_TOKEN_NONE : default_id(v, spm ? 1 : 11);
    v->eos = default_id(v, spm ? 2 : 11);
    v->unk = spm ? default_id(v, 0) : INF_TOKEN_NONE;
    v->pad = v->sep = INF_TOKEN_NONE;
    v->add_bos = spm || v->pre.def->add_bos;
    v->add_eos = false;
    v->add_space_prefix = spm;
    inf_token eot = INF_TOKEN_NONE, eom = INF_TOKEN_NONE;
    if (!load_special_id(ld, "tokenizer.ggml.bos_token_id", &v->bos) ||
        !load_special_id(ld, "tokenizer.ggml.eos_token_id", &v->eos) ||
        !load_special_id(ld, "tokenizer.ggml.unknown_token_id", &v->unk) ||
        !load_special_id(ld, "tokenizer.ggml.padding_token_id", &v->pad) ||
        !load_special_id(ld, "tokenizer.ggml.seperator_token_id", &v->sep) ||
        !load_special_id(ld, "tokenizer.ggml.eot_token_id", &eot) ||
        !load_special_id(ld, "tokenizer.ggml.eom_token_id", &eom) ||
        !load_bool(ld, "tokenizer.ggml.add_bos_token", &v->add_bos) ||
        !load_bool(ld, "tokenizer.ggml.add_eos_token", &v->add_eos) ||
        !load_bool(ld, "tokenizer.ggml.add_space_prefix", &v->add_space_prefix)) {
        return false;
    }
    inf_token ends[] = {v->eos, eot, eom};
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        if (ends[i] != INF_TOKEN_NONE) {
            v->is_eog[ends[i]] = 1;
        }
    }
    return true;
}

static bool build_text_map(loader *ld)
{
    inf_vocab *v = ld->v;
    if (!inf_text_map_init(&v->text_to_id, (size_t)v->n_tokens, v->text_arena, v->text_offsets)) {
        return out_of_memory(ld);
    }
    for (int32_t i = 0; i < v->n_tokens; i++) {
        inf_text_map_put(&v->text_to_id, i);
    }
    for (size_t i = 0; i < sizeof end_of_generation_texts / sizeof end_of_generation_texts[0]; i++) {
        const char *text = end_of_generation_texts[i];
        inf_token id = inf_vocab_find(v, text, strlen(text));
        if (id != INF_TOKEN_NONE) {
            v->is_eog[id] = 1;
            v->types[id] = INF_TOKEN_CONTROL;
        }
    }
    return true;
}

/* The value of a byte token's text "<0xXX>" (upper- or lower-case hex), or -1 when malformed. */
static int byte_token_value(const char *text, size_t len)
{
    if (len != 6 || memcmp(text, "<0x", 3) != 0 || text[5] != '>') {
        return -1;
    }
    int value = 0;
    for (int i = 3; i < 5; i++) {
        char c = text[i];
        int digit = (c >= '0' && c <= '9') ? c - '0' : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                  : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
        if (digit < 0) {
            return -1;
        }
        value = value * 16 + digit;
    }
    return value;
}

/* The token for each raw byte: BPE uses the byte's character in GPT-2's alphabet; SPM uses the
 * <0xXX> token, or else a token whose text is the byte itself. */
static bool build_byte_tokens(loader *ld)
{
    inf_vocab *v = ld->v;
    for (int32_t i = 0; i < v->n_tokens; i++) {
        size_t len;
        const char *text = vocab_text(v, i, &len);
        if (v->types[i] == INF_TOKEN_BYTE && byte_token_value(text, len) < 0) {
            return fail(ld, GGTK_ERR_INVALID, "%s[%d]: byte token '%s' is not of the form <0xXX>", KEY_TOKENS, (int)i, text);
        }
    }
    for (int b = 0; b < 256; b++) {
        char buf[8];
        size_t len;
        if (v->type == INF_VOCAB_BPE) {
            len = inf_utf8_encode(inf_byte_to_code_point((unsigned char)b), buf);
            v->byte_token[b] = inf_vocab_find(v, buf, len);
            continue;
        }
        len = (size_t)snprintf(buf, sizeof buf, "<0x%02X>", b);
        v->byte_token[b] = inf_vocab_find(v, buf, len);
        if (v->byte_token[b] == INF_TOKEN_NONE) {
            buf[0] = (char)b;
            v->byte_token[b] = inf_vocab_find(v, buf, 1);
        }
    }
    return true;
}

/* Record merge `rank`, "A B", when A, B and AB are all tokens: one that is not can never apply
 * (merging starts from tokens and yields tokens), so it is left out. `joined` is scratch room for
 * AB, grown as needed. False (the error reported) for a merge without a space or out of memory. */
static bool add_merge(loader *ld, uint64_t rank, const ggtk_string *merge, char **joined,
                      size_t *joined_cap)
{
    inf_vocab *v = ld->v;
    const char *text = merge->data;
    size_t len = (size_t)merge->len;
    const char *space = len > 1 ? memchr(text + 1, ' ', len - 1) : NULL;
    if (!space) {
        return fail(ld, GGTK_ERR_INVALID, "%s[%llu]: '%s' is not two tokens separated by a space", KEY_MERGES,
                    (unsigned long long)rank, text);
    }
    size_t left_len = (size_t)(space - text), right_len = len - left_len - 1;
    if (left_len + right_len > *joined_cap) {
        size_t cap = 2 * (left_len + right_len);
        char *grown = realloc(*joined, cap);
        if (!grown) {
            return out_of_memory(ld);
        }
        *joined = grown;
        *joined_cap = cap;
    }
    memcpy(*joined, text, left_len);
    memcpy(*joined + left_len, space + 1, right_len);
    inf_token left = inf_vocab_find(v, text, left_len);
    inf_token right = inf_vocab_find(v, space + 1, right_len);
    inf_token merged = inf_vocab_find(v, *joined, left_len + right_len);
    if (left != INF_TOKEN_NONE && right != INF_TOKEN_NONE && merged != INF_TOKEN_NONE) {
        inf_merge_map_put(&v->merges, left, right, (int32_t)rank, merged);
    }
    return true;
}

/* The merges of a BPE vocabulary, by rank (their order in the file). */
static bool load_merges(loader *ld)
{
    inf_vocab *v = ld->v;
    if (v->type != INF_VOCAB_BPE) {
        return true;
    }
    const ggtk_array *arr;
    if (ggtk_get_array(ld->file, KEY_MERGES, &arr) == GGTK_ERR_NOT_FOUND && v->pre.def->merges_optional) {
        return inf_merge_map_init(&v->merges, 0) || out_of_memory(ld);
    }
    if (ggtk_get_array(ld->file, KEY_MERGES, &arr) == GGTK_ERR_NOT_FOUND) {
        return fail(ld, GGTK_ERR_NOT_FOUND, "%s: missing; a gpt2 (BPE) vocabulary needs its merges", KEY_MERGES);
    }
    if (!get_array(ld, KEY_MERGES, GGTK_VALUE_STRING, true, &arr)) {
        return false;
    }
    if (arr->count > INT32_MAX) {
        return fail(ld, GGTK_ERR_UNSUPPORTED, "%s: %llu merges; at most %d supported", KEY_MERGES, (unsigned long long)arr->count, INT32_MAX);
    }
    if (!inf_merge_map_init(&v->merges, (size_t)arr->count)) {
        return out_of_memory(ld);
    }
    const ggtk_string *merges = arr->data;
    char *joined = NULL;
    size_t joined_cap = 0;
    bool ok = true;
    for (uint64_t i = 0; ok && i < arr->count; i++) {
        ok = add_merge(ld, i, &merges[i], &joined, &joined_cap);
    }
    free(joined);
    return ok;
}

inf_vocab *inf_vocab_new(const ggtk_file *file, ggtk_error *err)
{
    inf_vocab *v = calloc(1, sizeof *v);
    loader ld = {file, v, err};
    if (!v) {
        out_of_memory(&ld);
        return NULL;
    }
    bool ok = load_model_type(&ld) && load_pre_tokenizer(&ld) && load_tokens(&ld) && load_scores(&ld) &&
              load_types(&ld) && load_specials(&ld) && build_text_map(&ld) && build_byte_tokens(&ld) &&
              load_merges(&ld) && (special_matcher_build(&v->specials, v) || out_of_memory(&ld)) &&
              (vocab_build_pieces(v) || out_of_memory(&ld)) &&
              (v->type != INF_VOCAB_SPM || spm_build_pair_table(v) || out_of_memory(&ld));
    if (!ok) {
        inf_vocab_free(v);
        return NULL;
    }
    return v;
}

void inf_vocab_free(inf_vocab *v)
{
    if (!v) {
        return;
    }
    free(v->text_arena);
    free(v->text_offsets);
    free(v->scores);
    free(v->types);
    free(v->is_eog);
    free(v->piece_arena);
    free(v->piece_offsets);
    free(v->spm_pairs);
    inf_text_map_free(&v->text_to_id);
    inf_merge_map_free(&v->merges);
    inf_pre_program_free(&v->pre);
    special_matcher_free(&v->specials);
    free(v);
}
