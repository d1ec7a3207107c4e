/* test_imatrix_collect.c - the collecting observer on small graphs run by the CPU backend: which
 * products it takes (llama-imatrix's choice), the sums of squares in token order (equal to a
 * plain float loop), the counts, strided activations, weights of several matrices, and a
 * non-finite sum stopping the compute with its error kept. */
#include <math.h>
#include <string.h>

#include <ggtk/inf_imatrix.h>

#include "../engine/infer_util.h"
#include "test.h"

/* Compute `out` with the imatrix observer, called after every node or, `filtered`, after the
 * nodes inf_imatrix_wants() accepts; returns the compute's status. */
static ggtk_status compute_observed(inf_context *ctx, inf_tensor *out, inf_imatrix *m,
                                    bool filtered)
{
    inf_graph *g = inf_graph_new(ctx, 64);
    inf_backend *cpu = inf_backend_cpu_new(2);
    ggtk_status st = !g || !cpu ? GGTK_ERR_NOMEM : inf_graph_expand(g, out, NULL);
    if (st == GGTK_OK)
        st = inf_backend_compute_filtered(cpu, g, filtered ? inf_imatrix_wants : NULL,
                                          inf_imatrix_observe, m, NULL);
    inf_backend_free(cpu);
    return st;
}

static inf_tensor *weight(inf_context *ctx, test_rng *rng, const char *name, int64_t ne0,
                          int64_t ne1, int64_t ne2)
{
    inf_tensor *w = inf_tensor_new_3d(ctx, GGTK_TENSOR_F32, ne0, ne1, ne2);
    tensor_fill(w, rng, -1, 1);
    inf_tensor_set_name(w, "%s", name);
    return w;
}

/* Sums of squares of the rows of a 2-D activation, in row order, in float. */
static void expected_sums(const inf_tensor *x, float *sums)
{
    memset(sums, 0, (size_t)x->ne[0] * sizeof *sums);
    for (int64_t r = 0; r < x->ne[1]; r++)
        for (int64_t j = 0; j < x->ne[0]; j++) {
            float v = tensor_get(x, j, r, 0, 0);
            sums[j] += v * v;
        }
}

TEST(test_imatrix_observer_collects_block_weights_only)
{
    test_rng rng = {7};
    inf_context *ctx = data_context(4);
    inf_tensor *x = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 24, 20);
    tensor_fill(x, &rng, -3, 3);
    inf_tensor *short_x = inf_view_2d(ctx, x, 24, 15, x->nb[1], 0);
    inf_tensor *up = inf_mul_mat(ctx, weight(ctx, &rng, "blk.0.ffn_up.weight", 24, 8, 1), x);
    inf_tensor *out = inf_mul_mat(ctx, weight(ctx, &rng, "output.weight", 24, 8, 1), x);
    inf_tensor *few = inf_mul_mat(ctx, weight(ctx, &rng, "blk.0.few.weight", 24, 8, 1), short_x);
    /* A product whose first operand is computed, not a model weight (like attention's). */
    inf_tensor *computed = inf_scale(ctx, weight(ctx, &rng, "blk.0.k.weight", 24, 8, 1), 2.0f);
    inf_tensor_set_name(computed, "blk.0.k.scaled");
    inf_tensor *kq = inf_mul_mat(ctx, computed, x);
    inf_tensor *sum = inf_add(ctx, inf_add(ctx, up, out), kq);
    inf_imatrix *m = inf_imatrix_new(20, "t", NULL);
    CHECK(sum && few && m);
    CHECK(compute_observed(ctx, sum, m, true) == GGTK_OK);
    CHECK(compute_observed(ctx, few, m, false) == GGTK_OK);
    CHECK(inf_imatrix_status(m, NULL) == GGTK_OK);
    CHECK_MSG(inf_imatrix_n_entries(m) == 1, "%lld entries", (long long)inf_imatrix_n_entries(m));
    const inf_imatrix_entry *e = inf_imatrix_find(m, "blk.0.ffn_up.weight");
    CHECK(e && e->n_mat == 1 && e->n_per_row == 24 && e->counts[0] == 20);
    float want[24];
    expected_sums(x, want);
    CHECK(memcmp(e->values, want, sizeof want) == 0);
    CHECK(inf_imatrix_chunk_count(m) == 1);
    inf_imatrix_free(m);
    inf_context_free(ctx);
}

