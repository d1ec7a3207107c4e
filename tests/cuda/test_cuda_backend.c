/* test_cuda_backend.c - the CUDA backend object and its device buffers: the reason given when
 * there is no device, copies in and out (direct and through the pinned staging chunks), tensor
 * placement, the compute loop's checks (memory on the device, unsupported nodes, observers), out
 * of device memory, and the op-comparison helper itself. Without a device every test that needs
 * one is skipped with the reason; with CUDA_EMU=1 they run on the emulator. */
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_alloc.h>

#include "cuda_op_compare.h"
#include "engine/infer_util.h"

#define MIB ((size_t)1 << 20)
/* The staging chunk of cuda_transfer.cu: copies around it take every path of the chunk loop. */
#define CHUNK (16 * MIB)

static inf_context *meta_context(void)
{
    return inf_context_new(64 * inf_tensor_overhead() + inf_graph_overhead(64), true);
}

TEST(test_cuda_device_count_zero_comes_with_one_line_reason)
{
    ggtk_error err = {0};
    int count = inf_cuda_device_count(&err);
    if (count > 0) {
        inf_cuda_device_info info;
        CHECK(inf_cuda_device_describe(0, &info, &err) == GGTK_OK);
        CHECK_MSG(info.name[0] && info.total_memory > 0 && info.compute_capability >= 10,
                  "device 0: '%s', %zu bytes, cc %d", info.name, info.total_memory,
                  info.compute_capability);
        return;
    }
    CHECK(err.status == GGTK_ERR_UNSUPPORTED);
    CHECK_MSG(!strchr(err.message, '\n'), "not one line: %s", err.message);
    const char *expected = inf_cuda_built() ? "cuda: no usable device: " : "built without CUDA: rebuild with make CUDA=1";
    CHECK_MSG(strncmp(err.message, expected, strlen(expected)) == 0, "message: %s", err.message);
}

TEST(test_cuda_backend_new_names_a_missing_device)
{
    ggtk_error err = {0};
    int count = inf_cuda_device_count(NULL);
    inf_backend *backend = inf_backend_cuda_new(count, &err);
    CHECK(backend == NULL);
    CHECK(err.status == GGTK_ERR_UNSUPPORTED);
    if (count > 0)
        CHECK_MSG(strstr(err.message, "no device") != NULL, "message: %s", err.message);
    inf_cuda_device_info info;
    CHECK(inf_cuda_device_describe(count, &info, NULL) == GGTK_ERR_UNSUPPORTED);
    CHECK(info.name[0] == '\0' && info.total_memory == 0);
}

TEST(test_cuda_queries_answer_no_for_other_backends)
{
    inf_backend *cpu = inf_backend_cpu_new(1);
    inf_buffer *host = inf_buffer_host_new(64, 0);
    CHECK(cpu && host);
    CHECK(!inf_backend_is_cuda(cpu) && !inf_backend_is_cuda(NULL));
    CHECK(!inf_buffer_is_cuda(host) && !inf_buffer_is_cuda(NULL));
    CHECK(inf_backend_cuda_device(cpu) == -1);
    inf_cuda_memory memory = inf_backend_cuda_memory(cpu);
    CHECK(memory.in_use == 0 && memory.peak == 0 && memory.pinned_host == 0);
    inf_buffer_free(host);
    inf_backend_free(cpu);
}

TEST(test_cuda_backend_describes_itself)
{
    inf_backend *cuda = cuda_test_backend();
    CHECK(inf_backend_is_cuda(cuda));
    CHECK(strcmp(inf_backend_name(cuda), "cuda") == 0);
    CHECK(inf_backend_alignment(cuda) == 256);
    CHECK(inf_backend_cuda_device(cuda) == 0);
}

static void fill_pattern(unsigned char *data, size_t size, uint64_t seed)
{
    test_rng rng = {seed};
    for (size_t i = 0; i < size; i++)
        data[i] = (unsigned char)(rng_next(&rng) >> 56);
}

/* Write `size` bytes at `offset` of a device buffer and read them back, directly through the
 * buffer's operations. */
static bool round_trip(inf_buffer *buffer, size_t offset, size_t size, uint64_t seed)
{
    unsigned char *in = malloc(size), *out = malloc(size);
    bool ok = in && out;
    if (ok) {
        fill_pattern(in, size, seed);
        memset(out, 0, size);
        buffer->ops->write(buffer, (char *)buffer->base + offset, in, size);
        buffer->ops->read(buffer, out, (char *)buffer->base + offset, size);
        ok = memcmp(in, out, size) == 0;
    }
    free(in);
    free(out);
    return ok;
}

