/* test_tensor.c - tensor metadata, views, constructor errors, graph order and buffers (host,
 * wrapped, mapped file) without computing anything. */
#include <stdio.h>
#include <string.h>

#include <ggtk/gguf.h>
#include "infer_util.h"
#include "test.h"

TEST(test_views_share_memory_with_the_right_strides)
{
    inf_context *ctx = data_context(1);
    inf_tensor *a = inf_tensor_new_3d(ctx, GGTK_TENSOR_F32, 4, 3, 2);
    CHECK(a->nb[0] == 4 && a->nb[1] == 16 && a->nb[2] == 48 && a->nb[3] == 96);
    inf_tensor *r = inf_reshape_2d(ctx, a, 12, 2);
    inf_tensor *p = inf_permute(ctx, a, 2, 0, 1, 3); /* dim 0 -> 2, 1 -> 0, 2 -> 1 */
    inf_tensor *t = inf_transpose(ctx, r);
    inf_tensor *v = inf_view_2d(ctx, a, 2, 3, a->nb[1], 8);
    CHECK(r->data == a->data && r->view_src == a && inf_tensor_is_contiguous(r));
    CHECK(p->ne[0] == 3 && p->ne[1] == 2 && p->ne[2] == 4 && p->nb[2] == 4 && p->nb[0] == 16);
    CHECK(!inf_tensor_is_contiguous(p) && inf_tensor_rows_contiguous(v));
    CHECK(t->ne[0] == 2 && t->ne[1] == 12 && t->nb[0] == 48 && t->view_src == a);
    CHECK(v->data == (char *)a->data + 8 && v->view_offset == 8);
    /* A view of a view points at the owner with the offsets added. */
    inf_tensor *vv = inf_view_1d(ctx, v, 2, 16);
    CHECK(vv->view_src == a && vv->view_offset == 24);
    CHECK(inf_context_error(ctx) == NULL);
    inf_context_free(ctx);
}

TEST(test_constructors_return_null_with_a_message)
{
    inf_context *ctx = inf_context_new(inf_tensor_overhead() * 8, true);
    inf_tensor *a = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 8, 4);
    inf_tensor *b = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 3, 4);
    CHECK(inf_add(ctx, a, b) == NULL);
    const ggtk_error *err = inf_context_error(ctx);
    CHECK(err && err->status == GGTK_ERR_INVALID && strstr(err->message, "broadcast"));
    CHECK(err->offset == GGTK_NO_OFFSET);
    /* Only the first error is kept; NULL sources propagate. */
    CHECK(inf_mul(ctx, NULL, a) == NULL && strstr(inf_context_error(ctx)->message, "broadcast"));
    inf_context_free(ctx);

    ctx = inf_context_new(inf_tensor_overhead() * 8, true);
    CHECK(inf_tensor_new_1d(ctx, GGTK_TENSOR_Q8_0, 33) == NULL); /* not whole blocks */
    CHECK(strstr(inf_context_error(ctx)->message, "block"));
    inf_context_free(ctx);

    ctx = inf_context_new(inf_tensor_overhead() * 2, true);
    a = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 4);
    CHECK(inf_reshape_2d(ctx, inf_transpose(ctx, inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 2, 2)), 4, 1) == NULL);
    CHECK(strstr(inf_context_error(ctx)->message, "context full"));
    CHECK(inf_context_error(ctx)->status == GGTK_ERR_NOMEM);
    inf_context_free(ctx);

    ctx = inf_context_new(1 << 16, true);
    a = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 4, 4);
    CHECK(inf_view_2d(ctx, a, 4, 4, 16, 4) == NULL); /* one element past the end */
    CHECK(inf_permute(ctx, a, 0, 0, 1, 2) == NULL);
    CHECK(inf_mul_mat(ctx, inf_tensor_new_2d(ctx, GGTK_TENSOR_Q4_0, 64, 2),
                      inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 32, 2)) == NULL);
    inf_context_free(ctx);
}

