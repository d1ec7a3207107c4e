/* test_cuda_ops.c - the CUDA kernels of element-wise ops, RMS norm, rope, softmax, copies and
 * set_rows against the CPU backend (cuda_op_compare.h): random data, contiguous and
 * non-contiguous sources (permuted, transposed, padded views), broadcast shapes, odd sizes, each
 * rope variant and mask kind, and ops computed in place by the graph allocator. Skipped without a
 * CUDA device; run on the emulator with make test CUDA_EMU=1.
 *
 * Tolerances: the kernels repeat the CPU's float operations in its order (float_ops.cuh), so
 * add, mul, scale, silu, swiglu, gelu, geglu, copies and set_rows must give the CPU's bits
 * (atol = rtol = 0). Where an order or a library function differs the bound says so: softcap and
 * rope use the device's tanhf / cosf / sinf (within 2 ulp of glibc's, exact on the emulator);
 * RMS norm and softmax sum in double in a block's order, which can move the float mean or
 * 1 / sum by one ulp (test_cuda_math.c measures that bound on the host). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_alloc.h>
#include <ggtk/inf_quant.h>

#include "cuda_op_compare.h"
#include "engine/infer_util.h"

/* Two ulp of a float relative to the value, and one more for the result's own rounding. */
#define RTOL_FEW_ULP 3.6e-7

/* How a source is laid out; its element values do not depend on it. */
enum layout { CONTIGUOUS, PERMUTED, TRANSPOSED, PADDED, LAYOUT_COUNT };

static const char *const layout_names[LAYOUT_COUNT] = {"contiguous", "permuted", "transposed",
                                                       "padded"};

/* A named leaf of shape ne in `layout`: a permutation or transposition of a leaf, or a view with
 * gaps between rows and a one-element offset. */
static inf_tensor *input(inf_context *ctx, const char *name, ggtk_tensor_type type,
                         const int64_t ne[4], enum layout layout)
{
    inf_tensor *t;
    switch (layout) {
    case PERMUTED:
        t = inf_tensor_new_4d(ctx, type, ne[0], ne[2], ne[1], ne[3]);
        inf_tensor_set_name(t, "%s", name);
        return inf_permute(ctx, t, 0, 2, 1, 3);
    case TRANSPOSED:
        t = inf_tensor_new_4d(ctx, type, ne[1], ne[0], ne[2], ne[3]);
        inf_tensor_set_name(t, "%s", name);
        return inf_transpose(ctx, t);
    case PADDED: {
        t = inf_tensor_new_4d(ctx, type, ne[0] + 3, ne[1], ne[2], ne[3]);
        inf_tensor_set_name(t, "%s", name);
        return inf_view_4d(ctx, t, ne[0], ne[1], ne[2], ne[3], t->nb[1], t->nb[2], t->nb[3],
                           t->nb[0]);
    }
    default:
        t = inf_tensor_new_4d(ctx, type, ne[0], ne[1], ne[2], ne[3]);
        inf_tensor_set_name(t, "%s", name);
        return t;
    }
}

static bool named(const inf_tensor *leaf, const char *name)
{
    return strcmp(leaf->name, name) == 0;
}

/* ------------------------------------------------------------------------------------------- */
/* Element-wise operations */

typedef struct elementwise_case {
    inf_op op;
    int64_t ne[4], b_ne[4];
    enum layout a_layout, b_layout;
    float param;
} elementwise_case;

static inf_tensor *build_elementwise(inf_context *ctx, void *user)
{
    const elementwise_case *c = user;
    inf_tensor *a = input(ctx, "a", GGTK_TENSOR_F32, c->ne, c->a_layout);
    switch (c->op) {
    case INF_OP_SCALE: return inf_scale(ctx, a, c->param);
    case INF_OP_SILU: return inf_silu(ctx, a);
    case INF_OP_GELU: return inf_gelu(ctx, a);
    case INF_OP_SOFTCAP: return inf_softcap(ctx, a, c->param);
    case INF_OP_RMS_NORM: return inf_rms_norm(ctx, a, c->param);
    default: break;
    }
    inf_tensor *b = input(ctx, "b", GGTK_TENSOR_F32, c->b_ne, c->b_layout);
    switch (c->op) {
    case INF_OP_ADD: return inf_add(ctx, a, b);
    case INF_OP_MUL: return inf_mul(ctx, a, b);
    case INF_OP_SWIGLU: return inf_swiglu(ctx, a, b);
    default: return inf_geglu(ctx, a, b);
    }
}

