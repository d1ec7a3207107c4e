/* inf_backend.h - memory buffers and the backends that execute graphs.
 *
 * A buffer is a block of memory tensors are placed in. Three kinds exist on the host:
 *  - a host buffer: aligned heap memory owned by the buffer (activations, KV caches),
 *  - a wrapped buffer: memory owned by someone else, e.g. the data section of a ggtk_file's map,
 *    so weights are used in place with no copy,
 *  - a mapped buffer: a read-only mmap of a file region owned by the buffer.
 * A device buffer (the CUDA backend's, <ggtk/inf_backend_cuda.h>) provides its own inf_buffer_ops;
 * code that moves data in and out of tensors goes through inf_tensor_write()/inf_tensor_read() so
 * it works for every kind.
 *
 * A backend executes graphs. The CPU backend runs each node with an OpenMP thread team; it sizes
 * one shared work buffer (quantized activations, packed panels) once per graph.
 *
 * Errors: see <ggtk/error.h>; nothing here concerns a byte of a file except inf_buffer_map_file()'s
 * range, so other offsets are GGTK_NO_OFFSET. Lifecycle verbs: see <ggtk/inf_tensor.h>.
 *
 * Thread-safety: a buffer or backend may be used by one thread at a time; the CPU backend uses
 * its own threads inside inf_backend_compute().
 */
#ifndef INF_BACKEND_H
#define INF_BACKEND_H

#include <ggtk/export.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggtk/inf_graph.h>
#include <ggtk/error.h>
#include <ggtk/inf_tensor.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Buffers
 * ------------------------------------------------------------------------------------------- */

typedef struct inf_buffer inf_buffer;

/* What a kind of buffer implements. `dst`/`src` inside the buffer are addresses between base and
 * base + size (device addresses for a device buffer). */
typedef struct inf_buffer_ops {
    const char *name;                                   /* "host", "wrapped", "mmap", "cuda" */
    void (*release)(inf_buffer *buffer);                /* free the memory the buffer owns */
    void (*write)(inf_buffer *buffer, void *dst, const void *host_src, size_t size);
    void (*read)(inf_buffer *buffer, void *host_dst, const void *src, size_t size);
    void (*fill)(inf_buffer *buffer, void *dst, uint8_t value, size_t size);
} inf_buffer_ops;

/* A buffer. Fields are public so device backends can implement one; treat them as read-only. */
struct inf_buffer {
    const inf_buffer_ops *ops;
    void *base;      /* first byte (aligned as the kind promises) */
    size_t size;     /* bytes usable from base */
    bool host;       /* base is ordinary host memory the CPU may read and write */
    bool read_only;  /* writes are refused (mapped weights) */
    void *impl;      /* the kind's private state */
};

/* A buffer of `size` bytes of heap memory aligned to `alignment` (a power of two; 0 means 64).
 * Contents are uninitialised. NULL when out of memory. size 0 gives a valid empty buffer. */
GGTK_API inf_buffer *inf_buffer_host_new(size_t size, size_t alignment);

/* A buffer over `size` bytes at `base` that the caller keeps owning and must keep valid for the
 * buffer's life (e.g. ggtk_data() of an open ggtk_file). NULL when out of memory. */
GGTK_API inf_buffer *inf_buffer_wrap(void *base, size_t size, bool read_only);

/* A read-only private mmap of `size` bytes of file `path` starting at byte `offset` (which need
 * not be page-aligned). NULL on failure, with `err` naming the file and the reason: GGTK_ERR_IO
 * (cannot open, mmap failed), GGTK_ERR_LAYOUT (the range is not inside the file; the error's
 * offset is `offset`), GGTK_ERR_NOMEM. */
GGTK_API inf_buffer *inf_buffer_map_file(const char *path, uint64_t offset, size_t size,
                                         ggtk_error *err);

/* A buffer of another kind, for device backends: wraps the given fields in a new inf_buffer that
 * inf_buffer_free() releases through ops->release. NULL when out of memory. */
GGTK_API inf_buffer *inf_buffer_new_custom(const inf_buffer_ops *ops, void *base, size_t size, bool host,
                                  bool read_only, void *impl);

/* Release the buffer and what it owns. Tensors placed in it keep dangling pointers. NULL ok. */
GGTK_API void inf_buffer_free(inf_buffer *buffer);

/* Fill the whole buffer with `value` (refused for read-only buffers: GGTK_ERR_USAGE). */
GGTK_API ggtk_status inf_buffer_fill(inf_buffer *buffer, uint8_t value, ggtk_error *err);

/* Give `tensor` (not a view, data NULL) the memory at `offset` bytes into `buffer`; every view
 * of it made afterwards, and views of it already made, get their data from it when a graph is
 * allocated or computed. GGTK_ERR_INVALID when the tensor does not fit, is a view or already has
 * data. */
GGTK_API ggtk_status inf_buffer_place_tensor(inf_buffer *buffer, inf_tensor *tensor, size_t offset,
                                             ggtk_error *err);

