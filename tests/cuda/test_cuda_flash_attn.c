/* test_cuda_flash_attn.c - the CUDA FLASH_ATTN kernel against the CPU backend's
 * (cuda_op_compare.h) on the layouts the model uses: queries a permuted view of activations, K a
 * view of a [n_embd_kv, cells] cache, V a transposed view of a [cells, n_embd_kv] cache; F16 and
 * F32 caches, head sizes 32 to 256, grouped-query heads, causal with n_past > 0, sliding
 * windows, soft-capping, 1 to 64 queries. Skipped without a CUDA device; run on the emulator
 * with make test CUDA_EMU=1.
 *
 * Tolerance: the device sums scores and outputs in another order than the CPU (lanes, tiles of
 * 32 keys) and uses its own expf/tanhf, so results agree to float rounding, not bits. */
#include <stdio.h>

#include "cuda_op_compare.h"

typedef struct fa_case {
    int64_t head, n_q, n_past, n_head, n_head_kv, window;
    ggtk_tensor_type kv_type;
    bool causal, row_v; /* row_v: V with contiguous rows instead of a transposed cache */
    float scale, softcap;
} fa_case;

static inf_tensor *build_fa(inf_context *ctx, void *user)
{
    const fa_case *c = user;
    const int64_t n_kv = c->n_past + c->n_q + (c->causal ? 0 : 5), cells = n_kv + 2;
    const int64_t n_embd_kv = c->head * c->n_head_kv;
    inf_tensor *q_act = inf_tensor_new_3d(ctx, GGTK_TENSOR_F32, c->head, c->n_head, c->n_q);
    inf_tensor *k_cache = inf_tensor_new_2d(ctx, c->kv_type, n_embd_kv, cells);
    inf_tensor *k = inf_view_3d(ctx, k_cache, c->head, n_kv, c->n_head_kv, k_cache->nb[1],
                                inf_type_row_size(c->kv_type, c->head), k_cache->nb[1]);
    inf_tensor *v;
    if (c->row_v) {
        inf_tensor *v_cache = inf_tensor_new_2d(ctx, c->kv_type, n_embd_kv, cells);
        v = inf_view_3d(ctx, v_cache, c->head, n_kv, c->n_head_kv, v_cache->nb[1],
                        inf_type_row_size(c->kv_type, c->head), 0);
    } else {
        inf_tensor *v_cache = inf_tensor_new_2d(ctx, c->kv_type, cells, n_embd_kv);
        v = inf_transpose(ctx, inf_view_3d(ctx, v_cache, n_kv, c->head, c->n_head_kv,
                                           v_cache->nb[1], (size_t)c->head * v_cache->nb[1],
                                           2 * v_cache->nb[0]));
    }
    inf_tensor *q = inf_permute(ctx, q_act, 0, 2, 1, 3);
    return c->causal ? inf_flash_attn_causal(ctx, q, k, v, c->scale, c->softcap, c->n_past,
                                             c->window)
                     : inf_flash_attn(ctx, q, k, v, c->scale, c->softcap);
}

static void check_fa(const fa_case *c, uint64_t seed)
{
    char name[160];
    snprintf(name, sizeof name, "flash_attn head %lld n_q %lld n_past %lld heads %lld/%lld "
             "window %lld %s softcap %g%s", (long long)c->head, (long long)c->n_q,
             (long long)c->n_past, (long long)c->n_head, (long long)c->n_head_kv,
             (long long)c->window, c->kv_type == GGTK_TENSOR_F16 ? "f16" : "f32", c->softcap,
             c->causal ? "" : " non-causal");
    cuda_op_case oc = {.name = name, .build = build_fa, .user = (void *)c, .seed = seed,
                       .atol = 2e-6, .rtol = 2e-5};
    CHECK_CUDA_OP(&oc);
}

TEST(test_cuda_flash_attn_causal_matches_cpu_for_batches_1_to_64)
{
    const int64_t batches[] = {1, 5, 8, 9, 33, 64};
    for (size_t i = 0; i < sizeof batches / sizeof *batches; i++) {
        const fa_case c = {.head = 64, .n_q = batches[i], .n_past = (int64_t)i * 11, .n_head = 3,
                           .n_head_kv = 3, .kv_type = GGTK_TENSOR_F16, .causal = true,
                           .scale = 0.125f};
        check_fa(&c, 10 + i);
    }
}

TEST(test_cuda_flash_attn_head_sizes_and_grouped_heads_match_cpu)
{
    const fa_case cases[] = {
        {.head = 32, .n_q = 7, .n_past = 40, .n_head = 4, .n_head_kv = 2,
         .kv_type = GGTK_TENSOR_F32, .causal = true, .scale = 0.2f},
        {.head = 128, .n_q = 12, .n_past = 70, .n_head = 9, .n_head_kv = 3,
         .kv_type = GGTK_TENSOR_F16, .causal = true, .scale = 0.09f},
        {.head = 256, .n_q = 10, .n_past = 35, .n_head = 4, .n_head_kv = 1,
         .kv_type = GGTK_TENSOR_F16, .causal = true, .scale = 0.0625f},
        {.head = 96, .n_q = 6, .n_past = 3, .n_head = 2, .n_head_kv = 2,
         .kv_type = GGTK_TENSOR_F32, .causal = false, .scale = 0.3f},
        {.head = 64, .n_q = 11, .n_past = 20, .n_head = 2, .n_head_kv = 1,
         .kv_type = GGTK_TENSOR_F16, .causal = true, .row_v = true, .scale = 0.125f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_fa(&cases[i], 20 + i);
}

TEST(test_cuda_flash_attn_sliding_window_and_softcap_match_cpu)
{
    const fa_case cases[] = {
        {.head = 256, .n_q = 20, .n_past = 30, .n_head = 4, .n_head_kv = 1, .window = 16,
         .kv_type = GGTK_TENSOR_F16, .causal = true, .scale = 0.0625f},
        {.head = 64, .n_q = 9, .n_past = 90, .n_head = 2, .n_head_kv = 2, .window = 1,
         .kv_type = GGTK_TENSOR_F32, .causal = true, .scale = 1.0f},
        {.head = 96, .n_q = 12, .n_past = 50, .n_head = 2, .n_head_kv = 1,
         .kv_type = GGTK_TENSOR_F16, .causal = true, .scale = 1.0f, .softcap = 3.0f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_fa(&cases[i], 30 + i);
}