/* Inputs of a wider range than the default [-1, 1), so that silu, gelu and softcap see their
 * tails, with a few exact zeros, infinities and a NaN among them. */
static bool fill_wide(const inf_tensor *leaf, int index, void *data, size_t nbytes, void *user)
{
    (void)index;
    (void)user;
    if (leaf->type != GGTK_TENSOR_F32)
        return false;
    test_rng rng = {named(leaf, "a") ? 17u : 29u};
    float *v = data;
    const size_t n = nbytes / sizeof *v;
    for (size_t i = 0; i < n; i++)
        v[i] = rng_uniform(&rng, -12.0f, 12.0f);
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -10.0f, 10.0f};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0] && 7 * i + 3 < n; i++)
        v[7 * i + 3] = specials[i];
    return true;
}

static void run_elementwise(elementwise_case *c, double atol, double rtol, bool wide)
{
    char name[160];
    snprintf(name, sizeof name, "%s a [%lld %lld %lld %lld] %s, b [%lld %lld %lld %lld] %s",
             inf_op_name(c->op), (long long)c->ne[0], (long long)c->ne[1], (long long)c->ne[2],
             (long long)c->ne[3], layout_names[c->a_layout], (long long)c->b_ne[0],
             (long long)c->b_ne[1], (long long)c->b_ne[2], (long long)c->b_ne[3],
             layout_names[c->b_layout]);
    cuda_op_case oc = {name, build_elementwise, wide ? fill_wide : NULL, c, 7, atol, rtol};
    CHECK_CUDA_OP(&oc);
}

/* Odd widths around a warp and a block, 1 and a wide row; a few rows in dimensions 1..3. */
static const int64_t widths[] = {1, 3, 31, 33, 4097};

TEST(test_cuda_add_and_mul_broadcast_and_strides_give_the_cpus_bits)
{
    cuda_test_backend();
    test_rng rng = {3};
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        for (int iter = 0; iter < 8; iter++) {
            elementwise_case c = {iter % 2 ? INF_OP_ADD : INF_OP_MUL,
                                  {widths[w], rng_int(&rng, 1, 5), rng_int(&rng, 1, 3), 2},
                                  {0},
                                  (enum layout)(iter % LAYOUT_COUNT),
                                  (enum layout)((iter / 2 + w) % LAYOUT_COUNT),
                                  0};
            /* b repeats along each dimension where it has 1: dimensions 1..3 by the bits of
             * iter, dimension 0 on the last two passes */
            c.b_ne[0] = iter >= 6 ? 1 : c.ne[0];
            for (int d = 1; d < 4; d++)
                c.b_ne[d] = (iter >> (d - 1)) & 1 ? 1 : c.ne[d];
            run_elementwise(&c, 0, 0, false);
        }
    }
}

TEST(test_cuda_scale_silu_swiglu_give_the_cpus_bits)
{
    cuda_test_backend();
    const inf_op ops[] = {INF_OP_SCALE, INF_OP_SILU, INF_OP_SWIGLU};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
            elementwise_case c = {ops[o], {widths[w], 3, 2, 1}, {widths[w], 3, 2, 1},
                                  (enum layout)(w % LAYOUT_COUNT),
                                  (enum layout)((w + 1) % LAYOUT_COUNT), 0.37f};
            run_elementwise(&c, 0, 0, true);
        }
    }
}

TEST(test_cuda_softcap_matches_the_cpu_to_a_few_ulp)
{
    cuda_test_backend();
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        elementwise_case c = {INF_OP_SOFTCAP, {widths[w], 5, 1, 1}, {0},
                              (enum layout)(w % LAYOUT_COUNT), CONTIGUOUS, w % 2 ? 30.0f : 5.5f};
        run_elementwise(&c, 1e-30, RTOL_FEW_ULP, true);
    }
}

/* Every fp16 value as a float (GELU's table index), then values between halves, beyond +-10,
 * infinities and NaN: GELU and GEGLU must give the CPU's bits for each. */
#define GELU_INPUTS (65536 + 4096)

static bool fill_gelu(const inf_tensor *leaf, int index, void *data, size_t nbytes, void *user)
{
    (void)index;
    (void)user;
    if (!named(leaf, "a"))
        return false;
    float *v = data;
    const size_t n = nbytes / sizeof *v;
    test_rng rng = {41};
    for (size_t i = 0; i < n; i++)
        v[i] = i < 65536 ? inf_fp16_to_fp32((inf_fp16)i) : rng_uniform(&rng, -14.0f, 14.0f);
    v[n - 1] = NAN;
    v[n - 2] = -INFINITY;
    v[n - 3] = INFINITY;
    return true;
}

