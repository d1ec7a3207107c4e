/* tokenizer_spm_write.c - tokenizer.model for a SentencePiece vocabulary: a ModelProto with one
 * piece per token (text, score, type), a BPE trainer spec with byte fallback and an identity
 * normalizer that escapes spaces, adding the dummy prefix as tokenizer.ggml.add_space_prefix says.
 * PyPI sentencepiece loads it and tokenizes as libinfer's vocabulary does.
 * The piece types are chosen so that reading the folder back gives the file's token types:
 * tokens that tokenizer_config.json or added_tokens.json will type anyway get a type
 * SentencePiece accepts (the unknown id UNKNOWN, control tokens CONTROL, others USER_DEFINED). */
#include "convert/tokenizer_export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/tokenizer_internal.h"

/* Protobuf field numbers of sentencepiece_model.proto. */
enum {
    MODEL_PIECES = 1, MODEL_TRAINER_SPEC = 2, MODEL_NORMALIZER_SPEC = 3,
    PIECE_TEXT = 1, PIECE_SCORE = 2, PIECE_TYPE = 3,
    TRAINER_MODEL_TYPE = 3, TRAINER_VOCAB_SIZE = 4, TRAINER_BYTE_FALLBACK = 35,
    NORMALIZER_NAME = 1, NORMALIZER_ADD_DUMMY_PREFIX = 3, NORMALIZER_REMOVE_EXTRA_WHITESPACES = 4,
    NORMALIZER_ESCAPE_WHITESPACES = 5,
    MODEL_TYPE_BPE = 2,
};
enum { WIRE_VARINT = 0, WIRE_BYTES = 2, WIRE_FIXED32 = 5 };

typedef struct pb_buffer {
    uint8_t *data;
    size_t len, cap;
    bool failed;
} pb_buffer;

static void put_bytes(pb_buffer *b, const void *data, size_t n)
{
    if (b->failed) {
        return;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1 << 16;
        while (cap < b->len + n) {
            cap *= 2;
        }
        uint8_t *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, n);
    b->len += n;
}

static void put_varint(pb_buffer *b, uint64_t v)
{
    uint8_t bytes[10];
    size_t n = 0;
    do {
        bytes[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    put_bytes(b, bytes, n);
}

static void put_key(pb_buffer *b, uint32_t field, uint32_t wire)
{
    put_varint(b, (uint64_t)field << 3 | wire);
}

static void put_length_delimited(pb_buffer *b, uint32_t field, const void *data, size_t n)
{
    put_key(b, field, WIRE_BYTES);
    put_varint(b, n);
    put_bytes(b, data, n);
}

/* A piece's text: user-defined pieces are matched on the escaped text, so their spaces (which
 * the GGUF stores as spaces) are written back as U+2581. */
static void put_piece_text(pb_buffer *piece, const ggtk_string *text, int32_t type)
{
    if (type != TOK_USER_DEFINED || !memchr(text->data, ' ', text->len)) {
        put_length_delimited(piece, PIECE_TEXT, text->data, text->len);
        return;
    }
    pb_buffer escaped = {0};
    for (uint64_t i = 0; i < text->len; i++) {
        put_bytes(&escaped, text->data[i] == ' ' ? CONV_SPM_SPACE : &text->data[i], text->data[i] == ' ' ? 3 : 1);
    }
    piece->failed |= escaped.failed;
    put_length_delimited(piece, PIECE_TEXT, escaped.data, escaped.len);
    free(escaped.data);
}

static void put_piece(pb_buffer *b, const ggtk_string *text, float score, int32_t type)
{
    pb_buffer piece = {0};
    put_piece_text(&piece, text, type);
    put_key(&piece, PIECE_SCORE, WIRE_FIXED32);
    uint32_t bits;
    memcpy(&bits, &score, sizeof bits);
    uint8_t le[4] = {(uint8_t)bits, (uint8_t)(bits >> 8), (uint8_t)(bits >> 16), (uint8_t)(bits >> 24)};
    put_bytes(&piece, le, 4);
    if (type != TOK_NORMAL) {
        put_key(&piece, PIECE_TYPE, WIRE_VARINT);
        put_varint(&piece, (uint64_t)type);
    }
    b->failed |= piece.failed;
    put_length_delimited(b, MODEL_PIECES, piece.data, piece.len);
    free(piece.data);
}

static void put_bool(pb_buffer *b, uint32_t field, bool value)
{
    put_key(b, field, WIRE_VARINT);
    put_varint(b, value);
}

static void put_specs(pb_buffer *b, const gguf_tokenizer *t)
{
    pb_buffer trainer = {0}, normalizer = {0};
    put_key(&trainer, TRAINER_MODEL_TYPE, WIRE_VARINT);
    put_varint(&trainer, MODEL_TYPE_BPE);
    put_key(&trainer, TRAINER_VOCAB_SIZE, WIRE_VARINT);
    put_varint(&trainer, t->n_tokens);
    put_bool(&trainer, TRAINER_BYTE_FALLBACK, true);
    put_length_delimited(&normalizer, NORMALIZER_NAME, "identity", 8);
    put_bool(&normalizer, NORMALIZER_ADD_DUMMY_PREFIX, t->add_space_prefix != 0);
    put_bool(&normalizer, NORMALIZER_REMOVE_EXTRA_WHITESPACES, false);
    put_bool(&normalizer, NORMALIZER_ESCAPE_WHITESPACES, true);
    b->failed |= trainer.failed || normalizer.failed;
    put_length_delimited(b, MODEL_TRAINER_SPEC, trainer.data, trainer.len);
    put_length_delimited(b, MODEL_NORMALIZER_SPEC, normalizer.data, normalizer.len);
    free(trainer.data);
    free(normalizer.data);
}

static int32_t piece_type(const gguf_tokenizer *t, uint64_t id)
{
    int32_t type = export_token_type(t, id);
    if (export_spm_listed_added(t, id) == EXPORT_NOT_LISTED) {
        return type < TOK_NORMAL || type > TOK_BYTE ? TOK_NORMAL : type;
    }
    if ((int64_t)id == t->special[SPECIAL_UNK]) {
        return TOK_UNKNOWN;
    }
    return type == TOK_CONTROL ? TOK_CONTROL : TOK_USER_DEFINED;
}

bool export_spm_model(const gguf_tokenizer *t, output_set *files, const char *dir, ggtk_error *err)
{
    pb_buffer b = {0};
    for (uint64_t id = 0; id < t->n_tokens; id++) {
        put_piece(&b, &t->tokens[id], t->scores ? t->scores[id] : 0.0f, piece_type(t, id));
    }
    put_specs(&b, t);
    if (b.failed) {
        free(b.data);
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s/tokenizer.model: out of memory", dir), false;
    }
    FILE *stream = output_set_open(files, dir, "tokenizer.model", err);
    bool ok = stream && fwrite(b.data, 1, b.len, stream) == b.len;
    if (stream && !ok) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s/tokenizer.model: write failed", dir);
    }
    free(b.data);
    return ok;
}
