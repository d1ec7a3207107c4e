/* test_flash_attn.c - FLASH_ATTN on the CPU against the unfused attention the model builds
 * (MUL_MAT, SOFTCAP, SOFT_MAX, MUL_MAT over views of K and transposed V caches) and against a
 * plain double-precision reference: causal, windowed, soft-capped, grouped-query, F16 and F32
 * caches, n_past > 0, 1 to 64 queries and head sizes from 32 to 256. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_simd.h>

#include "infer_util.h"
#include "test.h"

/* One attention problem. */
typedef struct attn_case {
    int64_t head, n_q, n_past, extra_keys; /* extra_keys: keys past the causal limit */
    int64_t n_head, n_head_kv, window;
    ggtk_tensor_type kv_type;
    bool causal;
    float scale, softcap;
} attn_case;

/* The tensors of one problem, laid out as graph_blocks.c lays out the model's: q a permuted view
 * of [head, n_head, n_q] activations, k a view of a cache [n_embd_kv, cells], v (unfused: vt) a
 * view of a transposed cache [cells, n_embd_kv]. */
typedef struct attn_inputs {
    inf_tensor *q, *k, *vt, *v;
    int64_t n_kv;
} attn_inputs;

static attn_inputs make_inputs(inf_context *ctx, test_rng *rng, const attn_case *c)
{
    attn_inputs in;
    const int64_t n_kv = c->n_past + c->n_q + c->extra_keys, cells = n_kv + 3;
    const int64_t n_embd_kv = c->head * c->n_head_kv;
    inf_tensor *q_act = inf_tensor_new_3d(ctx, GGTK_TENSOR_F32, c->head, c->n_head, c->n_q);
    inf_tensor *k_cache = inf_tensor_new_2d(ctx, c->kv_type, n_embd_kv, cells);
    inf_tensor *v_cache = inf_tensor_new_2d(ctx, c->kv_type, cells, n_embd_kv);
    tensor_fill(q_act, rng, -1.0f, 1.0f);
    tensor_fill(k_cache, rng, -1.0f, 1.0f);
    tensor_fill(v_cache, rng, -1.0f, 1.0f);
    const size_t k_head = inf_type_row_size(c->kv_type, c->head);
    /* start one cell in, as a sliding-window block's view does */
    in.k = inf_view_3d(ctx, k_cache, c->head, n_kv, c->n_head_kv, k_cache->nb[1], k_head,
                       k_cache->nb[1]);
    in.vt = inf_view_3d(ctx, v_cache, n_kv, c->head, c->n_head_kv, v_cache->nb[1],
                        (size_t)c->head * v_cache->nb[1], v_cache->nb[0]);
    in.v = inf_transpose(ctx, in.vt);
    in.q = inf_permute(ctx, q_act, 0, 2, 1, 3); /* [head, n_q, n_head] */
    in.n_kv = n_kv;
    return in;
}

static inf_tensor *fused(inf_context *ctx, const attn_case *c, const attn_inputs *in)
{
    return c->causal ? inf_flash_attn_causal(ctx, in->q, in->k, in->v, c->scale, c->softcap,
                                             c->n_past, c->window)
                     : inf_flash_attn(ctx, in->q, in->k, in->v, c->scale, c->softcap);
}

/* The unfused path, permuted to the fused result's [head, n_head, n_q]. */
static inf_tensor *unfused(inf_context *ctx, const attn_case *c, const attn_inputs *in)
{
    inf_tensor *kq = inf_mul_mat(ctx, in->k, in->q);
    if (c->softcap > 0)
        kq = inf_softcap(ctx, kq, c->softcap);
    if (!c->causal)
        kq = inf_soft_max(ctx, kq, NULL, c->scale);
    else if (c->window > 0)
        kq = inf_soft_max_causal_window(ctx, kq, c->scale, c->n_past, c->window);
    else
        kq = inf_soft_max_causal(ctx, kq, c->scale, c->n_past);
    return inf_cont(ctx, inf_permute(ctx, inf_mul_mat(ctx, in->vt, kq), 0, 2, 1, 3));
}

