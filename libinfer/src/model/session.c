/* session.c - a decoding context: KV cache, a backend (the CPU, or a CUDA device holding copies
 * of the weights, session_weights.h), and a graph allocator whose compute buffer is planned once
 * for the largest graph, then reused by every batch; with a partial offload, the device and the
 * CPU under a scheduler (inf_sched.h) instead, each with its blocks' KV cache. When the device
 * computes the output layer the logits stay in device memory (the compute buffer's, or a buffer
 * the graphs of a long decode write their rows into) until inf_session_logits() asks for them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_alloc.h>
#include <ggtk/inf_backend.h>
#include <ggtk/inf_sched.h>
#include "kv_window.h"
#include "model_internal.h"
#include "session_device.h"
#include "session_logits.h"
#include "session_weights.h"

struct inf_session {
    inf_model *model;
    inf_session_params params;
    session_placement placement;
    char description[384];
    inf_backend *backend;
    device_weights weights;    /* on a device: the copies the graphs read */
    const inf_model *graph_model; /* what graphs are built from: model, or weights.view */
    inf_context *kv_ctx;
    inf_buffer *kv_buffer;
    /* Partial offload: the CPU computes the first blocks and the output layer, their KV cache in
     * the host half, the scheduler splits each graph between the two backends. */
    inf_backend *cpu;
    inf_context *kv_ctx_host;
    inf_buffer *kv_buffer_host;
    inf_sched *sched;
    inf_context *scratch_ctx;
    inf_buffer *scratch_buffer;
    model_cache cache;
    inf_graph_allocator *allocator;
    size_t compute_bytes;
    int32_t n_past;
    int32_t swa_first;      /* first position the sliding-window layers' caches hold */
    const float *logits;    /* rows of the last decode: in the compute buffer or in `copies`;
                               NULL on a device until inf_session_logits() downloads them */
    float *copies;          /* logits gathered from several graphs, or downloaded */
    size_t copies_capacity; /* floats */
    int32_t n_logits_rows;
    const float *device_logits;   /* on a device: the rows of the last decode there, in ... */
    inf_buffer *device_logits_in; /* ... this buffer (the compute buffer, or device_rows) */
    inf_buffer *device_rows;      /* the rows of a decode of several graphs */
    inf_node_filter observer_filter; /* the nodes the observer sees, NULL: all */
    inf_node_observer observer;      /* NULL: none */
    void *observer_user;
};

/* `err` gets `inner`'s status and offset, its message prefixed with what was being done. */
static ggtk_status wrap_error(ggtk_error *err, const char *what, const ggtk_error *inner)
{
    return ggtk_error_set(err, inner->status, inner->offset, "%s: %s", what, inner->message);
}

inf_session_params inf_session_params_default(void)
{
    inf_session_params p = {.n_ctx = 512, .n_batch = 512, .n_threads = 0,
                            .kv_type = GGTK_TENSOR_F16, .device = INF_DEVICE_AUTO,
                            .n_gpu_layers = -1};
    return p;
}

static bool check_params(const inf_model *model, const inf_session_params *p, ggtk_error *err)
{
    const uint32_t n_ctx_train = model->hparams.n_ctx_train;
    if (p->n_ctx < 1 || (uint32_t)p->n_ctx > n_ctx_train) {
        ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                       "context of %d tokens is out of range: the model was trained "
                       "for %u", p->n_ctx, n_ctx_train);
        return false;
    }
    if (p->n_batch < 1 || p->n_batch > p->n_ctx) {
        ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                       "batch of %d tokens is out of range 1..%d (the context)",
                       p->n_batch, p->n_ctx);
        return false;
    }
    if (p->device != INF_DEVICE_CPU && p->device != INF_DEVICE_CUDA &&
        p->device != INF_DEVICE_AUTO) {
        ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "unknown device %d", (int)p->device);
        return false;
    }
    if (p->kv_type != GGTK_TENSOR_F16 && p->kv_type != GGTK_TENSOR_F32) {
        ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                       "KV cache type must be f16 or f32");
        return false;
    }
    return true;
}

/* Whether block il runs on the CPU while the session's backend is a device (partial offload). */
static bool layer_on_host(const inf_session *s, uint32_t il)
{
    return s->sched && il < s->model->hparams.n_layer - (uint32_t)s->placement.n_gpu_layers;
}

