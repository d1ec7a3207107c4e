/* The file quantizer on the families gguf-eval runs (llama with rope_freqs and fused attn_qkv,
 * qwen2, qwen3, phi3, gemma2, gemma3): the types planned for the real gemma3-270m and a tiny
 * phi3 (fused attn_qkv and ffn_up) against tables recorded from llama-quantize, and with REF_BIN
 * set every tensor's type and bytes against llama-quantize run on the same tiny F32 models
 * (tests/file_quantizer/py/quant_families.py), with and without an importance matrix. */
#include <ggtk/inf_imatrix.h>
#include <ggtk/inf_quantize_file.h>
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GEMMA3_PATH "models/gemma-3-270m-q4_k_m.gguf"
#define FAMILIES_PY "tests/file_quantizer/py/quant_families.py"
#define T(name) GGTK_TENSOR_##name

/* The letters of the recorded tables (quant_families.py's LETTERS). */
static int letter_type(char c)
{
    static const struct {
        char letter;
        ggtk_tensor_type type;
    } letters[] = {
        {'f', T(F32)},  {'h', T(F16)},  {'a', T(Q4_0)}, {'b', T(Q4_1)}, {'c', T(Q5_0)},
        {'d', T(Q5_1)}, {'e', T(Q8_0)}, {'2', T(Q2_K)}, {'3', T(Q3_K)}, {'4', T(Q4_K)},
        {'5', T(Q5_K)}, {'6', T(Q6_K)},
    };
    for (size_t i = 0; i < sizeof letters / sizeof letters[0]; i++)
        if (letters[i].letter == c)
            return letters[i].type;
    return -1;
}

/* llama-quantize's types for one file type: token_embd, output (0: tied, none) and per tensor
 * kind one letter per layer; every other tensor keeps its type. */
typedef struct family_golden {
    const char *mix;
    char token_embd, output;
    struct {
        const char *kind, *layers;
    } kinds[8];
} family_golden;

/* Recorded with `quant_families.py record MIX LOG ...` from
 * `llama-quantize --dry-run --allow-requantize models/gemma-3-270m-q4_k_m.gguf OUT MIX 1`:
 * 18 layers, rows of 640 (not whole K blocks: Q8_0 tied embeddings, Q4_0/Q5_0/Q5_1/Q8_0
 * fallbacks), attn_output rows of 1024 and ffn_down rows of 2048 (K types), n_gqa 4. */
