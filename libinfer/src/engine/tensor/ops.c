/* ops.c - constructors of operations: check the sources' types and shapes, then record the
 * operation in a new result tensor. Nothing is computed here. */

#include <math.h>

#include <ggtk/inf_ops.h>
#include <ggtk/inf_quant.h>
#include "tensor_internal.h"

#define SHAPE_FMT "[%lld, %lld, %lld, %lld]"
#define SHAPE_ARGS(t)                                                                          \
    (long long)(t)->ne[0], (long long)(t)->ne[1], (long long)(t)->ne[2], (long long)(t)->ne[3]

/* A new tensor of `type` shaped like `like`, produced by `op` from up to three sources. */
static inf_tensor *result(inf_context *ctx, inf_op op, ggtk_tensor_type type, const inf_tensor *like,
                          inf_tensor *src0, inf_tensor *src1, inf_tensor *src2)
{
    inf_tensor *t = inf_tensor_make(ctx, type, INF_MAX_DIMS, like->ne, NULL, 0);
    if (!t)
        return NULL;
    t->op = op;
    t->src[0] = src0;
    t->src[1] = src1;
    t->src[2] = src2;
    return inf_tensor_set_name(t, "%s(%.40s)", inf_op_name(op), src0->name);
}

static bool expect_type(inf_context *ctx, const char *op, const inf_tensor *t, ggtk_tensor_type type)
{
    if (t->type == type)
        return true;
    inf_context_fail(ctx, "%s: '%s' is %s (expected %s)", op, t->name, inf_type_name(t->type),
                     inf_type_name(type));
    return false;
}

static bool is_float_type(ggtk_tensor_type type)
{
    return type == GGTK_TENSOR_F32 || type == GGTK_TENSOR_F16 || type == GGTK_TENSOR_BF16;
}

/* Whether libinfer can turn rows of `type` into F32 (get_rows) or multiply them (mul_mat):
 * every type with a dequantizer. */
static bool is_weight_type(ggtk_tensor_type type)
{
    return is_float_type(type) || inf_type_can_dequantize(type);
}

static bool can_broadcast(const inf_tensor *a, const inf_tensor *b)
{
    for (int i = 0; i < INF_MAX_DIMS; i++) {
        if (a->ne[i] % b->ne[i] != 0)
            return false;
    }
    return true;
}

static inf_tensor *binary(inf_context *ctx, inf_op op, inf_tensor *a, inf_tensor *b)
{
    const char *name = inf_op_name(op);
    if (inf_source_missing(ctx, a, name) || inf_source_missing(ctx, b, name))
        return NULL;
    if (!expect_type(ctx, name, a, GGTK_TENSOR_F32) || !expect_type(ctx, name, b, GGTK_TENSOR_F32))
        return NULL;
    if (!can_broadcast(a, b)) {
        inf_context_fail(ctx, "%s: '%s' " SHAPE_FMT " does not broadcast over '%s' " SHAPE_FMT, name,
                         b->name, SHAPE_ARGS(b), a->name, SHAPE_ARGS(a));
        return NULL;
    }
    return result(ctx, op, GGTK_TENSOR_F32, a, a, b, NULL);
}

inf_tensor *inf_add(inf_context *ctx, inf_tensor *a, inf_tensor *b)
{
    return binary(ctx, INF_OP_ADD, a, b);
}

inf_tensor *inf_mul(inf_context *ctx, inf_tensor *a, inf_tensor *b)
{
    return binary(ctx, INF_OP_MUL, a, b);
}

/* An F32 operation of one source with float parameters. */
static inf_tensor *unary(inf_context *ctx, inf_op op, inf_tensor *a, int n_params,
                         const float *params)
{
    if (inf_source_missing(ctx, a, inf_op_name(op)) ||
        !expect_type(ctx, inf_op_name(op), a, GGTK_TENSOR_F32))
        return NULL;
    inf_tensor *t = result(ctx, op, GGTK_TENSOR_F32, a, a, NULL, NULL);
    for (int i = 0; t && i < n_params; i++)
        inf_op_param_set_f32(t, i, params[i]);
    return t;
}