/* Memory for the tensors of `ctx` from `backend`, or an error naming what did not fit. */
static inf_buffer *alloc_tensors(inf_backend *backend, inf_context *ctx, const char *what,
                                 ggtk_error *err)
{
    ggtk_error inner;
    inf_buffer *buffer = inf_backend_alloc_context_tensors(backend, ctx, &inner);
    if (!buffer)
        ggtk_error_set(err, inner.status, inner.offset, "%s does not fit: %s", what,
                       inner.message);
    return buffer;
}

/* One K and one V tensor per layer in one buffer (partial offload: the CPU's blocks' in a host
 * buffer of their own). */
static bool create_kv_cache(inf_session *s, ggtk_error *err)
{
    const inf_model_hparams *hp = &s->model->hparams;
    const int64_t n_embd_kv = (int64_t)hp->n_embd_head * hp->n_head_kv;
    s->cache.n_ctx = s->params.n_ctx;
    s->cache.k = calloc(hp->n_layer, sizeof *s->cache.k);
    s->cache.v = calloc(hp->n_layer, sizeof *s->cache.v);
    s->kv_ctx = inf_context_new(2 * (size_t)hp->n_layer * inf_tensor_overhead(), true);
    s->kv_ctx_host = s->sched ? inf_context_new(2 * (size_t)hp->n_layer * inf_tensor_overhead(), true)
                              : NULL;
    if (!s->cache.k || !s->cache.v || !s->kv_ctx || (s->sched && !s->kv_ctx_host)) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory for the KV cache");
        return false;
    }
    const int32_t window_cells = kv_window_cells(s->model, s->params.n_ctx, s->params.n_batch);
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const int32_t cells = model_layer_is_swa(s->model, il) ? window_cells : s->params.n_ctx;
        inf_context *ctx = layer_on_host(s, il) ? s->kv_ctx_host : s->kv_ctx;
        s->cache.k[il] = inf_tensor_new_2d(ctx, s->params.kv_type, n_embd_kv, cells);
        s->cache.v[il] = inf_tensor_new_2d(ctx, s->params.kv_type, cells, n_embd_kv);
        inf_tensor_set_name(s->cache.k[il], "k_cache.%u", il);
        inf_tensor_set_name(s->cache.v[il], "v_cache.%u", il);
    }
    const ggtk_error *cerr = inf_context_error(s->kv_ctx);
    if (!cerr && s->kv_ctx_host)
        cerr = inf_context_error(s->kv_ctx_host);
    if (cerr) {
        wrap_error(err, "KV cache", cerr);
        return false;
    }
    if (s->kv_ctx_host &&
        !(s->kv_buffer_host = alloc_tensors(s->cpu, s->kv_ctx_host, "the KV cache", err)))
        return false;
    s->kv_buffer = alloc_tensors(s->backend, s->kv_ctx, "the KV cache", err);
    return s->kv_buffer != NULL;
}

/* The attention output scratch, in a buffer of its own (counted with the compute buffer). */
static bool create_scratch(inf_session *s, ggtk_error *err)
{
    const inf_model_hparams *hp = &s->model->hparams;
    s->scratch_ctx = inf_context_new(inf_tensor_overhead(), true);
    s->cache.attn_scratch = s->scratch_ctx ? inf_tensor_new_2d(s->scratch_ctx, GGTK_TENSOR_F32,
                                                               (int64_t)hp->n_embd_head * hp->n_head,
                                                               s->params.n_batch)
                                           : NULL;
    if (!s->cache.attn_scratch) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                       "out of memory for the attention scratch");
        return false;
    }
    inf_tensor_set_name(s->cache.attn_scratch, "attn_scratch");
    /* Partial offload: on the CPU, whose blocks and the device's both write it (the scheduler
     * copies it across). */
    s->scratch_buffer = alloc_tensors(s->sched ? s->cpu : s->backend, s->scratch_ctx,
                                      "the attention scratch", err);
    return s->scratch_buffer != NULL;
}

/* The first node of `graph` the backend cannot compute, described for an error message. */
static bool check_supported(inf_session *s, const inf_graph *graph, ggtk_error *err)
{
    for (int i = 0; i < inf_graph_n_nodes(graph); i++) {
        const inf_tensor *node = inf_graph_node(graph, i);
        if (inf_backend_supports(s->backend, node))
            continue;
        const inf_tensor *a = node->src[0];
        const ggtk_tensor_type_info *ti = a ? ggtk_tensor_type_info_get(a->type) : NULL;
        ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                       "the %s backend cannot compute %s of %s (type %s)",
                       inf_backend_name(s->backend), inf_op_name(node->op), a ? a->name : "?",
                       ti ? ti->name : "?");
        return false;
    }
    return true;
}

