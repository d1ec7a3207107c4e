/* test_cuda_mul_mat.c - MUL_MAT on the CUDA backend against the CPU backend (cuda_op_compare.h):
 * every weight type the CUDA kernels decode, n = 1, 3, 8 (the warp-per-row kernels of mmvq.cu)
 * and 9, 64 (cuBLAS), K = 256, 512, 576, 1536 with an odd M, broadcast batches, the attention
 * products of the model graph (permuted queries, F16/F32 cache views), and real rows of the test
 * models. Skipped without a CUDA device (runs on the emulator with CUDA_EMU=1).
 *
 * Tolerances, as a fraction c of S = sum over k of |w_k x_k| (estimated as K * mean|w| * mean|x|,
 * mean|x| = 1/2 for the default fill):
 *  - n <= 8, every type; the types of the integer path (legacy and K quants) at any n; F32
 *    weights at any n: c = 1e-5. Both backends form the same terms (quantized weights: the same
 *    integer sums, the device quantizing activations byte for byte as the CPU) and differ only
 *    in the order of float additions, a few ulps of S.
 *  - n > 8, F16 weights: c = 5e-4, the bound 2^-11 of rounding activations to F16 for cuBLAS.
 *  - n > 8, BF16 weights: c = 4e-3, the bound 2^-8 of rounding activations to BF16.
 *  - n > 8, quantized weights through cuBLAS (the dequantize-only types, and every quantized
 *    type with INF_CUDA_MUL_MAT=cublas): c = 2e-3. The device multiplies F16-rounded weights and
 *    activations (<= 1e-3 of S), the CPU multiplies exact weights with activations rounded to
 *    8 bits (an error of about d_a / sqrt(12) per element, d_a = max|x| / 127, random in sign:
 *    3e-4 of S at one sigma for K = 256, less for larger K); 2e-3 is six sigma at K = 256. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ggtk/gguf.h>
#include <ggtk/inf_quant.h>

#include "cuda_op_compare.h"
#include "random_blocks.h"

#define GEMMA3_PATH "models/gemma-3-270m-q4_k_m.gguf"
#define SMOLLM2_PATH "models/SmolLM2-135M-Instruct.Q4_1.gguf"

static const ggtk_tensor_type float_types[] = {GGTK_TENSOR_F32, GGTK_TENSOR_F16, GGTK_TENSOR_BF16};
static const ggtk_tensor_type legacy_types[] = {GGTK_TENSOR_Q4_0, GGTK_TENSOR_Q4_1, GGTK_TENSOR_Q5_0,
                                                GGTK_TENSOR_Q5_1, GGTK_TENSOR_Q8_0};
static const ggtk_tensor_type k_types[] = {GGTK_TENSOR_Q2_K, GGTK_TENSOR_Q3_K, GGTK_TENSOR_Q4_K,
                                           GGTK_TENSOR_Q5_K, GGTK_TENSOR_Q6_K};
/* Types without a quantizer: random blocks (random_blocks.h). */
static const ggtk_tensor_type dequantize_only_types[] = {
    GGTK_TENSOR_IQ4_NL, GGTK_TENSOR_IQ4_XS, GGTK_TENSOR_TQ1_0, GGTK_TENSOR_TQ2_0,
    GGTK_TENSOR_MXFP4,  GGTK_TENSOR_NVFP4,  GGTK_TENSOR_Q1_0,  GGTK_TENSOR_Q2_0,
};
static const int64_t widths[] = {256, 512, 576, 1536};
static const int64_t columns[] = {1, 3, 8, 9, 64};

/* Columns up to which the CUDA backend takes its warp-per-row kernels (mul_mat.cuh). */
#define MMV_MAX_COLS 8

/* One product: w [K, M, w2, w3] of `type` times x [K, N, x2, x3] (F32). */
typedef struct mm_shape {
    ggtk_tensor_type type;
    int64_t K, M, N, w2, w3, x2, x3;
    const void *rows; /* optional weight bytes (model rows, random blocks), else the default fill */
} mm_shape;

static inf_tensor *build_mul_mat(inf_context *ctx, void *user)
{
    const mm_shape *s = user;
    inf_tensor *w = inf_tensor_new_4d(ctx, s->type, s->K, s->M, s->w2, s->w3);
    inf_tensor *x = inf_tensor_new_4d(ctx, GGTK_TENSOR_F32, s->K, s->N, s->x2, s->x3);
    return inf_mul_mat(ctx, w, x);
}

static bool fill_weight_rows(const inf_tensor *leaf, int index, void *data, size_t nbytes, void *user)
{
    (void)index;
    const mm_shape *s = user;
    if (!s->rows || leaf->type != s->type)
        return false;
    memcpy(data, s->rows, nbytes);
    return true;
}


