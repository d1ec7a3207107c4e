/* test_ops.c - every operation except mul_mat computed by the CPU backend against its naive
 * reference (ref_ops.c), on random shapes and on non-contiguous (permuted, transposed) inputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "infer_util.h"
#include "ref_ops.h"
#include "test.h"

/* Layouts an input may have; the element values do not depend on it. */
enum layout { CONTIGUOUS, PERMUTED, TRANSPOSED, LAYOUT_COUNT };

/* A random F32 input of shape ne in the given layout (a view of a leaf for the last two). */
static inf_tensor *input(inf_context *ctx, test_rng *rng, const int64_t ne[4], enum layout layout)
{
    inf_tensor *t;
    if (layout == PERMUTED) {
        t = inf_permute(ctx, inf_tensor_new_4d(ctx, GGTK_TENSOR_F32, ne[0], ne[2], ne[1], ne[3]), 0, 2,
                        1, 3);
    } else if (layout == TRANSPOSED) {
        t = inf_transpose(ctx, inf_tensor_new_4d(ctx, GGTK_TENSOR_F32, ne[1], ne[0], ne[2], ne[3]));
    } else {
        t = inf_tensor_new_4d(ctx, GGTK_TENSOR_F32, ne[0], ne[1], ne[2], ne[3]);
    }
    tensor_fill(t, rng, -2.0f, 2.0f);
    return t;
}

static void random_shape(test_rng *rng, int64_t ne[4])
{
    ne[0] = rng_int(rng, 1, 70);
    ne[1] = rng_int(rng, 1, 9);
    ne[2] = rng_int(rng, 1, 5);
    ne[3] = rng_int(rng, 1, 3);
}

TEST(test_add_and_mul_broadcast_match_reference)
{
    test_rng rng = {42};
    for (int iter = 0; iter < 24; iter++) {
        inf_context *ctx = data_context(8);
        int64_t ne[4], bne[4];
        random_shape(&rng, ne);
        for (int i = 0; i < 4; i++)
            bne[i] = rng_int(&rng, 0, 1) ? ne[i] : 1; /* 1 divides everything: broadcast */
        inf_tensor *a = input(ctx, &rng, ne, (enum layout)(iter % LAYOUT_COUNT));
        inf_tensor *b = input(ctx, &rng, bne, (enum layout)((iter / 3) % LAYOUT_COUNT));
        inf_op op = iter % 2 ? INF_OP_ADD : INF_OP_MUL;
        inf_tensor *out = op == INF_OP_ADD ? inf_add(ctx, a, b) : inf_mul(ctx, a, b);
        CHECK_MSG(out, "%s", inf_context_error(ctx)->message);
        CHECK(compute_graph(ctx, out, 1 + iter % 2) == GGTK_OK);
        float *want = malloc((size_t)inf_tensor_nelements(out) * sizeof *want);
        ref_binary(a, b, op, want);
        double err = compare_with(out, want, 1e-6, 1e-6);
        free(want);
        inf_context_free(ctx);
        CHECK_MSG(err <= 1, "iteration %d: error %g", iter, err);
    }
}

TEST(test_scale_silu_rms_norm_match_reference_on_any_layout)
{
    test_rng rng = {7};
    for (int iter = 0; iter < 18; iter++) {
        inf_context *ctx = data_context(8);
        int64_t ne[4];
        random_shape(&rng, ne);
        inf_tensor *a = input(ctx, &rng, ne, (enum layout)(iter % LAYOUT_COUNT));
        int which = iter / LAYOUT_COUNT % 3;
        inf_tensor *out = which == 0   ? inf_scale(ctx, a, 0.37f)
                          : which == 1 ? inf_silu(ctx, a)
                                       : inf_rms_norm(ctx, a, 1e-5f);
        CHECK(compute_graph(ctx, out, 2) == GGTK_OK);
        float *want = malloc((size_t)inf_tensor_nelements(out) * sizeof *want);
        if (which == 0)
            ref_scale(a, 0.37f, want);
        else if (which == 1)
            ref_silu(a, want);
        else
            ref_rms_norm(a, 1e-5f, want);
        double err = compare_with(out, want, 1e-6, 2e-6);
        free(want);
        inf_context_free(ctx);
        CHECK_MSG(err <= 1, "iteration %d (op %d): error %g", iter, which, err);
    }
}

