/* sched_test_support.h - what the scheduler tests share: a CPU backend that refuses one op (to
 * test fallbacks) and a two-layer attention + gated-FFN graph whose layer-1 weights live in a
 * buffer of their own, so that a scheduler can be told they are another backend's. */
#ifndef SCHED_TEST_SUPPORT_H
#define SCHED_TEST_SUPPORT_H

#include <ggtk/inf_backend.h>
#include <ggtk/inf_graph.h>
#include <ggtk/inf_tensor.h>

/* A backend computing like `inner` (which must outlive it) but refusing every node of op
 * `refused`; named "picky". Free with inf_backend_free() (inner is not freed). */
inf_backend *picky_backend_new(inf_backend *inner, inf_op refused);

enum { MLP_LAYERS = 2, MLP_EMBD = 32, MLP_FF = 48, MLP_VOCAB = 40, MLP_TOKENS = 8 };

/* The weights: layer l's in buffers[l]; the output matrix in buffers[0]. */
typedef struct mlp_weights {
    inf_context *ctx[MLP_LAYERS];
    inf_buffer *buffers[MLP_LAYERS];
    inf_tensor *norm[MLP_LAYERS], *wq[MLP_LAYERS], *wk[MLP_LAYERS];
    inf_tensor *wgate[MLP_LAYERS], *wup[MLP_LAYERS], *wdown[MLP_LAYERS];
    inf_tensor *wout;
} mlp_weights;

/* Random weights (seeded) in host buffers. False when out of memory. */
bool mlp_weights_new(mlp_weights *w, uint64_t seed);
void mlp_weights_free(mlp_weights *w);

/* The forward graph in a new no-data context `*ctx`: input "x" [MLP_EMBD, MLP_TOKENS] (flagged
 * input), per layer RMS-norm, Q/K, causal softmax "kq_soft_max.L", attention, residual, SwiGLU
 * FFN, residual; then RMS-norm and the output "logits" [MLP_VOCAB, MLP_TOKENS]. */
typedef struct mlp_graph {
    inf_context *ctx;
    inf_graph *graph;
    inf_tensor *x;
    inf_tensor *logits;
} mlp_graph;

bool mlp_graph_build(mlp_graph *g, const mlp_weights *w);

/* The input every test writes: MLP_EMBD * MLP_TOKENS floats. */
void mlp_input(float *x);

#endif
