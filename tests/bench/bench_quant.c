/* bench_quant - quantization throughput (MB/s of float32 input) of libinfer's kernels at each
 * SIMD level and thread count, optionally against ggml's own quantizer loaded at run time.
 *
 * usage: bench_quant [--rows R] [--cols C] [--reps K] [--types q8_0,q4_0] [--threads 1,2]
 *                    [--ggml PATH/libggml-base.so] [--print-level]
 * Defaults: 49152 x 576 (SmolLM2's token embedding), best of 5 runs. --print-level only prints
 * the SIMD level active at start-up (honours INF_SIMD) and exits. */
#include <dlfcn.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ggtk/inf_quant.h>

typedef size_t (*ggml_quantize_chunk_fn)(int type, const float *src, void *dst, int64_t start,
                                         int64_t nrows, int64_t n_per_row, const float *imatrix);

typedef struct options {
    int64_t rows, cols;
    int reps;
    char types[256];
    char threads[64];
    const char *ggml_path;
    int print_level;
} options;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){.rows = 49152, .cols = 576, .reps = 5, .types = "q8_0,q4_0", .threads = "1,2"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--print-level")) {
            o->print_level = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "bench_quant: %s needs a value\n", a);
            return -1;
        }
        i++;
        if (!strcmp(a, "--rows"))
            o->rows = atoll(v);
        else if (!strcmp(a, "--cols"))
            o->cols = atoll(v);
        else if (!strcmp(a, "--reps"))
            o->reps = atoi(v);
        else if (!strcmp(a, "--types"))
            snprintf(o->types, sizeof o->types, "%s", v);
        else if (!strcmp(a, "--threads"))
            snprintf(o->threads, sizeof o->threads, "%s", v);
        else if (!strcmp(a, "--ggml"))
            o->ggml_path = v;
        else {
            fprintf(stderr, "bench_quant: unknown option %s\n", a);
            return -1;
        }
    }
    if (o->rows <= 0 || o->cols <= 0 || o->cols % 32 || o->reps <= 0) {
        fprintf(stderr, "bench_quant: need rows > 0, cols a positive multiple of 32, reps > 0\n");
        return -1;
    }
    return 0;
}

/* ggml splits a tensor into row chunks, one per thread, as llama-quantize does. */
static void ggml_quantize_threads(ggml_quantize_chunk_fn fn, int type, const float *x, void *q,
                                  int64_t rows, int64_t cols, int threads)
{
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t first = rows * t / nt, last = rows * (t + 1) / nt;
        if (last > first)
            fn(type, x, q, first * cols, last - first, cols, NULL);
    }
}

/* Best time of `reps` runs of one configuration; level < 0 runs ggml instead. */
static double best_time(const options *o, ggtk_tensor_type type, int level, int threads,
                        ggml_quantize_chunk_fn ggml, const float *x, void *q)
{
    double best = INFINITY;
    if (level >= 0)
        inf_simd_force((inf_simd_level)level);
    for (int r = 0; r < o->reps; r++) {
        double t0 = now_seconds();
        if (level >= 0)
            inf_quantize_rows(type, x, q, o->rows, o->cols, threads);
        else
            ggml_quantize_threads(ggml, (int)type, x, q, o->rows, o->cols, threads);
        double t = now_seconds() - t0;
        best = t < best ? t : best;
    }
    return best;
}

static ggml_quantize_chunk_fn load_ggml(const char *path)
{
    if (!path)
        return NULL;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ggml_quantize_chunk_fn fn = NULL;
    if (lib)
        *(void **)&fn = dlsym(lib, "ggml_quantize_chunk");
    if (!fn)
        fprintf(stderr, "bench_quant: cannot use ggml from %s: %s\n", path, dlerror());
    return fn;
}

static void bench_type(const options *o, ggtk_tensor_type type, ggml_quantize_chunk_fn ggml,
                       const float *x, uint8_t *q, uint8_t *q_ref)
{
    const char *name = ggtk_tensor_type_info_get(type)->name;
    const double mb = (double)o->rows * (double)o->cols * 4.0 / 1e6;
    uint64_t bytes;
    ggtk_tensor_type_bytes(type, (uint64_t)(o->rows * o->cols), &bytes);
    char list[64];
    snprintf(list, sizeof list, "%s", o->threads);
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int threads = atoi(tok);
        double ref_mbs = 0.0;
        if (ggml) {
            double t = best_time(o, type, -1, threads, ggml, x, q_ref);
            ref_mbs = mb / t;
            printf("%-5s %-7s %7d %10.0f %9.1f\n", name, "ggml", threads, ref_mbs, t * 1e3);
        }
        for (int level = 0; level <= (int)inf_simd_detect(); level++) {
            double t = best_time(o, type, level, threads, NULL, x, q);
            printf("%-5s %-7s %7d %10.0f %9.1f", name, inf_simd_level_name((inf_simd_level)level),
                   threads, mb / t, t * 1e3);
            if (ggml)
                printf("   x%.2f vs ggml, bytes %s", (mb / t) / ref_mbs,
                       memcmp(q, q_ref, (size_t)bytes) ? "DIFFER" : "identical");
            printf("\n");
        }
    }
}

int main(int argc, char **argv)
{
    options o;
    if (parse_options(argc, argv, &o) != 0)
        return 2;
    if (o.print_level) {
        printf("%s\n", inf_simd_level_name(inf_simd_active()));
        return 0;
    }
    ggml_quantize_chunk_fn ggml = load_ggml(o.ggml_path);
    const int64_t n = o.rows * o.cols;
    float *x = malloc((size_t)n * sizeof *x);
    uint8_t *q = malloc((size_t)n * 4), *q_ref = malloc((size_t)n * 4);
    if (!x || !q || !q_ref) {
        fprintf(stderr, "bench_quant: out of memory for %lld values\n", (long long)n);
        return 1;
    }
    /* weights-like data: a sum of uniforms is close to Gaussian, cheap and deterministic */
    uint32_t s = 12345;
    for (int64_t i = 0; i < n; i++) {
        float v = 0.0f;
        for (int k = 0; k < 4; k++) {
            s = s * 1664525u + 1013904223u;
            v += (float)(s >> 8) * 0x1p-24f - 0.5f;
        }
        x[i] = v * 0.05f;
    }
    memset(q, 0, (size_t)n * 4), memset(q_ref, 0, (size_t)n * 4); /* fault pages in */
    printf("%lld x %lld F32 (%.1f MB), best of %d; CPU level %s\n", (long long)o.rows,
           (long long)o.cols, (double)n * 4 / 1e6, o.reps, inf_simd_level_name(inf_simd_detect()));
    printf("%-5s %-7s %7s %10s %9s\n", "type", "level", "threads", "MB/s", "ms");
    char *save = NULL;
    for (char *tok = strtok_r(o.types, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int type = ggtk_tensor_type_from_name(tok);
        if (type < 0 || !inf_type_can_quantize((ggtk_tensor_type)type)) {
            fprintf(stderr, "bench_quant: cannot quantize to %s\n", tok);
            return 2;
        }
        bench_type(&o, (ggtk_tensor_type)type, ggml, x, q, q_ref);
    }
    free(x), free(q), free(q_ref);
    return 0;
}