static bool listed(ggtk_tensor_type type, const ggtk_tensor_type *types, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (types[i] == type)
            return true;
    return false;
}

/* Whether weights of `type` meet quantized activations at every n (the CPU's integer path),
 * rather than cuBLAS in F16 for n > 8. */
static bool integer_path_at_every_n(ggtk_tensor_type type)
{
    const char *route = getenv("INF_CUDA_MUL_MAT");
    if (route && strcmp(route, "cublas") == 0)
        return false;
    return listed(type, legacy_types, sizeof legacy_types / sizeof legacy_types[0]) ||
           listed(type, k_types, sizeof k_types / sizeof k_types[0]);
}

/* The fraction c of the file comment for weights of `type` meeting n columns. */
static double tolerance_fraction(ggtk_tensor_type type, int64_t n)
{
    if (n <= MMV_MAX_COLS || type == GGTK_TENSOR_F32 || integer_path_at_every_n(type))
        return 1e-5;
    if (type == GGTK_TENSOR_F16)
        return 5e-4;
    if (type == GGTK_TENSOR_BF16)
        return 4e-3;
    return 2e-3;
}

/* Compare one product; mean_w is mean|w| of the weights (1/2 for the default fill). */
static bool compare_product(mm_shape *s, double mean_w, char *why, size_t why_size)
{
    char name[128];
    snprintf(name, sizeof name, "%s K=%lld M=%lld N=%lld batches w %lldx%lld x %lldx%lld%s",
             ggtk_tensor_type_name(s->type), (long long)s->K, (long long)s->M, (long long)s->N,
             (long long)s->w2, (long long)s->w3, (long long)s->x2, (long long)s->x3,
             s->rows ? " (given rows)" : "");
    const double S = (double)s->K * mean_w * 0.5;
    cuda_op_case c = {.name = name, .build = build_mul_mat, .fill = fill_weight_rows, .user = s,
                      .seed = (uint64_t)(s->K * 131 + s->N * 7 + s->type),
                      .atol = tolerance_fraction(s->type, s->N) * S, .rtol = 0.0};
    if (cuda_op_compare(&c, why, why_size))
        return true;
    size_t used = strlen(why);
    snprintf(why + used, why_size - used, " [%s, atol %.3g]", name, c.atol);
    return false;
}

/* Every width the type's blocks divide, every column count, M odd. */
static void check_types(const ggtk_tensor_type *types, size_t count)
{
    char why[1024];
    for (size_t t = 0; t < count; t++) {
        const int64_t block = ggtk_tensor_type_info_get(types[t])->block_size;
        for (size_t k = 0; k < sizeof widths / sizeof widths[0]; k++) {
            if (widths[k] % block != 0)
                continue;
            for (size_t n = 0; n < sizeof columns / sizeof columns[0]; n++) {
                mm_shape s = {types[t], widths[k], 37, columns[n], 1, 1, 1, 1, NULL};
                CHECK_MSG(compare_product(&s, 0.5, why, sizeof why), "%s", why);
            }
        }
    }
}

TEST(test_cuda_mul_mat_float_weights_match_cpu)
{
    check_types(float_types, sizeof float_types / sizeof float_types[0]);
}

TEST(test_cuda_mul_mat_legacy_quant_weights_match_cpu)
{
    check_types(legacy_types, sizeof legacy_types / sizeof legacy_types[0]);
}

TEST(test_cuda_mul_mat_k_quant_weights_match_cpu)
{
    check_types(k_types, sizeof k_types / sizeof k_types[0]);
}

/* INF_CUDA_MUL_MAT=cublas: prompt batches of quantized weights through F16 and cuBLAS, within
 * the wider bound of that route. */
TEST(test_cuda_mul_mat_quant_weights_through_cublas_match_cpu)
{
    setenv("INF_CUDA_MUL_MAT", "cublas", 1);
    check_types(legacy_types, sizeof legacy_types / sizeof legacy_types[0]);
    check_types(k_types, sizeof k_types / sizeof k_types[0]);
    unsetenv("INF_CUDA_MUL_MAT");
}

/* Weights [K, M, 2, 1] shared by pairs of activation matrices [K, N, 4, 3]: the grouped-query
 * broadcast over dim 2, and plain batches over dim 3 (r3 = 3 with one weight matrix). */