inf_tensor *inf_scale(inf_context *ctx, inf_tensor *a, float s)
{
    return unary(ctx, INF_OP_SCALE, a, 1, &s);
}

inf_tensor *inf_silu(inf_context *ctx, inf_tensor *a)
{
    return unary(ctx, INF_OP_SILU, a, 0, NULL);
}

inf_tensor *inf_rms_norm(inf_context *ctx, inf_tensor *a, float eps)
{
    if (!(eps >= 0)) {
        inf_context_fail(ctx, "RMS_NORM: eps %g must be >= 0", eps);
        return NULL;
    }
    return unary(ctx, INF_OP_RMS_NORM, a, 1, &eps);
}

/* A gated product act(gate) * up of two same-shaped F32 tensors. */
static inf_tensor *gated(inf_context *ctx, inf_op op, inf_tensor *gate, inf_tensor *up)
{
    const char *name = inf_op_name(op);
    if (inf_source_missing(ctx, gate, name) || inf_source_missing(ctx, up, name))
        return NULL;
    if (!expect_type(ctx, name, gate, GGTK_TENSOR_F32) || !expect_type(ctx, name, up, GGTK_TENSOR_F32))
        return NULL;
    if (!inf_tensor_same_shape(gate, up)) {
        inf_context_fail(ctx, "%s: gate " SHAPE_FMT " and up " SHAPE_FMT " differ", name,
                         SHAPE_ARGS(gate), SHAPE_ARGS(up));
        return NULL;
    }
    return result(ctx, op, GGTK_TENSOR_F32, gate, gate, up, NULL);
}

inf_tensor *inf_swiglu(inf_context *ctx, inf_tensor *gate, inf_tensor *up)
{
    return gated(ctx, INF_OP_SWIGLU, gate, up);
}

inf_tensor *inf_geglu(inf_context *ctx, inf_tensor *gate, inf_tensor *up)
{
    return gated(ctx, INF_OP_GEGLU, gate, up);
}

inf_tensor *inf_gelu(inf_context *ctx, inf_tensor *a)
{
    return unary(ctx, INF_OP_GELU, a, 0, NULL);
}

inf_tensor *inf_softcap(inf_context *ctx, inf_tensor *a, float cap)
{
    if (!(cap > 0) || isinf(cap)) {
        inf_context_fail(ctx, "SOFTCAP: cap %g must be positive and finite", cap);
        return NULL;
    }
    return unary(ctx, INF_OP_SOFTCAP, a, 1, &cap);
}

inf_rope_params inf_rope_params_plain(float freq_base, float freq_scale)
{
    inf_rope_params p = {freq_base, freq_scale, 0.0f, 1.0f, 32.0f, 1.0f, 0};
    return p;
}

/* The first and last pair index YaRN blends, as ggml computes them: the dimension where a pair
 * turns `rotations` times over n_ctx_orig positions, floored (fast) and ceiled (slow), clamped to
 * [0, n_dims - 1]. */
static void rope_yarn_range(int n_dims, const inf_rope_params *p, float range[2])
{
    const float pi = 3.14159265358979323846f;
    const float start = floorf((float)n_dims * logf((float)p->n_ctx_orig / (p->beta_fast * 2 * pi)) /
                               (2 * logf(p->freq_base)));
    const float end = ceilf((float)n_dims * logf((float)p->n_ctx_orig / (p->beta_slow * 2 * pi)) /
                            (2 * logf(p->freq_base)));
    range[0] = start > 0 ? start : 0;
    range[1] = end < (float)(n_dims - 1) ? end : (float)(n_dims - 1);
}

static bool rope_params_valid(int n_dims, const inf_tensor *a, inf_rope_mode mode,
                              const inf_rope_params *p)
{
    return n_dims > 0 && n_dims % 2 == 0 && n_dims <= a->ne[0] &&
           (mode == INF_ROPE_NORMAL || mode == INF_ROPE_NEOX) && p->freq_base > 0 &&
           p->freq_scale > 0 && p->ext_factor >= 0 && p->ext_factor <= 1 && p->attn_factor > 0 &&
           isfinite(p->freq_base) && isfinite(p->freq_scale) && isfinite(p->attn_factor) &&
           (p->ext_factor == 0 || (p->n_ctx_orig > 0 && p->beta_fast > 0 && p->beta_slow > 0));
}

