/* Tests of the K-mix rules of the file quantizer (rules_mix.c): SmolLM2's plan for every K mix
 * against the tensor types llama-quantize wrote (recorded below, and checked live against
 * llama-quantize when REF_BIN is set), and synthetic models for what SmolLM2 does not exercise:
 * grouped-query attention, 8 experts, 70B, Falcon, layer order, fallbacks. */
#include "file_quantizer/rules.h"
#include <ggtk/inf_quantize_file.h>
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T(name) GGTK_TENSOR_##name

/* llama-quantize's tensor types for SmolLM2-135M-Instruct (30 layers, rows of 576 and 1536,
 * n_head 9, n_head_kv 3, tied embeddings), from F32, for each K mix: token_embd, and per layer
 * attn_q, attn_k, attn_output, ffn_gate = ffn_up; attn_v and ffn_down vary by layer: the 30
 * digits pick one of two types. Norms stay F32. data_size: the bytes of all tensor data. */
typedef struct mix_golden {
    const char *mix;
    uint64_t data_size;
    ggtk_tensor_type token_embd, attn_q, attn_k, attn_output, ffn_gate_up;
    ggtk_tensor_type attn_v[2];
    const char *attn_v_layers;
    ggtk_tensor_type ffn_down[2];
    const char *ffn_down_layers;
} mix_golden;

static const mix_golden smollm2_golden[] = {
    {"Q2_K", 86416128, T(Q8_0), T(Q4_0), T(Q4_0), T(Q4_0), T(Q4_0),
     {T(Q4_0), T(Q4_0)}, "000000000000000000000000000000",
     {T(Q3_K), T(Q3_K)}, "000000000000000000000000000000"},
    {"Q3_K_S", 86416128, T(Q8_0), T(Q4_0), T(Q4_0), T(Q4_0), T(Q4_0),
     {T(Q4_0), T(Q4_0)}, "000000000000000000000000000000",
     {T(Q3_K), T(Q3_K)}, "000000000000000000000000000000"},
    {"Q3_K_M", 91724544, T(Q8_0), T(Q4_0), T(Q4_0), T(Q5_0), T(Q4_0),
     {T(Q5_1), T(Q5_0)}, "001111111111111111111111111111",
     {T(Q5_K), T(Q4_K)}, "011111111111111111111111111111"},
    {"Q3_K_L", 95747328, T(Q8_0), T(Q4_0), T(Q4_0), T(Q5_1), T(Q4_0),
     {T(Q5_1), T(Q5_1)}, "000000000000000000000000000000",
     {T(Q5_K), T(Q5_K)}, "000000000000000000000000000000"},
    {"Q4_K_S", 100253952, T(Q8_0), T(Q5_0), T(Q5_0), T(Q5_0), T(Q5_0),
     {T(Q5_1), T(Q5_0)}, "000011111111111111111111111111",
     {T(Q5_K), T(Q4_K)}, "000111111111111111111111111111"},
    {"Q4_K_M", 103668480, T(Q8_0), T(Q5_0), T(Q5_0), T(Q5_0), T(Q5_0),
     {T(Q8_0), T(Q5_0)}, "000110110110110110110110110000",
     {T(Q6_K), T(Q4_K)}, "000110110110110110110110110000"},
    {"Q5_K_S", 108188928, T(Q8_0), T(Q5_1), T(Q5_1), T(Q5_1), T(Q5_1),
     {T(Q5_1), T(Q5_1)}, "000000000000000000000000000000",
     {T(Q5_K), T(Q5_K)}, "000000000000000000000000000000"},
    {"Q5_K_M", 110317824, T(Q8_0), T(Q5_1), T(Q5_1), T(Q5_1), T(Q5_1),
     {T(Q8_0), T(Q5_1)}, "000110110110110110110110110000",
     {T(Q6_K), T(Q5_K)}, "000110110110110110110110110000"},
    {"Q6_K", 136597248, T(Q8_0), T(Q8_0), T(Q8_0), T(Q8_0), T(Q8_0),
     {T(Q8_0), T(Q8_0)}, "000000000000000000000000000000",
     {T(Q6_K), T(Q6_K)}, "000000000000000000000000000000"},
};

