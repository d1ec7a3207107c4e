/* bench_matmul.c - throughput of libinfer's mul_mat on SmolLM2's layer shapes with a batch of
 * activation rows, per weight type and SIMD level, plus the machine's peak for comparison.
 *
 * Usage: bench_matmul [--rows N] [--threads T] [--seconds S] [--types f32,q8_0,...]
 *                     [--levels scalar,avx2,avx512 (default: the active level)] [--shapes KxM,...]
 * Prints one line per case: type, level, K, M, N, best and mean ms per product, and GFLOP/s for
 * float weights or effective GOP/s for quantized weights (2*K*M*N operations either way) from the
 * best and from the mean time, then the best CPU ms per product (the process's CPU time: with
 * --threads 1 a measure that time-slicing on a busy machine does not inflate). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ggtk/inf_backend.h>
#include <ggtk/inf_simd.h>
#include <ggtk/inf_graph.h>
#include <ggtk/inf_ops.h>
#include <ggtk/inf_quant.h>

#include "bench_list.h"

static double clock_seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now(void)
{
    return clock_seconds(CLOCK_MONOTONIC);
}

/* Types with a quantizer get quantized random rows; the others (K types, IQ*) random block
 * bytes, each block redrawn until it dequantizes finite and below 100 (random fp16 scales are
 * often huge or NaN). */
static void fill_random(inf_tensor *t, unsigned seed)
{
    const int64_t ne0 = t->ne[0], rows = inf_tensor_nrows(t);
    if (!inf_type_can_quantize(t->type)) {
        const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(t->type);
        const int64_t blocks = rows * ne0 / info->block_size;
        float *x = malloc(info->block_size * sizeof *x);
        for (int64_t b = 0; b < blocks; b++) {
            unsigned char *blk = (unsigned char *)t->data + (size_t)b * info->block_bytes;
            for (int ok = 0; !ok;) {
                for (uint32_t i = 0; i < info->block_bytes; i++) {
                    seed = seed * 1664525u + 1013904223u;
                    blk[i] = (unsigned char)(seed >> 24);
                }
                inf_dequantize_row(t->type, blk, x, info->block_size);
                ok = 1;
                for (uint32_t i = 0; i < info->block_size; i++)
                    ok &= fabsf(x[i]) < 100.0f;
            }
        }
        free(x);
        return;
    }
    float *row = malloc((size_t)ne0 * sizeof *row);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < ne0; i++) {
            seed = seed * 1664525u + 1013904223u;
            row[i] = (float)(seed >> 8) / (float)(1 << 24) - 0.5f;
        }
        inf_quantize_row(t->type, row, (char *)t->data + (size_t)r * t->nb[1], ne0);
    }
    free(row);
}

/* Milliseconds per product over repeated runs for about `seconds`: the best run and the mean
 * (the machine may be shared: the best shows what the code can do, the mean what it did). Like
 * llama.cpp's test-backend-ops, one graph holds several copies of the product (writing the same
 * output memory) so starting the threads is not counted once per small product. */