/* op_params of ROPE: [0] n_dims, [1] mode, [2] freq_base, [3] freq_scale, [4] ext_factor,
 * [5] attn_factor, [6] [7] the YaRN range (pair dimensions); frequency factors are src[2]. */
inf_tensor *inf_rope_ext(inf_context *ctx, inf_tensor *a, inf_tensor *pos,
                         inf_tensor *freq_factors, int n_dims, inf_rope_mode mode,
                         const inf_rope_params *params)
{
    if (inf_source_missing(ctx, a, "ROPE") || inf_source_missing(ctx, pos, "ROPE"))
        return NULL;
    if (!expect_type(ctx, "ROPE", a, GGTK_TENSOR_F32) ||
        !expect_type(ctx, "ROPE", pos, GGTK_TENSOR_I32) ||
        (freq_factors && !expect_type(ctx, "ROPE", freq_factors, GGTK_TENSOR_F32)))
        return NULL;
    if (pos->ne[0] != a->ne[2] || inf_tensor_nelements(pos) != pos->ne[0] || a->ne[3] != 1) {
        inf_context_fail(ctx, "ROPE: positions " SHAPE_FMT " do not match tokens of " SHAPE_FMT,
                         SHAPE_ARGS(pos), SHAPE_ARGS(a));
        return NULL;
    }
    if (!rope_params_valid(n_dims, a, mode, params)) {
        inf_context_fail(ctx, "ROPE: n_dims %d (head %lld), mode %d, freq_base %g, freq_scale %g, "
                         "ext_factor %g, attn_factor %g out of range", n_dims, (long long)a->ne[0],
                         (int)mode, params->freq_base, params->freq_scale, params->ext_factor,
                         params->attn_factor);
        return NULL;
    }
    if (freq_factors && (freq_factors->ne[0] < n_dims / 2 || freq_factors->nb[0] != sizeof(float))) {
        inf_context_fail(ctx, "ROPE: frequency factors " SHAPE_FMT " hold fewer than %d contiguous "
                         "values", SHAPE_ARGS(freq_factors), n_dims / 2);
        return NULL;
    }
    inf_tensor *t = result(ctx, INF_OP_ROPE, GGTK_TENSOR_F32, a, a, pos, freq_factors);
    if (!t)
        return NULL;
    float range[2] = {0.0f, 0.0f};
    if (params->ext_factor != 0)
        rope_yarn_range(n_dims, params, range);
    t->op_params[0] = n_dims;
    t->op_params[1] = mode;
    inf_op_param_set_f32(t, 2, params->freq_base);
    inf_op_param_set_f32(t, 3, params->freq_scale);
    inf_op_param_set_f32(t, 4, params->ext_factor);
    inf_op_param_set_f32(t, 5, params->attn_factor);
    inf_op_param_set_f32(t, 6, range[0]);
    inf_op_param_set_f32(t, 7, range[1]);
    return t;
}

inf_tensor *inf_rope(inf_context *ctx, inf_tensor *a, inf_tensor *pos, int n_dims,
                     inf_rope_mode mode, float freq_base, float freq_scale)
{
    inf_rope_params p = inf_rope_params_plain(freq_base, freq_scale);
    return inf_rope_ext(ctx, a, pos, NULL, n_dims, mode, &p);
}

/* op_params of SOFT_MAX: [0] scale, [1] 1 when causal, [2] n_past (causal only), [3] the
 * sliding window (causal only; 0: none). */
inf_tensor *inf_soft_max(inf_context *ctx, inf_tensor *a, inf_tensor *mask, float scale)
{
    if (inf_source_missing(ctx, a, "SOFT_MAX") || !expect_type(ctx, "SOFT_MAX", a, GGTK_TENSOR_F32))
        return NULL;
    if (mask && (!expect_type(ctx, "SOFT_MAX", mask, GGTK_TENSOR_F32) ||
                 mask->ne[0] != a->ne[0] || mask->ne[1] != a->ne[1] || mask->ne[2] != 1 ||
                 mask->ne[3] != 1)) {
        inf_context_fail(ctx, "SOFT_MAX: mask " SHAPE_FMT " does not fit " SHAPE_FMT,
                         SHAPE_ARGS(mask), SHAPE_ARGS(a));
        return NULL;
    }
    inf_tensor *t = result(ctx, INF_OP_SOFT_MAX, GGTK_TENSOR_F32, a, a, mask, NULL);
    if (t)
        inf_op_param_set_f32(t, 0, scale);
    return t;
}