/* The type llama-quantize gave tensor `name` of SmolLM2 in `g`; -1 for names it does not know. */
static int golden_type(const mix_golden *g, const char *name)
{
    if (strcmp(name, "token_embd.weight") == 0)
        return g->token_embd;
    if (strcmp(name, "output_norm.weight") == 0)
        return T(F32);
    int layer = -1, end = 0;
    char kind[32];
    if (sscanf(name, "blk.%d.%31[a-z_].weight%n", &layer, kind, &end) != 2 || name[end] ||
        layer < 0 || layer >= 30)
        return -1;
    if (strcmp(kind, "attn_q") == 0)
        return g->attn_q;
    if (strcmp(kind, "attn_k") == 0)
        return g->attn_k;
    if (strcmp(kind, "attn_output") == 0)
        return g->attn_output;
    if (strcmp(kind, "ffn_gate") == 0 || strcmp(kind, "ffn_up") == 0)
        return g->ffn_gate_up;
    if (strcmp(kind, "attn_v") == 0)
        return g->attn_v[g->attn_v_layers[layer] - '0'];
    if (strcmp(kind, "ffn_down") == 0)
        return g->ffn_down[g->ffn_down_layers[layer] - '0'];
    if (strcmp(kind, "attn_norm") == 0 || strcmp(kind, "ffn_norm") == 0)
        return T(F32);
    return -1;
}

static inf_quantize_plan *plan_mix(const char *path, const char *mix, ggtk_error *err)
{
    inf_quantize_options o =
        inf_quantize_options_default((ggtk_file_type)inf_quantize_file_type_from_name(mix));
    o.allow_requantize = true;
    return inf_quantize_plan_new(path, &o, err);
}

TEST(test_mix_plans_of_smollm2_match_llama_quantize_types)
{
    /* The Q4_1 model plans the types an F32 one does: the rules look at names and shapes only,
     * and no K mix wants Q4_1, which would keep a tensor as it is. */
    const char *model = test_model_path();
    if (!model)
        SKIP("models/SmolLM2-135M-Instruct.Q4_1.gguf missing (make models)");
    for (size_t m = 0; m < sizeof smollm2_golden / sizeof smollm2_golden[0]; m++) {
        const mix_golden *g = &smollm2_golden[m];
        ggtk_error err;
        inf_quantize_plan *plan = plan_mix(model, g->mix, &err);
        CHECK_MSG(plan, "%s: %s", g->mix, err.message);
        if (!plan)
            continue;
        CHECK(plan->n_tensors == 272);
        int differ = 0;
        for (int64_t i = 0; i < plan->n_tensors; i++) {
            const inf_quantize_plan_tensor *t = &plan->tensors[i];
            int want = golden_type(g, t->info->name);
            if ((int)t->new_type != want && differ++ < 3)
                CHECK_MSG(false, "%s: %s is %s, llama-quantize wrote %s", g->mix, t->info->name,
                          ggtk_tensor_type_name(t->new_type),
                          want >= 0 ? ggtk_tensor_type_name((ggtk_tensor_type)want) : "?");
        }
        CHECK_MSG(differ == 0 && plan->data_size_after == g->data_size, "%s: %d differ, %llu bytes",
                  g->mix, differ, (unsigned long long)plan->data_size_after);
        inf_quantize_plan_free(plan);
    }
}

/* llama-quantize (REF_BIN) run on `input` as `mix` into `output`: 0 when it succeeded. */
static int run_llama_quantize(const char *ref_bin, const char *input, const char *output,
                              const char *mix)
{
    char *log = NULL;
    int rc = test_run(&log, "%s/llama-quantize %s %s %s 2", ref_bin, input, output, mix);
    if (rc != 0)
        fprintf(stderr, "    llama-quantize %s failed (%d): %s\n", mix, rc, log ? log : "");
    free(log);
    return rc;
}