static const family_golden gemma3_270m_golden[] = {
    {"Q4_0", 'e', 0, {{"attn_q", "aaaaaaaaaaaaaaaaaa"}, {"attn_k", "aaaaaaaaaaaaaaaaaa"}, {"attn_v", "aaaaaaaaaaaaaaaaaa"}, {"attn_output", "aaaaaaaaaaaaaaaaaa"}, {"ffn_gate", "aaaaaaaaaaaaaaaaaa"}, {"ffn_up", "aaaaaaaaaaaaaaaaaa"}, {"ffn_down", "aaaaaaaaaaaaaaaaaa"}}},
    {"Q4_1", 'e', 0, {{"attn_q", "bbbbbbbbbbbbbbbbbb"}, {"attn_k", "bbbbbbbbbbbbbbbbbb"}, {"attn_v", "bbbbbbbbbbbbbbbbbb"}, {"attn_output", "bbbbbbbbbbbbbbbbbb"}, {"ffn_gate", "bbbbbbbbbbbbbbbbbb"}, {"ffn_up", "bbbbbbbbbbbbbbbbbb"}, {"ffn_down", "bbbbbbbbbbbbbbbbbb"}}},
    {"Q5_0", 'e', 0, {{"attn_q", "cccccccccccccccccc"}, {"attn_k", "cccccccccccccccccc"}, {"attn_v", "cccccccccccccccccc"}, {"attn_output", "cccccccccccccccccc"}, {"ffn_gate", "cccccccccccccccccc"}, {"ffn_up", "cccccccccccccccccc"}, {"ffn_down", "cccccccccccccccccc"}}},
    {"Q5_1", 'e', 0, {{"attn_q", "dddddddddddddddddd"}, {"attn_k", "dddddddddddddddddd"}, {"attn_v", "dddddddddddddddddd"}, {"attn_output", "dddddddddddddddddd"}, {"ffn_gate", "dddddddddddddddddd"}, {"ffn_up", "dddddddddddddddddd"}, {"ffn_down", "dddddddddddddddddd"}}},
    {"Q8_0", 'e', 0, {{"attn_q", "eeeeeeeeeeeeeeeeee"}, {"attn_k", "eeeeeeeeeeeeeeeeee"}, {"attn_v", "eeeeeeeeeeeeeeeeee"}, {"attn_output", "eeeeeeeeeeeeeeeeee"}, {"ffn_gate", "eeeeeeeeeeeeeeeeee"}, {"ffn_up", "eeeeeeeeeeeeeeeeee"}, {"ffn_down", "eeeeeeeeeeeeeeeeee"}}},
    {"Q2_K", 'e', 0, {{"attn_q", "aaaaaaaaaaaaaaaaaa"}, {"attn_k", "aaaaaaaaaaaaaaaaaa"}, {"attn_v", "cccccccccccccccccc"}, {"attn_output", "333333333333333333"}, {"ffn_gate", "aaaaaaaaaaaaaaaaaa"}, {"ffn_up", "aaaaaaaaaaaaaaaaaa"}, {"ffn_down", "333333333333333333"}}},
    {"Q3_K_S", 'e', 0, {{"attn_q", "aaaaaaaaaaaaaaaaaa"}, {"attn_k", "aaaaaaaaaaaaaaaaaa"}, {"attn_v", "aaaaaaaaaaaaaaaaaa"}, {"attn_output", "333333333333333333"}, {"ffn_gate", "aaaaaaaaaaaaaaaaaa"}, {"ffn_up", "aaaaaaaaaaaaaaaaaa"}, {"ffn_down", "333333333333333333"}}},
    {"Q3_K_M", 'e', 0, {{"attn_q", "aaaaaaaaaaaaaaaaaa"}, {"attn_k", "aaaaaaaaaaaaaaaaaa"}, {"attn_v", "ddcccccccccccccccc"}, {"attn_output", "444444444444444444"}, {"ffn_gate", "aaaaaaaaaaaaaaaaaa"}, {"ffn_up", "aaaaaaaaaaaaaaaaaa"}, {"ffn_down", "544444444444444444"}}},
    {"Q3_K_L", 'e', 0, {{"attn_q", "aaaaaaaaaaaaaaaaaa"}, {"attn_k", "aaaaaaaaaaaaaaaaaa"}, {"attn_v", "dddddddddddddddddd"}, {"attn_output", "555555555555555555"}, {"ffn_gate", "aaaaaaaaaaaaaaaaaa"}, {"ffn_up", "aaaaaaaaaaaaaaaaaa"}, {"ffn_down", "555555555555555555"}}},
    {"Q4_K_S", 'e', 0, {{"attn_q", "cccccccccccccccccc"}, {"attn_k", "cccccccccccccccccc"}, {"attn_v", "ddddcccccccccccccc"}, {"attn_output", "444444444444444444"}, {"ffn_gate", "cccccccccccccccccc"}, {"ffn_up", "cccccccccccccccccc"}, {"ffn_down", "554444444444444444"}}},
    {"Q4_K_M", 'e', 0, {{"attn_q", "cccccccccccccccccc"}, {"attn_k", "cccccccccccccccccc"}, {"attn_v", "eeccecceccecceceee"}, {"attn_output", "444444444444444444"}, {"ffn_gate", "cccccccccccccccccc"}, {"ffn_up", "cccccccccccccccccc"}, {"ffn_down", "664464464464464666"}}},
    {"Q5_K_S", 'e', 0, {{"attn_q", "dddddddddddddddddd"}, {"attn_k", "dddddddddddddddddd"}, {"attn_v", "dddddddddddddddddd"}, {"attn_output", "555555555555555555"}, {"ffn_gate", "dddddddddddddddddd"}, {"ffn_up", "dddddddddddddddddd"}, {"ffn_down", "555555555555555555"}}},
    {"Q5_K_M", 'e', 0, {{"attn_q", "dddddddddddddddddd"}, {"attn_k", "dddddddddddddddddd"}, {"attn_v", "eeddeddeddeddedeee"}, {"attn_output", "555555555555555555"}, {"ffn_gate", "dddddddddddddddddd"}, {"ffn_up", "dddddddddddddddddd"}, {"ffn_down", "665565565565565666"}}},
    {"Q6_K", 'e', 0, {{"attn_q", "eeeeeeeeeeeeeeeeee"}, {"attn_k", "eeeeeeeeeeeeeeeeee"}, {"attn_v", "eeeeeeeeeeeeeeeeee"}, {"attn_output", "666666666666666666"}, {"ffn_gate", "eeeeeeeeeeeeeeeeee"}, {"ffn_up", "eeeeeeeeeeeeeeeeee"}, {"ffn_down", "666666666666666666"}}},
};

