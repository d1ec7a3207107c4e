/* rules_mix.c - the mixture rules of llama-quantize's file types (facts from its
 * src/llama-quant.cpp): which tensors of a Q4_K_M (Q3_K_S, ...) file get more or fewer bits than
 * the file type's tensor type. One table: a row applies to a set of file types, a tensor category
 * and the facts it requires; the first row that applies chooses the type. */
#include "quantize_internal.h"
#include "rules.h"

#include <stdio.h>
#include <string.h>

/* Broad tensor kinds: output and token embeddings by exact name, the others by the first of
 * category_names found in the name. */
typedef enum mix_category {
    CAT_OTHER = 0,
    CAT_OUTPUT,     /* output.weight (and, for the rules, token_embd.weight when tied) */
    CAT_TOKEN_EMBD,
    CAT_ATTN_V,     /* attn_v, attn_qkv and attn_kv_b: the value projection */
    CAT_ATTN_K,
    CAT_ATTN_Q,
    CAT_ATTN_OUTPUT,
    CAT_FFN_UP,
    CAT_FFN_GATE,
    CAT_FFN_DOWN,
} mix_category;

static const struct {
    const char *substring;
    mix_category category;
} category_names[] = {
    {"attn_qkv.weight", CAT_ATTN_V},   {"attn_kv_b.weight", CAT_ATTN_V},
    {"attn_v.weight", CAT_ATTN_V},     {"attn_k.weight", CAT_ATTN_K},
    {"attn_q.weight", CAT_ATTN_Q},     {"attn_output.weight", CAT_ATTN_OUTPUT},
    {"ffn_up", CAT_FFN_UP},            {"ffn_gate", CAT_FFN_GATE},
    {"ffn_down", CAT_FFN_DOWN},
};

/* Facts about a tensor and its model that rows may require. */
enum {
    FACT_FALCON = 1 << 0,
    FACT_NOT_FALCON = 1 << 1,
    FACT_8_EXPERTS = 1 << 2,     /* n_expert == 8 */
    FACT_NOT_8_EXPERTS = 1 << 3,
    FACT_GQA_4 = 1 << 4,         /* n_head / n_head_kv >= 4 */
    FACT_ROWS_NOT_SPLIT = 1 << 5, /* rows are not a multiple of the file type's block size */
    FACT_MORE_BITS = 1 << 6,     /* use_more_bits(i, n): first or last eighth, every third between */
    FACT_FIRST_16TH = 1 << 7,    /* i < n / 16 */
    FACT_FIRST_8TH = 1 << 8,     /* i < n / 8 */
    FACT_FIRST_2 = 1 << 9,       /* i < 2 */
    FACT_FIRST_4 = 1 << 10,      /* i < 4 */
    FACT_IMATRIX = 1 << 11,      /* an importance matrix is given */
};

/* A set of file types, one bit per code (all codes are below 64). */
#define FT(name) (1ull << GGTK_FILE_TYPE_##name)
#define FT_SIMPLE (FT(Q4_0) | FT(Q4_1) | FT(Q5_0) | FT(Q5_1) | FT(Q8_0))
#define FT_K                                                                                    \
    (FT(Q2_K) | FT(Q3_K_S) | FT(Q3_K_M) | FT(Q3_K_L) | FT(Q4_K_S) | FT(Q4_K_M) | FT(Q5_K_S) |   \
     FT(Q5_K_M) | FT(Q6_K))
#define FT_LOW_BIT (FT(TQ1_0) | FT(TQ2_0) | FT(Q1_0) | FT(Q2_0))
#define FT_ALL (FT_SIMPLE | FT_K | FT_LOW_BIT)

typedef struct mix_rule {
    unsigned long long file_types;
    mix_category category;
    unsigned requires; /* FACT_* bits that must all hold */
    ggtk_tensor_type type;
    const char *why;
} mix_rule;

