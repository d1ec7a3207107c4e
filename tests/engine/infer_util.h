/* infer_util.h - helpers shared by the libinfer tests: random data, element access of any float
 * tensor, running a graph on the CPU backend and comparing results with a tolerance. */
#ifndef INFER_UTIL_H
#define INFER_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include <ggtk/inf_alloc.h>
#include <ggtk/inf_backend.h>
#include <ggtk/inf_graph.h>
#include <ggtk/inf_ops.h>
#include <ggtk/inf_quant.h>
#include <ggtk/inf_tensor.h>

/* A small deterministic generator (xorshift64*). */
typedef struct test_rng {
    uint64_t state;
} test_rng;

uint64_t rng_next(test_rng *rng);
/* Uniform in [lo, hi). */
float rng_uniform(test_rng *rng, float lo, float hi);
/* Uniform integer in [lo, hi]. */
int64_t rng_int(test_rng *rng, int64_t lo, int64_t hi);

/* Element (i0..i3) of a tensor of type F32, F16, BF16 or I32, as float. */
float tensor_get(const inf_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3);
/* Store v at element (i0..i3) (F32, F16, BF16, I32). */
void tensor_set(inf_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v);
/* Fill every element with uniform values in [lo, hi). */
void tensor_fill(inf_tensor *t, test_rng *rng, float lo, float hi);
/* Fill a quantized or float matrix (contiguous) with quantized random values in [lo, hi). */
void tensor_fill_quantized(inf_tensor *t, test_rng *rng, float lo, float hi);

/* A context with data (every tensor gets memory when made) of `mb` MiB. */
inf_context *data_context(size_t mb);

/* Build a graph for `out` in ctx and compute it on a CPU backend with n_threads threads.
 * Returns the status; on failure the backend's message is printed. */
ggtk_status compute_graph(inf_context *ctx, inf_tensor *out, int n_threads);

/* compute_graph() of the n tensors outs[0..n), expanded in turn: the graph runs what each one
 * adds after what the ones before it added. */
ggtk_status compute_graph_outputs(inf_context *ctx, inf_tensor *const *outs, int n, int n_threads);

/* Largest |a - b| / (atol + rtol * |b|) over the elements of `t` against `expected`, a dense
 * [ne3][ne2][ne1][ne0] array. <= 1 means within tolerance. */
double compare_with(const inf_tensor *t, const float *expected, double atol, double rtol);

#endif