/* Recorded likewise from `llama-quantize --dry-run phi3.gguf OUT MIX 1` on quant_families.py's
 * phi3 (16 layers, rows of 256 and 512, fused attn_qkv counted as attn_v, ffn_up holding gate and
 * up, untied output, no grouped-query attention). */
static const family_golden phi3_golden[] = {
    {"Q4_0", 'a', '6', {{"attn_qkv", "aaaaaaaaaaaaaaaa"}, {"attn_output", "aaaaaaaaaaaaaaaa"}, {"ffn_up", "aaaaaaaaaaaaaaaa"}, {"ffn_down", "aaaaaaaaaaaaaaaa"}}},
    {"Q4_1", 'b', '6', {{"attn_qkv", "bbbbbbbbbbbbbbbb"}, {"attn_output", "bbbbbbbbbbbbbbbb"}, {"ffn_up", "bbbbbbbbbbbbbbbb"}, {"ffn_down", "bbbbbbbbbbbbbbbb"}}},
    {"Q5_0", 'c', '6', {{"attn_qkv", "cccccccccccccccc"}, {"attn_output", "cccccccccccccccc"}, {"ffn_up", "cccccccccccccccc"}, {"ffn_down", "cccccccccccccccc"}}},
    {"Q5_1", 'd', '6', {{"attn_qkv", "dddddddddddddddd"}, {"attn_output", "dddddddddddddddd"}, {"ffn_up", "dddddddddddddddd"}, {"ffn_down", "dddddddddddddddd"}}},
    {"Q8_0", 'e', 'e', {{"attn_qkv", "eeeeeeeeeeeeeeee"}, {"attn_output", "eeeeeeeeeeeeeeee"}, {"ffn_up", "eeeeeeeeeeeeeeee"}, {"ffn_down", "eeeeeeeeeeeeeeee"}}},
    {"Q2_K", '2', '6', {{"attn_qkv", "3333333333333333"}, {"attn_output", "3333333333333333"}, {"ffn_up", "2222222222222222"}, {"ffn_down", "3333333333333333"}}},
    {"Q3_K_S", '3', '6', {{"attn_qkv", "3333333333333333"}, {"attn_output", "3333333333333333"}, {"ffn_up", "3333333333333333"}, {"ffn_down", "3333333333333333"}}},
    {"Q3_K_M", '3', '6', {{"attn_qkv", "5544444444444444"}, {"attn_output", "4444444444444444"}, {"ffn_up", "3333333333333333"}, {"ffn_down", "5444444444444444"}}},
    {"Q3_K_L", '3', '6', {{"attn_qkv", "5555555555555555"}, {"attn_output", "5555555555555555"}, {"ffn_up", "3333333333333333"}, {"ffn_down", "5555555555555555"}}},
    {"Q4_K_S", '4', '6', {{"attn_qkv", "5555444444444444"}, {"attn_output", "4444444444444444"}, {"ffn_up", "4444444444444444"}, {"ffn_down", "5544444444444444"}}},
    {"Q4_K_M", '4', '6', {{"attn_qkv", "6644644644644666"}, {"attn_output", "4444444444444444"}, {"ffn_up", "4444444444444444"}, {"ffn_down", "6644644644644666"}}},
    {"Q5_K_S", '5', '6', {{"attn_qkv", "5555555555555555"}, {"attn_output", "5555555555555555"}, {"ffn_up", "5555555555555555"}, {"ffn_down", "5555555555555555"}}},
    {"Q5_K_M", '5', '6', {{"attn_qkv", "6655655655655666"}, {"attn_output", "5555555555555555"}, {"ffn_up", "5555555555555555"}, {"ffn_down", "6655655655655666"}}},
    {"Q6_K", '6', '6', {{"attn_qkv", "6666666666666666"}, {"attn_output", "6666666666666666"}, {"ffn_up", "6666666666666666"}, {"ffn_down", "6666666666666666"}}},
};