/* Give `tensor` memory that already holds its data, at address `data` inside `buffer` (weights in
 * a mapped or wrapped file: zero copy). GGTK_ERR_INVALID when the tensor is a view or
 * [data, data + nbytes) is not inside the buffer. */
GGTK_API ggtk_status inf_buffer_bind_tensor(inf_buffer *buffer, inf_tensor *tensor, const void *data,
                                            ggtk_error *err);

/* Copy `size` bytes from host memory into the tensor's memory at byte `offset` / out of it. The
 * tensor (or its view_src) must have memory; the range must lie inside inf_tensor_nbytes().
 * GGTK_ERR_USAGE otherwise, or when writing into a read-only buffer. */
GGTK_API ggtk_status inf_tensor_write(inf_tensor *tensor, const void *data, size_t offset, size_t size,
                                      ggtk_error *err);
GGTK_API ggtk_status inf_tensor_read(const inf_tensor *tensor, void *data, size_t offset, size_t size,
                                     ggtk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Backends
 * ------------------------------------------------------------------------------------------- */

typedef struct inf_backend inf_backend;

/* The CPU backend with `n_threads` threads (<= 0: OpenMP's default, normally one per core).
 * NULL when out of memory. */
GGTK_API inf_backend *inf_backend_cpu_new(int n_threads);

/* Free a backend and its work buffer. NULL allowed. */
GGTK_API void inf_backend_free(inf_backend *backend);

/* Short name ("cpu"). */
GGTK_API const char *inf_backend_name(const inf_backend *backend);

/* Alignment in bytes the backend wants tensor data to have (64 for the CPU). */
GGTK_API size_t inf_backend_alignment(const inf_backend *backend);

/* A buffer of `size` bytes in the memory this backend computes on (host memory for the CPU).
 * NULL when out of memory. */
GGTK_API inf_buffer *inf_backend_alloc_buffer(inf_backend *backend, size_t size);

/* Whether the backend can compute `node` (its op with its source types and layouts). */
GGTK_API bool inf_backend_supports(const inf_backend *backend, const inf_tensor *node);

/* Execute the graph's nodes in order. Every leaf and node must have memory (a graph allocator or
 * buffer placement gives it). Returns GGTK_ERR_USAGE for a tensor without memory,
 * GGTK_ERR_UNSUPPORTED for a node the backend cannot compute, GGTK_ERR_INVALID for bad indices in
 * get_rows/set_rows, GGTK_ERR_NOMEM; `err` names the backend, the node and the reason ("cpu: node 3
 * 'x': ..."). Nodes before the failing one have run. */
GGTK_API ggtk_status inf_backend_compute(inf_backend *backend, const inf_graph *graph, ggtk_error *err);

/* Called after each node has been computed, by one thread, all threads idle. Return false to
 * stop the compute (which then returns GGTK_OK after that node). */
typedef bool (*inf_node_observer)(const inf_graph *graph, int node_index, void *user);

/* inf_backend_compute() calling `observer` after every node (debugging, poisoning freed memory,
 * timing). */
GGTK_API ggtk_status inf_backend_compute_observed(inf_backend *backend, const inf_graph *graph,
                                                  inf_node_observer observer, void *user,
                                                  ggtk_error *err);

/* Which nodes an observer wants to see. Every compute thread asks it after each node, so it must
 * answer from the node alone (its op, sources, names), the same each time. */
typedef bool (*inf_node_filter)(const inf_tensor *node, void *user);

/* inf_backend_compute_observed() calling `observer` only after the nodes `filter` accepts
 * (filter NULL: after every node). The other nodes run as in inf_backend_compute(): no thread
 * waits for an observer there, so watching a few nodes costs nothing at the rest. */
GGTK_API ggtk_status inf_backend_compute_filtered(inf_backend *backend, const inf_graph *graph,
                                                  inf_node_filter filter,
                                                  inf_node_observer observer, void *user,
                                                  ggtk_error *err);

/* Change the CPU backend's thread count (<= 0: OpenMP's default). Ignored for other backends. */
GGTK_API void inf_backend_cpu_set_threads(inf_backend *backend, int n_threads);

/* Bytes of shared work buffer the CPU backend needs to compute `graph` with its thread count
 * (the compute plan; inf_backend_compute() grows its buffer to this once per graph). */
GGTK_API size_t inf_backend_cpu_work_size(const inf_backend *backend, const inf_graph *graph);

/* Place every tensor of `ctx` that has neither data nor view_src in one new buffer of `backend`
 * sized for them all (e.g. a KV cache). Returns the buffer (the caller frees it after the
 * tensors' last use) or NULL on failure (GGTK_ERR_NOMEM, naming the backend and the size). */
GGTK_API inf_buffer *inf_backend_alloc_context_tensors(inf_backend *backend, inf_context *ctx,
                                                       ggtk_error *err);

#ifdef __cplusplus
}
#endif

#endif /* INF_BACKEND_H */