TEST(test_cuda_buffer_round_trips_every_copy_size)
{
    inf_backend *cuda = cuda_test_backend();
    const size_t sizes[] = {1, 255, 4096, MIB - 1, MIB, CHUNK - 1, CHUNK, CHUNK + 1,
                            2 * CHUNK + 3};
    inf_buffer *buffer = inf_backend_alloc_buffer(cuda, 2 * CHUNK + 16);
    CHECK(buffer && inf_buffer_is_cuda(buffer) && !buffer->host && buffer->base);
    CHECK(strcmp(buffer->ops->name, "cuda") == 0);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        CHECK_MSG(round_trip(buffer, 13, sizes[i], 7 + i), "%zu bytes at offset 13 differ",
                  sizes[i]);
    inf_buffer_free(buffer);
}

TEST(test_cuda_buffer_fill_sets_every_byte)
{
    inf_backend *cuda = cuda_test_backend();
    const size_t size = CHUNK + 5;
    inf_buffer *buffer = inf_backend_alloc_buffer(cuda, size);
    unsigned char *out = malloc(size);
    CHECK(buffer && out);
    CHECK(inf_buffer_fill(buffer, 0xa5, NULL) == GGTK_OK);
    buffer->ops->read(buffer, out, buffer->base, size);
    size_t wrong = 0;
    for (size_t i = 0; i < size; i++)
        wrong += out[i] != 0xa5;
    free(out);
    inf_buffer_free(buffer);
    CHECK_MSG(wrong == 0, "%zu bytes are not 0xa5", wrong);
}

TEST(test_cuda_context_tensors_are_placed_aligned_in_device_memory)
{
    inf_backend *cuda = cuda_test_backend();
    inf_context *ctx = meta_context();
    inf_tensor *a = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 3);
    inf_tensor *b = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 5, 7);
    inf_tensor *row = inf_view_1d(ctx, b, 5, b->nb[1] * 2);
    ggtk_error err;
    inf_buffer *buffer = inf_backend_alloc_context_tensors(cuda, ctx, &err);
    CHECK_MSG(buffer, "%s", err.message);
    CHECK(inf_buffer_is_cuda(a->buffer) && a->buffer == buffer && b->buffer == buffer);
    CHECK((size_t)((char *)b->data - (char *)buffer->base) % 256 == 0);
    CHECK(row->data == (char *)b->data + b->nb[1] * 2);
    float values[35], back[5] = {0};
    for (int i = 0; i < 35; i++)
        values[i] = (float)i;
    CHECK(inf_tensor_write(b, values, 0, sizeof values, &err) == GGTK_OK);
    CHECK(inf_tensor_read(row, back, 0, sizeof back, &err) == GGTK_OK);
    CHECK(back[0] == 10.0f && back[4] == 14.0f);
    inf_buffer_free(buffer);
    inf_context_free(ctx);
}

static bool count_call(const inf_graph *graph, int node_index, void *user)
{
    (void)graph;
    (void)node_index;
    ++*(int *)user;
    return true;
}

/* The graph of two views of a 4 x 6 F32 tensor *x: a 4x3x2 reshape and its transpose *v, with
 * ctx's tensors in a buffer of `cuda`'s (*buffer, NULL with err set on failure). */
static inf_graph *views_graph(inf_backend *cuda, inf_context *ctx, inf_tensor **x, inf_tensor **v,
                              inf_buffer **buffer, ggtk_error *err)
{
    *x = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 4, 6);
    *v = inf_transpose(ctx, inf_reshape_3d(ctx, *x, 4, 3, 2));
    inf_graph *graph = inf_graph_new(ctx, 64);
    *buffer = NULL;
    if (!*v || !graph || inf_graph_expand(graph, *v, NULL) != GGTK_OK)
        return NULL;
    *buffer = inf_backend_alloc_context_tensors(cuda, ctx, err);
    return graph;
}

TEST(test_cuda_compute_runs_a_graph_of_views_and_calls_the_observer)
{
    inf_backend *cuda = cuda_test_backend();
    inf_context *ctx = meta_context();
    inf_tensor *x, *v;
    inf_buffer *buffer;
    ggtk_error err = {0};
    inf_graph *graph = views_graph(cuda, ctx, &x, &v, &buffer, &err);
    CHECK_MSG(graph && buffer, "%s", err.message);
    int calls = 0;
    CHECK_MSG(inf_backend_compute_observed(cuda, graph, count_call, &calls, &err) == GGTK_OK, "%s",
              err.message);
    CHECK(calls == inf_graph_n_nodes(graph) && calls == 2);
    CHECK(v->data == x->data && inf_buffer_is_cuda(v->buffer));
    inf_buffer_free(buffer);
    inf_context_free(ctx);
}

