/* tokenizer_spm.c - a SentencePiece vocabulary (tokenizer.ggml.model "llama") from tokenizer.model,
 * a serialized ModelProto read here directly: only its pieces (field 1: piece text, score, type)
 * matter, every other field is skipped by its wire type. Every length and varint is checked
 * against the bytes left, so a truncated or hostile file is refused with the offset at fault.
 * The vocabulary is then completed as _create_vocab_sentencepiece() does: added_tokens.json and
 * tokenizer_config.json's added_tokens_decoder override pieces, unlisted ids become [PAD<id>]
 * (Phi-3's converter has its own variant of the added-token rules, selected by a flag). */
#include "convert/tokenizer_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_BYTES = 2, WIRE_FIXED32 = 5 };
enum { MODEL_MAX_BYTES = 1 << 30 };

typedef struct pb_reader {
    const uint8_t *data;
    size_t pos, end;
    const char *name;
    ggtk_error *err;
} pb_reader;

static bool pb_fail(pb_reader *r, ggtk_status status, const char *what)
{
    ggtk_error_set(r->err, status, r->pos, "%s: offset %zu: %s", r->name, r->pos, what);
    return false;
}

static bool pb_varint(pb_reader *r, uint64_t *out)
{
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->pos >= r->end) {
            return pb_fail(r, GGTK_ERR_TRUNCATED, "varint runs past the end");
        }
        uint8_t byte = r->data[r->pos++];
        if (shift == 63 && byte > 1) {
            return pb_fail(r, GGTK_ERR_OVERFLOW, "varint does not fit 64 bits");
        }
        value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *out = value;
            return true;
        }
    }
    return pb_fail(r, GGTK_ERR_OVERFLOW, "varint longer than 10 bytes");
}

/* Read a field's key; for length-delimited fields also its length, checked against the bytes left. */
static bool pb_field(pb_reader *r, uint32_t *field, uint32_t *wire, uint64_t *len)
{
    uint64_t key;
    if (!pb_varint(r, &key)) {
        return false;
    }
    *field = (uint32_t)(key >> 3);
    *wire = key & 7;
    *len = 0;
    if (*wire == WIRE_BYTES) {
        if (!pb_varint(r, len)) {
            return false;
        }
        if (*len > r->end - r->pos) {
            return pb_fail(r, GGTK_ERR_TRUNCATED, "field length runs past the end of its message");
        }
    }
    return true;
}

static bool pb_skip(pb_reader *r, uint32_t wire, uint64_t len)
{
    uint64_t ignored;
    switch (wire) {
    case WIRE_VARINT: return pb_varint(r, &ignored);
    case WIRE_BYTES: r->pos += len; return true;
    case WIRE_FIXED64:
    case WIRE_FIXED32: {
        size_t n = wire == WIRE_FIXED64 ? 8 : 4;
        if (n > r->end - r->pos) {
            return pb_fail(r, GGTK_ERR_TRUNCATED, "fixed-size field runs past the end");
        }
        r->pos += n;
        return true;
    }
    default: return pb_fail(r, GGTK_ERR_INVALID, "unsupported protobuf wire type (groups are not used by SentencePiece)");
    }
}

static bool valid_text(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = s[i] ? ggtk_utf8_sequence(s + i, n - i) : 0;
        if (k == 0) {
            return false;
        }
        i += k;
    }
    return true;
}

/* One SentencePiece message, r->pos..r->end. */
static bool read_piece(pb_reader *r, char **text, float *score, int32_t *type)
{
    *score = 0.0f;
    *type = TOK_NORMAL;
    *text = NULL;
    while (r->pos < r->end) {
        uint32_t field, wire;
        uint64_t len;
        if (!pb_field(r, &field, &wire, &len)) {
            return false;
        }
        if (field == 1 && wire == WIRE_BYTES) {
            if (!valid_text(r->data + r->pos, len)) {
                return pb_fail(r, GGTK_ERR_INVALID, "piece text is not UTF-8 without NUL");
            }
            free(*text);
            if (!(*text = strndup((const char *)r->data + r->pos, len))) {
                return pb_fail(r, GGTK_ERR_NOMEM, "out of memory");
            }
            r->pos += len;
        } else if (field == 2 && wire == WIRE_FIXED32) {
            if (r->end - r->pos < 4) {
                return pb_fail(r, GGTK_ERR_TRUNCATED, "piece score runs past the end");
            }
            uint32_t bits = (uint32_t)r->data[r->pos] | (uint32_t)r->data[r->pos + 1] << 8 |
                            (uint32_t)r->data[r->pos + 2] << 16 | (uint32_t)r->data[r->pos + 3] << 24;
            memcpy(score, &bits, sizeof bits);
            r->pos += 4;
        } else if (field == 3 && wire == WIRE_VARINT) {
            uint64_t t;
            if (!pb_varint(r, &t)) {
                return false;
            }
            if (t < TOK_NORMAL || t > TOK_BYTE) {
                return pb_fail(r, GGTK_ERR_INVALID, "piece type is not 1..6");
            }
            *type = (int32_t)t;
        } else if (!pb_skip(r, wire, len)) {
            return false;
        }
    }
    if (!*text) {
        return pb_fail(r, GGTK_ERR_INVALID, "piece without text");
    }
    return true;
}