/* The type `g` gives tensor `info`: -1 when the table does not name it (its type is kept). */
static int golden_type(const family_golden *g, const ggtk_tensor_info *info)
{
    if (strcmp(info->name, "token_embd.weight") == 0)
        return letter_type(g->token_embd);
    if (strcmp(info->name, "output.weight") == 0)
        return g->output ? letter_type(g->output) : -2;
    int layer = -1, end = 0;
    char kind[32];
    if (sscanf(info->name, "blk.%d.%31[a-z_].weight%n", &layer, kind, &end) != 2 || info->name[end])
        return -1;
    for (size_t k = 0; k < sizeof g->kinds / sizeof g->kinds[0] && g->kinds[k].kind; k++)
        if (strcmp(kind, g->kinds[k].kind) == 0)
            return layer < (int)strlen(g->kinds[k].layers) ? letter_type(g->kinds[k].layers[layer])
                                                           : -2;
    return -1;
}

static inf_quantize_plan *plan_mix(const char *path, const char *mix, const inf_imatrix *imatrix,
                                   ggtk_error *err)
{
    inf_quantize_options o =
        inf_quantize_options_default((ggtk_file_type)inf_quantize_file_type_from_name(mix));
    o.allow_requantize = true;
    o.n_threads = 1;
    o.imatrix = imatrix;
    return inf_quantize_plan_new(path, &o, err);
}

/* Our plan of `path` for every mix of `golden` against the recorded types. */
static void check_plans_against_golden(const char *path, const family_golden *golden, size_t n)
{
    for (size_t m = 0; m < n; m++) {
        const family_golden *g = &golden[m];
        ggtk_error err;
        inf_quantize_plan *plan = plan_mix(path, g->mix, NULL, &err);
        if (!plan) {
            test_fail(__FILE__, __LINE__, "%s: %s", g->mix, err.message);
            continue;
        }
        int differ = 0, named = 0;
        for (int64_t i = 0; i < plan->n_tensors; i++) {
            const inf_quantize_plan_tensor *t = &plan->tensors[i];
            int want = golden_type(g, t->info);
            named += want >= 0;
            if (want == -1)
                want = (int)t->info->type; /* kept */
            if ((int)t->new_type != want && differ++ < 3)
                test_fail(__FILE__, __LINE__, "%s: %s is %s, llama-quantize wrote %s", g->mix, t->info->name,
                          ggtk_tensor_type_name(t->new_type),
                          want >= 0 ? ggtk_tensor_type_name((ggtk_tensor_type)want) : "none");
        }
        size_t expect_named = 1 + (g->output != 0);
        for (size_t k = 0; k < sizeof g->kinds / sizeof g->kinds[0] && g->kinds[k].kind; k++)
            expect_named += strlen(g->kinds[k].layers);
        if (differ != 0 || (size_t)named != expect_named)
            test_fail(__FILE__, __LINE__, "%s: %d tensors differ, %d of %zu recorded tensors found",
                      g->mix, differ, named, expect_named);
        inf_quantize_plan_free(plan);
    }
}

/* quant_families.py's model `name` in the test directory, made once; NULL when it failed. */
static const char *family_model(const char *name)
{
    static char path[512];
    char file[64];
    snprintf(file, sizeof file, "family_%s.gguf", name);
    snprintf(path, sizeof path, "%s", test_tmpfile(file));
    if (access(path, R_OK) == 0)
        return path;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/families", test_tmpdir());
    char *out = NULL;
    int rc = test_run(&out, "mkdir -p '%s' && python3 " FAMILIES_PY " make '%s' %s >/dev/null && "
                      "mv '%s/%s.gguf' '%s'", dir, dir, name, dir, name, path);
    if (rc != 0)
        fprintf(stderr, "    quant_families.py make %s failed: %s\n", name, out ? out : "");
    free(out);
    return rc == 0 ? path : NULL;
}