/* A causal softmax; window 0 for none. */
static inf_tensor *soft_max_causal(inf_context *ctx, inf_tensor *a, float scale, int64_t n_past,
                                   int64_t window)
{
    if (inf_source_missing(ctx, a, "SOFT_MAX"))
        return NULL;
    if (n_past < 0 || n_past > INT32_MAX || a->ne[0] < n_past + a->ne[1]) {
        inf_context_fail(ctx, "SOFT_MAX: %lld keys cannot hold %lld past and %lld new positions",
                         (long long)a->ne[0], (long long)n_past, (long long)a->ne[1]);
        return NULL;
    }
    inf_tensor *t = inf_soft_max(ctx, a, NULL, scale);
    if (t) {
        t->op_params[1] = 1;
        t->op_params[2] = (int32_t)n_past;
        t->op_params[3] = (int32_t)window;
    }
    return t;
}

inf_tensor *inf_soft_max_causal(inf_context *ctx, inf_tensor *a, float scale, int64_t n_past)
{
    return soft_max_causal(ctx, a, scale, n_past, 0);
}

inf_tensor *inf_soft_max_causal_window(inf_context *ctx, inf_tensor *a, float scale,
                                       int64_t n_past, int64_t window)
{
    if (window < 1 || window > INT32_MAX) {
        inf_context_fail(ctx, "SOFT_MAX: sliding window %lld out of range 1..%d", (long long)window,
                         INT32_MAX);
        return NULL;
    }
    return soft_max_causal(ctx, a, scale, n_past, window);
}

inf_tensor *inf_get_rows(inf_context *ctx, inf_tensor *a, inf_tensor *ids)
{
    if (inf_source_missing(ctx, a, "GET_ROWS") || inf_source_missing(ctx, ids, "GET_ROWS"))
        return NULL;
    if (!expect_type(ctx, "GET_ROWS", ids, GGTK_TENSOR_I32))
        return NULL;
    if (!is_weight_type(a->type) || a->ne[2] != 1 || a->ne[3] != 1 ||
        inf_tensor_nelements(ids) != ids->ne[0] || !inf_tensor_rows_contiguous(a)) {
        inf_context_fail(ctx, "GET_ROWS: '%s' %s " SHAPE_FMT " with ids " SHAPE_FMT
                         " (expected a 2-D matrix of a dequantizable type and 1-D ids)",
                         a->name, inf_type_name(a->type), SHAPE_ARGS(a), SHAPE_ARGS(ids));
        return NULL;
    }
    const int64_t ne[2] = {a->ne[0], ids->ne[0]};
    inf_tensor *t = inf_tensor_make(ctx, GGTK_TENSOR_F32, 2, ne, NULL, 0);
    if (!t)
        return NULL;
    t->op = INF_OP_GET_ROWS;
    t->src[0] = a;
    t->src[1] = ids;
    return inf_tensor_set_name(t, "GET_ROWS(%.40s)", a->name);
}

/* A result that is a view of `dst` and is produced by `op` (cpy, set_rows). */
static inf_tensor *write_into(inf_context *ctx, inf_op op, inf_tensor *dst, inf_tensor *src0,
                              inf_tensor *src1, inf_tensor *src2)
{
    inf_tensor *t = inf_tensor_make(ctx, dst->type, INF_MAX_DIMS, dst->ne, dst, 0);
    if (!t)
        return NULL;
    memcpy(t->nb, dst->nb, sizeof t->nb);
    t->op = op;
    t->src[0] = src0;
    t->src[1] = src1;
    t->src[2] = src2;
    return inf_tensor_set_name(t, "%s(%.40s)", inf_op_name(op), dst->name);
}