TEST(test_cuda_gelu_and_geglu_give_the_cpus_bits_for_every_half)
{
    cuda_test_backend();
    elementwise_case gelu = {INF_OP_GELU, {GELU_INPUTS, 1, 1, 1}, {0}, CONTIGUOUS, CONTIGUOUS, 0};
    cuda_op_case c = {"gelu of every half", build_elementwise, fill_gelu, &gelu, 1, 0, 0};
    CHECK_CUDA_OP(&c);
    elementwise_case geglu = {INF_OP_GEGLU, {GELU_INPUTS, 1, 1, 1}, {GELU_INPUTS, 1, 1, 1},
                              CONTIGUOUS, CONTIGUOUS, 0};
    cuda_op_case g = {"geglu of every half", build_elementwise, fill_gelu, &geglu, 2, 0, 0};
    CHECK_CUDA_OP(&g);
    /* strided sources take the same path */
    elementwise_case strided = {INF_OP_GEGLU, {GELU_INPUTS / 64, 64, 1, 1},
                                {GELU_INPUTS / 64, 64, 1, 1}, PERMUTED, TRANSPOSED, 0};
    cuda_op_case s = {"geglu of permuted halves", build_elementwise, fill_gelu, &strided, 3, 0, 0};
    CHECK_CUDA_OP(&s);
}

TEST(test_cuda_rms_norm_matches_the_cpu_within_an_ulp_or_two)
{
    cuda_test_backend();
    const int64_t norm_widths[] = {1, 3, 31, 33, 576, 4097};
    for (size_t w = 0; w < sizeof norm_widths / sizeof norm_widths[0]; w++) {
        elementwise_case c = {INF_OP_RMS_NORM, {norm_widths[w], 4, 3, 1}, {0},
                              (enum layout)(w % LAYOUT_COUNT), CONTIGUOUS, w % 2 ? 1e-6f : 1e-5f};
        run_elementwise(&c, 1e-30, RTOL_FEW_ULP, w % 3 == 0);
    }
}

/* ------------------------------------------------------------------------------------------- */
/* Rope */

typedef struct rope_case {
    const char *name;
    inf_rope_mode mode;
    int head_dim, n_dims, n_head, n_tokens;
    bool factors;
    enum layout layout;
    inf_rope_params params;
} rope_case;

static inf_tensor *build_rope(inf_context *ctx, void *user)
{
    const rope_case *c = user;
    const int64_t ne[4] = {c->head_dim, c->n_head, c->n_tokens, 1};
    inf_tensor *a = input(ctx, "a", GGTK_TENSOR_F32, ne, c->layout);
    inf_tensor *pos = inf_tensor_set_name(inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, c->n_tokens),
                                          "pos");
    inf_tensor *factors = NULL;
    if (c->factors)
        factors = inf_tensor_set_name(inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, c->n_dims / 2),
                                      "factors");
    return inf_rope_ext(ctx, a, pos, factors, c->n_dims, c->mode, &c->params);
}

/* Positions from 0 to past 100000 (large angles), frequency factors in [1, 40). */
static bool fill_rope(const inf_tensor *leaf, int index, void *data, size_t nbytes, void *user)
{
    (void)index;
    (void)user;
    test_rng rng = {77};
    if (named(leaf, "pos")) {
        int32_t *p = data;
        for (size_t i = 0; i < nbytes / sizeof *p; i++)
            p[i] = i < 3 ? (int32_t)i : (int32_t)rng_int(&rng, 0, i % 2 ? 4096 : 131072);
        return true;
    }
    if (named(leaf, "factors")) {
        float *f = data;
        for (size_t i = 0; i < nbytes / sizeof *f; i++)
            f[i] = rng_uniform(&rng, 1.0f, 40.0f);
        return true;
    }
    return false;
}