TEST(test_families_gemma3_270m_plans_match_recorded_llama_quantize_types)
{
    if (access(GEMMA3_PATH, R_OK) != 0)
        SKIP(GEMMA3_PATH " is missing (make models)");
    check_plans_against_golden(GEMMA3_PATH, gemma3_270m_golden,
                               sizeof gemma3_270m_golden / sizeof gemma3_270m_golden[0]);
}

TEST(test_families_phi3_fused_tensors_plans_match_recorded_llama_quantize_types)
{
    const char *path = family_model("phi3");
    CHECK(path != NULL);
    check_plans_against_golden(path, phi3_golden, sizeof phi3_golden / sizeof phi3_golden[0]);
}

/* ---------------------------------------------------------------------------------------------
 * Against llama-quantize itself (REF_BIN)
 * ------------------------------------------------------------------------------------------- */

/* Tensors of `ours` whose type or bytes differ from `ref`'s tensor of the same name (one message
 * for the first few); -1 when a file cannot be read or their names differ. */
static int count_differences(const char *what, const char *ours, const char *ref)
{
    ggtk_error err;
    ggtk_file *a = ggtk_open(ours, GGTK_OPEN_MMAP, &err);
    ggtk_file *b = a ? ggtk_open(ref, GGTK_OPEN_MMAP, &err) : NULL;
    int differ = -1;
    if (a && b && ggtk_tensor_count(a) == ggtk_tensor_count(b)) {
        differ = 0;
        for (int64_t i = 0; i < ggtk_tensor_count(a); i++) {
            const ggtk_tensor_info *x = ggtk_tensor(a, i);
            int64_t j = ggtk_find_tensor(b, x->name);
            const ggtk_tensor_info *y = j >= 0 ? ggtk_tensor(b, j) : NULL;
            bool same = y && x->type == y->type && x->size == y->size &&
                        memcmp(x->data, y->data, x->size) == 0;
            if (!same && differ++ < 3)
                test_fail(__FILE__, __LINE__, "%s: %s is %s%s, llama-quantize wrote %s", what,
                          x->name, ggtk_tensor_type_name(x->type),
                          y && x->type == y->type ? " (bytes differ)" : "",
                          y ? ggtk_tensor_type_name(y->type) : "no such tensor");
        }
    } else {
        test_fail(__FILE__, __LINE__, "%s: %s", what, a && b ? "tensor counts differ" : err.message);
    }
    ggtk_close(a);
    ggtk_close(b);
    return differ;
}

/* llama-quantize and our quantizer on `model` as `mix` (with `imatrix_path` when not NULL):
 * true when every tensor is identical. */
static bool compare_one(const char *ref_bin, const char *name, const char *model, const char *mix,
                        const char *imatrix_path, const inf_imatrix *imatrix)
{
    char ref[512], ours[512], what[128];
    snprintf(ref, sizeof ref, "%s", test_tmpfile("family-ref.gguf"));
    snprintf(ours, sizeof ours, "%s", test_tmpfile("family-ours.gguf"));
    snprintf(what, sizeof what, "%s %s%s", name, mix, imatrix ? " imatrix" : "");
    char *log = NULL;
    int rc = test_run(&log, "%s/llama-quantize %s%s '%s' '%s' %s 1", ref_bin,
                      imatrix_path ? "--imatrix " : "", imatrix_path ? imatrix_path : "", model,
                      ref, mix);
    if (rc != 0)
        test_fail(__FILE__, __LINE__, "%s: llama-quantize failed (%d): %.300s", what, rc,
                  log ? log : "");
    free(log);
    ggtk_error err;
    inf_quantize_plan *plan = plan_mix(model, mix, imatrix, &err);
    ggtk_status status = plan ? inf_quantize_run(plan, ours, NULL, NULL, &err) : GGTK_ERR_USAGE;
    if (status != GGTK_OK)
        test_fail(__FILE__, __LINE__, "%s: %s", what, err.message);
    inf_quantize_plan_free(plan);
    int differ = rc == 0 && status == GGTK_OK ? count_differences(what, ours, ref) : -1;
    if (differ > 0)
        test_fail(__FILE__, __LINE__, "%s: %d tensors differ", what, differ);
    unlink(ref);
    unlink(ours);
    return differ == 0;
}

