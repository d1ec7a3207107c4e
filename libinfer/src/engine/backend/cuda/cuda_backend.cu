/* cuda_backend.cu - the CUDA backend object: a device, one stream, a cuBLAS handle on it, and the
 * compute loop that checks a graph lives in this device's memory, enqueues every node's kernels
 * on the stream, and waits once at the end (or where an observer wants to look). */
#include <stdlib.h>
#include <string.h>

#include <ggtk/gguf.h>
#include <ggtk/inf_backend_cuda.h>

#include "cuda_backend.cuh"
#include "cuda_ops.cuh"
#include "engine/backend/backend_internal.h"

/* Buffers must let a tensor start at any multiple of this; cudaMalloc gives at least 256. */
#define CUDA_ALIGNMENT 256

void cuda_ctx_release(cuda_ctx *ctx)
{
    if (--ctx->refs > 0)
        return;
    cudaSetDevice(ctx->device);
    if (ctx->stream)
        cudaStreamSynchronize(ctx->stream);
    for (int slot = 0; slot < CUDA_SCRATCH_COUNT; slot++)
        cuda_device_free(ctx, ctx->scratch[slot], ctx->scratch_size[slot]);
    for (int i = 0; i < 2; i++) {
        if (ctx->staging[i])
            cudaFreeHost(ctx->staging[i]);
        if (ctx->staging_free[i])
            cudaEventDestroy(ctx->staging_free[i]);
    }
    if (ctx->cublas)
        cublasDestroy(ctx->cublas);
    if (ctx->stream)
        cudaStreamDestroy(ctx->stream);
    free(ctx);
}

/* The message of `cause` without its "cuda: " prefix, to be nested in another "cuda: ..." line. */
static const char *reason_of(const char *message)
{
    return strncmp(message, "cuda: ", 6) == 0 ? message + 6 : message;
}

static ggtk_status node_failed(ggtk_error *err, int index, const inf_tensor *node,
                               const ggtk_error *cause)
{
    return ggtk_error_set(err, cause->status, GGTK_NO_OFFSET, "cuda: node %d '%.60s' (%s): %s",
                          index, node->name, inf_op_name(node->op), reason_of(cause->message));
}

static const char *memory_kind(const inf_buffer *buffer)
{
    return buffer ? buffer->ops->name : "context";
}

/* GGTK_OK when `t` has memory on ctx's device; else GGTK_ERR_USAGE naming `t` as `role`. */
static ggtk_status check_on_device(const cuda_ctx *ctx, const inf_tensor *t, const char *role,
                                   ggtk_error *err)
{
    const inf_buffer *buffer = t->view_src ? t->view_src->buffer : t->buffer;
    if (!t->data)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET, "cuda: %s '%.60s' has no memory",
                              role, t->name);
    const cuda_ctx *owner = cuda_buffer_device(buffer);
    if (!owner)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "cuda: %s '%.60s' is in host memory (%s buffer): place it in a buffer "
                              "of the cuda backend", role, t->name, memory_kind(buffer));
    if (owner->device != ctx->device)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "cuda: %s '%.60s' is in the memory of device %d, not device %d", role,
                              t->name, owner->device, ctx->device);
    return GGTK_OK;
}

static bool cuda_supports(const inf_backend *backend, const inf_tensor *node)
{
    (void)backend;
    return (unsigned)node->op < INF_OP_COUNT && cuda_ops[node->op].supports(node);
}

/* Give views their memory from their sources, then check that every tensor the graph touches is
 * in this device's memory and every node has a kernel. */
static ggtk_status prepare(const cuda_ctx *ctx, const inf_graph *graph, ggtk_error *err)
{
    for (int i = 0; i < inf_graph_n_leaves(graph); i++) {
        ggtk_status st = check_on_device(ctx, inf_graph_leaf(graph, i), "leaf", err);
        if (st != GGTK_OK)
            return st;
    }
    for (int i = 0; i < inf_graph_n_nodes(graph); i++) {
        inf_tensor *node = inf_graph_node(graph, i);
        if (!node->data && node->view_src && node->view_src->data) {
            node->data = (char *)node->view_src->data + node->view_offset;
            node->buffer = node->view_src->buffer;
        }
        ggtk_error cause;
        ggtk_status st = check_on_device(ctx, node, "the node", &cause);
        for (int s = 0; s < INF_MAX_SRC && st == GGTK_OK && node->src[s]; s++)
            st = check_on_device(ctx, node->src[s], "source", &cause);
        if (st == GGTK_OK && !cuda_supports(NULL, node))
            st = ggtk_error_set(&cause, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                                "not supported for %s from %s%s%s", ggtk_tensor_type_name(node->type),
                                node->src[0] ? ggtk_tensor_type_name(node->src[0]->type) : "-",
                                node->src[1] ? ", " : "",
                                node->src[1] ? ggtk_tensor_type_name(node->src[1]->type) : "");
        if (st != GGTK_OK)
            return node_failed(err, i, node, &cause);
    }
    return GGTK_OK;
}

/* An earlier buffer write/read/fill failed (they cannot report it themselves). */
static ggtk_status report_copy_failure(cuda_ctx *ctx, ggtk_error *err)
{
    ggtk_error failure = ctx->copy_failure;
    ctx->copy_failure.status = GGTK_OK;
    return ggtk_error_set(err, failure.status, GGTK_NO_OFFSET, "cuda: an earlier copy failed: %s",
                          reason_of(failure.message));
}

/* With INF_CUDA_SYNC=1 the stream is waited for after every node, so that an asynchronous kernel
 * failure names its node (slow: for debugging). */
static bool sync_every_node(void)
{
    const char *value = getenv("INF_CUDA_SYNC");
    return value && strcmp(value, "1") == 0;
}