/* Our plan for `input` as `mix` against the types in llama-quantize's `output`. */
static void compare_with_llama_output(const char *input, const char *output, const char *mix)
{
    ggtk_error err;
    inf_quantize_plan *plan = plan_mix(input, mix, &err);
    ggtk_file *ref = ggtk_open(output, GGTK_OPEN_METADATA, &err);
    CHECK_MSG(plan && ref, "%s: %s", mix, err.message);
    if (!plan || !ref) {
        inf_quantize_plan_free(plan);
        ggtk_close(ref);
        return;
    }
    CHECK(ggtk_tensor_count(ref) == plan->n_tensors);
    int differ = 0;
    for (int64_t i = 0; i < plan->n_tensors; i++) {
        const inf_quantize_plan_tensor *t = &plan->tensors[i];
        int64_t r = ggtk_find_tensor(ref, t->info->name);
        ggtk_tensor_type want = r >= 0 ? ggtk_tensor(ref, r)->type : (ggtk_tensor_type)-1;
        if (t->new_type != want && differ++ < 3)
            CHECK_MSG(false, "%s: %s is %s, llama-quantize wrote %s", mix, t->info->name,
                      ggtk_tensor_type_name(t->new_type), ggtk_tensor_type_name(want));
    }
    CHECK_MSG(differ == 0, "%s: %d tensors differ", mix, differ);
    uint64_t file_type = 0;
    CHECK(ggtk_get_uint(ref, "general.file_type", &file_type) == GGTK_OK &&
          file_type == (uint64_t)plan->options.file_type);
    ggtk_close(ref);
    inf_quantize_plan_free(plan);
}