/* A graph's memory and its compute, on the session's one backend (a graph allocator) or split
 * between the device and the CPU (the scheduler). */
static ggtk_status graph_alloc(inf_session *s, inf_graph *graph, ggtk_error *err)
{
    return s->sched ? inf_sched_alloc_graph(s->sched, graph, err)
                    : inf_graph_allocator_alloc(s->allocator, graph, err);
}

static ggtk_status graph_compute(inf_session *s, inf_graph *graph, ggtk_error *err)
{
    return s->sched ? inf_sched_compute_filtered(s->sched, graph, s->observer_filter, s->observer,
                                                 s->observer_user, err)
                    : inf_backend_compute_filtered(s->backend, graph, s->observer_filter,
                                                   s->observer, s->observer_user, err);
}

/* Bytes of the planned compute buffers (every backend's). */
static size_t planned_bytes(const inf_session *s)
{
    if (!s->sched)
        return inf_graph_allocator_stats(s->allocator).buffer_size;
    const inf_sched_stats st = inf_sched_get_stats(s->sched);
    size_t bytes = 0;
    for (int b = 0; b < st.n_backends; b++)
        bytes += st.buffer_size[b];
    return bytes;
}

/* Plan the compute buffer for the largest graph: a full batch at the end of a full cache with
 * params.n_batch outputs. A single backend must compute every node; split between two, the
 * scheduler gives the CPU what the device cannot. */
static bool reserve_compute(inf_session *s, ggtk_error *err)
{
    const int32_t n_ctx = s->params.n_ctx, n_batch = s->params.n_batch;
    model_batch_shape shape = {n_batch, n_ctx - n_batch, 0, n_batch,
                               n_ctx - kv_window_cells(s->model, n_ctx, n_batch)};
    inf_context *ctx = inf_context_new(model_graph_context_size(s->model), true);
    if (!s->sched)
        s->allocator = inf_graph_allocator_new(s->backend);
    if (!ctx || (!s->sched && !s->allocator)) {
        inf_context_free(ctx);
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
        return false;
    }
    model_graph g;
    bool ok = model_build_graph(s->graph_model, ctx, &s->cache, shape, &g, err) &&
              (s->sched || check_supported(s, g.graph, err));
    if (ok) {
        ggtk_error inner;
        ok = (s->sched ? inf_sched_reserve(s->sched, g.graph, &inner)
                       : inf_graph_allocator_reserve(s->allocator, g.graph, &inner)) == GGTK_OK;
        if (!ok)
            wrap_error(err, "planning the compute buffer failed", &inner);
    }
    if (ok && s->placement.device != INF_DEVICE_CPU) {
        /* Device memory is scarcer: claim the compute buffer now, so that a session that does
         * not fit fails here, saying so, rather than in its first decode. */
        ggtk_error inner;
        ok = graph_alloc(s, g.graph, &inner) == GGTK_OK;
        if (!ok)
            ggtk_error_set(err, inner.status, GGTK_NO_OFFSET,
                           "the compute buffer (%.1f MiB) does not fit: %s",
                           planned_bytes(s) / 1048576.0, inner.message);
    }
    if (ok)
        s->compute_bytes = planned_bytes(s) +
                           inf_backend_cpu_work_size(s->sched ? s->cpu : s->backend, g.graph) +
                           s->scratch_buffer->size;
    inf_context_free(ctx);
    return ok;
}

/* Partial offload: the CPU backend beside the device and the scheduler over the two (the device
 * preferred; its buffers are known by their kind). */
static bool open_split(inf_session *s, ggtk_error *err)
{
    s->cpu = inf_backend_cpu_new(s->params.n_threads);
    if (!s->cpu) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory for the CPU backend");
        return false;
    }
    inf_backend *backends[2] = {s->backend, s->cpu};
    s->sched = inf_sched_new(backends, 2, err);
    return s->sched != NULL;
}

