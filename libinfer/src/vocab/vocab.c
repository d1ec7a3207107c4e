/* vocab.c - read-only accessors of a loaded vocabulary. */
#include "vocab_internal.h"

static bool valid_id(const inf_vocab *v, inf_token id) { return id >= 0 && id < v->n_tokens; }

inf_vocab_type inf_vocab_get_type(const inf_vocab *v) { return v->type; }
const char *inf_vocab_pre_name(const inf_vocab *v) { return v->pre_name; }
int32_t inf_vocab_n_tokens(const inf_vocab *v) { return v->n_tokens; }
inf_token inf_vocab_bos(const inf_vocab *v) { return v->bos; }
inf_token inf_vocab_eos(const inf_vocab *v) { return v->eos; }
inf_token inf_vocab_unk(const inf_vocab *v) { return v->unk; }
inf_token inf_vocab_pad(const inf_vocab *v) { return v->pad; }
inf_token inf_vocab_sep(const inf_vocab *v) { return v->sep; }
bool inf_vocab_adds_bos(const inf_vocab *v) { return v->add_bos && v->bos != INF_TOKEN_NONE; }
bool inf_vocab_adds_eos(const inf_vocab *v) { return v->add_eos && v->eos != INF_TOKEN_NONE; }

bool inf_vocab_is_eog(const inf_vocab *v, inf_token id) { return valid_id(v, id) && v->is_eog[id]; }

const char *inf_vocab_token_text(const inf_vocab *v, inf_token id, size_t *len)
{
    size_t dummy;
    len = len ? len : &dummy;
    if (!valid_id(v, id)) {
        *len = 0;
        return NULL;
    }
    return vocab_text(v, id, len);
}

float inf_vocab_token_score(const inf_vocab *v, inf_token id) { return valid_id(v, id) ? v->scores[id] : 0.0f; }

inf_token_type inf_vocab_token_type(const inf_vocab *v, inf_token id)
{
    return valid_id(v, id) ? (inf_token_type)v->types[id] : INF_TOKEN_UNDEFINED;
}

inf_token inf_vocab_find(const inf_vocab *v, const char *text, size_t len)
{
    int32_t id = inf_text_map_get(&v->text_to_id, text, len);
    return id >= 0 ? id : INF_TOKEN_NONE;
}