/* The attention in double, dense [n_q][n_head][head]. */
static float *reference(const attn_case *c, const attn_inputs *in)
{
    const int64_t head = c->head, n_kv = in->n_kv, group = c->n_head / c->n_head_kv;
    float *out = calloc((size_t)(c->n_q * c->n_head * head), sizeof *out);
    double *w = malloc((size_t)n_kv * sizeof *w);
    for (int64_t h = 0; h < c->n_head; h++) {
        for (int64_t i = 0; i < c->n_q; i++) {
            const int64_t last = c->causal ? c->n_past + i : n_kv - 1;
            const int64_t first = c->window > 0 && last - c->window + 1 > 0 ? last - c->window + 1
                                                                            : 0;
            double max = -INFINITY, sum = 0;
            for (int64_t j = first; j <= last; j++) {
                double s = 0;
                for (int64_t d = 0; d < head; d++)
                    s += (double)tensor_get(in->q, d, i, h, 0) *
                         tensor_get(in->k, d, j, h / group, 0);
                if (c->softcap > 0)
                    s = tanh(s / c->softcap) * c->softcap;
                w[j] = s * c->scale;
                max = w[j] > max ? w[j] : max;
            }
            for (int64_t j = first; j <= last; j++)
                sum += w[j] = exp(w[j] - max);
            for (int64_t d = 0; d < head; d++) {
                double o = 0;
                for (int64_t j = first; j <= last; j++)
                    o += w[j] * tensor_get(in->v, d, j, h / group, 0);
                out[(i * c->n_head + h) * head + d] = (float)(o / sum);
            }
        }
    }
    free(w);
    return out;
}

/* Fused against unfused (float spread) and both against the double reference. */
static void check_case(const attn_case *c, uint64_t seed, int n_threads)
{
    test_rng rng = {seed};
    inf_context *ctx = data_context(64);
    attn_inputs in = make_inputs(ctx, &rng, c);
    inf_tensor *f = fused(ctx, c, &in), *u = unfused(ctx, c, &in);
    CHECK_MSG(f && u, "%s", inf_context_error(ctx)->message);
    CHECK(f->ne[0] == c->head && f->ne[1] == c->n_head && f->ne[2] == c->n_q);
    CHECK(compute_graph(ctx, f, n_threads) == GGTK_OK);
    CHECK(compute_graph(ctx, u, n_threads) == GGTK_OK);
    float *want = reference(c, &in);
    float *unfused_out = malloc((size_t)inf_tensor_nelements(u) * sizeof *unfused_out);
    memcpy(unfused_out, u->data, (size_t)inf_tensor_nelements(u) * sizeof *unfused_out);
    const double vs_unfused = compare_with(f, unfused_out, 2e-6, 2e-5);
    const double vs_ref = compare_with(f, want, 2e-6, 2e-5);
    const double unfused_vs_ref = compare_with(u, want, 2e-6, 2e-5);
    free(want);
    free(unfused_out);
    inf_context_free(ctx);
    CHECK_MSG(vs_unfused <= 1 && vs_ref <= 1 && unfused_vs_ref <= 1,
              "head %lld n_q %lld n_past %lld heads %lld/%lld window %lld %s causal %d softcap %g:"
              " fused vs unfused %g, fused vs double %g, unfused vs double %g",
              (long long)c->head, (long long)c->n_q, (long long)c->n_past, (long long)c->n_head,
              (long long)c->n_head_kv, (long long)c->window, ggtk_tensor_type_info_get(c->kv_type)->name, c->causal,
              c->softcap, vs_unfused, vs_ref, unfused_vs_ref);
}

TEST(test_flash_attn_causal_matches_unfused_for_batches_1_to_64)
{
    const int64_t batches[] = {1, 2, 7, 16, 17, 33, 64};
    for (size_t i = 0; i < sizeof batches / sizeof *batches; i++) {
        const attn_case c = {.head = 64, .n_q = batches[i], .n_past = (int64_t)i * 13,
                             .n_head = 3, .n_head_kv = 3, .kv_type = GGTK_TENSOR_F16,
                             .causal = true, .scale = 0.125f};
        check_case(&c, 100 + i, 2);
    }
}

