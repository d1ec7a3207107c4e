/* Tests of the file quantizer's plan (inf_quantize_plan_new): which tensor gets which type and
 * why, under each option, following llama-quantize's rules; sizes and refusals. */
#include <ggtk/inf_quantize_file.h>
#include "test.h"
#include "tools/quantize_fixture.h"

#include <math.h>
#include <string.h>

/* The plan of the fixture written with `fixture` under `options`; NULL on failure (message in
 * *err). The caller frees it. */
static inf_quantize_plan *plan_fixture(const char *name, const fixture_options *fixture,
                                       const inf_quantize_options *options,
                                       ggtk_error *err)
{
    const char *path = test_tmpfile(name);
    if (!fixture_write(path, fixture))
        return NULL;
    return inf_quantize_plan_new(path, options, err);
}

static const inf_quantize_plan_tensor *entry(const inf_quantize_plan *plan, const char *name)
{
    for (int64_t i = 0; i < plan->n_tensors; i++)
        if (strcmp(plan->tensors[i].info->name, name) == 0)
            return &plan->tensors[i];
    return NULL;
}

static ggtk_tensor_type new_type(const inf_quantize_plan *plan, const char *name)
{
    const inf_quantize_plan_tensor *e = entry(plan, name);
    return e ? e->new_type : (ggtk_tensor_type)-1;
}