/* The backend of the session's placement and, on a device, the weights it computes with. */
static bool open_device(inf_session *s, ggtk_error *err)
{
    const inf_model *m = s->model;
    s->graph_model = m;
    if (!session_place(m, &s->params, &s->placement, err) ||
        !(s->backend = session_backend_new(&s->placement, s->params.n_threads, err)))
        return false;
    session_describe(&s->placement, m, s->params.n_threads, s->description,
                     sizeof s->description);
    if (s->placement.device == INF_DEVICE_CPU)
        return true;
    const uint32_t n_layer = m->hparams.n_layer;
    const uint32_t on_device = (uint32_t)s->placement.n_gpu_layers;
    const weights_split split = {.first_layer = on_device >= n_layer ? 0 : n_layer - on_device,
                                 .output = on_device > n_layer, .embedding = on_device > n_layer};
    if (!device_weights_upload(&s->weights, m, split, s->backend, err))
        return false;
    s->graph_model = &s->weights.view;
    return on_device > n_layer || open_split(s, err);
}

/* Whether the session's backend computes a FLASH_ATTN node of this model's head shapes. On a GPU
 * attention is then one fused node per layer (no score matrix in device memory); the CPU keeps
 * the unfused path, as fast or faster there (docs/models.md), and so does a GPU for head sizes
 * its kernel does not take. */
static bool backend_fuses_attention(inf_session *s)
{
    const inf_model_hparams *hp = &s->model->hparams;
    inf_context *ctx = inf_context_new(4 * inf_tensor_overhead(), true);
    if (!ctx)
        return false;
    inf_tensor *q = inf_tensor_new_3d(ctx, GGTK_TENSOR_F32, hp->n_embd_head, 1, hp->n_head);
    inf_tensor *k = inf_tensor_new_3d(ctx, s->params.kv_type, hp->n_embd_head, 1, hp->n_head_kv);
    inf_tensor *v = inf_tensor_new_3d(ctx, s->params.kv_type, hp->n_embd_head, 1, hp->n_head_kv);
    inf_tensor *node = q && k && v ? inf_flash_attn_causal(ctx, q, k, v, 1.0f, 0.0f, 0, 0) : NULL;
    const bool fused = node && !inf_context_error(ctx) && inf_backend_supports(s->backend, node);
    inf_context_free(ctx);
    return fused;
}

inf_session *inf_session_new(inf_model *model, const inf_session_params *params, ggtk_error *err)
{
    inf_session_params p = params ? *params : inf_session_params_default();
    if (!check_params(model, &p, err))
        return NULL;
    inf_session *s = calloc(1, sizeof *s);
    if (!s) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
        return NULL;
    }
    s->model = model;
    s->params = p;
    bool ok = open_device(s, err);
    s->cache.flash_attn = ok && s->placement.device == INF_DEVICE_CUDA && backend_fuses_attention(s);
    if (!ok || !create_kv_cache(s, err) || !create_scratch(s, err) || !reserve_compute(s, err)) {
        inf_session_free(s);
        return NULL;
    }
    s->params.device = s->placement.device;
    s->params.n_gpu_layers = s->placement.n_gpu_layers;
    return s;
}

void inf_session_free(inf_session *s)
{
    if (!s)
        return;
    inf_graph_allocator_free(s->allocator);
    inf_sched_free(s->sched);
    inf_buffer_free(s->kv_buffer);
    inf_context_free(s->kv_ctx);
    inf_buffer_free(s->kv_buffer_host);
    inf_context_free(s->kv_ctx_host);
    inf_buffer_free(s->scratch_buffer);
    inf_context_free(s->scratch_ctx);
    inf_buffer_free(s->device_rows);
    device_weights_free(&s->weights);
    inf_backend_free(s->cpu);
    inf_backend_free(s->backend);
    free(s->cache.k);
    free(s->cache.v);
    free(s->copies);
    free(s);
}

void inf_session_reset(inf_session *s)
{
    s->n_past = 0;
    s->swa_first = 0;
}

void inf_session_set_observer(inf_session *s, inf_node_filter filter, inf_node_observer observer,
                              void *user)
{
    s->observer_filter = filter;
    s->observer = observer;
    s->observer_user = user;
}
int32_t inf_session_n_past(const inf_session *s) { return s->n_past; }
inf_session_params inf_session_get_params(const inf_session *s) { return s->params; }
const inf_model *inf_session_model(const inf_session *s) { return s->model; }
size_t inf_session_kv_bytes(const inf_session *s)
{
    return (s->kv_buffer ? s->kv_buffer->size : 0) +
           (s->kv_buffer_host ? s->kv_buffer_host->size : 0);
}
size_t inf_session_compute_bytes(const inf_session *s) { return s->compute_bytes; }
size_t inf_session_logits_bytes(const inf_session *s)
{
    return s->copies_capacity * sizeof(float) + (s->device_rows ? s->device_rows->size : 0);
}
inf_session_device_memory inf_session_device_bytes(const inf_session *s)
{
    inf_session_device_memory m = {0};
    if (s->placement.device == INF_DEVICE_CPU)
        return m;
    m.weights = s->weights.bytes;
    m.kv = s->kv_buffer ? s->kv_buffer->size : 0;
    m.compute = s->sched ? inf_sched_get_stats(s->sched).buffer_size[0]
                         : planned_bytes(s) + s->scratch_buffer->size;
    m.logits = s->device_rows ? s->device_rows->size : 0;
    return m;
}
const char *inf_session_device_description(const inf_session *s) { return s->description; }