static void time_case(ggtk_tensor_type type, int64_t K, int64_t M, int64_t N, int threads,
                      double seconds, double *best_ms, double *mean_ms, double *best_cpu_ms)
{
    const double ops = 2.0 * (double)K * (double)M * (double)N;
    const int copies = ops >= 2e9 ? 1 : (int)(2e9 / ops);
    inf_context *ctx = inf_context_new(inf_type_row_size(type, K) * (size_t)M +
                                           (size_t)K * (size_t)N * 4 + (1 << 20),
                                       false);
    inf_context *outs = inf_context_new((size_t)(copies + 1) * inf_tensor_overhead() +
                                            inf_graph_overhead((size_t)copies + 2), true);
    inf_tensor *w = inf_tensor_new_2d(ctx, type, K, M);
    inf_tensor *x = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, K, N);
    inf_buffer *out_memory = inf_buffer_host_new((size_t)M * (size_t)N * 4, 0);
    inf_graph *g = inf_graph_new(outs, (size_t)copies + 2); /* the weights and x are leaves */
    for (int c = 0; c < copies; c++) {
        inf_tensor *out = inf_mul_mat(outs, w, x);
        if (!out || !g || !out_memory || inf_buffer_place_tensor(out_memory, out, 0, NULL) != GGTK_OK ||
            inf_graph_expand(g, out, NULL) != GGTK_OK) {
            fprintf(stderr, "bench_matmul: cannot build the graph: %s\n",
                    inf_context_error(outs) ? inf_context_error(outs)->message : "out of memory");
            exit(1);
        }
    }
    fill_random(w, 1);
    fill_random(x, 2);
    inf_backend *cpu = inf_backend_cpu_new(threads);
    ggtk_error err;
    if (inf_backend_compute(cpu, g, &err) != GGTK_OK) { /* warm-up: work buffer, page faults */
        fprintf(stderr, "bench_matmul: %s\n", err.message);
        exit(1);
    }
    double best = 1e30, best_cpu = 1e30, total = 0, start = now();
    int runs = 0;
    while (runs < 3 || (now() - start < seconds && runs < 10000)) {
        double t0 = now(), c0 = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
        inf_backend_compute(cpu, g, NULL);
        double ms = (now() - t0) * 1e3 / copies;
        double cpu_ms = (clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e3 / copies;
        best = ms < best ? ms : best;
        best_cpu = cpu_ms < best_cpu ? cpu_ms : best_cpu;
        total += ms;
        runs++;
    }
    inf_backend_free(cpu);
    inf_buffer_free(out_memory);
    inf_context_free(outs);
    inf_context_free(ctx);
    *best_ms = best;
    *mean_ms = total / runs;
    *best_cpu_ms = best_cpu;
}

int main(int argc, char **argv)
{
    int64_t N = 512;
    int threads = 0;
    double seconds = 1.0;
    /* By default the level the library would use: the CPU's best, or INF_SIMD's. */
    const char *types = "f32,q8_0,q4_0", *levels = inf_simd_level_name(inf_simd_active()),
               *shapes = "576x576,576x1536,1536x576,576x49152";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--rows")) N = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--types")) types = argv[i + 1];
        else if (!strcmp(argv[i], "--levels")) levels = argv[i + 1];
        else if (!strcmp(argv[i], "--shapes")) shapes = argv[i + 1];
        else {
            fprintf(stderr, "bench_matmul: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    printf("%-6s %-7s %6s %6s %5s %9s %9s %9s %9s %9s\n", "type", "level", "K", "M", "N", "best_ms",
           "mean_ms", "G/s_best", "G/s_mean", "cpu_ms");
    char level_name[32], type_name[32], shape[64];
    for (const char *l = levels; bench_next_item(&l, level_name, sizeof level_name);) {
        int level = inf_simd_level_from_name(level_name);
        if (level < 0 || inf_simd_force((inf_simd_level)level) != (inf_simd_level)level) {
            printf("(level %s not available on this CPU)\n", level_name);
            continue;
        }
        for (const char *t = types; bench_next_item(&t, type_name, sizeof type_name);) {
            const int type = bench_type("bench_matmul", type_name);
            if (type < 0)
                return 2;
            for (const char *s = shapes; bench_next_item(&s, shape, sizeof shape);) {
                long long K = 0, M = 0;
                if (!bench_shape("bench_matmul", shape, &K, &M))
                    return 2;
                double best, mean, cpu, ops = 2.0 * (double)K * (double)M * (double)N;
                time_case((ggtk_tensor_type)type, K, M, N, threads, seconds, &best, &mean, &cpu);
                printf("%-6s %-7s %6lld %6lld %5lld %9.3f %9.3f %9.1f %9.1f %9.3f\n", type_name,
                       level_name, K, M, (long long)N, best, mean, ops / (best * 1e6),
                       ops / (mean * 1e6), cpu);
                fflush(stdout);
            }
        }
    }
    return 0;
}