static bool stop_after_first(const inf_graph *graph, int node_index, void *user)
{
    (void)graph;
    *(int *)user = node_index;
    return false;
}

static bool only_transposes(const inf_tensor *node, void *user)
{
    (void)user;
    return node->ne[0] == 3; /* the transpose of the 4x3x2 reshape */
}

TEST(test_cuda_compute_observer_can_stop_and_filter_picks_nodes)
{
    inf_backend *cuda = cuda_test_backend();
    inf_context *ctx = meta_context();
    inf_tensor *x, *v;
    inf_buffer *buffer;
    ggtk_error err = {0};
    inf_graph *graph = views_graph(cuda, ctx, &x, &v, &buffer, &err);
    CHECK_MSG(graph && buffer, "%s", err.message);
    int last = -1;
    CHECK(inf_backend_compute_observed(cuda, graph, stop_after_first, &last, &err) == GGTK_OK);
    CHECK(last == 0);
    int calls = 0;
    CHECK(inf_backend_compute_filtered(cuda, graph, only_transposes, count_call, &calls, &err) ==
          GGTK_OK);
    CHECK(calls == 1);
    inf_buffer_free(buffer);
    inf_context_free(ctx);
}

TEST(test_cuda_compute_refuses_an_unsupported_node_naming_it)
{
    inf_backend *cuda = cuda_test_backend();
    inf_context *ctx = meta_context();
    inf_tensor *a = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 64);
    inf_tensor *sum = inf_tensor_set_name(inf_add(ctx, a, a), "odd_sum");
    /* No backend adds into a quantized tensor. */
    sum->type = GGTK_TENSOR_Q4_0;
    sum->nb[0] = 18;
    sum->nb[1] = sum->nb[2] = sum->nb[3] = 36;
    inf_graph *graph = inf_graph_new(ctx, 64);
    CHECK(graph && inf_graph_expand(graph, sum, NULL) == GGTK_OK);
    ggtk_error err;
    inf_buffer *buffer = inf_backend_alloc_context_tensors(cuda, ctx, &err);
    CHECK(buffer);
    CHECK(!inf_backend_supports(cuda, sum));
    CHECK(inf_backend_compute(cuda, graph, &err) == GGTK_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(err.message, "cuda: node 0 'odd_sum' (ADD): not supported") == err.message,
              "message: %s", err.message);
    inf_buffer_free(buffer);
    inf_context_free(ctx);
}

TEST(test_cuda_compute_refuses_a_tensor_in_host_memory_naming_it)
{
    inf_backend *cuda = cuda_test_backend();
    inf_context *ctx = meta_context();
    inf_tensor *host_leaf = inf_tensor_set_name(inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 8), "weights");
    inf_tensor *view = inf_reshape_2d(ctx, host_leaf, 4, 2);
    inf_graph *graph = inf_graph_new(ctx, 64);
    CHECK(view && graph && inf_graph_expand(graph, view, NULL) == GGTK_OK);
    inf_buffer *host = inf_buffer_host_new(64, 0);
    CHECK(inf_buffer_place_tensor(host, host_leaf, 0, NULL) == GGTK_OK);
    ggtk_error err;
    CHECK(inf_backend_compute(cuda, graph, &err) == GGTK_ERR_USAGE);
    CHECK_MSG(strstr(err.message, "'weights' is in host memory (host buffer)") != NULL,
              "message: %s", err.message);
    inf_buffer_free(host);
    inf_context_free(ctx);
}

TEST(test_cuda_compute_refuses_a_tensor_without_memory)
{
    inf_backend *cuda = cuda_test_backend();
    inf_context *ctx = meta_context();
    inf_tensor *x = inf_tensor_set_name(inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 8), "unplaced");
    inf_graph *graph = inf_graph_new(ctx, 64);
    CHECK(graph && inf_graph_expand(graph, inf_reshape_2d(ctx, x, 4, 2), NULL) == GGTK_OK);
    ggtk_error err;
    CHECK(inf_backend_compute(cuda, graph, &err) == GGTK_ERR_USAGE);
    CHECK_MSG(strstr(err.message, "'unplaced' has no memory") != NULL, "message: %s", err.message);
    inf_context_free(ctx);
}

