/* cuda_op_compare.h - checking a CUDA kernel against the CPU backend: one operation is built
 * twice (once per backend, each in its own no-data context and buffer), fed the same inputs,
 * computed, and its results compared element by element within a tolerance. Every CUDA op test
 * is written with it, so it runs on a GPU (make test CUDA=1) and on the emulator (CUDA_EMU=1). */
#ifndef CUDA_OP_COMPARE_H
#define CUDA_OP_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggtk/inf_backend.h>
#include <ggtk/inf_backend_cuda.h>
#include <ggtk/inf_graph.h>
#include <ggtk/inf_ops.h>
#include <ggtk/inf_tensor.h>

#include "test.h"

/* The CUDA backend on device 0 for the running test, made on first use and shared by the calls
 * of that test (tests run in forked children, so nothing crosses tests). When there is none
 * (built without CUDA, no device, driver too old) the calling test is skipped with the reason:
 * it never returns NULL. */
inf_backend *cuda_test_backend(void);

/* One operation to compare. */
typedef struct cuda_op_case {
    const char *name; /* for failure messages ("add 7x3 broadcast") */
    /* Make the leaves and the node in `ctx` (a no-data context) and return the node: views,
     * permutes and several nodes are fine, the last one is compared. Called once per backend. */
    inf_tensor *(*build)(inf_context *ctx, void *user);
    /* Optional: write the `nbytes` bytes of leaf number `index` (graph leaf order) into `data`
     * and return true; return false for the default fill. Integer leaves (indices, positions)
     * need it when their values must stay in a range: the default is uniform in [0, 4). */
    bool (*fill)(const inf_tensor *leaf, int index, void *data, size_t nbytes, void *user);
    void *user;
    uint64_t seed;          /* of the default fill: uniform in [-1, 1), quantized per row */
    double atol, rtol;      /* an element passes when |cuda - cpu| <= atol + rtol * |cpu| */
} cuda_op_case;

/* Build, fill, compute on the CPU backend (1 thread) and on cuda_test_backend(), compare. True
 * when every element passes; otherwise false with `why` (size `why_size`) saying which step failed
 * or, for a mismatch, the count of failing elements, the max abs / max rel difference and the
 * first failing element (index and both values). NaN equals NaN; F32/F16/BF16/I32/I64 outputs
 * are compared as numbers, other types byte for byte. Skips the test when there is no CUDA
 * backend. */
bool cuda_op_compare(const cuda_op_case *c, char *why, size_t why_size);

/* CHECK that the case passes, failing with cuda_op_compare()'s explanation. */
#define CHECK_CUDA_OP(c)                                                                       \
    do {                                                                                       \
        char cuda_why_[1024];                                                                  \
        CHECK_MSG(cuda_op_compare((c), cuda_why_, sizeof cuda_why_), "%s: %s", (c)->name,      \
                  cuda_why_);                                                                  \
    } while (0)

#endif