/* One row as ggml normalises it: squares in float, summed in double in element order. */
static void ggml_rms_norm_row(const float *x, int64_t n, float eps, float *out)
{
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += (double)(x[i] * x[i]);
    const float scale = 1.0f / sqrtf((float)(sum / (double)n) + eps);
    for (int64_t i = 0; i < n; i++)
        out[i] = x[i] * scale;
}

/* Bit for bit ggml's result, whatever the number of rows and threads (the CPU kernel normalises
 * several rows side by side, and a thread's rows need not fill its last run). Each row has its
 * own scale, so a row normalised with another row's sum shows. */
TEST(test_rms_norm_sums_each_row_as_ggml_does)
{
    test_rng rng = {11};
    enum { COLS = 301 };
    for (int rows = 1; rows <= 9; rows++) {
        for (int threads = 1; threads <= 3; threads++) {
            inf_context *ctx = data_context(4);
            inf_tensor *a = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, COLS, rows);
            float *x = (float *)a->data;
            for (int64_t e = 0; e < (int64_t)COLS * rows; e++)
                x[e] = rng_uniform(&rng, -1.0f, 1.0f) * (float)(1 + e / COLS);
            inf_tensor *out = inf_rms_norm(ctx, a, 1e-6f);
            CHECK(compute_graph(ctx, out, threads) == GGTK_OK);
            int differ = 0;
            for (int r = 0; r < rows; r++) {
                float want[COLS];
                ggml_rms_norm_row(x + (size_t)r * COLS, COLS, 1e-6f, want);
                differ += memcmp(want, (const float *)out->data + (size_t)r * COLS, sizeof want) != 0;
            }
            inf_context_free(ctx);
            CHECK_MSG(differ == 0, "%d rows, %d threads: %d rows differ from ggml's result", rows,
                      threads, differ);
        }
    }
}

TEST(test_swiglu_matches_reference)
{
    test_rng rng = {9};
    for (int iter = 0; iter < 6; iter++) {
        inf_context *ctx = data_context(8);
        int64_t ne[4];
        random_shape(&rng, ne);
        inf_tensor *gate = input(ctx, &rng, ne, (enum layout)(iter % LAYOUT_COUNT));
        inf_tensor *up = input(ctx, &rng, ne, CONTIGUOUS);
        inf_tensor *out = inf_swiglu(ctx, gate, up);
        CHECK(compute_graph(ctx, out, 2) == GGTK_OK);
        float *want = malloc((size_t)inf_tensor_nelements(out) * sizeof *want);
        ref_swiglu(gate, up, want);
        double err = compare_with(out, want, 1e-6, 2e-6);
        free(want);
        inf_context_free(ctx);
        CHECK_MSG(err <= 1, "iteration %d: error %g", iter, err);
    }
}