#define T(name) GGTK_TENSOR_##name
static const mix_rule mix_rules[] = {
    /* output.weight (or tied token embeddings) */
    {FT_ALL, CAT_OUTPUT, FACT_FALCON, T(Q8_0), "output: Falcon gets q8_0"},
    {FT_ALL, CAT_OUTPUT, FACT_ROWS_NOT_SPLIT, T(Q8_0), "output: rows not whole blocks, q8_0"},
    {FT(Q8_0), CAT_OUTPUT, 0, T(Q8_0), "output: q8_0 file keeps q8_0"},
    {FT_ALL, CAT_OUTPUT, 0, T(Q6_K), "output: q6_k"},
    /* token embeddings of their own */
    {FT(TQ1_0) | FT(TQ2_0) | FT(Q2_0), CAT_TOKEN_EMBD, 0, T(Q4_K), "token_embd: q4_k"},
    /* attn_v, counted over the attn_v-like tensors */
    {FT_ALL, CAT_ATTN_V, FACT_8_EXPERTS, T(Q8_0), "attn_v: 8 experts"},
    {FT(Q2_K), CAT_ATTN_V, FACT_GQA_4, T(Q4_K), "attn_v: n_gqa >= 4"},
    {FT(Q2_K), CAT_ATTN_V, 0, T(Q3_K), "attn_v: q2_k mix"},
    {FT(Q3_K_M), CAT_ATTN_V, FACT_FIRST_2, T(Q5_K), "attn_v: first 2"},
    {FT(Q3_K_M), CAT_ATTN_V, 0, T(Q4_K), "attn_v: q3_k_m mix"},
    {FT(Q3_K_L), CAT_ATTN_V, 0, T(Q5_K), "attn_v: q3_k_l mix"},
    {FT(Q4_K_M) | FT(Q5_K_M), CAT_ATTN_V, FACT_MORE_BITS, T(Q6_K), "attn_v: use_more_bits"},
    {FT(Q4_K_S), CAT_ATTN_V, FACT_FIRST_4, T(Q5_K), "attn_v: first 4"},
    /* attn_k */
    {FT_ALL, CAT_ATTN_K, FACT_8_EXPERTS, T(Q8_0), "attn_k: 8 experts"},
    /* ffn_down, by layer */
    {FT(Q2_K), CAT_FFN_DOWN, 0, T(Q3_K), "ffn_down: q2_k mix"},
    {FT(Q3_K_M), CAT_FFN_DOWN, FACT_FIRST_16TH, T(Q5_K), "ffn_down: first 16th of layers"},
    {FT(Q3_K_M), CAT_FFN_DOWN, FACT_NOT_FALCON, T(Q4_K), "ffn_down: q3_k_m mix"},
    {FT(Q3_K_M), CAT_FFN_DOWN, FACT_MORE_BITS, T(Q4_K), "ffn_down: use_more_bits (Falcon)"},
    {FT(Q3_K_L), CAT_FFN_DOWN, FACT_FALCON, T(Q4_K), "ffn_down: q3_k_l mix (Falcon)"},
    {FT(Q3_K_L), CAT_FFN_DOWN, 0, T(Q5_K), "ffn_down: q3_k_l mix"},
    {FT(Q4_K_M), CAT_FFN_DOWN, FACT_FALCON | FACT_FIRST_16TH, T(Q6_K),
     "ffn_down: first 16th of layers (Falcon)"},
    {FT(Q4_K_M), CAT_FFN_DOWN, FACT_FALCON | FACT_MORE_BITS, T(Q5_K),
     "ffn_down: use_more_bits (Falcon)"},
    {FT(Q4_K_M), CAT_FFN_DOWN, FACT_NOT_FALCON | FACT_MORE_BITS, T(Q6_K),
     "ffn_down: use_more_bits"},
    {FT(Q5_K_M), CAT_FFN_DOWN, FACT_MORE_BITS, T(Q6_K), "ffn_down: use_more_bits"},
    {FT(Q4_K_S), CAT_FFN_DOWN, FACT_NOT_FALCON | FACT_FIRST_8TH, T(Q5_K),
     "ffn_down: first 8th of layers"},
    {FT(Q4_0), CAT_FFN_DOWN, FACT_IMATRIX | FACT_FIRST_8TH, T(Q4_1),
     "ffn_down: first 8th of layers, imatrix"},
    {FT(Q5_0), CAT_FFN_DOWN, FACT_IMATRIX | FACT_FIRST_8TH, T(Q5_1),
     "ffn_down: first 8th of layers, imatrix"},
    /* attn_output */
    {FT(Q2_K) | FT(Q3_K_S) | FT(Q3_K_M) | FT(Q4_K_S) | FT(Q4_K_M), CAT_ATTN_OUTPUT,
     FACT_NOT_FALCON | FACT_8_EXPERTS, T(Q5_K), "attn_output: 8 experts"},
    {FT(Q2_K), CAT_ATTN_OUTPUT, FACT_NOT_FALCON | FACT_NOT_8_EXPERTS, T(Q3_K),
     "attn_output: q2_k mix"},
    {FT(Q3_K_M), CAT_ATTN_OUTPUT, FACT_NOT_FALCON | FACT_NOT_8_EXPERTS, T(Q4_K),
     "attn_output: q3_k_m mix"},
    {FT(Q3_K_L), CAT_ATTN_OUTPUT, FACT_NOT_FALCON | FACT_NOT_8_EXPERTS, T(Q5_K),
     "attn_output: q3_k_l mix"},
    {FT(Q3_K_L), CAT_ATTN_OUTPUT, FACT_FALCON, T(Q4_K), "attn_output: q3_k_l mix (Falcon)"},
};
#undef T