TEST(test_cuda_out_of_device_memory_is_one_line_and_not_sticky)
{
    inf_backend *cuda = cuda_test_backend();
    inf_cuda_device_info info;
    CHECK(inf_cuda_device_describe(0, &info, NULL) == GGTK_OK);
    inf_context *ctx = meta_context();
    /* More than the whole device: refused whatever else runs on it. */
    size_t too_many = info.total_memory / 4 + (256 << 20) / 4;
    CHECK(inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, (int64_t)(too_many / 1024), 1024) != NULL);
    ggtk_error err;
    CHECK(inf_backend_alloc_context_tensors(cuda, ctx, &err) == NULL);
    CHECK(err.status == GGTK_ERR_NOMEM);
    CHECK_MSG(strncmp(err.message, "cuda: out of device memory allocating ", 38) == 0 &&
                  strstr(err.message, " MiB free of ") && !strchr(err.message, '\n'),
              "message: %s", err.message);
    inf_context_free(ctx);
    inf_buffer *small = inf_backend_alloc_buffer(cuda, 4096);
    CHECK_MSG(small && round_trip(small, 0, 4096, 3), "the device is unusable after the failure");
    inf_buffer_free(small);
}

TEST(test_cuda_graph_allocator_reports_out_of_device_memory)
{
    inf_backend *cuda = cuda_test_backend();
    inf_cuda_device_info info;
    CHECK(inf_cuda_device_describe(0, &info, NULL) == GGTK_OK);
    inf_context *ctx = meta_context();
    int64_t rows = (int64_t)((info.total_memory / 4 + ((size_t)256 << 20)) / 1024);
    inf_tensor *x = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 1024, rows);
    inf_tensor_set_input(x);
    inf_tensor *y = inf_reshape_1d(ctx, x, 1024 * rows);
    inf_graph *graph = inf_graph_new(ctx, 64);
    inf_graph_allocator *alloc = inf_graph_allocator_new(cuda);
    CHECK(y && graph && alloc && inf_graph_expand(graph, y, NULL) == GGTK_OK);
    ggtk_error err;
    CHECK(inf_graph_allocator_alloc(alloc, graph, &err) == GGTK_ERR_NOMEM);
    CHECK_MSG(strstr(err.message, "cuda: out of device memory allocating") == err.message,
              "message: %s", err.message);
    inf_graph_allocator_free(alloc);
    inf_context_free(ctx);
}

TEST(test_cuda_memory_statistics_follow_the_buffers)
{
    ggtk_error err;
    if (inf_cuda_device_count(&err) == 0)
        SKIP("%s", err.message);
    inf_backend *cuda = inf_backend_cuda_new(0, &err);
    CHECK_MSG(cuda, "%s", err.message);
    inf_buffer *a = inf_backend_alloc_buffer(cuda, 3 * MIB);
    inf_buffer *b = inf_backend_alloc_buffer(cuda, MIB);
    CHECK(a && b);
    CHECK(inf_backend_cuda_memory(cuda).in_use == 4 * MIB);
    inf_buffer_free(a);
    inf_cuda_memory memory = inf_backend_cuda_memory(cuda);
    CHECK(memory.in_use == MIB && memory.peak == 4 * MIB && memory.pinned_host == 0);
    CHECK(round_trip(b, 0, MIB, 5));
    CHECK(inf_backend_cuda_memory(cuda).pinned_host == 2 * CHUNK);
    /* The buffer keeps the device state alive after its backend is gone. */
    inf_backend_free(cuda);
    CHECK(round_trip(b, 1, 1000, 6));
    inf_buffer_free(b);
}

/* The comparison helper on a case whose two builds read different elements: it must say where. */
static inf_tensor *shifted_row(inf_context *ctx, void *user)
{
    int *calls = user;
    inf_tensor *x = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 16);
    return inf_view_1d(ctx, x, 8, (size_t)(*calls)++ * sizeof(float));
}

static inf_tensor *plain_view(inf_context *ctx, void *user)
{
    (void)user;
    return inf_transpose(ctx, inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 5, 3));
}

TEST(test_cuda_op_compare_passes_equal_results_and_locates_a_difference)
{
    cuda_test_backend();
    cuda_op_case same = {.name = "transpose", .build = plain_view, .seed = 3};
    CHECK_CUDA_OP(&same);
    int calls = 0;
    cuda_op_case shifted = {.name = "shifted", .build = shifted_row, .user = &calls, .seed = 4,
                            .atol = 1e-6};
    char why[1024];
    CHECK(!cuda_op_compare(&shifted, why, sizeof why));
    CHECK_MSG(strstr(why, "8 of 8 elements differ") && strstr(why, "first at element 0"),
              "message: %s", why);
}