TEST(test_mix_plans_match_llama_quantize_run_on_smollm2_f32)
{
    const char *ref_bin = getenv("REF_BIN");
    if (!ref_bin || !*ref_bin)
        SKIP("REF_BIN is unset");
    const char *model = test_model_path();
    if (!model)
        SKIP("models/SmolLM2-135M-Instruct.Q4_1.gguf missing (make models)");
    char llama_quantize[1024];
    snprintf(llama_quantize, sizeof llama_quantize, "%s/llama-quantize", ref_bin);
    if (access(llama_quantize, X_OK) != 0)
        SKIP("REF_BIN has no llama-quantize");
    char f32[512], out[512];
    snprintf(f32, sizeof f32, "%s", test_tmpfile("mix-smollm2-f32.gguf"));
    snprintf(out, sizeof out, "%s", test_tmpfile("mix-llama.gguf"));
    inf_quantize_options o = inf_quantize_options_default(GGTK_FILE_TYPE_F32);
    o.allow_requantize = true;
    ggtk_error err;
    inf_quantize_plan *plan = inf_quantize_plan_new(model, &o, &err);
    CHECK_MSG(plan && inf_quantize_run(plan, f32, NULL, NULL, &err) == GGTK_OK, "%s",
              err.message);
    inf_quantize_plan_free(plan);
    /* Every K mix, and the simple file types in llama-quantize's default (not pure) mode. */
    static const char *const simple[] = {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0"};
    size_t n_golden = sizeof smollm2_golden / sizeof smollm2_golden[0];
    for (size_t m = 0; m < n_golden + sizeof simple / sizeof simple[0]; m++) {
        const char *mix = m < n_golden ? smollm2_golden[m].mix : simple[m - n_golden];
        CHECK(run_llama_quantize(ref_bin, f32, out, mix) == 0);
        compare_with_llama_output(f32, out, mix);
        unlink(out);
    }
    unlink(f32);
}

/* ---------------------------------------------------------------------------------------------
 * Synthetic models: hyper-parameters and shapes SmolLM2 does not have
 * ------------------------------------------------------------------------------------------- */

typedef struct synth_model {
    const char *arch;
    uint32_t n_layer, n_head, n_head_kv, n_expert;
    bool tied;           /* no output.weight */
    bool shuffled;       /* layers in string order (blk.10 before blk.2), as some converters do */
    uint64_t n_embd;     /* row length of the attention matrices and ffn_up/gate */
    uint64_t n_ff;       /* row length of ffn_down */
    const char *extra;   /* one more [n_embd x n_ff] tensor of this name, or NULL */
} synth_model;

typedef struct synth_tensor {
    char name[64];
    uint32_t n_dims;
    uint64_t ne[3];
} synth_tensor;

static void add_tensor(synth_tensor *list, size_t *n, const char *name, uint32_t n_dims,
                       uint64_t ne0, uint64_t ne1, uint64_t ne2)
{
    synth_tensor *t = &list[(*n)++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->n_dims = n_dims;
    t->ne[0] = ne0;
    t->ne[1] = ne1;
    t->ne[2] = ne2;
}

static void add_layer(synth_tensor *list, size_t *n, const synth_model *m, uint32_t layer)
{
    static const char *const attn[] = {"attn_q", "attn_k", "attn_v", "attn_output"};
    char name[64];
    uint64_t kv = m->n_embd * m->n_head_kv / m->n_head;
    for (size_t i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "blk.%u.%s.weight", layer, attn[i]);
        add_tensor(list, n, name, 2, m->n_embd, i == 1 || i == 2 ? kv : m->n_embd, 1);
    }
    snprintf(name, sizeof name, "blk.%u.attn_norm.weight", layer);
    add_tensor(list, n, name, 1, m->n_embd, 1, 1);
    const char *suffix = m->n_expert > 1 ? "_exps" : "";
    uint32_t experts = m->n_expert > 1 ? m->n_expert : 1;
    snprintf(name, sizeof name, "blk.%u.ffn_gate%s.weight", layer, suffix);
    add_tensor(list, n, name, experts > 1 ? 3 : 2, m->n_embd, m->n_ff, experts);
    snprintf(name, sizeof name, "blk.%u.ffn_up%s.weight", layer, suffix);
    add_tensor(list, n, name, experts > 1 ? 3 : 2, m->n_embd, m->n_ff, experts);
    snprintf(name, sizeof name, "blk.%u.ffn_down%s.weight", layer, suffix);
    add_tensor(list, n, name, experts > 1 ? 3 : 2, m->n_ff, m->n_embd, experts);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(((const synth_tensor *)a)->name, ((const synth_tensor *)b)->name);
}

/* Write `m` (F32, zeros) to `path`; its tensors are listed in *list (malloc'd, *n entries). */
static bool synth_write(const char *path, const synth_model *m, synth_tensor **list, size_t *n)
{
    *list = calloc(m->n_layer * 8 + 5, sizeof **list);
    *n = 0;
    add_tensor(*list, n, "token_embd.weight", 2, m->n_embd, 64, 1);
    for (uint32_t layer = 0; layer < m->n_layer; layer++)
        add_layer(*list, n, m, layer);
    add_tensor(*list, n, "output_norm.weight", 1, m->n_embd, 1, 1);
    if (!m->tied)
        add_tensor(*list, n, "output.weight", 2, m->n_embd, 64, 1);
    if (m->extra)
        add_tensor(*list, n, m->extra, 2, m->n_embd, m->n_ff, 1);
    if (m->shuffled)
        qsort(*list, *n, sizeof **list, compare_names);
    ggtk_writer *w = ggtk_writer_new();
    char key[96];
    bool ok = w && ggtk_writer_set_string(w, "general.architecture", m->arch) == GGTK_OK;
    snprintf(key, sizeof key, "%s.block_count", m->arch);
    ok = ok && ggtk_writer_set_u32(w, key, m->n_layer) == GGTK_OK;
    snprintf(key, sizeof key, "%s.attention.head_count", m->arch);
    ok = ok && ggtk_writer_set_u32(w, key, m->n_head) == GGTK_OK;
    snprintf(key, sizeof key, "%s.attention.head_count_kv", m->arch);
    ok = ok && ggtk_writer_set_u32(w, key, m->n_head_kv) == GGTK_OK;
    snprintf(key, sizeof key, "%s.expert_count", m->arch);
    ok = ok && (m->n_expert == 0 || ggtk_writer_set_u32(w, key, m->n_expert) == GGTK_OK);
    uint64_t largest = 0;
    for (size_t i = 0; ok && i < *n; i++) {
        const synth_tensor *t = &(*list)[i];
        ok = ggtk_writer_add_tensor(w, t->name, GGTK_TENSOR_F32, t->n_dims, t->ne) == GGTK_OK;
        uint64_t bytes = t->ne[0] * t->ne[1] * t->ne[2] * sizeof(float);
        largest = bytes > largest ? bytes : largest;
    }
    void *zeros = calloc(1, largest);
    ok = ok && zeros && ggtk_writer_begin(w, path, NULL) == GGTK_OK;
    for (size_t i = 0; ok && i < *n; i++) {
        const synth_tensor *t = &(*list)[i];
        ok = ggtk_writer_write_data(w, zeros, t->ne[0] * t->ne[1] * t->ne[2] * sizeof(float),
                                    NULL) == GGTK_OK;
    }
    ok = ok && ggtk_writer_finish(w, NULL) == GGTK_OK;
    free(zeros);
    ggtk_writer_free(w);
    return ok;
}

/* The plan of `m` as `mix`, or NULL with *err set. */
static inf_quantize_plan *synth_plan(const char *file, const synth_model *m, const char *mix,
                                     ggtk_error *err)
{
    synth_tensor *list = NULL;
    size_t n = 0;
    const char *path = test_tmpfile(file);
    bool written = synth_write(path, m, &list, &n);
    free(list);
    if (!written) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "cannot write %s", path);
        return NULL;
    }
    return plan_mix(path, mix, err);
}