inf_tensor *inf_cpy(inf_context *ctx, inf_tensor *a, inf_tensor *b)
{
    if (inf_source_missing(ctx, a, "CPY") || inf_source_missing(ctx, b, "CPY"))
        return NULL;
    if (!is_float_type(a->type) || !is_float_type(b->type) ||
        inf_tensor_nelements(a) != inf_tensor_nelements(b)) {
        inf_context_fail(ctx, "CPY: %s " SHAPE_FMT " into %s " SHAPE_FMT
                         " (expected float types and equal element counts)",
                         inf_type_name(a->type), SHAPE_ARGS(a), inf_type_name(b->type), SHAPE_ARGS(b));
        return NULL;
    }
    return write_into(ctx, INF_OP_CPY, b, a, b, NULL);
}

inf_tensor *inf_set_rows(inf_context *ctx, inf_tensor *dst, inf_tensor *src, inf_tensor *ids)
{
    if (inf_source_missing(ctx, dst, "SET_ROWS") || inf_source_missing(ctx, src, "SET_ROWS") ||
        inf_source_missing(ctx, ids, "SET_ROWS"))
        return NULL;
    if (!expect_type(ctx, "SET_ROWS", src, GGTK_TENSOR_F32) ||
        !expect_type(ctx, "SET_ROWS", ids, GGTK_TENSOR_I32))
        return NULL;
    if (!is_float_type(dst->type) || src->ne[0] != dst->ne[0] || src->ne[1] != ids->ne[0] ||
        inf_tensor_nelements(ids) != ids->ne[0] || src->ne[2] != dst->ne[2] ||
        src->ne[3] != dst->ne[3]) {
        inf_context_fail(ctx, "SET_ROWS: rows " SHAPE_FMT " with ids " SHAPE_FMT " into %s " SHAPE_FMT,
                         SHAPE_ARGS(src), SHAPE_ARGS(ids), inf_type_name(dst->type), SHAPE_ARGS(dst));
        return NULL;
    }
    return write_into(ctx, INF_OP_SET_ROWS, dst, dst, src, ids);
}

inf_tensor *inf_cont(inf_context *ctx, inf_tensor *a)
{
    if (inf_source_missing(ctx, a, "CONT"))
        return NULL;
    if (!is_float_type(a->type)) {
        inf_context_fail(ctx, "CONT: '%s' is %s (expected f32, f16 or bf16)", a->name,
                         inf_type_name(a->type));
        return NULL;
    }
    return result(ctx, INF_OP_CONT, a->type, a, a, NULL, NULL);
}

inf_tensor *inf_mul_mat(inf_context *ctx, inf_tensor *a, inf_tensor *b)
{
    if (inf_source_missing(ctx, a, "MUL_MAT") || inf_source_missing(ctx, b, "MUL_MAT"))
        return NULL;
    if (!expect_type(ctx, "MUL_MAT", b, GGTK_TENSOR_F32))
        return NULL;
    if (!is_weight_type(a->type) || (!is_float_type(a->type) && !inf_tensor_rows_contiguous(a))) {
        inf_context_fail(ctx, "MUL_MAT: '%s' is %s%s (expected a dequantizable type)",
                         a->name, inf_type_name(a->type),
                         inf_tensor_rows_contiguous(a) ? "" : " with non-contiguous blocks");
        return NULL;
    }
    if (a->ne[0] != b->ne[0] || b->ne[2] % a->ne[2] != 0 || b->ne[3] % a->ne[3] != 0) {
        inf_context_fail(ctx, "MUL_MAT: '%s' " SHAPE_FMT " and '%s' " SHAPE_FMT " do not fit",
                         a->name, SHAPE_ARGS(a), b->name, SHAPE_ARGS(b));
        return NULL;
    }
    const int64_t ne[4] = {a->ne[1], b->ne[1], b->ne[2], b->ne[3]};
    inf_tensor *t = inf_tensor_make(ctx, GGTK_TENSOR_F32, 4, ne, NULL, 0);
    if (!t)
        return NULL;
    t->op = INF_OP_MUL_MAT;
    t->src[0] = a;
    t->src[1] = b;
    return inf_tensor_set_name(t, "MUL_MAT(%.40s)", a->name);
}

/* A K or V source of FLASH_ATTN: F32 or F16 whose elements along dimension 0 (or, when
 * `transposed_ok`, along dimension 1) are adjacent. */