/* Walk the top-level fields; with `v` NULL only count the pieces. */
static bool walk_model(pb_reader *r, conv_vocab *v, uint32_t *count)
{
    *count = 0;
    while (r->pos < r->end) {
        uint32_t field, wire;
        uint64_t len;
        if (!pb_field(r, &field, &wire, &len)) {
            return false;
        }
        if (field != 1 || wire != WIRE_BYTES) {
            if (!pb_skip(r, wire, len)) {
                return false;
            }
            continue;
        }
        if (*count == INT32_MAX) {
            return pb_fail(r, GGTK_ERR_OVERFLOW, "more than 2^31-1 pieces");
        }
        if (v) {
            pb_reader piece = {r->data, r->pos, r->pos + len, r->name, r->err};
            uint32_t i = *count;
            if (!read_piece(&piece, &v->tokens[i], &v->scores[i], &v->types[i])) {
                return false;
            }
        }
        r->pos += len;
        (*count)++;
    }
    return true;
}

bool conv_spm_parse(const uint8_t *data, size_t size, const char *name, conv_vocab *v, ggtk_error *err)
{
    pb_reader r = {data, 0, size, name, err};
    uint32_t count;
    if (!walk_model(&r, NULL, &count)) {
        return false;
    }
    if (count == 0) {
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "%s: no pieces (not a SentencePiece model)", name), false;
    }
    if (!conv_vocab_alloc(v, count, true)) {
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory for %u pieces", name, count), false;
    }
    r.pos = 0;
    if (!walk_model(&r, v, &count)) {
        conv_vocab_free(v);
        return false;
    }
    return true;
}

static bool read_file(const char *path, uint8_t **data, size_t *size, ggtk_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: %s", path, strerror(errno)), false;
    }
    *data = NULL;
    *size = 0;
    size_t cap = 0;
    bool ok = true;
    for (;;) {
        if (*size == cap) {
            cap = cap ? cap * 2 : 1 << 20;
            uint8_t *grown = cap <= MODEL_MAX_BYTES ? realloc(*data, cap) : NULL;
            if (!grown) {
                ok = false;
                ggtk_error_set(err, cap > MODEL_MAX_BYTES ? GGTK_ERR_OVERFLOW : GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                               "%s: larger than %d MiB or out of memory", path, MODEL_MAX_BYTES >> 20);
                break;
            }
            *data = grown;
        }
        size_t n = fread(*data + *size, 1, cap - *size, f);
        *size += n;
        if (n == 0) {
            if (ferror(f)) {
                ok = false;
                ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: read error", path);
            }
            break;
        }
    }
    fclose(f);
    if (!ok) {
        free(*data);
        *data = NULL;
    }
    return ok;
}

/* Move the pieces into a vocabulary of `n` ids ([PAD] filled later); pieces past `n` are dropped. */
static bool place_pieces(conv_vocab *pieces, uint32_t n, conv_vocab *v)
{
    if (!conv_vocab_alloc(v, n, true)) {
        return false;
    }
    for (uint32_t i = 0; i < pieces->n_tokens && i < n; i++) {
        v->tokens[i] = pieces->tokens[i];
        pieces->tokens[i] = NULL;
        v->scores[i] = pieces->scores[i];
        /* the reference asks unknown/control/unused/byte; user-defined pieces stay NORMAL */
        v->types[i] = pieces->types[i] == TOK_USER_DEFINED ? TOK_NORMAL : pieces->types[i];
    }
    return true;
}

/* Token `id` becomes an added token: CONTROL or USER_DEFINED, score -1000. With `normalize`,
 * user-defined tokens are stored pre-normalized (the visible space as a space). */
static bool override_token(conv_vocab *v, int64_t id, const char *text, bool control, bool normalize, ggtk_error *err)
{
    if (id < 0 || (uint64_t)id >= v->n_tokens) {
        return true; /* the reference ignores ids past the vocabulary */
    }
    char *copy = control || !normalize ? strdup(text) : conv_replace_all(text, CONV_SPM_SPACE, " ");
    if (!copy) {
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory"), false;
    }
    free(v->tokens[id]);
    v->tokens[id] = copy;
    v->scores[id] = -1000.0f;
    v->types[id] = control ? TOK_CONTROL : TOK_USER_DEFINED;
    return true;
}