TEST(test_rope_normal_and_neox_match_reference)
{
    test_rng rng = {11};
    for (int iter = 0; iter < 16; iter++) {
        inf_context *ctx = data_context(8);
        const int64_t head_dim = 2 * rng_int(&rng, 1, 40), n_head = rng_int(&rng, 1, 5);
        const int64_t n_tokens = rng_int(&rng, 1, 12);
        const int n_dims = (int)(2 * rng_int(&rng, 1, head_dim / 2));
        const inf_rope_mode mode = iter % 2 ? INF_ROPE_NEOX : INF_ROPE_NORMAL;
        const float freq_base = iter % 3 ? 10000.0f : 100000.0f;
        const float freq_scale = iter % 4 == 3 ? 0.25f : 1.0f;
        inf_tensor *a = input(ctx, &rng, (int64_t[]){head_dim, n_head, n_tokens, 1},
                              iter % 3 == 1 ? PERMUTED : CONTIGUOUS);
        inf_tensor *pos = inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, n_tokens);
        for (int64_t t = 0; t < n_tokens; t++)
            tensor_set(pos, t, 0, 0, 0, (float)rng_int(&rng, 0, 4000));
        inf_tensor *out = inf_rope(ctx, a, pos, n_dims, mode, freq_base, freq_scale);
        CHECK_MSG(out, "%s", inf_context_error(ctx)->message);
        CHECK(compute_graph(ctx, out, 2) == GGTK_OK);
        float *want = malloc((size_t)inf_tensor_nelements(out) * sizeof *want);
        ref_rope(a, pos, n_dims, mode, freq_base, freq_scale, want);
        double err = compare_with(out, want, 2e-6, 2e-6);
        free(want);
        inf_context_free(ctx);
        CHECK_MSG(err <= 1, "iteration %d: error %g", iter, err);
    }
}

TEST(test_soft_max_with_mask_and_causal_past_matches_reference)
{
    test_rng rng = {13};
    for (int iter = 0; iter < 16; iter++) {
        inf_context *ctx = data_context(8);
        const int64_t n_q = rng_int(&rng, 1, 9), n_past = rng_int(&rng, 0, 20);
        const int64_t n_kv = n_past + n_q + rng_int(&rng, 0, 3), heads = rng_int(&rng, 1, 4);
        const bool causal = iter % 2 == 0;
        inf_tensor *a = input(ctx, &rng, (int64_t[]){n_kv, n_q, heads, 1},
                              iter % 3 == 2 ? PERMUTED : CONTIGUOUS);
        inf_tensor *mask = NULL;
        if (!causal) {
            mask = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, n_kv, n_q);
            tensor_fill(mask, &rng, -1.0f, 1.0f);
            tensor_set(mask, 0, n_q - 1, 0, 0, -INFINITY);
        }
        const float scale = 0.125f * (float)(iter + 1);
        inf_tensor *out = causal ? inf_soft_max_causal(ctx, a, scale, n_past)
                                 : inf_soft_max(ctx, a, mask, scale);
        CHECK_MSG(out, "%s", inf_context_error(ctx)->message);
        CHECK(compute_graph(ctx, out, 2) == GGTK_OK);
        float *want = malloc((size_t)inf_tensor_nelements(out) * sizeof *want);
        ref_soft_max(a, mask, scale, causal, n_past, want);
        double err = compare_with(out, want, 1e-7, 5e-6);
        free(want);
        inf_context_free(ctx);
        CHECK_MSG(err <= 1, "iteration %d: error %g", iter, err);
    }
}

TEST(test_get_rows_dequantizes_every_weight_type)
{
    const ggtk_tensor_type types[] = {GGTK_TENSOR_F32, GGTK_TENSOR_F16, GGTK_TENSOR_BF16,
                                      GGTK_TENSOR_Q8_0, GGTK_TENSOR_Q4_0, GGTK_TENSOR_Q4_1};
    test_rng rng = {17};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        inf_context *ctx = data_context(8);
        inf_tensor *table = inf_tensor_new_2d(ctx, types[t], 96, 21);
        tensor_fill_quantized(table, &rng, -1.0f, 1.0f);
        inf_tensor *ids = inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, 7);
        for (int i = 0; i < 7; i++)
            tensor_set(ids, i, 0, 0, 0, (float)rng_int(&rng, 0, 20));
        inf_tensor *out = inf_get_rows(ctx, table, ids);
        CHECK(compute_graph(ctx, out, 2) == GGTK_OK);
        float want[96 * 7];
        ref_get_rows(table, ids, want);
        double err = compare_with(out, want, 0, 0);
        inf_context_free(ctx);
        CHECK_MSG(err == 0, "type %d: rows differ from the dequantized table", (int)types[t]);
    }
}