static bool reserve_copies(inf_session *s, int32_t rows);

/* Download the device rows of the last decode into `copies` (the first time they are asked
 * for). */
static const float *download_logits(inf_session *s)
{
    const size_t bytes = (size_t)s->n_logits_rows * s->model->hparams.n_vocab * sizeof(float);
    if (!reserve_copies(s, s->n_logits_rows))
        return NULL;
    s->device_logits_in->ops->read(s->device_logits_in, s->copies, s->device_logits, bytes);
    s->logits = s->copies;
    return s->logits;
}

const float *inf_session_logits(const inf_session *s, int32_t *n_rows)
{
    if (n_rows)
        *n_rows = s->n_logits_rows;
    if (!s->logits && s->device_logits && s->n_logits_rows > 0)
        return download_logits((inf_session *)s); /* the session's own cache of its rows */
    return s->logits;
}

const float *session_device_logits(const inf_session *s, int32_t *n_rows)
{
    if (n_rows)
        *n_rows = s->device_logits ? s->n_logits_rows : 0;
    return s->device_logits;
}

bool session_logits_on_device(const inf_session *s)
{
    /* Split with the CPU, the output layer is the CPU's (llama.cpp's -ngl N <= n_layer). */
    return s->placement.device != INF_DEVICE_CPU && !s->sched;
}

inf_backend *session_logits_backend(const inf_session *s) { return s->backend; }

/* Make room for `rows` rows of logits gathered from several graphs. */
static bool reserve_copies(inf_session *s, int32_t rows)
{
    size_t need = (size_t)rows * s->model->hparams.n_vocab;
    if (need <= s->copies_capacity)
        return true;
    float *copies = realloc(s->copies, need * sizeof *copies);
    if (!copies)
        return false;
    s->copies = copies;
    s->copies_capacity = need;
    return true;
}

/* Make room on the device for `rows` rows of logits written by several graphs. */
static bool reserve_device_rows(inf_session *s, int32_t rows, ggtk_error *err)
{
    const size_t need = (size_t)rows * s->model->hparams.n_vocab * sizeof(float);
    if (s->device_rows && s->device_rows->size >= need)
        return true;
    inf_buffer_free(s->device_rows);
    s->device_rows = inf_backend_alloc_buffer(s->backend, need);
    if (!s->device_rows)
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                       "%s: out of device memory for %d rows of logits (%.1f MiB)",
                       inf_backend_name(s->backend), rows, need / 1048576.0);
    return s->device_rows != NULL;
}

/* The logits of a graph: read in place when the decode is this one graph and the compute buffer
 * is host memory (they stay there until the next decode), else copied out from row `row` on. On
 * a device they stay where the graph wrote them: its compute buffer, or the rows buffer. */
static ggtk_status take_logits(inf_session *s, const inf_tensor *logits, int32_t n_out,
                               bool only_graph, int32_t row, ggtk_error *err)
{
    const size_t n_vocab = s->model->hparams.n_vocab;
    if (!logits->buffer->host) {
        s->device_logits_in = only_graph ? logits->buffer : s->device_rows;
        s->device_logits = only_graph ? logits->data : s->device_rows->base;
        return GGTK_OK;
    }
    if (only_graph) {
        s->logits = logits->data;
        return GGTK_OK;
    }
    ggtk_error inner;
    ggtk_status st = inf_tensor_read(logits, s->copies + (size_t)row * n_vocab, 0,
                                     n_vocab * sizeof(float) * (size_t)n_out, &inner);
    if (st != GGTK_OK)
        wrap_error(err, "reading the logits failed", &inner);
    s->logits = s->copies;
    return st;
}

