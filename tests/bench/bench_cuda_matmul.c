/* bench_cuda_matmul.c - time of MUL_MAT on the CUDA backend per weight type, shape and column
 * count: the few-column kernels (mmvq.cu, token generation) by the weight bytes they stream per
 * second, the cuBLAS route (prompt batches) by its operations per second.
 *
 * Usage: bench_cuda_matmul [--types f16,q8_0,...] [--shapes KxM,...] [--rows N,...] [--seconds S]
 * Prints one line per case: type, K, M, N, best and mean microseconds per product, the weights'
 * GB/s and the TOP/s (2*K*M*N operations) from the best time. One graph holds COPIES products of
 * the same weights (each to its own output), so the wait at the end of a graph is shared. Without
 * a CUDA device it prints the reason and exits 0. On the emulator the numbers mean nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ggtk/inf_backend.h>
#include <ggtk/inf_backend_cuda.h>
#include <ggtk/inf_graph.h>
#include <ggtk/inf_ops.h>
#include <ggtk/inf_quant.h>

#include "bench_list.h"

enum { COPIES = 8 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Uniform values in [-1, 1) converted or quantized into rows of `type`; NULL for a type without
 * a quantizer. */
static void *random_rows(ggtk_tensor_type type, int64_t K, int64_t rows, size_t *nbytes)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    *nbytes = (size_t)(K / info->block_size * rows) * info->block_bytes;
    float *values = malloc((size_t)(K * rows) * sizeof *values);
    void *data = malloc(*nbytes);
    unsigned seed = 12345;
    for (int64_t i = 0; values && i < K * rows; i++) {
        seed = seed * 1664525u + 1013904223u;
        values[i] = (float)(seed >> 8) / (float)(1 << 23) - 1.0f;
    }
    bool ok = values && data && inf_type_can_quantize(type) && inf_quantize_rows(type, values, data, rows, K, 1);
    free(values);
    if (!ok) {
        free(data);
        return NULL;
    }
    return data;
}

/* Best and mean microseconds per product over repeated graphs for about `seconds`. */
static bool time_case(inf_backend *cuda, ggtk_tensor_type type, int64_t K, int64_t M, int64_t N,
                      double seconds, double *best_us, double *mean_us)
{
    inf_context *ctx = inf_context_new((COPIES + 4) * inf_tensor_overhead() + inf_graph_overhead(COPIES + 2), true);
    inf_tensor *w = ctx ? inf_tensor_new_2d(ctx, type, K, M) : NULL;
    inf_tensor *x = ctx ? inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, K, N) : NULL;
    inf_graph *graph = ctx ? inf_graph_new(ctx, COPIES + 2) : NULL;
    bool ok = w && x && graph;
    for (int c = 0; ok && c < COPIES; c++)
        ok = inf_graph_expand(graph, inf_mul_mat(ctx, w, x), NULL) == GGTK_OK;
    ggtk_error err = {0};
    inf_buffer *buffer = ok ? inf_backend_alloc_context_tensors(cuda, ctx, &err) : NULL;
    size_t w_bytes = 0, x_bytes = 0;
    void *w_host = buffer ? random_rows(type, K, M, &w_bytes) : NULL;
    void *x_host = w_host ? random_rows(GGTK_TENSOR_F32, K, N, &x_bytes) : NULL;
    ok = x_host && inf_tensor_write(w, w_host, 0, w_bytes, &err) == GGTK_OK &&
         inf_tensor_write(x, x_host, 0, x_bytes, &err) == GGTK_OK &&
         inf_backend_compute(cuda, graph, &err) == GGTK_OK; /* warm-up: scratch, cuBLAS */
    if (!ok)
        fprintf(stderr, "bench_cuda_matmul: %s K=%lld M=%lld N=%lld: %s\n", ggtk_tensor_type_name(type),
                (long long)K, (long long)M, (long long)N, err.message[0] ? err.message : "no memory or no quantizer");
    double best = 1e30, total = 0.0;
    int runs = 0;
    for (const double start = now(); ok && (runs < 3 || now() - start < seconds); runs++) {
        const double t0 = now();
        ok = inf_backend_compute(cuda, graph, &err) == GGTK_OK;
        const double t = (now() - t0) / COPIES;
        best = t < best ? t : best;
        total += t;
    }
    *best_us = best * 1e6;
    *mean_us = runs ? total / runs * 1e6 : 0.0;
    free(w_host);
    free(x_host);
    inf_buffer_free(buffer);
    inf_context_free(ctx);
    return ok;
}

int main(int argc, char **argv)
{
    double seconds = 1.0;
    const char *types = "f16,q8_0,q4_0,q4_1,q4_k,q6_k", *shapes = "576x1536,1536x576,640x262144";
    const char *rows = "1,8,512";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--types")) types = argv[i + 1];
        else if (!strcmp(argv[i], "--shapes")) shapes = argv[i + 1];
        else if (!strcmp(argv[i], "--rows")) rows = argv[i + 1];
        else {
            fprintf(stderr, "bench_cuda_matmul: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    ggtk_error err = {0};
    inf_backend *cuda = inf_cuda_device_count(&err) > 0 ? inf_backend_cuda_new(0, &err) : NULL;
    if (!cuda) {
        printf("bench_cuda_matmul: skipped: %s\n", err.message);
        return 0;
    }
    inf_cuda_device_info info;
    if (inf_cuda_device_describe(0, &info, NULL) == GGTK_OK)
        printf("device 0: %s%s\n", info.name, inf_cuda_emulated() ? " (emulated: times mean nothing)" : "");
    printf("%-6s %6s %7s %5s %10s %10s %8s %8s\n", "type", "K", "M", "N", "best_us", "mean_us", "GB/s", "TOP/s");
    char type_name[32], shape[64], row_count[32];
    int status = 0;
    for (const char *t = types; bench_next_item(&t, type_name, sizeof type_name);) {
        const int type = bench_type("bench_cuda_matmul", type_name);
        if (type < 0)
            return 2;
        for (const char *s = shapes; bench_next_item(&s, shape, sizeof shape);) {
            long long K = 0, M = 0;
            if (!bench_shape("bench_cuda_matmul", shape, &K, &M))
                return 2;
            if (K % ggtk_tensor_type_info_get((ggtk_tensor_type)type)->block_size != 0)
                continue;
            for (const char *r = rows; bench_next_item(&r, row_count, sizeof row_count);) {
                const long long N = atoll(row_count);
                double best, mean;
                if (!time_case(cuda, (ggtk_tensor_type)type, K, M, N, seconds, &best, &mean)) {
                    status = 1;
                    continue;
                }
                const double bytes = (double)inf_type_row_size((ggtk_tensor_type)type, K) * (double)M;
                printf("%-6s %6lld %7lld %5lld %10.1f %10.1f %8.1f %8.2f\n", type_name, K, M, N, best, mean,
                       bytes / (best * 1e3), 2.0 * (double)K * (double)M * (double)N / (best * 1e6));
                fflush(stdout);
            }
        }
    }
    inf_backend_free(cuda);
    return status;
}
