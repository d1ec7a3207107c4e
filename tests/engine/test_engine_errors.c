/* Tests that the engine's fallible calls report through ggtk_error: status, GGTK_NO_OFFSET and a
 * one-line message naming the tensor or node, and that a NULL err is accepted everywhere. */
#include <string.h>

#include <ggtk/inf_alloc.h>
#include <ggtk/inf_backend.h>
#include <ggtk/inf_ops.h>

#include "test.h"

TEST(test_buffer_and_tensor_io_errors_name_the_tensor)
{
    inf_context *ctx = inf_context_new(inf_tensor_overhead() * 4, true);
    inf_tensor *t = inf_tensor_set_name(inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 16), "weights");
    float data[16] = {0};
    ggtk_error err;
    CHECK(inf_tensor_write(t, data, 0, sizeof data, &err) == GGTK_ERR_USAGE);
    CHECK(strstr(err.message, "'weights'") && strstr(err.message, "no memory"));
    CHECK(err.offset == GGTK_NO_OFFSET);
    CHECK(inf_tensor_read(t, data, 0, sizeof data, NULL) == GGTK_ERR_USAGE);
    inf_buffer *host = inf_buffer_host_new(32, 0);
    CHECK(inf_buffer_place_tensor(host, t, 0, &err) == GGTK_ERR_INVALID);
    CHECK(strstr(err.message, "'weights'") && strstr(err.message, "does not fit"));
    CHECK(inf_buffer_place_tensor(host, t, 0, NULL) == GGTK_ERR_INVALID);
    inf_buffer_free(host);
    inf_buffer *ro = inf_buffer_wrap(data, sizeof data, true);
    CHECK(inf_buffer_fill(ro, 0, &err) == GGTK_ERR_USAGE && strstr(err.message, "read-only"));
    CHECK(inf_buffer_bind_tensor(ro, t, data, NULL) == GGTK_OK);
    CHECK(inf_tensor_write(t, data, 0, 4, &err) == GGTK_ERR_USAGE && strstr(err.message, "read-only"));
    inf_buffer_free(ro);
    CHECK(inf_buffer_map_file(test_tmpfile("absent.bin"), 0, 1, &err) == NULL);
    CHECK(err.status == GGTK_ERR_IO && strstr(err.message, "absent.bin"));
    CHECK(inf_buffer_map_file(test_tmpfile("absent.bin"), 0, 1, NULL) == NULL);
    inf_context_free(ctx);
}

TEST(test_compute_and_allocator_errors_come_back_in_err)
{
    inf_context *ctx = inf_context_new(inf_tensor_overhead() * 8 + inf_graph_overhead(8), true);
    inf_tensor *x = inf_tensor_set_name(inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 8), "x");
    inf_tensor *y = inf_silu(ctx, x);
    inf_graph *g = inf_graph_new(ctx, 8);
    ggtk_error err;
    CHECK(inf_graph_expand(g, NULL, &err) == GGTK_ERR_INVALID && strstr(err.message, "NULL"));
    CHECK(inf_graph_expand(g, y, NULL) == GGTK_OK);
    inf_backend *cpu = inf_backend_cpu_new(1);
    /* Nothing has memory yet: the backend names the leaf. */
    CHECK(inf_backend_compute(cpu, g, &err) == GGTK_ERR_USAGE);
    CHECK(strstr(err.message, "cpu: leaf 'x' has no memory") && err.offset == GGTK_NO_OFFSET);
    CHECK(inf_backend_compute(cpu, g, NULL) == GGTK_ERR_USAGE);
    inf_graph_allocator *alloc = inf_graph_allocator_new(cpu);
    CHECK(inf_graph_allocator_poison_released(alloc, g, 0, 0xff, &err) == GGTK_ERR_USAGE);
    CHECK(strstr(err.message, "graph allocator"));
    CHECK(inf_graph_allocator_alloc(alloc, g, &err) == GGTK_OK);
    CHECK(inf_graph_allocator_poison_released(alloc, g, 5, 0xff, &err) == GGTK_ERR_USAGE);
    CHECK(strstr(err.message, "node 5"));
    inf_graph_allocator_free(alloc);
    inf_backend_free(cpu);
    inf_context_free(ctx);
}

TEST(test_context_error_is_a_ggtk_error_kept_from_the_first_failure)
{
    inf_context *ctx = inf_context_new(inf_tensor_overhead() * 4, true);
    CHECK(inf_context_error(ctx) == NULL);
    inf_tensor *a = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 4, 2);
    CHECK(inf_rope(ctx, a, NULL, 4, INF_ROPE_NORMAL, 10000.0f, 1.0f) == NULL);
    const ggtk_error *first = inf_context_error(ctx);
    CHECK(first && first->status == GGTK_ERR_INVALID && first->offset == GGTK_NO_OFFSET);
    char kept[sizeof first->message];
    strcpy(kept, first->message);
    for (int i = 0; i < 8; i++) /* fills the context: a NOMEM failure after the first */
        inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 4);
    CHECK(inf_context_error(ctx)->status == GGTK_ERR_INVALID);
    CHECK(strcmp(inf_context_error(ctx)->message, kept) == 0);
    inf_context_free(ctx);
}