TEST(test_cuda_rope_every_variant_matches_the_cpu)
{
    cuda_test_backend();
    const inf_rope_params plain = inf_rope_params_plain(10000.0f, 1.0f);
    const inf_rope_params linear = inf_rope_params_plain(500000.0f, 0.25f);
    const inf_rope_params yarn = {10000.0f, 0.25f, 1.0f, 1.0f, 32.0f, 1.0f, 4096};
    const inf_rope_params yarn_mix = {1000000.0f, 0.125f, 0.5f, 0.75f, 24.0f, 2.0f, 2048};
    rope_case cases[] = {
        {"normal", INF_ROPE_NORMAL, 64, 64, 3, 9, false, CONTIGUOUS, plain},
        {"neox", INF_ROPE_NEOX, 64, 64, 3, 9, false, CONTIGUOUS, plain},
        {"normal partial, permuted", INF_ROPE_NORMAL, 80, 32, 5, 7, false, PERMUTED, plain},
        {"neox partial, linear, padded", INF_ROPE_NEOX, 80, 34, 2, 5, false, PADDED, linear},
        {"normal with factors", INF_ROPE_NORMAL, 128, 128, 2, 4, true, CONTIGUOUS, linear},
        {"neox partial with factors", INF_ROPE_NEOX, 128, 96, 3, 6, true, TRANSPOSED, plain},
        {"normal yarn", INF_ROPE_NORMAL, 64, 64, 4, 5, false, CONTIGUOUS, yarn},
        {"neox yarn partial with factors", INF_ROPE_NEOX, 96, 64, 2, 5, true, PERMUTED, yarn},
        {"neox yarn mix", INF_ROPE_NEOX, 128, 128, 9, 33, false, CONTIGUOUS, yarn_mix},
        {"one pair", INF_ROPE_NORMAL, 2, 2, 1, 1, false, CONTIGUOUS, plain},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* |x| < 1: a cos/sin 2 ulp off moves an output by about 1e-7 absolute */
        cuda_op_case c = {cases[i].name, build_rope, fill_rope, &cases[i], 11 + i, 1e-6, 1e-6};
        CHECK_CUDA_OP(&c);
    }
}

/* ------------------------------------------------------------------------------------------- */
/* Softmax */

enum mask_kind { MASK_TENSOR, MASK_CAUSAL, MASK_WINDOW, MASK_NONE };

typedef struct soft_max_case {
    int64_t n_kv, n_q, heads;
    enum mask_kind mask;
    enum layout layout;
    float scale;
} soft_max_case;

static inf_tensor *build_soft_max(inf_context *ctx, void *user)
{
    const soft_max_case *c = user;
    const int64_t ne[4] = {c->n_kv, c->n_q, c->heads, 1};
    inf_tensor *a = input(ctx, "a", GGTK_TENSOR_F32, ne, c->layout);
    const int64_t n_past = c->n_kv - c->n_q;
    switch (c->mask) {
    case MASK_TENSOR: {
        inf_tensor *mask = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, c->n_kv, c->n_q);
        return inf_soft_max(ctx, a, inf_tensor_set_name(mask, "mask"), c->scale);
    }
    case MASK_CAUSAL: return inf_soft_max_causal(ctx, a, c->scale, n_past);
    case MASK_WINDOW: return inf_soft_max_causal_window(ctx, a, c->scale, n_past, 5);
    default: return inf_soft_max(ctx, a, NULL, c->scale);
    }
}

/* Logits of a few units; a mask in [-4, 4) with every fifth key of row 1 hidden and all of row
 * 2 hidden (a fully masked row: the CPU's result, NaN from -inf * 0, must come back). */
static bool fill_soft_max(const inf_tensor *leaf, int index, void *data, size_t nbytes,
                          void *user)
{
    (void)index;
    const soft_max_case *c = user;
    test_rng rng = {named(leaf, "mask") ? 5u : 6u};
    float *v = data;
    const size_t n = nbytes / sizeof *v;
    for (size_t i = 0; i < n; i++)
        v[i] = rng_uniform(&rng, -4.0f, 4.0f) * (named(leaf, "mask") ? 1.0f : 3.0f);
    if (named(leaf, "mask")) {
        for (int64_t k = 0; k < c->n_kv; k++) {
            if (c->n_q > 1 && k % 5 == 0)
                v[c->n_kv + k] = -INFINITY;
            if (c->n_q > 2)
                v[2 * c->n_kv + k] = -INFINITY;
        }
    }
    return true;
}

TEST(test_cuda_soft_max_masks_and_vocabulary_widths_match_the_cpu)
{
    cuda_test_backend();
    const int64_t kv[] = {1, 3, 31, 33, 4097, 262144};
    for (size_t w = 0; w < sizeof kv / sizeof kv[0]; w++) {
        for (int m = 0; m < 4; m++) {
            const int64_t n_q = kv[w] >= 4 ? 4 : kv[w];
            soft_max_case sc = {kv[w], n_q, kv[w] > 10000 ? 1 : 3, (enum mask_kind)m,
                                (enum layout)((w + (size_t)m) % LAYOUT_COUNT), 0.125f};
            if (sc.layout == TRANSPOSED && kv[w] > 10000)
                sc.layout = PADDED;
            char name[96];
            snprintf(name, sizeof name, "soft_max %lld x %lld x %lld, mask kind %d, %s",
                     (long long)sc.n_kv, (long long)sc.n_q, (long long)sc.heads, m,
                     layout_names[sc.layout]);
            cuda_op_case c = {name, build_soft_max, fill_soft_max, &sc, 9, 1e-30, RTOL_FEW_ULP};
            CHECK_CUDA_OP(&c);
        }
    }
}