/* Build, allocate and compute the graph of one batch; its logits go to row `row` onward. */
static ggtk_status decode_batch(inf_session *s, const inf_token *tokens, model_batch_shape shape,
                                bool only_graph, int32_t row, ggtk_error *err)
{
    inf_context *ctx = inf_context_new(model_graph_context_size(s->model), true);
    if (!ctx)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory for the graph");
    model_graph g;
    ggtk_error inner;
    ggtk_status st = GGTK_OK;
    if (!model_build_graph(s->graph_model, ctx, &s->cache, shape, &g, err))
        st = GGTK_ERR_INVALID;
    /* A long decode on a device: the graph writes its logits straight into their rows. */
    const size_t row_bytes = s->model->hparams.n_vocab * sizeof(float);
    if (st == GGTK_OK && !only_graph && s->device_rows && shape.n_out > 0 &&
        (st = inf_buffer_place_tensor(s->device_rows, g.logits, (size_t)row * row_bytes,
                                      &inner)) != GGTK_OK)
        wrap_error(err, "placing the logits failed", &inner);
    if (st == GGTK_OK && (st = graph_alloc(s, g.graph, &inner)) != GGTK_OK)
        wrap_error(err, "allocating the graph failed", &inner);
    if (st == GGTK_OK) {
        int32_t *pos = malloc((size_t)shape.n_tokens * sizeof *pos);
        for (int32_t i = 0; pos && i < shape.n_tokens; i++)
            pos[i] = shape.n_past + i;
        size_t bytes = (size_t)shape.n_tokens * sizeof(int32_t);
        st = !pos ? ggtk_error_set(&inner, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory")
                  : inf_tensor_write(g.tokens, tokens, 0, bytes, &inner);
        if (st == GGTK_OK)
            st = inf_tensor_write(g.positions, pos, 0, bytes, &inner);
        free(pos);
        if (st != GGTK_OK)
            wrap_error(err, "setting the graph inputs failed", &inner);
    }
    if (st == GGTK_OK && (st = graph_compute(s, g.graph, &inner)) != GGTK_OK)
        wrap_error(err, "compute failed", &inner);
    if (st == GGTK_OK && shape.n_out > 0)
        st = take_logits(s, g.logits, shape.n_out, only_graph, row, err);
    inf_context_free(ctx);
    return st;
}

ggtk_status inf_session_decode(inf_session *s, const inf_token *tokens, int32_t n_tokens,
                               int32_t first_output, ggtk_error *err)
{
    s->n_logits_rows = 0;
    const int32_t n_vocab = (int32_t)s->model->hparams.n_vocab;
    if (n_tokens < 1 || first_output < 0 || first_output > n_tokens) {
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "bad batch: %d tokens, first output %d", n_tokens, first_output);
    }
    if (n_tokens > s->params.n_ctx - s->n_past) {
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "%d tokens do not fit: %d of %d cache positions are used", n_tokens,
                              s->n_past, s->params.n_ctx);
    }
    for (int32_t i = 0; i < n_tokens; i++) {
        if (tokens[i] < 0 || tokens[i] >= n_vocab) {
            return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                                  "token %d at index %d is outside the vocabulary of %d",
                                  tokens[i], i, n_vocab);
        }
    }
    const bool one_graph = n_tokens <= s->params.n_batch;
    const bool on_device = session_logits_on_device(s);
    if (!one_graph && on_device && !reserve_device_rows(s, n_tokens - first_output, err))
        return GGTK_ERR_NOMEM;
    if (!one_graph && !on_device && !reserve_copies(s, n_tokens - first_output)) {
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                              "out of memory for %d rows of logits", n_tokens - first_output);
    }
    s->logits = NULL;
    s->device_logits = NULL;
    for (int32_t start = 0; start < n_tokens; start += s->params.n_batch) {
        model_batch_shape shape;
        shape.n_tokens = n_tokens - start < s->params.n_batch ? n_tokens - start : s->params.n_batch;
        shape.n_past = s->n_past;
        shape.out_begin = first_output > start ? first_output - start : 0;
        if (shape.out_begin > shape.n_tokens)
            shape.out_begin = shape.n_tokens;
        shape.n_out = shape.n_tokens - shape.out_begin;
        ggtk_status st = kv_window_slide(s->model, &s->cache, &s->swa_first, s->n_past,
                                         shape.n_tokens, err);
        shape.swa_first = s->swa_first;
        if (st == GGTK_OK)
            st = decode_batch(s, tokens + start, shape, one_graph, s->n_logits_rows, err);
        if (st != GGTK_OK)
            return st;
        s->n_past += shape.n_tokens;
        s->n_logits_rows += shape.n_out;
    }
    return GGTK_OK;
}