/* Enqueue node i's kernels and check that they launched (and, when `wait`, that they ran). */
static ggtk_status run_node(cuda_ctx *ctx, const inf_graph *graph, int i, bool wait, ggtk_error *err)
{
    inf_tensor *node = inf_graph_node(graph, i);
    const cuda_op *op = &cuda_ops[node->op];
    if (!op->compute && !wait)
        return GGTK_OK;
    ggtk_error cause;
    ggtk_status st = op->compute ? op->compute(ctx, node, &cause) : GGTK_OK;
    if (st == GGTK_OK)
        st = cuda_check(cudaGetLastError(), "kernel launch", "compute", &cause);
    if (st == GGTK_OK && wait)
        st = cuda_check(cudaStreamSynchronize(ctx->stream), "a kernel", "compute", &cause);
    return st == GGTK_OK ? GGTK_OK : node_failed(err, i, node, &cause);
}

static ggtk_status cuda_compute(inf_backend *backend, const inf_graph *graph,
                                inf_node_filter filter, inf_node_observer observer, void *user,
                                ggtk_error *err)
{
    cuda_ctx *ctx = (cuda_ctx *)backend->impl;
    if (ctx->copy_failure.status != GGTK_OK)
        return report_copy_failure(ctx, err);
    ggtk_status st = prepare(ctx, graph, err);
    if (st != GGTK_OK)
        return st;
    CUDA_TRY(cudaSetDevice(ctx->device), err);
    const inf_node_watch watch = {filter, observer, user};
    const bool sync_each = sync_every_node();
    const int n_nodes = inf_graph_n_nodes(graph);
    int last_waited = -1; /* the stream was empty after this node */
    for (int i = 0; i < n_nodes; i++) {
        /* An observer reads the node's result: it must be there. */
        const bool observe = inf_node_watched(&watch, inf_graph_node(graph, i));
        st = run_node(ctx, graph, i, sync_each || observe, err);
        if (st != GGTK_OK)
            return st;
        if (sync_each || observe)
            last_waited = i;
        if (observe && !observer(graph, i, user))
            return GGTK_OK;
    }
    cudaError_t status = cudaStreamSynchronize(ctx->stream);
    if (status != cudaSuccess)
        return ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET,
                              "cuda: a kernel of nodes %d to %d failed: %s (%s); INF_CUDA_SYNC=1 "
                              "names the node", last_waited + 1, n_nodes - 1,
                              cudaGetErrorString(status), cudaGetErrorName(status));
    return GGTK_OK;
}

static inf_buffer *cuda_alloc_buffer(inf_backend *backend, size_t size, ggtk_error *err)
{
    return cuda_buffer_new((cuda_ctx *)backend->impl, size, err);
}

static void cuda_release(inf_backend *backend)
{
    cuda_ctx_release((cuda_ctx *)backend->impl);
    free(backend);
}

static const inf_backend_ops cuda_backend_ops = {
    "cuda", CUDA_ALIGNMENT, cuda_release, cuda_alloc_buffer, cuda_supports, cuda_compute,
};

/* The stream and the cuBLAS handle bound to it, on ctx->device. */
static ggtk_status open_device(cuda_ctx *ctx, ggtk_error *err)
{
    cudaDeviceProp prop;
    CUDA_TRY(cudaSetDevice(ctx->device), err);
    CUDA_TRY(cudaGetDeviceProperties(&prop, ctx->device), err);
    ctx->compute_capability = prop.major * 10 + prop.minor;
    CUDA_TRY(cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking), err);
    CUBLAS_TRY(cublasCreate(&ctx->cublas), err);
    CUBLAS_TRY(cublasSetStream(ctx->cublas, ctx->stream), err);
    return GGTK_OK;
}

inf_backend *inf_backend_cuda_new(int device, ggtk_error *err)
{
    ggtk_error reason;
    int count = inf_cuda_device_count(&reason);
    if (count == 0) {
        ggtk_error_set(err, reason.status, GGTK_NO_OFFSET, "%s", reason.message);
        return NULL;
    }
    if (device < 0 || device >= count) {
        ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                       "cuda: no device %d (devices are 0 to %d)", device, count - 1);
        return NULL;
    }
    inf_backend *backend = (inf_backend *)calloc(1, sizeof *backend);
    cuda_ctx *ctx = (cuda_ctx *)calloc(1, sizeof *ctx);
    if (!backend || !ctx) {
        free(backend);
        free(ctx);
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "cuda: out of host memory");
        return NULL;
    }
    ctx->device = device;
    ctx->refs = 1;
    if (open_device(ctx, err) != GGTK_OK) {
        cuda_ctx_release(ctx);
        free(backend);
        return NULL;
    }
    backend->ops = &cuda_backend_ops;
    backend->impl = ctx;
    return backend;
}

bool inf_backend_is_cuda(const inf_backend *backend)
{
    return backend && backend->ops == &cuda_backend_ops;
}

int inf_backend_cuda_device(const inf_backend *backend)
{
    return inf_backend_is_cuda(backend) ? ((const cuda_ctx *)backend->impl)->device : -1;
}

inf_cuda_memory inf_backend_cuda_memory(const inf_backend *backend)
{
    inf_cuda_memory memory = {0, 0, 0};
    if (!inf_backend_is_cuda(backend))
        return memory;
    const cuda_ctx *ctx = (const cuda_ctx *)backend->impl;
    memory.in_use = ctx->memory_in_use;
    memory.peak = ctx->memory_peak;
    memory.pinned_host = ctx->staging[0] ? 2 * CUDA_STAGING_CHUNK : 0;
    return memory;
}