/* ------------------------------------------------------------------------------------------- */
/* Copies */

typedef struct copy_case {
    const char *name;
    ggtk_tensor_type from, to;
    int64_t ne[4];
    enum layout layout;
    bool into_view; /* CPY into a strided window of a bigger tensor, else CONT (or CPY) */
    int reshape;    /* a destination of 2 dimensions: 1 rows of ne0 * ne1 * ne2, or 2 rows of 4
                     * (source rows then straddle destination rows) */
} copy_case;

static inf_tensor *build_copy(inf_context *ctx, void *user)
{
    const copy_case *c = user;
    inf_tensor *src = input(ctx, "src", c->from, c->ne, c->layout);
    if (!c->into_view && !c->reshape && c->from == c->to)
        return inf_cont(ctx, src);
    const int64_t n = c->ne[0] * c->ne[1] * c->ne[2] * c->ne[3];
    if (c->reshape) { /* element k lands at k whatever the two shapes */
        const int64_t ne0 = c->reshape == 1 ? n / c->ne[3] : 4;
        return inf_cpy(ctx, src, inf_tensor_new_2d(ctx, c->to, ne0, n / ne0));
    }
    /* a cache of 2 * ne1 + 3 rows of width ne0 + 5; the copy fills ne1 rows from row 3 */
    inf_tensor *cache = inf_tensor_new_4d(ctx, c->to, c->ne[0] + 5, 2 * c->ne[1] + 3, c->ne[2],
                                          c->ne[3]);
    inf_tensor *window = inf_view_4d(ctx, inf_tensor_set_name(cache, "cache"), c->ne[0],
                                     c->ne[1], c->ne[2], c->ne[3], cache->nb[1], cache->nb[2],
                                     cache->nb[3], 3 * cache->nb[1] + 2 * cache->nb[0]);
    return inf_cpy(ctx, src, window);
}

/* Random values with the cases every conversion must round alike: ties of fp16 and bf16,
 * denormals, overflow, signed zeros, infinities and NaNs (a payload, and quiet and signalling). */
static bool fill_copy(const inf_tensor *leaf, int index, void *data, size_t nbytes, void *user)
{
    (void)index;
    (void)user;
    if (!named(leaf, "src"))
        return false;
    test_rng rng = {13};
    const uint32_t specials[] = {0x3F801000, 0x3F803000, 0x3F808000, 0x3F818000, 0x33000000,
                                 0x33000001, 0x387FE000, 0x477FF000, 0x477FEFFF, 0x80000000,
                                 0x7F800000, 0xFF800000, 0x7FC00001, 0x7F800001, 0xFFA00000,
                                 0x00000001, 0x00800000, 0x38800000};
    const size_t n_specials = sizeof specials / sizeof specials[0];
    if (leaf->type == GGTK_TENSOR_F32) {
        uint32_t *v = data;
        for (size_t i = 0; i < nbytes / sizeof *v; i++) {
            const float f = rng_uniform(&rng, -70000.0f, 70000.0f) *
                            (i % 3 ? 1.0f : 1e-6f);
            memcpy(&v[i], &f, sizeof f);
            if (i % 5 == 0)
                v[i] = specials[i / 5 % n_specials];
        }
    } else {
        uint16_t *v = data; /* any 16-bit pattern: NaN payloads included */
        for (size_t i = 0; i < nbytes / sizeof *v; i++)
            v[i] = (uint16_t)rng_next(&rng);
    }
    return true;
}