TEST(test_graph_lists_sources_before_consumers_once)
{
    inf_context *ctx = inf_context_new(1 << 16, true);
    inf_tensor *x = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 8);
    inf_tensor *a = inf_scale(ctx, x, 2.0f), *b = inf_silu(ctx, a);
    inf_tensor *c = inf_add(ctx, b, a); /* a is reached twice */
    inf_graph *g = inf_graph_new(ctx, 8);
    CHECK(inf_graph_expand(g, c, NULL) == GGTK_OK && inf_graph_expand(g, c, NULL) == GGTK_OK);
    CHECK(inf_graph_n_leaves(g) == 1 && inf_graph_leaf(g, 0) == x);
    CHECK(inf_graph_n_nodes(g) == 3);
    CHECK(inf_graph_node(g, 0) == a && inf_graph_node(g, 1) == b && inf_graph_node(g, -1) == c);
    CHECK(inf_graph_node(g, 3) == NULL && inf_graph_expand(g, NULL, NULL) == GGTK_ERR_INVALID);
    inf_graph *small = inf_graph_new(ctx, 2);
    CHECK(inf_graph_expand(small, c, NULL) == GGTK_ERR_NOMEM);
    inf_context_free(ctx);
}

TEST(test_buffers_place_bind_read_and_write_tensors)
{
    inf_context *ctx = inf_context_new(1 << 16, true);
    inf_tensor *t = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 16);
    inf_buffer *host = inf_buffer_host_new(100, 0);
    CHECK(host && ((uintptr_t)host->base & 63) == 0);
    CHECK(inf_buffer_place_tensor(host, t, 40, NULL) == GGTK_ERR_INVALID); /* 40 + 64 > 100 */
    CHECK(inf_buffer_place_tensor(host, t, 36, NULL) == GGTK_OK);
    float in[16], out[16];
    for (int i = 0; i < 16; i++)
        in[i] = (float)i;
    CHECK(inf_tensor_write(t, in, 0, sizeof in, NULL) == GGTK_OK);
    CHECK(inf_tensor_write(t, in, 4, sizeof in, NULL) == GGTK_ERR_USAGE);
    CHECK(inf_tensor_read(t, out, 0, sizeof out, NULL) == GGTK_OK && memcmp(in, out, sizeof in) == 0);
    /* A wrapped read-only region: weights bound in place, never written. */
    static const float weights[16] = {1, 2, 3};
    inf_buffer *wrapped = inf_buffer_wrap((void *)weights, sizeof weights, true);
    inf_tensor *w = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 16);
    CHECK(inf_buffer_bind_tensor(wrapped, w, weights + 1, NULL) == GGTK_ERR_INVALID);
    CHECK(inf_buffer_bind_tensor(wrapped, w, weights, NULL) == GGTK_OK && w->data == weights);
    CHECK(inf_tensor_write(w, in, 0, 4, NULL) == GGTK_ERR_USAGE && inf_buffer_fill(wrapped, 0, NULL) == GGTK_ERR_USAGE);
    inf_buffer_free(wrapped);
    inf_buffer_free(host);
    inf_context_free(ctx);
}

TEST(test_mapped_file_buffer_holds_the_model_weights_in_place)
{
    const char *path = test_model_path();
    if (!path)
        SKIP("the test model is missing (make models)");
    ggtk_file *file = ggtk_open(path, GGTK_OPEN_MMAP, NULL);
    CHECK(file);
    const ggtk_tensor_info *info = ggtk_tensor(file, ggtk_find_tensor(file, "token_embd.weight"));
    ggtk_error err;
    inf_buffer *map = inf_buffer_map_file(path, ggtk_data_offset(file), ggtk_data_size(file), &err);
    CHECK_MSG(map, "%s", err.message);
    inf_context *ctx = inf_context_new(1 << 16, true);
    inf_tensor *t = inf_tensor_new_2d(ctx, (ggtk_tensor_type)info->type, (int64_t)info->ne[0],
                                      (int64_t)info->ne[1]);
    CHECK(inf_buffer_bind_tensor(map, t, (char *)map->base + info->offset, NULL) == GGTK_OK);
    CHECK(inf_tensor_nbytes(t) == info->size && memcmp(t->data, info->data, info->size) == 0);
    CHECK(inf_buffer_map_file(path, ggtk_file_size(file), 1, &err) == NULL);
    CHECK(err.status == GGTK_ERR_LAYOUT && err.offset == ggtk_file_size(file));
    CHECK(strstr(err.message, path) != NULL);
    inf_buffer_free(map);
    inf_context_free(ctx);
    ggtk_close(file);
}
