/* tensor_transform.c - what convert_hf_to_gguf.py does to tensor values besides renaming them, and
 * its inverse: the Llama-family regrouping of query/key rows (Hugging Face stores each head's
 * rotary pairs as two halves, ggml interleaves them) and Gemma's norm weights stored as 1 + w. */
#include "convert_internal.h"

#include <string.h>

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

tensor_transform tensor_transform_for(const hf_family *family, const hf_heads *heads,
                                      const char *gguf_name)
{
    tensor_transform t = {0};
    if (family->flags & FAMILY_PERMUTE_QK) {
        if (ends_with(gguf_name, ".attn_q.weight") || ends_with(gguf_name, ".attn_q.bias"))
            t.permute_heads = heads->n_head;
        if (ends_with(gguf_name, ".attn_k.weight") || ends_with(gguf_name, ".attn_k.bias"))
            t.permute_heads = heads->n_head_kv ? heads->n_head_kv : heads->n_head;
    }
    /* Every Hugging Face name ending in "norm.weight" maps to a GGUF name ending the same way. */
    t.norm_plus_one = (family->flags & FAMILY_NORM_PLUS_ONE) && ends_with(gguf_name, "norm.weight");
    return t;
}

/* Rows of head h: HF order [half j][pair i], GGUF order [pair i][half j]. */
static void permute_rows(const float *src, float *dst, uint64_t n_heads, uint64_t head_rows,
                         uint64_t ncols, bool to_gguf)
{
    uint64_t half = head_rows / 2;
    for (uint64_t h = 0; h < n_heads; h++)
        for (uint64_t i = 0; i < half; i++)
            for (uint64_t j = 0; j < 2; j++) {
                uint64_t hf_row = h * head_rows + j * half + i;
                uint64_t gguf_row = h * head_rows + 2 * i + j;
                uint64_t from = to_gguf ? hf_row : gguf_row, to = to_gguf ? gguf_row : hf_row;
                memcpy(dst + to * ncols, src + from * ncols, ncols * sizeof *dst);
            }
}

ggtk_status tensor_transform_check(const tensor_transform *t, uint64_t nrows, const char *name,
                                   ggtk_error *err)
{
    if (t->permute_heads && nrows % (2 * t->permute_heads) != 0)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "tensor '%s': %llu rows do not split into %llu heads of "
                              "rotary pairs (check num_attention_heads/num_key_value_heads)",
                              name, (unsigned long long)nrows,
                              (unsigned long long)t->permute_heads);
    return GGTK_OK;
}

ggtk_status tensor_transform_apply(const tensor_transform *t, bool to_gguf, float *data,
                                   float *scratch, uint64_t nrows, uint64_t ncols,
                                   const char *name, ggtk_error *err)
{
    ggtk_status status = tensor_transform_check(t, nrows, name, err);
    if (status != GGTK_OK)
        return status;
    if (t->permute_heads) {
        permute_rows(data, scratch, t->permute_heads, nrows / t->permute_heads, ncols, to_gguf);
        memcpy(data, scratch, nrows * ncols * sizeof *data);
    }
    if (t->norm_plus_one)
        for (uint64_t i = 0; i < nrows * ncols; i++)
            data[i] = to_gguf ? data[i] + 1.0f : data[i] - 1.0f;
    return GGTK_OK;
}