TEST(test_cuda_cont_and_cpy_convert_and_place_like_the_cpu)
{
    cuda_test_backend();
    const ggtk_tensor_type f32 = GGTK_TENSOR_F32, f16 = GGTK_TENSOR_F16, bf16 = GGTK_TENSOR_BF16;
    copy_case cases[] = {
        {"cont f32 permuted", f32, f32, {33, 5, 3, 2}, PERMUTED, false, 0},
        {"cont f16 transposed", f16, f16, {31, 4, 2, 1}, TRANSPOSED, false, 0},
        {"cont bf16 padded", bf16, bf16, {3, 7, 2, 1}, PADDED, false, 0},
        {"cpy f32 to f16 into a cache window", f32, f16, {64, 9, 3, 1}, CONTIGUOUS, true, 0},
        {"cpy f32 to bf16 into a cache window", f32, bf16, {33, 4, 2, 2}, PERMUTED, true, 0},
        {"cpy f32 to f32 into a cache window", f32, f32, {1, 3, 2, 1}, TRANSPOSED, true, 0},
        {"cpy f16 to f32 reshaped", f16, f32, {31, 3, 5, 2}, PERMUTED, false, 1},
        {"cpy bf16 to f32 reshaped", bf16, f32, {4097, 2, 1, 1}, CONTIGUOUS, false, 1},
        {"cpy f32 to f32 across rows", f32, f32, {6, 5, 2, 1}, TRANSPOSED, false, 2},
        {"cpy f32 to f16 across rows", f32, f16, {7, 3, 2, 2}, PERMUTED, false, 2},
        {"cpy f16 to bf16 into a cache window", f16, bf16, {17, 6, 1, 1}, PADDED, true, 0},
        {"cpy bf16 to f16 reshaped", bf16, f16, {5, 4, 3, 2}, TRANSPOSED, false, 1},
        {"cpy f16 to f16 into a cache window", f16, f16, {8, 3, 2, 1}, PERMUTED, true, 0},
        {"cpy f32 to f16 reshaped", f32, f16, {4097, 3, 1, 1}, PADDED, false, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cuda_op_case c = {cases[i].name, build_copy, fill_copy, &cases[i], 21, 0, 0};
        CHECK_CUDA_OP(&c);
    }
}

/* ------------------------------------------------------------------------------------------- */
/* set_rows */

typedef struct set_rows_case {
    const char *name;
    ggtk_tensor_type cache_type;
    int64_t ne0, cache_rows, n, ne2, ne3;
    enum layout layout;
    int32_t bad_index; /* 0: every index valid; else written over the last index */
} set_rows_case;

static inf_tensor *build_set_rows(inf_context *ctx, void *user)
{
    const set_rows_case *c = user;
    inf_tensor *cache = inf_tensor_new_4d(ctx, c->cache_type, c->ne0, c->cache_rows, c->ne2, c->ne3);
    const int64_t ne[4] = {c->ne0, c->n, c->ne2, c->ne3};
    inf_tensor *rows = input(ctx, "rows", GGTK_TENSOR_F32, ne, c->layout);
    inf_tensor *ids = inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, c->n);
    return inf_set_rows(ctx, inf_tensor_set_name(cache, "cache"), rows,
                        inf_tensor_set_name(ids, "ids"));
}

/* Distinct indices (every row is written once, so the result does not depend on the order of
 * the writes), spread over the cache from its end. */
static bool fill_set_rows(const inf_tensor *leaf, int index, void *data, size_t nbytes, void *user)
{
    (void)index;
    const set_rows_case *c = user;
    if (!named(leaf, "ids"))
        return false;
    int32_t *ids = data;
    const int64_t n = (int64_t)(nbytes / sizeof *ids);
    for (int64_t i = 0; i < n; i++)
        ids[i] = (int32_t)((c->cache_rows - 1 - 3 * i) % c->cache_rows + c->cache_rows) %
                 (int32_t)c->cache_rows;
    if (c->bad_index)
        ids[n - 1] = c->bad_index;
    return true;
}