TEST(test_cuda_mul_mat_broadcasts_batches_as_cpu)
{
    const ggtk_tensor_type types[] = {GGTK_TENSOR_F32, GGTK_TENSOR_F16, GGTK_TENSOR_Q4_0, GGTK_TENSOR_Q4_K,
                                      GGTK_TENSOR_Q6_K};
    char why[1024];
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        for (int64_t n = 1; n <= 17; n += 8) {
            mm_shape s = {types[t], 256, 19, n, 2, 1, 4, 3, NULL};
            CHECK_MSG(compare_product(&s, 0.5, why, sizeof why), "%s", why);
        }
    }
}

/* The attention products of graph_blocks.c: K cache rows viewed [head, n_kv, n_head_kv] times
 * queries permuted to [head, nq, n_head]; V cache (stored transposed) viewed [n_kv, head,
 * n_head_kv] times scores [n_kv, nq, n_head]. The views start k0 cells into the cache. */
typedef struct attn_shape {
    ggtk_tensor_type cache;
    int64_t head, n_head, n_head_kv, n_ctx, n_kv, k0, n_tokens, c0, nq;
} attn_shape;

static inf_tensor *build_kq(inf_context *ctx, void *user)
{
    const attn_shape *a = user;
    inf_tensor *k_cache = inf_tensor_new_2d(ctx, a->cache, a->head * a->n_head_kv, a->n_ctx);
    const size_t elem = ggtk_tensor_type_info_get(a->cache)->block_bytes;
    inf_tensor *k = inf_view_3d(ctx, k_cache, a->head, a->n_kv, a->n_head_kv, k_cache->nb[1],
                                (size_t)a->head * elem, (size_t)a->k0 * k_cache->nb[1]);
    inf_tensor *q = inf_tensor_new_3d(ctx, GGTK_TENSOR_F32, a->head, a->n_head, a->n_tokens);
    inf_tensor *q_block = inf_view_3d(ctx, q, a->head, a->n_head, a->nq, q->nb[1], q->nb[2],
                                      (size_t)a->c0 * q->nb[2]);
    return inf_mul_mat(ctx, k, inf_permute(ctx, q_block, 0, 2, 1, 3));
}

static inf_tensor *build_kqv(inf_context *ctx, void *user)
{
    const attn_shape *a = user;
    inf_tensor *v_cache = inf_tensor_new_2d(ctx, a->cache, a->n_ctx, a->head * a->n_head_kv);
    inf_tensor *v = inf_view_3d(ctx, v_cache, a->n_kv, a->head, a->n_head_kv, v_cache->nb[1],
                                (size_t)a->head * v_cache->nb[1], (size_t)a->k0 * v_cache->nb[0]);
    inf_tensor *kq = inf_tensor_new_3d(ctx, GGTK_TENSOR_F32, a->n_kv, a->nq, a->n_head);
    return inf_mul_mat(ctx, v, kq);
}

TEST(test_cuda_mul_mat_attention_layouts_match_cpu)
{
    const ggtk_tensor_type caches[] = {GGTK_TENSOR_F16, GGTK_TENSOR_F32};
    const int64_t queries[] = {1, 5, 8, 9, 24};
    char why[1024];
    for (size_t c = 0; c < sizeof caches / sizeof caches[0]; c++) {
        for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
            attn_shape a = {caches[c], 64, 6, 2, 80, 37, 5, 30, 3, queries[q]};
            const double kq_tol = tolerance_fraction(a.cache, a.nq) * (double)a.head * 0.25;
            const double kqv_tol = tolerance_fraction(a.cache, a.nq) * (double)a.n_kv * 0.25;
            cuda_op_case kq = {.name = "kq", .build = build_kq, .user = &a, .seed = 11 + q, .atol = kq_tol};
            cuda_op_case kqv = {.name = "kqv", .build = build_kqv, .user = &a, .seed = 23 + q, .atol = kqv_tol};
            CHECK_MSG(cuda_op_compare(&kq, why, sizeof why), "kq %s nq=%lld: %s",
                      ggtk_tensor_type_name(a.cache), (long long)a.nq, why);
            CHECK_MSG(cuda_op_compare(&kqv, why, sizeof why), "kqv %s nq=%lld: %s",
                      ggtk_tensor_type_name(a.cache), (long long)a.nq, why);
        }
    }
}

/* The first 2-d tensor of `type` with rows of at least 256 elements in `file`, or NULL. */
static const ggtk_tensor_info *first_tensor_of(const ggtk_file *file, ggtk_tensor_type type)
{
    for (int64_t i = 0; i < ggtk_tensor_count(file); i++) {
        const ggtk_tensor_info *t = ggtk_tensor(file, i);
        if (t->type == type && t->n_dims == 2 && t->ne[0] >= 256 && t->ne[1] >= 37)
            return t;
    }
    return NULL;
}