static bool apply_added_tokens_json(const json_t *added, conv_vocab *v, ggtk_error *err)
{
    const char *text;
    const json_t *id;
    json_object_foreach((json_t *)added, text, id) {
        if (!json_is_integer(id)) {
            return ggtk_error_set(err, GGTK_ERR_TYPE, GGTK_NO_OFFSET, "added_tokens.json: the id of a token is not an integer"), false;
        }
        /* added_tokens.json's tokens are user-defined as they are, without normalizing spaces */
        int64_t i = json_integer_value(id);
        if (i >= 0 && (uint64_t)i < v->n_tokens) {
            char *copy = strdup(text);
            if (!copy) {
                return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory"), false;
            }
            free(v->tokens[i]);
            v->tokens[i] = copy;
            v->scores[i] = -1000.0f;
            v->types[i] = TOK_USER_DEFINED;
        }
    }
    return true;
}

/* tokenizer_config.json's added_tokens_decoder; `phi3`: types as written, no normalizing. */
static bool apply_added_tokens_decoder(const json_t *decoder, bool phi3, conv_vocab *v, ggtk_error *err)
{
    const char *key;
    const json_t *entry;
    json_object_foreach((json_t *)decoder, key, entry) {
        char *end;
        errno = 0;
        long long id = strtoll(key, &end, 10);
        const char *content = json_string_value(json_object_get(entry, "content"));
        if (*key == '\0' || *end != '\0' || errno || id < 0 || !content) {
            ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                           "tokenizer_config.json: added_tokens_decoder entry \"%.40s\" needs a non-negative id and a string content", key);
            return false;
        }
        bool special = json_is_true(json_object_get(entry, "special"));
        if (!override_token(v, id, content, special || (!phi3 && conv_token_looks_special(content)), !phi3, err)) {
            return false;
        }
    }
    return true;
}

/* tokenizer.json's added_tokens, which Phi-3's converter also reads. */
static bool apply_tokenizer_json_added(const json_t *tokenizer_json, conv_vocab *v, ggtk_error *err)
{
    size_t i;
    const json_t *entry;
    json_array_foreach(json_object_get(tokenizer_json, "added_tokens"), i, entry) {
        const json_t *id = json_object_get(entry, "id");
        const char *content = json_string_value(json_object_get(entry, "content"));
        if (!json_is_integer(id) || !content) {
            ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                           "tokenizer.json: added_tokens[%zu] lacks an integer \"id\" or a string \"content\"", i);
            return false;
        }
        if (!override_token(v, json_integer_value(id), content, json_is_true(json_object_get(entry, "special")), false, err)) {
            return false;
        }
    }
    return true;
}

bool conv_spm_from_model_file(const char *model_path, const json_t *tokenizer_config, const json_t *added_tokens_json,
                              const json_t *tokenizer_json, bool phi3, uint64_t vocab_size, conv_vocab *v,
                              ggtk_error *err)
{
    uint8_t *data;
    size_t size;
    if (!read_file(model_path, &data, &size, err)) {
        return false;
    }
    conv_vocab pieces;
    bool ok = conv_spm_parse(data, size, model_path, &pieces, err);
    free(data);
    if (!ok) {
        return false;
    }
    uint64_t n = vocab_size ? vocab_size : pieces.n_tokens;
    if (n > INT32_MAX) {
        conv_vocab_free(&pieces);
        return ggtk_error_set(err, GGTK_ERR_OVERFLOW, GGTK_NO_OFFSET, "config.json: vocab_size %llu is larger than 2^31-1",
                              (unsigned long long)n), false;
    }
    ok = place_pieces(&pieces, (uint32_t)n, v);
    conv_vocab_free(&pieces);
    if (!ok) {
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory"), false;
    }
    const json_t *decoder = json_object_get(tokenizer_config, "added_tokens_decoder");
    ok = (!added_tokens_json || apply_added_tokens_json(added_tokens_json, v, err)) &&
         (!json_is_object(decoder) || apply_added_tokens_decoder(decoder, phi3, v, err)) &&
         (!phi3 || apply_tokenizer_json_added(tokenizer_json, v, err));
    if (ok && !conv_vocab_fill_pads(v, -10000.0f)) {
        ok = false;
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    }
    if (!ok) {
        conv_vocab_free(v);
    }
    return ok;
}