TEST(test_cuda_set_rows_writes_cache_rows_like_the_cpu)
{
    cuda_test_backend();
    set_rows_case cases[] = {
        {"set_rows f32", GGTK_TENSOR_F32, 64, 20, 5, 1, 1, CONTIGUOUS, 0},
        {"set_rows f16 permuted rows", GGTK_TENSOR_F16, 33, 16, 4, 3, 1, PERMUTED, 0},
        {"set_rows bf16 padded rows", GGTK_TENSOR_BF16, 31, 9, 3, 2, 2, PADDED, 0},
        {"set_rows f16 wide", GGTK_TENSOR_F16, 4097, 8, 2, 1, 1, TRANSPOSED, 0},
        {"set_rows one element", GGTK_TENSOR_F32, 1, 3, 1, 1, 1, CONTIGUOUS, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cuda_op_case c = {cases[i].name, build_set_rows, fill_set_rows, &cases[i], 31, 0, 0};
        CHECK_CUDA_OP(&c);
    }
}

/* Build `c` on the CUDA backend, fill the leaves (ids through fill_set_rows, the cache with a
 * pattern) and compute: the compute must fail naming the bad index, and every cache row no valid
 * index names must keep its pattern (nothing was written out of place). */
static void check_set_rows_refuses(set_rows_case *c)
{
    inf_backend *cuda = cuda_test_backend();
    inf_context *ctx = inf_context_new(64 * inf_tensor_overhead() + inf_graph_overhead(64), true);
    inf_graph *graph = inf_graph_new(ctx, 64);
    inf_tensor *node = build_set_rows(ctx, c);
    ggtk_error err = {0};
    CHECK(node && inf_graph_expand(graph, node, &err) == GGTK_OK);
    inf_buffer *buffer = inf_backend_alloc_context_tensors(cuda, ctx, &err);
    CHECK_MSG(buffer, "%s", err.message);
    inf_tensor *cache = node->view_src;
    const size_t cache_bytes = inf_tensor_nbytes(cache);
    unsigned char *before = malloc(cache_bytes), *after = malloc(cache_bytes);
    memset(before, 0x5A, cache_bytes);
    for (int i = 0; i < inf_graph_n_leaves(graph); i++) {
        inf_tensor *leaf = inf_graph_leaf(graph, i);
        const size_t nbytes = inf_tensor_nbytes(leaf);
        void *data = calloc(1, nbytes); /* the rows: zeros */
        if (leaf == cache)
            memcpy(data, before, nbytes);
        else
            fill_set_rows(leaf, i, data, nbytes, c);
        CHECK(inf_tensor_write(leaf, data, 0, nbytes, &err) == GGTK_OK);
        free(data);
    }
    const ggtk_status status = inf_backend_compute(cuda, graph, &err);
    CHECK_MSG(status == GGTK_ERR_INVALID, "status %d: %s", status, err.message);
    char expected[64];
    snprintf(expected, sizeof expected, "row index %d outside [0, %lld)", c->bad_index,
             (long long)c->cache_rows);
    CHECK_MSG(strstr(err.message, expected) && !strchr(err.message, '\n'), "message: %s",
              err.message);
    CHECK(inf_tensor_read(cache, after, 0, cache_bytes, &err) == GGTK_OK);
    /* rows named by the valid indices (all but the last) may change; no other byte may */
    const size_t row_bytes = cache->nb[1];
    for (int64_t s = 0; s < c->ne2 * c->ne3; s++) {
        for (int64_t r = 0; r < c->cache_rows; r++) {
            bool named_row = false;
            for (int64_t i = 0; i + 1 < c->n; i++)
                named_row |= ((c->cache_rows - 1 - 3 * i) % c->cache_rows + c->cache_rows) %
                                 c->cache_rows == r;
            const size_t at = (size_t)s * cache->nb[2] + (size_t)r * row_bytes;
            CHECK_MSG(named_row || memcmp(before + at, after + at, row_bytes) == 0,
                      "slice %lld row %lld was written", (long long)s, (long long)r);
        }
    }
    free(before);
    free(after);
    inf_buffer_free(buffer);
    inf_context_free(ctx);
}

TEST(test_cuda_set_rows_refuses_an_index_out_of_range_without_writing_it)
{
    set_rows_case beyond = {"beyond", GGTK_TENSOR_F16, 16, 6, 3, 2, 1, CONTIGUOUS, 6};
    check_set_rows_refuses(&beyond);
    set_rows_case negative = {"negative", GGTK_TENSOR_F32, 5, 7, 2, 1, 1, PERMUTED, -1};
    check_set_rows_refuses(&negative);
}

/* ------------------------------------------------------------------------------------------- */
/* In place */

/* A chain whose intermediate results the graph allocator lets the next op overwrite: add, mul,
 * swiglu, silu, geglu, gelu, scale, softcap, rms_norm, rope and softmax each run over their
 * source's memory. The ops that may differ from the CPU by an ulp come after GELU, whose fp16
 * rounding would magnify such a difference. Returns the last node. */
static inf_tensor *build_in_place_chain(inf_context *ctx, inf_tensor *x, inf_tensor *w,
                                        inf_tensor *pos)
{
    inf_tensor *t = inf_scale(ctx, x, 1.0f); /* an intermediate the next node may take over */
    t = inf_add(ctx, t, w);
    t = inf_mul(ctx, t, w);
    inf_tensor *gate = inf_silu(ctx, inf_scale(ctx, t, 2.0f));
    t = inf_swiglu(ctx, gate, inf_scale(ctx, t, 0.5f));
    t = inf_geglu(ctx, inf_scale(ctx, t, 3.0f), inf_gelu(ctx, inf_scale(ctx, t, 4.0f)));
    t = inf_softcap(ctx, inf_scale(ctx, t, 8.0f), 5.0f);
    t = inf_rms_norm(ctx, t, 1e-5f);
    t = inf_rope(ctx, inf_scale(ctx, t, 1.0f), pos, 16, INF_ROPE_NEOX, 10000.0f, 1.0f);
    return inf_soft_max_causal(ctx, inf_scale(ctx, inf_reshape_2d(ctx, t, 32, 12), 1.0f), 0.5f, 4);
}

/* Run the chain on `backend` with the graph allocator (inputs in their own buffer), reading the
 * result into `out` (32 * 12 floats) and the allocator's count of in-place results. */
static ggtk_status run_in_place_chain(inf_backend *backend, float *out, int *n_in_place,
                                      ggtk_error *err)
{
    inf_context *ctx = inf_context_new(128 * inf_tensor_overhead() + inf_graph_overhead(128), true);
    inf_tensor *x = inf_tensor_new_4d(ctx, GGTK_TENSOR_F32, 32, 3, 4, 1);
    inf_tensor *w = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 32);
    inf_tensor *pos = inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, 4);
    inf_buffer *inputs = inf_backend_alloc_context_tensors(backend, ctx, err);
    if (!inputs)
        return err->status;
    test_rng rng = {8};
    float xs[32 * 12], ws[32];
    for (int i = 0; i < 32 * 12; i++)
        xs[i] = rng_uniform(&rng, -2.0f, 2.0f);
    for (int i = 0; i < 32; i++)
        ws[i] = rng_uniform(&rng, 0.5f, 1.5f);
    const int32_t positions[4] = {3, 4, 5, 700};
    inf_tensor *y = build_in_place_chain(ctx, x, w, pos);
    inf_tensor_set_output(y);
    inf_graph *graph = inf_graph_new(ctx, 128);
    inf_graph_allocator *alloc = inf_graph_allocator_new(backend);
    ggtk_status st = inf_tensor_write(x, xs, 0, sizeof xs, err);
    if (st == GGTK_OK)
        st = inf_tensor_write(w, ws, 0, sizeof ws, err);
    if (st == GGTK_OK)
        st = inf_tensor_write(pos, positions, 0, sizeof positions, err);
    if (st == GGTK_OK)
        st = inf_graph_expand(graph, y, err);
    if (st == GGTK_OK)
        st = inf_graph_allocator_alloc(alloc, graph, err);
    if (st == GGTK_OK)
        st = inf_backend_compute(backend, graph, err);
    if (st == GGTK_OK)
        st = inf_tensor_read(y, out, 0, 32 * 12 * sizeof *out, err);
    *n_in_place = inf_graph_allocator_stats(alloc).n_in_place;
    inf_graph_allocator_free(alloc);
    inf_buffer_free(inputs);
    inf_context_free(ctx);
    return st;
}