static const inf_quantize_plan_tensor *find(const inf_quantize_plan *plan, const char *name)
{
    for (int64_t i = 0; i < plan->n_tensors; i++)
        if (strcmp(plan->tensors[i].info->name, name) == 0)
            return &plan->tensors[i];
    return NULL;
}

/* The planned type of blk.<layer>.<kind>.weight, or -1. */
static int layer_type(const inf_quantize_plan *plan, int layer, const char *kind)
{
    char name[64];
    snprintf(name, sizeof name, "blk.%d.%s.weight", layer, kind);
    const inf_quantize_plan_tensor *t = find(plan, name);
    return t ? (int)t->new_type : -1;
}

/* The types of `kind` over all layers as one letter each: K for the K type `k`, o otherwise. */
static void layer_pattern(const inf_quantize_plan *plan, int n_layer, const char *kind,
                          ggtk_tensor_type k, char *out)
{
    for (int i = 0; i < n_layer; i++)
        out[i] = layer_type(plan, i, kind) == (int)k ? 'K' : 'o';
    out[n_layer] = '\0';
}

static const synth_model llama8 = {"llama", 8, 8, 8, 0, false, false, 256, 512, NULL};

TEST(test_mix_use_more_bits_layers_and_first_layer_bumps)
{
    ggtk_error err;
    inf_quantize_plan *plan = synth_plan("mix_q4km.gguf", &llama8, "Q4_K_M", &err);
    CHECK_MSG(plan, "%s", err.message);
    char pattern[16];
    /* use_more_bits(i, 8): i < 1, i >= 7, (i - 1) % 3 == 2. */
    layer_pattern(plan, 8, "attn_v", T(Q6_K), pattern);
    CHECK_MSG(strcmp(pattern, "KooKooKK") == 0, "%s", pattern);
    layer_pattern(plan, 8, "ffn_down", T(Q6_K), pattern);
    CHECK_MSG(strcmp(pattern, "KooKooKK") == 0, "%s", pattern);
    CHECK(layer_type(plan, 1, "ffn_down") == T(Q4_K) && layer_type(plan, 0, "attn_q") == T(Q4_K));
    CHECK(find(plan, "output.weight")->new_type == T(Q6_K));
    CHECK(find(plan, "output.weight")->reason == INF_QUANTIZE_REASON_OUTPUT_RULE);
    CHECK(find(plan, "token_embd.weight")->new_type == T(Q4_K)); /* not tied */
    CHECK(plan->n_fallback == 0);
    const inf_quantize_plan_tensor *v0 = find(plan, "blk.0.attn_v.weight");
    CHECK(v0->reason == INF_QUANTIZE_REASON_MIX_RULE && strstr(v0->rule, "use_more_bits"));
    inf_quantize_plan_free(plan);

    plan = synth_plan("mix_q3km.gguf", &llama8, "Q3_K_M", &err);
    CHECK_MSG(plan, "%s", err.message);
    layer_pattern(plan, 8, "attn_v", T(Q5_K), pattern);
    CHECK_MSG(strcmp(pattern, "KKoooooo") == 0, "%s", pattern); /* the first two */
    CHECK(layer_type(plan, 2, "attn_v") == T(Q4_K) && layer_type(plan, 0, "ffn_down") == T(Q4_K));
    CHECK(layer_type(plan, 0, "attn_output") == T(Q4_K) && layer_type(plan, 0, "attn_k") == T(Q3_K));
    inf_quantize_plan_free(plan);

    plan = synth_plan("mix_q4ks.gguf", &llama8, "Q4_K_S", &err);
    CHECK_MSG(plan, "%s", err.message);
    layer_pattern(plan, 8, "attn_v", T(Q5_K), pattern);
    CHECK_MSG(strcmp(pattern, "KKKKoooo") == 0, "%s", pattern); /* the first four */
    layer_pattern(plan, 8, "ffn_down", T(Q5_K), pattern);
    CHECK_MSG(strcmp(pattern, "Kooooooo") == 0, "%s", pattern); /* the first eighth */
    inf_quantize_plan_free(plan);
}