/* Rows of a view (a stride longer than the row) and two products in a row add up in order. */
TEST(test_imatrix_observer_sums_strided_rows_in_token_order)
{
    test_rng rng = {11};
    inf_context *ctx = data_context(4);
    inf_tensor *wide = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 40, 16);
    tensor_fill(wide, &rng, -2, 2);
    inf_tensor *x = inf_view_2d(ctx, wide, 32, 16, wide->nb[1], 0);
    inf_tensor *w = weight(ctx, &rng, "blk.3.attn_output.weight", 32, 4, 1);
    inf_tensor *y = inf_mul_mat(ctx, w, x);
    inf_imatrix *m = inf_imatrix_new(16, NULL, NULL);
    CHECK(y && m);
    CHECK(compute_observed(ctx, y, m, false) == GGTK_OK);
    CHECK(compute_observed(ctx, y, m, true) == GGTK_OK);
    const inf_imatrix_entry *e = inf_imatrix_find(m, "blk.3.attn_output.weight");
    CHECK(e && e->counts[0] == 32 && inf_imatrix_chunk_count(m) == 2);
    float want[32];
    memset(want, 0, sizeof want);
    for (int pass = 0; pass < 2; pass++)
        for (int64_t r = 0; r < 16; r++)
            for (int64_t j = 0; j < 32; j++) {
                float v = tensor_get(wide, j, r, 0, 0);
                want[j] += v * v;
            }
    CHECK(memcmp(e->values, want, sizeof want) == 0);
    inf_imatrix_free(m);
    inf_context_free(ctx);
}

/* A weight of 2 matrices used by a batched product: one count, each matrix's own sums. */
TEST(test_imatrix_observer_keeps_matrices_of_a_3d_weight_apart)
{
    test_rng rng = {13};
    inf_context *ctx = data_context(4);
    inf_tensor *x = inf_tensor_new_3d(ctx, GGTK_TENSOR_F32, 16, 16, 2);
    tensor_fill(x, &rng, -1, 1);
    inf_tensor *y = inf_mul_mat(ctx, weight(ctx, &rng, "blk.0.pair.weight", 16, 4, 2), x);
    inf_imatrix *m = inf_imatrix_new(512, NULL, NULL);
    CHECK(y && m);
    CHECK(compute_observed(ctx, y, m, true) == GGTK_OK);
    const inf_imatrix_entry *e = inf_imatrix_find(m, "blk.0.pair.weight");
    CHECK(e && e->n_mat == 1 && e->n_per_row == 32 && e->counts[0] == 16);
    for (int64_t mat = 0; mat < 2; mat++)
        for (int64_t j = 0; j < 16; j++) {
            float want = 0;
            for (int64_t r = 0; r < 16; r++) {
                float v = tensor_get(x, j, r, mat, 0);
                want += v * v;
            }
            CHECK_MSG(e->values[mat * 16 + j] == want, "matrix %lld column %lld", (long long)mat,
                      (long long)j);
        }
    inf_imatrix_free(m);
    inf_context_free(ctx);
}

TEST(test_imatrix_observer_stops_on_a_nonfinite_sum)
{
    test_rng rng = {17};
    inf_context *ctx = data_context(4);
    inf_tensor *x = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 8, 16);
    tensor_fill(x, &rng, -1, 1);
    tensor_set(x, 5, 3, 0, 0, 3e20f);
    inf_tensor *y = inf_mul_mat(ctx, weight(ctx, &rng, "blk.0.attn_q.weight", 8, 4, 1), x);
    inf_imatrix *m = inf_imatrix_new(16, NULL, NULL);
    CHECK(y && m);
    CHECK(compute_observed(ctx, y, m, true) == GGTK_OK);
    ggtk_error err;
    CHECK(inf_imatrix_status(m, &err) == GGTK_ERR_NONFINITE);
    CHECK(strstr(err.message, "blk.0.attn_q.weight") && strstr(err.message, "value 5"));
    CHECK(!inf_imatrix_observe(NULL, 0, m)); /* stays failed */
    inf_imatrix_free(m);
    inf_context_free(ctx);
}