/* Architectures and layer counts llama.cpp classifies as 70B, whose attn_v gets Q5_K instead of
 * Q3_K/Q4_K. Llama with 80 layers is 65B instead when it has no grouped-query attention, and
 * 8x22B-like with 8 experts. */
static const struct {
    const char *arch;
    uint64_t n_layer;
    bool needs_gqa;
} models_70b[] = {
    {"llama", 80, true}, {"deci", 80, false}, {"olmo", 80, false},
    {"qwen2", 80, false}, {"jais2", 68, false},
};

/* An architecture key ("{arch}.block_count") read as an unsigned number, or `fallback`. For head
 * counts given per layer (an array), the first layer's. */
static uint64_t arch_uint(const ggtk_file *input, const char *arch, const char *key,
                          uint64_t fallback)
{
    char full[160];
    snprintf(full, sizeof full, "%s.%s", arch, key);
    uint64_t value = fallback;
    if (ggtk_get_uint(input, full, &value) == GGTK_OK)
        return value;
    const ggtk_array *array = NULL;
    if (ggtk_get_array(input, full, &array) == GGTK_OK && array->count > 0) {
        if (array->elem_type == GGTK_VALUE_UINT32)
            return ((const uint32_t *)array->data)[0];
        if (array->elem_type == GGTK_VALUE_INT32 && ((const int32_t *)array->data)[0] >= 0)
            return (uint64_t)((const int32_t *)array->data)[0];
    }
    return fallback;
}

/* The category of a name alone; tied embeddings are the caller's business. */
static mix_category name_category(const char *name)
{
    if (quantize_name_is_output(name))
        return CAT_OUTPUT;
    if (quantize_name_is_token_embd(name))
        return CAT_TOKEN_EMBD;
    for (size_t i = 0; i < sizeof category_names / sizeof category_names[0]; i++)
        if (strstr(name, category_names[i].substring))
            return category_names[i].category;
    return CAT_OTHER;
}

void quantize_model_init(quantize_model *model, const char *arch, uint64_t n_layer,
                         uint64_t n_expert, uint64_t n_head, uint64_t n_head_kv)
{
    memset(model, 0, sizeof *model);
    model->falcon = strcmp(arch, "falcon") == 0;
    model->n_layer = n_layer;
    model->n_expert = n_expert;
    model->n_gqa = n_head_kv ? n_head / n_head_kv : 0;
    for (size_t i = 0; i < sizeof models_70b / sizeof models_70b[0]; i++)
        if (strcmp(arch, models_70b[i].arch) == 0 && model->n_layer == models_70b[i].n_layer &&
            (!models_70b[i].needs_gqa || (n_head != n_head_kv && model->n_expert != 8)))
            model->is_70b = true;
}

void quantize_model_count_tensor(quantize_model *model, const char *name)
{
    model->n_attention_wv += name_category(name) == CAT_ATTN_V;
}

void quantize_model_read(quantize_model *model, const ggtk_split *parts)
{
    const ggtk_file *input = ggtk_split_part(parts, 0); /* the model's metadata */
    const char *arch = "";
    ggtk_get_string(input, "general.architecture", &arch);
    uint64_t n_head = arch_uint(input, arch, "attention.head_count", 0);
    quantize_model_init(model, arch, arch_uint(input, arch, "block_count", 0),
                        arch_uint(input, arch, "expert_count", 0), n_head,
                        arch_uint(input, arch, "attention.head_count_kv", n_head));
    for (int64_t i = 0; i < ggtk_split_tensor_count(parts); i++)
        quantize_model_count_tensor(model, ggtk_split_tensor(parts, i, NULL)->name);
}