TEST(test_cuda_ops_computed_in_place_match_the_cpu)
{
    inf_backend *cuda = cuda_test_backend();
    inf_backend *cpu = inf_backend_cpu_new(1);
    float want[32 * 12], got[32 * 12];
    int cpu_in_place = 0, cuda_in_place = 0;
    ggtk_error err = {0};
    CHECK_MSG(run_in_place_chain(cpu, want, &cpu_in_place, &err) == GGTK_OK, "cpu: %s",
              err.message);
    CHECK_MSG(run_in_place_chain(cuda, got, &cuda_in_place, &err) == GGTK_OK, "cuda: %s",
              err.message);
    inf_backend_free(cpu);
    CHECK_MSG(cuda_in_place >= 8, "only %d results in place", cuda_in_place);
    for (int i = 0; i < 32 * 12; i++)
        CHECK_MSG(fabsf(got[i] - want[i]) <= 1e-6f + 1e-5f * fabsf(want[i]),
                  "element %d: cuda %.9g, cpu %.9g", i, (double)got[i], (double)want[i]);
}

/* ------------------------------------------------------------------------------------------- */
/* What the kernels refuse */

TEST(test_cuda_ops_refuse_misaligned_views_the_cpu_accepts)
{
    inf_backend *cuda = cuda_test_backend();
    inf_context *ctx = inf_context_new(16 * inf_tensor_overhead(), true);
    inf_tensor *base = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 64);
    inf_tensor *aligned = inf_view_1d(ctx, base, 8, 4);
    inf_tensor *odd = inf_view_1d(ctx, base, 8, 2); /* half a float in */
    inf_tensor *ok = inf_silu(ctx, aligned), *refused = inf_silu(ctx, odd);
    CHECK(ok && refused);
    CHECK(inf_backend_supports(cuda, ok));
    CHECK(!inf_backend_supports(cuda, refused));
    inf_context_free(ctx);
}