static bool attn_kv_layout(const inf_tensor *t, bool transposed_ok)
{
    if (t->type != GGTK_TENSOR_F32 && t->type != GGTK_TENSOR_F16)
        return false;
    const size_t elem = inf_type_row_size(t->type, 1);
    return t->nb[0] == elem || (transposed_ok && t->nb[1] == elem);
}

/* op_params of FLASH_ATTN: see inf_flash_attn(). */
inf_tensor *inf_flash_attn(inf_context *ctx, inf_tensor *q, inf_tensor *k, inf_tensor *v,
                           float scale, float softcap)
{
    if (inf_source_missing(ctx, q, "FLASH_ATTN") || inf_source_missing(ctx, k, "FLASH_ATTN") ||
        inf_source_missing(ctx, v, "FLASH_ATTN"))
        return NULL;
    if (!expect_type(ctx, "FLASH_ATTN", q, GGTK_TENSOR_F32))
        return NULL;
    if (q->nb[0] != sizeof(float) || !attn_kv_layout(k, false) || !attn_kv_layout(v, true)) {
        inf_context_fail(ctx, "FLASH_ATTN: q '%s' %s, k '%s' %s, v '%s' %s (expected F32 q and "
                         "F32/F16 k and v with adjacent elements along a head)", q->name,
                         inf_type_name(q->type), k->name, inf_type_name(k->type), v->name,
                         inf_type_name(v->type));
        return NULL;
    }
    if (k->ne[0] != q->ne[0] || v->ne[0] != q->ne[0] || v->ne[1] != k->ne[1] ||
        v->ne[2] != k->ne[2] || q->ne[2] % k->ne[2] != 0 || k->ne[3] != q->ne[3] ||
        v->ne[3] != q->ne[3]) {
        inf_context_fail(ctx, "FLASH_ATTN: q " SHAPE_FMT ", k " SHAPE_FMT " and v " SHAPE_FMT
                         " do not fit (expected [D, n_q, n_head, B], [D, n_kv, n_head_kv, B] "
                         "twice, n_head a multiple of n_head_kv)",
                         SHAPE_ARGS(q), SHAPE_ARGS(k), SHAPE_ARGS(v));
        return NULL;
    }
    if (!isfinite(scale) || !(softcap >= 0.0f) || !isfinite(softcap)) {
        inf_context_fail(ctx, "FLASH_ATTN: scale %g and softcap %g (expected finite, softcap >= 0)",
                         scale, softcap);
        return NULL;
    }
    const int64_t ne[4] = {q->ne[0], q->ne[2], q->ne[1], q->ne[3]};
    inf_tensor *t = inf_tensor_make(ctx, GGTK_TENSOR_F32, 4, ne, NULL, 0);
    if (!t)
        return NULL;
    t->op = INF_OP_FLASH_ATTN;
    t->src[0] = q;
    t->src[1] = k;
    t->src[2] = v;
    inf_op_param_set_f32(t, 0, scale);
    inf_op_param_set_f32(t, 1, softcap);
    return inf_tensor_set_name(t, "FLASH_ATTN(%.40s)", q->name);
}

inf_tensor *inf_flash_attn_causal(inf_context *ctx, inf_tensor *q, inf_tensor *k, inf_tensor *v,
                                  float scale, float softcap, int64_t n_past, int64_t window)
{
    if (q && k && (n_past < 0 || n_past > INT32_MAX || k->ne[1] < n_past + q->ne[1])) {
        inf_context_fail(ctx, "FLASH_ATTN: %lld keys cannot hold %lld past and %lld new positions",
                         (long long)k->ne[1], (long long)n_past, (long long)q->ne[1]);
        return NULL;
    }
    if (window < 0 || window > INT32_MAX) {
        inf_context_fail(ctx, "FLASH_ATTN: sliding window %lld out of range 0..%d",
                         (long long)window, INT32_MAX);
        return NULL;
    }
    inf_tensor *t = inf_flash_attn(ctx, q, k, v, scale, softcap);
    if (t) {
        t->op_params[2] = 1;
        t->op_params[3] = (int32_t)n_past;
        t->op_params[4] = (int32_t)window;
    }
    return t;
}