/* llama.cpp's use_more_bits: the first and last eighth of `n`, and every third one between. */
static bool use_more_bits(int64_t i, int64_t n)
{
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

/* The facts that depend on the position `i` of `n` (attn_v counter or ffn_down layer). */
static unsigned position_facts(int64_t i, int64_t n)
{
    return (use_more_bits(i, n) ? FACT_MORE_BITS : 0) | (i < n / 16 ? FACT_FIRST_16TH : 0) |
           (i < n / 8 ? FACT_FIRST_8TH : 0) | (i < 2 ? FACT_FIRST_2 : 0) |
           (i < 4 ? FACT_FIRST_4 : 0);
}

static unsigned model_facts(const quantize_rules *rules, const ggtk_tensor_info *info)
{
    const quantize_model *m = &rules->model;
    unsigned facts = m->falcon ? FACT_FALCON : FACT_NOT_FALCON;
    facts |= m->n_expert == 8 ? FACT_8_EXPERTS : FACT_NOT_8_EXPERTS;
    facts |= m->n_gqa >= 4 ? FACT_GQA_4 : 0;
    facts |= quantize_row_fits(rules->base_type, info->ne[0]) ? 0 : FACT_ROWS_NOT_SPLIT;
    facts |= rules->has_imatrix ? FACT_IMATRIX : 0;
    return facts;
}

/* The layer of an ffn tensor: its position among the ffn_down tensors, or in MoE models (whose
 * expert tensors are not one per layer) the number in its name. */
static ggtk_status ffn_layer(const quantize_rules *rules, const char *name, int64_t *layer,
                             ggtk_error *err)
{
    *layer = rules->i_ffn_down;
    if (rules->model.n_expert <= 1)
        return GGTK_OK;
    *layer = quantize_tensor_layer(name);
    if (*layer < 0 || (uint64_t)*layer >= rules->model.n_layer)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "tensor '%s': a mixture-of-experts model needs a blk.N. layer "
                              "number below %llu in ffn tensor names",
                              name, (unsigned long long)rules->model.n_layer);
    return GGTK_OK;
}

static const mix_rule *first_rule(uint32_t file_type, mix_category category, unsigned facts)
{
    for (size_t i = 0; i < sizeof mix_rules / sizeof mix_rules[0]; i++) {
        const mix_rule *r = &mix_rules[i];
        if ((r->file_types >> file_type & 1) && r->category == category &&
            (r->requires & ~facts) == 0)
            return r;
    }
    return NULL;
}

ggtk_status quantize_mix_choose(quantize_rules *rules, const ggtk_tensor_info *info,
                                quantize_choice *choice, ggtk_error *err)
{
    mix_category category = name_category(info->name);
    if (category == CAT_TOKEN_EMBD && rules->tied_embeddings)
        category = CAT_OUTPUT; /* the same matrix serves as the output */
    unsigned facts = model_facts(rules, info);
    if (category == CAT_ATTN_V)
        facts |= position_facts(rules->i_attention_wv++, rules->model.n_attention_wv);
    if (category == CAT_FFN_DOWN || category == CAT_FFN_UP || category == CAT_FFN_GATE) {
        int64_t layer = 0;
        ggtk_status status = ffn_layer(rules, info->name, &layer, err);
        if (status != GGTK_OK)
            return status;
        if (category == CAT_FFN_DOWN) {
            facts |= position_facts(layer, (int64_t)rules->model.n_layer);
            rules->i_ffn_down++;
        }
    }
    const mix_rule *rule = first_rule(rules->options->file_type, category, facts);
    if (rule)
        *choice = (quantize_choice){rule->type,
                                    category == CAT_OUTPUT ? INF_QUANTIZE_REASON_OUTPUT_RULE
                                                           : INF_QUANTIZE_REASON_MIX_RULE,
                                    rule->why};
    if (category == CAT_ATTN_V && rules->model.is_70b &&
        (choice->type == GGTK_TENSOR_Q3_K || choice->type == GGTK_TENSOR_Q4_K))
        *choice = (quantize_choice){GGTK_TENSOR_Q5_K, INF_QUANTIZE_REASON_MIX_RULE,
                                    "attn_v: 70B model"};
    return GGTK_OK;
}