TEST(test_flash_attn_grouped_query_heads_and_f32_cache_match_unfused)
{
    const attn_case cases[] = {
        {.head = 64, .n_q = 20, .n_past = 70, .n_head = 9, .n_head_kv = 3,
         .kv_type = GGTK_TENSOR_F16, .causal = true, .scale = 0.125f},
        {.head = 64, .n_q = 20, .n_past = 70, .n_head = 4, .n_head_kv = 1,
         .kv_type = GGTK_TENSOR_F32, .causal = true, .scale = 0.125f},
        {.head = 32, .n_q = 5, .n_past = 3, .extra_keys = 9, .n_head = 4, .n_head_kv = 2,
         .kv_type = GGTK_TENSOR_F32, .causal = false, .scale = 0.3f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(&cases[i], 200 + i, 3);
}

TEST(test_flash_attn_sliding_window_and_softcap_match_unfused)
{
    const attn_case cases[] = {
        {.head = 256, .n_q = 40, .n_past = 30, .n_head = 4, .n_head_kv = 1, .window = 16,
         .kv_type = GGTK_TENSOR_F16, .causal = true, .scale = 0.0625f},
        {.head = 128, .n_q = 9, .n_past = 150, .n_head = 2, .n_head_kv = 2, .window = 100,
         .kv_type = GGTK_TENSOR_F32, .causal = true, .scale = 1.0f},
        {.head = 96, .n_q = 33, .n_past = 0, .n_head = 2, .n_head_kv = 1, .window = 1,
         .kv_type = GGTK_TENSOR_F16, .causal = true, .scale = 0.1f},
        /* soft-capped scores: the caps bite (|q.k| reaches ~10 at head 96) */
        {.head = 96, .n_q = 12, .n_past = 80, .n_head = 2, .n_head_kv = 1, .window = 0,
         .kv_type = GGTK_TENSOR_F16, .causal = true, .scale = 1.0f, .softcap = 3.0f},
        {.head = 160, .n_q = 17, .n_past = 5, .n_head = 6, .n_head_kv = 2, .window = 10,
         .kv_type = GGTK_TENSOR_F32, .causal = true, .scale = 0.5f, .softcap = 2.0f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(&cases[i], 300 + i, 2);
}

TEST(test_flash_attn_result_does_not_depend_on_thread_count)
{
    const attn_case c = {.head = 64, .n_q = 50, .n_past = 90, .n_head = 4, .n_head_kv = 2,
                         .window = 70, .kv_type = GGTK_TENSOR_F16, .causal = true, .scale = 0.125f};
    test_rng rng = {400};
    inf_context *ctx = data_context(16);
    attn_inputs in = make_inputs(ctx, &rng, &c);
    inf_tensor *one = fused(ctx, &c, &in), *three = fused(ctx, &c, &in);
    CHECK(compute_graph(ctx, one, 1) == GGTK_OK);
    CHECK(compute_graph(ctx, three, 3) == GGTK_OK);
    CHECK(memcmp(one->data, three->data, inf_tensor_nbytes(one)) == 0);
    inf_context_free(ctx);
}

TEST(test_flash_attn_rejects_shapes_that_do_not_fit)
{
    inf_context *ctx = inf_context_new(1 << 20, true);
    inf_tensor *q = inf_tensor_new_3d(ctx, GGTK_TENSOR_F32, 64, 8, 6);
    inf_tensor *k = inf_tensor_new_3d(ctx, GGTK_TENSOR_F16, 64, 20, 4);
    inf_tensor *v = inf_tensor_new_3d(ctx, GGTK_TENSOR_F16, 64, 20, 4);
    CHECK(inf_flash_attn(ctx, q, k, v, 1.0f, 0.0f) == NULL); /* 6 heads over 4 */
    CHECK(strstr(inf_context_error(ctx)->message, "FLASH_ATTN") != NULL);

    inf_context *ctx2 = inf_context_new(1 << 20, true);
    q = inf_tensor_new_3d(ctx2, GGTK_TENSOR_F32, 64, 8, 4);
    k = inf_tensor_new_3d(ctx2, GGTK_TENSOR_F16, 64, 20, 2);
    v = inf_tensor_new_3d(ctx2, GGTK_TENSOR_F16, 64, 20, 2);
    CHECK(inf_flash_attn_causal(ctx2, q, k, v, 1.0f, 0.0f, 12, 4) != NULL); /* 12 + 8 keys */
    CHECK(inf_flash_attn_causal(ctx2, q, k, v, 1.0f, 0.0f, 13, 0) == NULL);
    CHECK(inf_flash_attn(ctx2, q, k, v, 1.0f, -1.0f) == NULL);
    inf_context_free(ctx2);
    inf_context_free(ctx);
}

TEST(test_flash_attn_gives_the_same_bits_at_every_simd_level)
{
    /* head 80: two vector blocks of the output and a tail */
    const attn_case c = {.head = 80, .n_q = 21, .n_past = 70, .n_head = 4, .n_head_kv = 2,
                         .window = 50, .kv_type = GGTK_TENSOR_F16, .causal = true, .scale = 0.3f,
                         .softcap = 4.0f};
    test_rng rng = {500};
    inf_context *ctx = data_context(16);
    attn_inputs in = make_inputs(ctx, &rng, &c);
    inf_tensor *out[INF_SIMD_LEVEL_COUNT];
    const inf_simd_level initial = inf_simd_active();
    for (int level = INF_SIMD_SCALAR; level < INF_SIMD_LEVEL_COUNT; level++) {
        out[level] = NULL;
        if (inf_simd_force((inf_simd_level)level) != (inf_simd_level)level)
            continue;
        out[level] = fused(ctx, &c, &in);
        CHECK(compute_graph(ctx, out[level], 2) == GGTK_OK);
        CHECK_MSG(memcmp(out[level]->data, out[INF_SIMD_SCALAR]->data,
                         inf_tensor_nbytes(out[level])) == 0,
                  "%s differs from scalar", inf_simd_level_name((inf_simd_level)level));
    }
    inf_simd_force(initial);
    inf_context_free(ctx);
}