TEST(test_plan_default_q4_0_upgrades_output_to_q8_0_and_keeps_norms)
{
    inf_quantize_options o = inf_quantize_options_default(GGTK_FILE_TYPE_Q4_0);
    ggtk_error err;
    inf_quantize_plan *plan = plan_fixture("default.gguf", &(fixture_options){0}, &o, &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(new_type(plan, "blk.0.attn_q.weight") == GGTK_TENSOR_Q4_0);
    CHECK(new_type(plan, "token_embd.weight") == GGTK_TENSOR_Q4_0); /* not tied */
    CHECK(new_type(plan, "output.weight") == GGTK_TENSOR_Q8_0);
    CHECK(entry(plan, "output.weight")->reason == INF_QUANTIZE_REASON_OUTPUT_RULE);
    CHECK(new_type(plan, "blk.0.attn_norm.weight") == GGTK_TENSOR_F32);
    CHECK(new_type(plan, "blk.0.attn_q.bias") == GGTK_TENSOR_F32);
    CHECK(entry(plan, "blk.0.attn_q.bias")->reason == INF_QUANTIZE_REASON_KEPT);
    CHECK(new_type(plan, "blk.0.ffn_gate_inp.weight") == GGTK_TENSOR_F32);
    inf_quantize_plan_free(plan);
}

TEST(test_plan_tied_embeddings_take_the_output_rule_unless_pure)
{
    inf_quantize_options o = inf_quantize_options_default(GGTK_FILE_TYPE_Q4_1);
    ggtk_error err;
    inf_quantize_plan *plan = plan_fixture("tied.gguf", &(fixture_options){.tied = true}, &o, &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(new_type(plan, "token_embd.weight") == GGTK_TENSOR_Q8_0);
    inf_quantize_plan_free(plan);
    o.pure = true;
    plan = plan_fixture("tied_pure.gguf", &(fixture_options){.tied = true}, &o, &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(new_type(plan, "token_embd.weight") == GGTK_TENSOR_Q4_1);
    CHECK(new_type(plan, "blk.0.attn_norm.weight") == GGTK_TENSOR_F32);
    inf_quantize_plan_free(plan);
}

TEST(test_plan_output_and_embd_options_win_over_pure_and_file_type)
{
    inf_quantize_options o = inf_quantize_options_default(GGTK_FILE_TYPE_Q5_0);
    o.pure = true;
    o.output_type = GGTK_TENSOR_F16;
    o.embd_type = GGTK_TENSOR_Q8_0;
    ggtk_error err;
    inf_quantize_plan *plan = plan_fixture("opts.gguf", &(fixture_options){0}, &o, &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(new_type(plan, "output.weight") == GGTK_TENSOR_F16);
    CHECK(entry(plan, "output.weight")->reason == INF_QUANTIZE_REASON_OUTPUT_OPTION);
    CHECK(new_type(plan, "token_embd.weight") == GGTK_TENSOR_Q8_0);
    CHECK(entry(plan, "token_embd.weight")->reason == INF_QUANTIZE_REASON_EMBD_OPTION);
    CHECK(new_type(plan, "blk.0.attn_k.weight") == GGTK_TENSOR_Q5_0);
    inf_quantize_plan_free(plan);
}

TEST(test_plan_tensor_rules_first_match_wins_and_skip_the_output_rule)
{
    inf_quantize_tensor_rule rules[] = {
        {"attn_q", GGTK_TENSOR_Q8_0}, {"ATTN", GGTK_TENSOR_Q5_1}, {"^output\\.", GGTK_TENSOR_Q4_1}};
    inf_quantize_options o = inf_quantize_options_default(GGTK_FILE_TYPE_Q4_0);
    o.tensor_rules = rules;
    o.n_tensor_rules = 3;
    ggtk_error err;
    inf_quantize_plan *plan = plan_fixture("rules.gguf", &(fixture_options){0}, &o, &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(new_type(plan, "blk.0.attn_q.weight") == GGTK_TENSOR_Q8_0);
    CHECK(new_type(plan, "blk.0.attn_k.weight") == GGTK_TENSOR_Q5_1); /* case ignored */
    CHECK(entry(plan, "blk.0.attn_k.weight")->reason == INF_QUANTIZE_REASON_TENSOR_RULE);
    CHECK(new_type(plan, "output.weight") == GGTK_TENSOR_Q4_1);
    CHECK(new_type(plan, "blk.0.ffn_down.weight") == GGTK_TENSOR_Q4_0);
    CHECK(new_type(plan, "blk.0.attn_norm.weight") == GGTK_TENSOR_F32); /* rules never touch norms */
    inf_quantize_plan_free(plan);
}

TEST(test_plan_tensor_rules_are_ignored_with_a_warning_for_float_file_types)
{
    inf_quantize_tensor_rule rules[] = {{"attn_q", GGTK_TENSOR_Q8_0}};
    inf_quantize_options o = inf_quantize_options_default(GGTK_FILE_TYPE_F16);
    o.tensor_rules = rules;
    o.n_tensor_rules = 1;
    ggtk_error err;
    inf_quantize_plan *plan = plan_fixture("rules_f16.gguf", &(fixture_options){0}, &o, &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(new_type(plan, "blk.0.attn_q.weight") == GGTK_TENSOR_F16);
    CHECK(new_type(plan, "output.weight") == GGTK_TENSOR_F16); /* no output rule for f16 */
    CHECK(plan->n_warnings == 1 && strstr(plan->warnings[0], "ignored for F16"));
    inf_quantize_plan_free(plan);
}

TEST(test_plan_rows_not_splitting_into_blocks_fall_back_to_f16_with_a_warning)
{
    inf_quantize_options o = inf_quantize_options_default(GGTK_FILE_TYPE_Q8_0);
    ggtk_error err;
    inf_quantize_plan *plan = plan_fixture("odd.gguf", &(fixture_options){0}, &o, &err);
    CHECK_MSG(plan, "%s", err.message);
    const inf_quantize_plan_tensor *odd = entry(plan, "blk.0.odd.weight");
    CHECK(odd && odd->fallback && odd->wanted_type == GGTK_TENSOR_Q8_0);
    CHECK(odd->new_type == GGTK_TENSOR_F16 && odd->new_size == 48 * 8 * 2);
    CHECK(plan->n_fallback == 1 && plan->n_warnings == 1);
    CHECK(strstr(plan->warnings[0], "blk.0.odd.weight") && strstr(plan->warnings[0], "f16"));
    inf_quantize_plan_free(plan);
}

TEST(test_plan_sizes_add_up_and_predict_bits_per_weight)
{
    inf_quantize_options o = inf_quantize_options_default(GGTK_FILE_TYPE_Q4_0);
    o.pure = true;
    ggtk_error err;
    inf_quantize_plan *plan = plan_fixture("sizes.gguf", &(fixture_options){0}, &o, &err);
    CHECK_MSG(plan, "%s", err.message);
    uint64_t before = 0, after = 0, weights = 0;
    for (int64_t i = 0; i < plan->n_tensors; i++) {
        before += plan->tensors[i].info->size;
        after += plan->tensors[i].new_size;
        weights += ggtk_tensor_elements(plan->tensors[i].info);
    }
    CHECK(plan->data_size_before == before && plan->data_size_after == after);
    CHECK(plan->n_elements == weights && before == weights * 4);
    /* attn_q: 64x64 Q4_0 = 128 blocks of 18 bytes. */
    CHECK(entry(plan, "blk.0.attn_q.weight")->new_size == 128 * 18);
    CHECK(plan->n_converted == 6 && plan->n_requantized == 0); /* 5 matrices, odd to f16 */
    CHECK(plan->file_size_after > plan->data_size_after);
    inf_quantize_plan_free(plan);
}

TEST(test_plan_refuses_requantizing_unless_allowed)
{
    inf_quantize_options o = inf_quantize_options_default(GGTK_FILE_TYPE_Q4_0);
    ggtk_error err;
    fixture_options q8 = {.matrix_type = GGTK_TENSOR_Q8_0};
    inf_quantize_plan *plan = plan_fixture("requant.gguf", &q8, &o, &err);
    CHECK(plan == NULL && err.status == GGTK_ERR_REQUANTIZE);
    CHECK(strstr(err.message, "token_embd.weight") && strstr(err.message, "--allow-requantize"));
    o.allow_requantize = true;
    plan = plan_fixture("requant2.gguf", &q8, &o, &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(entry(plan, "blk.0.attn_q.weight")->requantize);
    /* output.weight: the output rule wants Q6_K, whose blocks its 64-element rows do not fill;
     * the fallback is Q8_0, its type already: copied, not requantized. */
    CHECK(!entry(plan, "output.weight")->requantize && entry(plan, "output.weight")->fallback);
    CHECK(new_type(plan, "output.weight") == GGTK_TENSOR_Q8_0);
    CHECK(plan->n_requantized == 4 && plan->n_warnings == 3); /* 2 kinds of fallback, requant */
    inf_quantize_plan_free(plan);
}

TEST(test_plan_from_f16_needs_no_requantize_flag)
{
    inf_quantize_options o = inf_quantize_options_default(GGTK_FILE_TYPE_Q8_0);
    ggtk_error err;
    fixture_options f16 = {.matrix_type = GGTK_TENSOR_F16};
    inf_quantize_plan *plan = plan_fixture("from_f16.gguf", &f16, &o, &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(new_type(plan, "blk.0.attn_q.weight") == GGTK_TENSOR_Q8_0 && plan->n_requantized == 0);
    inf_quantize_plan_free(plan);
}

TEST(test_plan_rejects_unsupported_file_types_and_bad_patterns)
{
    inf_quantize_options o = inf_quantize_options_default(GGTK_FILE_TYPE_IQ2_XS);
    ggtk_error err;
    fixture_options f = {0};
    CHECK(plan_fixture("bad1.gguf", &f, &o, &err) == NULL && err.status == GGTK_ERR_USAGE);
    CHECK_MSG(strstr(err.message, "IQ2_XS") && strstr(err.message, "not implemented"), "%s",
              err.message);
    o.file_type = (ggtk_file_type)4; /* retired by llama.cpp */
    CHECK(plan_fixture("bad1b.gguf", &f, &o, &err) == NULL && err.status == GGTK_ERR_USAGE);
    o = inf_quantize_options_default(GGTK_FILE_TYPE_Q4_0);
    inf_quantize_tensor_rule bad = {"attn_(q", GGTK_TENSOR_Q8_0};
    o.tensor_rules = &bad;
    o.n_tensor_rules = 1;
    CHECK(plan_fixture("bad2.gguf", &f, &o, &err) == NULL && err.status == GGTK_ERR_USAGE);
    CHECK(strstr(err.message, "attn_(q"));
    o.n_tensor_rules = 0;
    o.output_type = GGTK_TENSOR_Q8_1; /* an activation type, never stored */
    CHECK(plan_fixture("bad3.gguf", &f, &o, &err) == NULL && err.status == GGTK_ERR_USAGE);
    CHECK(strstr(err.message, "q8_1"));
    CHECK(!inf_quantize_tensor_type_supported(GGTK_TENSOR_Q8_1));
    CHECK(!inf_quantize_tensor_type_supported(GGTK_TENSOR_I32));
    CHECK(inf_quantize_tensor_type_supported(GGTK_TENSOR_BF16));
    CHECK(inf_quantize_tensor_type_supported(GGTK_TENSOR_Q6_K));
    CHECK(inf_quantize_plan_new(test_tmpfile("missing.gguf"), &o, &err) == NULL);
    CHECK(err.status == GGTK_ERR_IO && strstr(err.message, "missing.gguf"));
}

TEST(test_file_type_names_follow_llama_quantize)
{
    CHECK(inf_quantize_file_type_from_name("Q4_K_M") == GGTK_FILE_TYPE_Q4_K_M);
    CHECK(inf_quantize_file_type_from_name("q4_k_m") == GGTK_FILE_TYPE_Q4_K_M);
    CHECK(inf_quantize_file_type_from_name("q4_k") == GGTK_FILE_TYPE_Q4_K_M); /* alias */
    CHECK(inf_quantize_file_type_from_name("Q3_K") == GGTK_FILE_TYPE_Q3_K_M);
    CHECK(inf_quantize_file_type_from_name("q5_k") == GGTK_FILE_TYPE_Q5_K_M);
    CHECK(inf_quantize_file_type_from_name("q6_k") == GGTK_FILE_TYPE_Q6_K);
    CHECK(inf_quantize_file_type_from_name("f32") == GGTK_FILE_TYPE_F32);
    CHECK(inf_quantize_file_type_from_name("BF16") == GGTK_FILE_TYPE_BF16);
    CHECK(inf_quantize_file_type_from_name("15") == GGTK_FILE_TYPE_Q4_K_M);
    CHECK(inf_quantize_file_type_from_name("0") == GGTK_FILE_TYPE_F32);
    CHECK(inf_quantize_file_type_from_name("4") == -1);  /* retired */
    CHECK(inf_quantize_file_type_from_name("39") == -1); /* NVFP4: llama-quantize has no option */
    CHECK(inf_quantize_file_type_from_name("Q4_K_X") == -1);
    CHECK(inf_quantize_file_type_from_name("") == -1);
    CHECK(inf_quantize_file_type_from_name("COPY") == -1);
    CHECK(inf_quantize_file_type_from_name("IQ2_XS") == GGTK_FILE_TYPE_IQ2_XS);
    CHECK(strcmp(inf_quantize_file_type_name(GGTK_FILE_TYPE_Q3_K_S), "Q3_K_S") == 0);
    CHECK(strcmp(inf_quantize_file_type_name(GGTK_FILE_TYPE_F32), "F32") == 0);
    CHECK(inf_quantize_file_type_name(GGTK_FILE_TYPE_NVFP4) == NULL);
    CHECK(inf_quantize_file_type_name(4) == NULL);
    CHECK(inf_quantize_file_type_supported(GGTK_FILE_TYPE_Q5_K_S));
    CHECK(!inf_quantize_file_type_supported(GGTK_FILE_TYPE_IQ2_XS));
    CHECK(!inf_quantize_file_type_supported(GGTK_FILE_TYPE_Q2_K_S));
}