TEST(test_mix_counters_follow_layer_numbers_not_file_order)
{
    synth_model m = llama8;
    m.n_layer = 12;
    m.shuffled = true; /* blk.0, blk.1, blk.10, blk.11, blk.2, ... in the file */
    ggtk_error err;
    inf_quantize_plan *plan = synth_plan("mix_order.gguf", &m, "Q3_K_M", &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(strcmp(plan->tensors[6].info->name, "blk.0.ffn_up.weight") != 0); /* really shuffled */
    char pattern[16];
    layer_pattern(plan, 12, "attn_v", T(Q5_K), pattern);
    CHECK_MSG(strcmp(pattern, "KKoooooooooo") == 0, "%s", pattern);
    inf_quantize_plan_free(plan);
}

TEST(test_mix_grouped_query_attention_raises_q2_k_attn_v)
{
    synth_model m = llama8;
    ggtk_error err;
    inf_quantize_plan *plan = synth_plan("mix_mha.gguf", &m, "Q2_K", &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(layer_type(plan, 0, "attn_v") == T(Q3_K) && layer_type(plan, 0, "ffn_down") == T(Q3_K));
    CHECK(layer_type(plan, 0, "attn_output") == T(Q3_K) && layer_type(plan, 0, "attn_q") == T(Q2_K));
    inf_quantize_plan_free(plan);
    m.n_head_kv = 2; /* n_gqa 4 */
    plan = synth_plan("mix_gqa.gguf", &m, "Q2_K", &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(layer_type(plan, 5, "attn_v") == T(Q4_K));
    inf_quantize_plan_free(plan);
}

TEST(test_mix_eight_experts_use_q8_0_attention_and_name_layers)
{
    synth_model m = llama8;
    m.n_expert = 8;
    m.n_ff = 256;
    ggtk_error err;
    inf_quantize_plan *plan = synth_plan("mix_moe.gguf", &m, "Q4_K_M", &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(layer_type(plan, 3, "attn_v") == T(Q8_0) && layer_type(plan, 3, "attn_k") == T(Q8_0));
    CHECK(layer_type(plan, 3, "attn_output") == T(Q5_K));
    /* ffn_down_exps takes its layer from its name: use_more_bits(3, 8) holds, (4, 8) not. */
    CHECK(layer_type(plan, 3, "ffn_down_exps") == T(Q6_K));
    CHECK(layer_type(plan, 4, "ffn_down_exps") == T(Q4_K));
    inf_quantize_plan_free(plan);
}

TEST(test_mix_seventy_b_models_raise_attn_v_to_q5_k)
{
    synth_model m = {"llama", 80, 8, 2, 0, false, false, 256, 256, NULL};
    ggtk_error err;
    inf_quantize_plan *plan = synth_plan("mix_70b.gguf", &m, "Q3_K_S", &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(layer_type(plan, 40, "attn_v") == T(Q5_K) && layer_type(plan, 40, "attn_q") == T(Q3_K));
    inf_quantize_plan_free(plan);
    m.n_head_kv = 8; /* without grouped-query attention llama.cpp calls it 65B */
    plan = synth_plan("mix_65b.gguf", &m, "Q3_K_S", &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(layer_type(plan, 40, "attn_v") == T(Q3_K));
    inf_quantize_plan_free(plan);
}

TEST(test_mix_falcon_has_its_own_rules)
{
    synth_model m = llama8;
    m.arch = "falcon";
    ggtk_error err;
    inf_quantize_plan *plan = synth_plan("mix_falcon.gguf", &m, "Q3_K_L", &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(layer_type(plan, 0, "ffn_down") == T(Q4_K) && layer_type(plan, 0, "attn_output") == T(Q4_K));
    CHECK(find(plan, "output.weight")->new_type == T(Q8_0));
    inf_quantize_plan_free(plan);
}

TEST(test_mix_tied_embeddings_take_the_output_rule_and_fall_back_by_row_length)
{
    synth_model m = llama8;
    m.tied = true;
    ggtk_error err;
    inf_quantize_plan *plan = synth_plan("mix_tied.gguf", &m, "Q5_K_S", &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(find(plan, "token_embd.weight")->new_type == T(Q6_K));
    inf_quantize_plan_free(plan);
    /* Rows of 96: Q6_K would fit neither output nor anything else. */
    m.n_embd = 96;
    m.n_ff = 160;
    plan = synth_plan("mix_odd.gguf", &m, "Q5_K_M", &err);
    CHECK_MSG(plan, "%s", err.message);
    const inf_quantize_plan_tensor *embd = find(plan, "token_embd.weight");
    CHECK(embd->new_type == T(Q8_0) && !embd->fallback); /* the output rule itself picks Q8_0 */
    const inf_quantize_plan_tensor *q = find(plan, "blk.1.attn_q.weight");
    CHECK(q->wanted_type == T(Q5_K) && q->new_type == T(Q5_1) && q->fallback);
    const inf_quantize_plan_tensor *down = find(plan, "blk.0.ffn_down.weight"); /* rows of 160 */
    CHECK(down->wanted_type == T(Q6_K) && down->new_type == T(Q8_0) && down->fallback);
    CHECK(plan->n_fallback == 8 * 7);
    inf_quantize_plan_free(plan);
    inf_quantize_options o = inf_quantize_options_default(GGTK_FILE_TYPE_Q5_K_M);
    o.no_fallback = true;
    CHECK(inf_quantize_plan_new(test_tmpfile("mix_odd.gguf"), &o, &err) == NULL);
    CHECK_MSG(err.status == GGTK_ERR_USAGE && strstr(err.message, "rows of 96 elements") &&
                  strstr(err.message, "q5_K"),
              "%s", err.message);
}

TEST(test_mix_fallback_table_follows_llama_quantize)
{
    static const struct {
        ggtk_tensor_type wanted;
        uint64_t ncols;
        ggtk_tensor_type expected;
    } cases[] = {
        {T(Q2_K), 96, T(Q4_0)},  {T(Q3_K), 96, T(Q4_0)},   {T(Q4_K), 96, T(Q5_0)},
        {T(Q5_K), 96, T(Q5_1)},  {T(Q6_K), 96, T(Q8_0)},   {T(IQ2_XS), 96, T(IQ4_NL)},
        {T(Q4_K), 80, T(F16)},   {T(Q8_0), 48, T(F16)},    {T(Q4_K), 512, T(Q4_K)},
        {T(TQ1_0), 64, T(Q4_0)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_MSG(quantize_fallback_type(cases[i].wanted, cases[i].ncols) == cases[i].expected,
                  "case %zu", i);
}

TEST(test_mix_moe_ffn_tensor_without_a_usable_layer_number_is_refused)
{
    static const char *const names[] = {"mtp.ffn_up_exps.weight", "blk.8.ffn_down_exps.weight"};
    for (size_t i = 0; i < 2; i++) {
        synth_model m = llama8;
        m.n_expert = 4;
        m.n_ff = 256;
        m.extra = names[i];
        ggtk_error err;
        CHECK(synth_plan("mix_moe_bad.gguf", &m, "Q4_K_M", &err) == NULL);
        CHECK_MSG(err.status == GGTK_ERR_USAGE && strstr(err.message, names[i]) &&
                      strstr(err.message, "layer number below 8"),
                  "%s", err.message);
    }
}
