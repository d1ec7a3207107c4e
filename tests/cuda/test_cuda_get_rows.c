/* test_cuda_get_rows.c - GET_ROWS on the CUDA backend: rows of every type the CUDA decoders take
 * (dequantize-only types from random blocks),
 * picked by I32 indices (repeats, first and last row), equal bit for bit to the CPU backend's;
 * an index out of range fails the computation as on the CPU. Skipped without a CUDA device (runs
 * on the emulator with CUDA_EMU=1). */
#include <string.h>

#include <ggtk/inf_quant.h>

#include "cuda_op_compare.h"
#include "random_blocks.h"

typedef struct rows_case {
    ggtk_tensor_type type;
    int64_t K, rows, n;
} rows_case;

static inf_tensor *build_get_rows(inf_context *ctx, void *user)
{
    const rows_case *c = user;
    inf_tensor *table = inf_tensor_new_2d(ctx, c->type, c->K, c->rows);
    inf_tensor *ids = inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, c->n);
    return inf_get_rows(ctx, table, ids);
}

/* Indices 0, rows - 1, then a stride through the table (with repeats once it wraps); a table of
 * a type without a quantizer gets random blocks. */
static bool fill_ids(const inf_tensor *leaf, int index, void *data, size_t nbytes, void *user)
{
    const rows_case *c = user;
    if (leaf->type != GGTK_TENSOR_I32)
        return !inf_type_can_quantize(leaf->type) && random_blocks(leaf->type, data, nbytes, (uint64_t)index + 1);
    int32_t *ids = data;
    for (size_t i = 0; i < nbytes / sizeof *ids; i++)
        ids[i] = i == 0 ? 0 : i == 1 ? (int32_t)(c->rows - 1) : (int32_t)((i * 7) % (size_t)c->rows);
    return true;
}

TEST(test_cuda_get_rows_every_type_matches_cpu_bit_for_bit)
{
    const ggtk_tensor_type types[] = {
        GGTK_TENSOR_F32,  GGTK_TENSOR_F16,  GGTK_TENSOR_BF16, GGTK_TENSOR_Q4_0, GGTK_TENSOR_Q4_1,
        GGTK_TENSOR_Q5_0, GGTK_TENSOR_Q5_1, GGTK_TENSOR_Q8_0, GGTK_TENSOR_Q2_K, GGTK_TENSOR_Q3_K,
        GGTK_TENSOR_Q4_K, GGTK_TENSOR_Q5_K, GGTK_TENSOR_Q6_K, GGTK_TENSOR_IQ4_NL, GGTK_TENSOR_IQ4_XS,
        GGTK_TENSOR_TQ1_0, GGTK_TENSOR_TQ2_0, GGTK_TENSOR_MXFP4, GGTK_TENSOR_NVFP4, GGTK_TENSOR_Q1_0,
        GGTK_TENSOR_Q2_0,
    };
    char why[1024];
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        for (int64_t K = 256; K <= 768; K += 512) {
            rows_case rc = {types[t], K, 23, 9};
            cuda_op_case c = {.name = ggtk_tensor_type_name(types[t]), .build = build_get_rows,
                              .fill = fill_ids, .user = &rc, .seed = (uint64_t)(t + 1)};
            CHECK_MSG(cuda_op_compare(&c, why, sizeof why), "%s K=%lld: %s", c.name, (long long)K, why);
        }
    }
}

TEST(test_cuda_get_rows_index_out_of_range_fails_the_graph)
{
    inf_backend *cuda = cuda_test_backend();
    inf_context *ctx = inf_context_new(8 * inf_tensor_overhead() + inf_graph_overhead(8), true);
    CHECK(ctx);
    inf_tensor *table = inf_tensor_new_2d(ctx, GGTK_TENSOR_Q8_0, 64, 5);
    inf_tensor *ids = inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, 3);
    inf_tensor *rows = inf_get_rows(ctx, table, ids);
    inf_graph *graph = inf_graph_new(ctx, 8);
    CHECK(rows && graph && inf_graph_expand(graph, rows, NULL) == GGTK_OK);
    ggtk_error err = {0};
    inf_buffer *buffer = inf_backend_alloc_context_tensors(cuda, ctx, &err);
    CHECK_MSG(buffer, "%s", err.message);
    const int32_t bad[3] = {1, 5, 0};
    CHECK(inf_tensor_write(ids, bad, 0, sizeof bad, &err) == GGTK_OK);
    CHECK(inf_backend_compute(cuda, graph, &err) != GGTK_OK);
    CHECK_MSG(strstr(err.message, "cuda: ") && strstr(err.message, "row index 5 outside [0, 5)"),
              "message: %s", err.message);
    const int32_t good[3] = {4, 0, 2};
    CHECK(inf_tensor_write(ids, good, 0, sizeof good, &err) == GGTK_OK);
    CHECK_MSG(inf_backend_compute(cuda, graph, &err) == GGTK_OK, "%s", err.message);
    inf_buffer_free(buffer);
    inf_context_free(ctx);
}
