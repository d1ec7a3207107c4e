/* test_mul_mat_shared_input.c - products of one graph that multiply the same input (Q, K and V;
 * an FFN's gate and up) pack it once: each must equal the same product computed in a graph of
 * its own, bit for bit, whatever runs between them, and an input written between two products
 * is packed again. */
#include <string.h>

#include <ggtk/inf_simd.h>

#include "infer_util.h"
#include "test.h"

enum { K = 256, M = 40, N = 37, HEAD = 64, HEADS = 4 };

/* The weight types in graph order: repeats (the packing is reused), formats whose activations
 * differ (Q8_0, Q4_0's offset, Q4_1's Q8_1, F16's floats) and a repeat after a float product. */
static const ggtk_tensor_type order[] = {GGTK_TENSOR_Q8_0, GGTK_TENSOR_Q8_0, GGTK_TENSOR_Q4_0,
                                         GGTK_TENSOR_Q4_1, GGTK_TENSOR_F16,  GGTK_TENSOR_Q8_0};
enum { N_PRODUCTS = sizeof order / sizeof order[0] };

static inf_tensor *input_node(inf_context *ctx, inf_tensor *x_leaf)
{
    return inf_scale(ctx, x_leaf, 0.5f); /* a node of the graph, not a view */
}

static void check_level(inf_simd_level level, int threads)
{
    test_rng rng = {77 + (uint64_t)level};
    inf_context *ctx = data_context(64);
    inf_tensor *x_leaf = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, K, N);
    tensor_fill(x_leaf, &rng, -1, 1);
    inf_tensor *w[N_PRODUCTS];
    for (int i = 0; i < N_PRODUCTS; i++) {
        w[i] = inf_tensor_new_2d(ctx, order[i], K, M);
        tensor_fill_quantized(w[i], &rng, -1, 1);
    }
    /* A rope between the products: it takes scratch space from the same work buffer. */
    inf_tensor *heads = inf_tensor_new_3d(ctx, GGTK_TENSOR_F32, HEAD, HEADS, N);
    inf_tensor *pos = inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, N);
    tensor_fill(heads, &rng, -1, 1);
    for (int32_t t = 0; t < N; t++)
        memcpy((char *)pos->data + (size_t)t * sizeof t, &t, sizeof t);

    inf_tensor *x = input_node(ctx, x_leaf);
    inf_tensor *outs[N_PRODUCTS + 2];
    int n = 0;
    for (int i = 0; i < N_PRODUCTS; i++) {
        outs[n++] = inf_mul_mat(ctx, w[i], x);
        if (i == 0)
            outs[n++] = inf_rope(ctx, heads, pos, HEAD, INF_ROPE_NORMAL, 10000.0f, 1.0f);
    }
    CHECK(compute_graph_outputs(ctx, outs, n, threads) == GGTK_OK);

    int at = 0;
    for (int i = 0; i < N_PRODUCTS; i++, at++) {
        inf_tensor *alone = inf_mul_mat(ctx, w[i], input_node(ctx, x_leaf));
        CHECK(compute_graph(ctx, alone, threads) == GGTK_OK);
        CHECK_MSG(memcmp(outs[at]->data, alone->data, inf_tensor_nbytes(alone)) == 0,
                  "%s, %d threads: product %d (%s) differs from the same product alone",
                  inf_simd_level_name(level), threads, i, ggtk_tensor_type_info_get(order[i])->name);
        if (i == 0)
            at++; /* the rope */
    }
    inf_context_free(ctx);
}

/* A leaf, or a view, is read when its product runs: a copy into the leaf between two products
 * of it must show in the second (no packing kept from the first). */
static void check_written_between(inf_simd_level level, int threads, bool through_view)
{
    test_rng rng = {91 + (uint64_t)level};
    inf_context *ctx = data_context(16);
    inf_tensor *w = inf_tensor_new_2d(ctx, GGTK_TENSOR_Q8_0, K, M);
    inf_tensor *cache = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, K, N);
    inf_tensor *fresh = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, K, N);
    tensor_fill_quantized(w, &rng, -1, 1);
    tensor_fill(cache, &rng, -1, 1);
    tensor_fill(fresh, &rng, -1, 1);
    inf_tensor *x = through_view ? inf_view_2d(ctx, cache, K, N, cache->nb[1], 0) : cache;
    inf_tensor *outs[] = {
        inf_mul_mat(ctx, w, x),
        inf_cpy(ctx, fresh, inf_view_2d(ctx, cache, K, N, cache->nb[1], 0)),
        inf_mul_mat(ctx, w, x),
    };
    CHECK(compute_graph_outputs(ctx, outs, 3, threads) == GGTK_OK);
    inf_tensor *alone = inf_mul_mat(ctx, w, cache); /* with the copied values */
    CHECK(compute_graph(ctx, alone, threads) == GGTK_OK);
    CHECK_MSG(memcmp(outs[2]->data, alone->data, inf_tensor_nbytes(alone)) == 0,
              "%s, %d threads: the product of the %s after the copy used the values before it",
              inf_simd_level_name(level), threads, through_view ? "view" : "leaf");
    inf_context_free(ctx);
}

TEST(test_mul_mat_products_sharing_an_input_equal_products_alone)
{
    const inf_simd_level levels[] = {INF_SIMD_SCALAR, INF_SIMD_AVX2, INF_SIMD_AVX512};
    for (size_t li = 0; li < sizeof levels / sizeof levels[0]; li++) {
        if (inf_simd_force(levels[li]) != levels[li])
            continue;
        for (int threads = 1; threads <= 3; threads += 2) {
            check_level(levels[li], threads);
            check_written_between(levels[li], threads, false);
            check_written_between(levels[li], threads, true);
        }
    }
    inf_simd_force(inf_simd_detect());
}