TEST(test_get_rows_fails_on_an_index_out_of_range)
{
    inf_context *ctx = data_context(1);
    inf_tensor *table = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 4, 3);
    inf_tensor *ids = inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, 1);
    tensor_set(ids, 0, 0, 0, 0, 3.0f);
    CHECK(compute_graph(ctx, inf_get_rows(ctx, table, ids), 2) == GGTK_ERR_INVALID);
    inf_context_free(ctx);
}

TEST(test_set_rows_writes_cache_rows_converting_to_f16)
{
    test_rng rng = {19};
    for (int f16 = 0; f16 < 2; f16++) {
        inf_context *ctx = data_context(4);
        inf_tensor *cache = inf_tensor_new_2d(ctx, f16 ? GGTK_TENSOR_F16 : GGTK_TENSOR_F32, 40, 16);
        tensor_fill(cache, &rng, -1, 1);
        float *before = ref_dense(cache);
        inf_tensor *rows = input(ctx, &rng, (int64_t[]){40, 3, 1, 1}, TRANSPOSED);
        inf_tensor *ids = inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, 3);
        const int where[3] = {5, 0, 15};
        for (int i = 0; i < 3; i++)
            tensor_set(ids, i, 0, 0, 0, (float)where[i]);
        inf_tensor *out = inf_set_rows(ctx, cache, rows, ids);
        CHECK(out && out->data == cache->data);
        CHECK(compute_graph(ctx, out, 2) == GGTK_OK);
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 40; k++) {
                float v = tensor_get(rows, k, i, 0, 0);
                before[where[i] * 40 + k] = f16 ? inf_fp16_to_fp32(inf_fp32_to_fp16(v)) : v;
            }
        double err = compare_with(cache, before, 0, 0);
        free(before);
        inf_context_free(ctx);
        CHECK_MSG(err == 0, "f16=%d: cache differs from the expected rows", f16);
    }
}

TEST(test_cpy_into_a_cache_view_and_cont_of_a_permutation)
{
    test_rng rng = {23};
    inf_context *ctx = data_context(4);
    inf_tensor *src = input(ctx, &rng, (int64_t[]){8, 6, 3, 1}, PERMUTED);
    inf_tensor *cache = inf_tensor_new_2d(ctx, GGTK_TENSOR_F16, 8 * 6 * 3, 4);
    inf_tensor *slot = inf_view_1d(ctx, cache, 8 * 6 * 3, cache->nb[1] * 2);
    inf_tensor *copied = inf_cpy(ctx, src, slot);
    inf_tensor *cont = inf_cont(ctx, src);
    CHECK(copied && cont && inf_tensor_is_contiguous(cont));
    CHECK(compute_graph(ctx, copied, 2) == GGTK_OK);
    CHECK(compute_graph(ctx, cont, 1) == GGTK_OK);
    float *want = ref_dense(src);
    CHECK(compare_with(cont, want, 0, 0) == 0);
    for (int k = 0; k < 8 * 6 * 3; k++) {
        float got = tensor_get(cache, k, 2, 0, 0);
        CHECK_MSG(got == inf_fp16_to_fp32(inf_fp32_to_fp16(want[k])), "element %d", k);
    }
    free(want);
    inf_context_free(ctx);
}

/* cpy of every layout into F32, F16 and BF16 destinations whose rows hold whole source rows
 * (converted a row at a time, strided sources gathered: the transposed V cache write), rows of
 * 300 elements (more than one gathered piece), and a destination row length no source row divides
 * (element by element): every element is the source's, converted once. */