/* Mean |w| of `rows` rows of K elements of `type` at `data`. */
static double mean_abs_rows(ggtk_tensor_type type, const void *data, int64_t K, int64_t rows)
{
    const int64_t n = K * rows;
    float *w = malloc((size_t)n * sizeof *w);
    double sum = 0.0;
    if (w && inf_dequantize_row(type, data, w, n))
        for (int64_t i = 0; i < n; i++)
            sum += fabs(w[i]);
    free(w);
    return sum / (double)n;
}

/* The first 37 rows of a tensor of each type, as weights of n = 1, 8 and 64 columns. */
static void check_model_rows(const char *path, const ggtk_tensor_type *types, size_t count)
{
    if (access(path, R_OK) != 0)
        SKIP("%s is absent (make models fetches it)", path);
    ggtk_error err;
    ggtk_file *file = ggtk_open(path, GGTK_OPEN_MMAP, &err);
    CHECK_MSG(file, "%s", err.message);
    char why[1024];
    bool ok = true;
    for (size_t i = 0; ok && i < count; i++) {
        const ggtk_tensor_info *t = first_tensor_of(file, types[i]);
        if (!t) {
            test_fail(__FILE__, __LINE__, "%s has no %s tensor", path, ggtk_tensor_type_name(types[i]));
            ok = false;
            break;
        }
        const double mean_w = mean_abs_rows(t->type, t->data, (int64_t)t->ne[0], 37);
        for (int64_t n = 1; ok && n <= 64; n = n == 1 ? 8 : n * 8) {
            mm_shape s = {t->type, (int64_t)t->ne[0], 37, n, 1, 1, 1, 1, t->data};
            ok = compare_product(&s, mean_w, why, sizeof why);
            if (!ok)
                test_fail(__FILE__, __LINE__, "%s: %s", t->name, why);
        }
    }
    ggtk_close(file);
}

TEST(test_cuda_mul_mat_gemma3_rows_match_cpu)
{
    const ggtk_tensor_type types[] = {GGTK_TENSOR_Q4_K, GGTK_TENSOR_Q6_K, GGTK_TENSOR_Q5_0, GGTK_TENSOR_Q8_0};
    check_model_rows(GEMMA3_PATH, types, sizeof types / sizeof types[0]);
}

TEST(test_cuda_mul_mat_smollm2_rows_match_cpu)
{
    const ggtk_tensor_type types[] = {GGTK_TENSOR_Q4_1};
    check_model_rows(SMOLLM2_PATH, types, sizeof types / sizeof types[0]);
}

/* The dequantize-only types take the float kernels (as on the CPU, whose float path they take):
 * random blocks, every width their blocks divide, every column count. */
TEST(test_cuda_mul_mat_dequantize_only_weights_match_cpu)
{
    char why[1024];
    for (size_t t = 0; t < sizeof dequantize_only_types / sizeof dequantize_only_types[0]; t++) {
        const ggtk_tensor_type type = dequantize_only_types[t];
        const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
        for (size_t k = 0; k < sizeof widths / sizeof widths[0]; k++) {
            const int64_t K = widths[k], M = 37;
            if (K % info->block_size != 0)
                continue;
            const size_t nbytes = (size_t)(M * K / info->block_size) * info->block_bytes;
            void *rows = malloc(nbytes);
            CHECK(rows && random_blocks(type, rows, nbytes, (uint64_t)(t * 10 + k)));
            const double mean_w = mean_abs_rows(type, rows, K, M);
            bool ok = true;
            for (size_t n = 0; ok && n < sizeof columns / sizeof columns[0]; n++) {
                mm_shape s = {type, K, M, columns[n], 1, 1, 1, 1, rows};
                ok = compare_product(&s, mean_w, why, sizeof why);
            }
            free(rows);
            CHECK_MSG(ok, "%s", why);
        }
    }
}

/* Types without a CUDA decoder are refused, so a scheduler leaves them to the CPU. */
TEST(test_cuda_mul_mat_refuses_types_without_decoder)
{
    inf_backend *cuda = cuda_test_backend();
    inf_context *ctx = inf_context_new(16 * inf_tensor_overhead(), true);
    CHECK(ctx);
    inf_tensor *w = inf_tensor_new_2d(ctx, GGTK_TENSOR_IQ2_XXS, 256, 4);
    inf_tensor *x = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 256, 2);
    inf_tensor *ok_w = inf_tensor_new_2d(ctx, GGTK_TENSOR_Q4_0, 256, 4);
    inf_tensor *refused = inf_mul_mat(ctx, w, x), *accepted = inf_mul_mat(ctx, ok_w, x);
    CHECK(refused && accepted);
    CHECK(!inf_backend_supports(cuda, refused));
    CHECK(inf_backend_supports(cuda, accepted));
    inf_context_free(ctx);
}