/* The models and file types compared: every family, K types that fit and ones that fall back,
 * and the mixes whose rules differ most (counted attn_v, use_more_bits, first 8th/16th, n_gqa). */
static const char *const compared_models[] = {
    "llama_rope_freqs", "llama_fused_qkv", "qwen2", "qwen3_odd", "phi3_odd", "gemma2", "gemma3_odd",
};
static const char *const compared_mixes[] = {"Q4_0", "Q2_K", "Q3_K_M", "Q4_K_M"};

static const char *reference_quantizer(void)
{
    const char *ref_bin = getenv("REF_BIN");
    if (!ref_bin || !*ref_bin)
        return NULL;
    static char path[1024];
    snprintf(path, sizeof path, "%s/llama-quantize", ref_bin);
    return access(path, X_OK) == 0 ? ref_bin : NULL;
}

TEST(test_families_quantized_like_llama_quantize)
{
    const char *ref_bin = reference_quantizer();
    if (!ref_bin)
        SKIP("REF_BIN is unset or has no llama-quantize");
    int n_same = 0, n = 0;
    for (size_t m = 0; m < sizeof compared_models / sizeof compared_models[0]; m++) {
        const char *model = family_model(compared_models[m]);
        if (!model)
            test_fail(__FILE__, __LINE__, "%s not made", compared_models[m]);
        for (size_t x = 0; model && x < sizeof compared_mixes / sizeof compared_mixes[0]; x++, n++)
            n_same += compare_one(ref_bin, compared_models[m], model, compared_mixes[x], NULL, NULL);
    }
    CHECK_MSG(n_same == n, "%d of %d files identical", n_same, n);
}

/* With an importance matrix made by llama-imatrix on the same model: the weighted quantizers and
 * the Q4_0/Q5_0 ffn_down rule that only applies with one. */
TEST(test_families_quantized_with_imatrix_like_llama_quantize)
{
    const char *ref_bin = reference_quantizer();
    if (!ref_bin)
        SKIP("REF_BIN is unset or has no llama-quantize");
    static const char *const models[] = {"qwen3_odd", "gemma3"};
    static const char *const mixes[] = {"Q4_0", "Q5_0", "Q3_K_M", "Q4_K_M"};
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        const char *model = family_model(models[m]);
        if (!model) {
            test_fail(__FILE__, __LINE__, "%s not made", models[m]);
            continue;
        }
        char model_copy[512], text[512], imatrix_path[512];
        snprintf(model_copy, sizeof model_copy, "%s", model);
        snprintf(text, sizeof text, "%s", test_tmpfile("family-text.txt"));
        snprintf(imatrix_path, sizeof imatrix_path, "%s", test_tmpfile("family-imatrix.gguf"));
        char *log = NULL;
        int rc = test_run(&log,
                          "python3 -c \"import random; random.seed(1); w='the quick brown fox "
                          "jumps over a lazy dog near seven river banks'.split(); print(' '.join("
                          "random.choice(w) for _ in range(3000)))\" > '%s' && "
                          "%s/llama-imatrix -m '%s' -f '%s' -o '%s' -c 128 --chunks 2 -t 1",
                          text, ref_bin, model_copy, text, imatrix_path);
        if (rc != 0)
            test_fail(__FILE__, __LINE__, "llama-imatrix failed (%d): %.300s", rc, log ? log : "");
        free(log);
        ggtk_error err;
        inf_imatrix *imatrix = rc == 0 ? inf_imatrix_read(imatrix_path, &err) : NULL;
        if (rc == 0 && !imatrix)
            test_fail(__FILE__, __LINE__, "%s", err.message);
        for (size_t x = 0; imatrix && x < sizeof mixes / sizeof mixes[0]; x++)
            compare_one(ref_bin, models[m], model_copy, mixes[x], imatrix_path, imatrix);
        inf_imatrix_free(imatrix);
    }
}