TEST(test_cpy_converts_every_layout_into_float_rows)
{
    test_rng rng = {31};
    const ggtk_tensor_type types[] = {GGTK_TENSOR_F32, GGTK_TENSOR_F16, GGTK_TENSOR_BF16};
    const int64_t shapes[][4] = {{8, 6, 3, 1}, {300, 2, 2, 1}, {7, 5, 2, 1}};
    const int64_t dst_rows[] = {8 * 6, 300, 5}; /* 5 is no multiple of 7 */
    for (int layout = 0; layout < LAYOUT_COUNT; layout++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
            for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
                inf_context *ctx = data_context(8);
                inf_tensor *src = input(ctx, &rng, shapes[sh], (enum layout)layout);
                const int64_t n = inf_tensor_nelements(src);
                inf_tensor *dst = inf_tensor_new_2d(ctx, types[t], dst_rows[sh], n / dst_rows[sh]);
                CHECK(compute_graph(ctx, inf_cpy(ctx, src, dst), 2) == GGTK_OK);
                float *want = ref_dense(src);
                int bad = 0;
                for (int64_t k = 0; k < n; k++) {
                    const float v = types[t] == GGTK_TENSOR_F32   ? want[k]
                                    : types[t] == GGTK_TENSOR_F16 ? inf_fp16_to_fp32(inf_fp32_to_fp16(want[k]))
                                                                  : inf_bf16_to_fp32(inf_fp32_to_bf16(want[k]));
                    bad += tensor_get(dst, k % dst_rows[sh], k / dst_rows[sh], 0, 0) != v;
                }
                CHECK_MSG(bad == 0, "layout %d type %d shape %zu: %d elements differ", layout, (int)types[t], sh, bad);
                free(want);
                inf_context_free(ctx);
            }
}

/* cpy element by element (a destination row length no source row divides) into a 4-D
 * destination: the walk carries from each dimension into the next, up to the last. */
TEST(test_cpy_element_walk_crosses_every_destination_dimension)
{
    test_rng rng = {37};
    for (int layout = 0; layout < LAYOUT_COUNT; layout++) {
        inf_context *ctx = data_context(4);
        inf_tensor *src = input(ctx, &rng, (int64_t[]){7, 6, 2, 1}, (enum layout)layout);
        inf_tensor *dst = inf_tensor_new_4d(ctx, GGTK_TENSOR_F32, 4, 3, 1, 7);
        CHECK(compute_graph(ctx, inf_cpy(ctx, src, dst), 2) == GGTK_OK);
        float *want = ref_dense(src);
        CHECK_MSG(compare_with(dst, want, 0, 0) == 0, "layout %d: the copy differs", layout);
        free(want);
        inf_context_free(ctx);
    }
}

TEST(test_silu_swiglu_soft_max_match_reference_at_every_simd_level)
{
    test_rng rng = {29};
    for (int level = INF_SIMD_SCALAR; level < INF_SIMD_LEVEL_COUNT; level++) {
        if (inf_simd_force((inf_simd_level)level) != (inf_simd_level)level)
            continue;
        for (int iter = 0; iter < 6; iter++) {
            inf_context *ctx = data_context(8);
            /* Rows from 1 to 100 elements: whole vectors and tails; values reach the clamps. */
            const int64_t ne[4] = {rng_int(&rng, 1, 100), rng_int(&rng, 1, 6), 2, 1};
            inf_tensor *a = input(ctx, &rng, ne, CONTIGUOUS), *b = input(ctx, &rng, ne, CONTIGUOUS);
            tensor_set(a, 0, 0, 0, 0, -95.0f);
            tensor_set(a, ne[0] - 1, 0, 0, 0, 95.0f);
            inf_tensor *outs[3] = {inf_silu(ctx, a), inf_swiglu(ctx, a, b),
                                   inf_soft_max(ctx, a, NULL, 0.7f)};
            const size_t n = (size_t)inf_tensor_nelements(a);
            float *want = malloc(n * sizeof *want);
            for (int o = 0; o < 3; o++) {
                CHECK(compute_graph(ctx, outs[o], 2) == GGTK_OK);
                if (o == 0)
                    ref_silu(a, want);
                else if (o == 1)
                    ref_swiglu(a, b, want);
                else
                    ref_soft_max(a, NULL, 0.7f, false, 0, want);
                double err = compare_with(outs[o], want, 1e-7, 4e-6);
                CHECK_MSG(err <= 1, "%s op %d, row %lld: error %g",
                          inf_simd_level_name((inf_simd_level)level), o, (long long)ne[0], err);
            }
            free(want);
            inf_context_free(ctx);
        }
    }
}
