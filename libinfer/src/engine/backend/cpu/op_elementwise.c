/* op_elementwise.c - add and mul with broadcasting, scale, silu, swiglu, gelu, geglu, softcap
 * and rms_norm on F32 rows. Work is split by rows; each kernel reads an element before writing the same element, so
 * the graph allocator may let the result share memory with a source (in place). */
#include <math.h>

#include "cpu_gelu.h"
#include "cpu_internal.h"
#include "cpu_math.h"
#include "vec.h"
#include "engine/tensor/tensor_internal.h"

bool cpu_binary_supports(const inf_tensor *node)
{
    const inf_tensor *a = node->src[0], *b = node->src[1];
    return node->type == GGTK_TENSOR_F32 && a->type == GGTK_TENSOR_F32 &&
           b->type == GGTK_TENSOR_F32 && inf_tensor_is_contiguous(node);
}

bool cpu_unary_supports(const inf_tensor *node)
{
    return node->type == GGTK_TENSOR_F32 && node->src[0]->type == GGTK_TENSOR_F32 &&
           inf_tensor_is_contiguous(node);
}

/* Start of row `row` (counting over dimensions 1..3 of `like`) of tensor t, where t's index in
 * each dimension wraps at its own size (broadcasting). */
static const char *row_of(const inf_tensor *t, const inf_tensor *like, int64_t row)
{
    int64_t i1 = row % like->ne[1], i2 = row / like->ne[1] % like->ne[2];
    int64_t i3 = row / (like->ne[1] * like->ne[2]);
    return (const char *)t->data + (i1 % t->ne[1]) * t->nb[1] + (i2 % t->ne[2]) * t->nb[2] +
           (i3 % t->ne[3]) * t->nb[3];
}

/* Element i of a row with element stride nb0. */
static inline float at(const char *row, size_t nb0, int64_t i)
{
    float v;
    memcpy(&v, row + (size_t)i * nb0, sizeof v);
    return v;
}

enum binary_kind { BINARY_ADD, BINARY_MUL, BINARY_SWIGLU, BINARY_GEGLU };

static void binary(const cpu_params *p, inf_tensor *dst, enum binary_kind kind)
{
    const inf_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t ne0 = dst->ne[0], b_ne0 = b->ne[0];
    const bool fast = a->nb[0] == sizeof(float) && b->nb[0] == sizeof(float) && b_ne0 == ne0;
    int64_t begin, end;
    cpu_split(inf_tensor_nrows(dst), p, &begin, &end);
    for (int64_t r = begin; r < end; r++) {
        float *d = (float *)row_of(dst, dst, r);
        const char *ra = row_of(a, dst, r), *rb = row_of(b, dst, r);
        if (fast) {
            const float *x = (const float *)ra, *y = (const float *)rb;
            if (kind == BINARY_ADD) {
#pragma omp simd
                for (int64_t i = 0; i < ne0; i++)
                    d[i] = x[i] + y[i];
            } else if (kind == BINARY_MUL) {
#pragma omp simd
                for (int64_t i = 0; i < ne0; i++)
                    d[i] = x[i] * y[i];
            } else if (kind == BINARY_SWIGLU) {
                cpu_vec_get()->swiglu(x, y, d, ne0);
            } else {
                cpu_vec_get()->geglu(cpu_gelu_table(), x, y, d, ne0);
            }
            continue;
        }
        for (int64_t i = 0; i < ne0; i++) {
            float x = at(ra, a->nb[0], i), y = at(rb, b->nb[0], i % b_ne0);
            d[i] = kind == BINARY_ADD ? x + y : kind == BINARY_MUL ? x * y
                 : kind == BINARY_SWIGLU ? cpu_silu(x) * y : cpu_geglu(cpu_gelu_table(), x, y);
        }
    }
}

void cpu_add_compute(const cpu_params *p, inf_tensor *node)
{
    binary(p, node, BINARY_ADD);
}

void cpu_mul_compute(const cpu_params *p, inf_tensor *node)
{
    binary(p, node, BINARY_MUL);
}

void cpu_swiglu_compute(const cpu_params *p, inf_tensor *node)
{
    binary(p, node, BINARY_SWIGLU);
}

void cpu_geglu_compute(const cpu_params *p, inf_tensor *node)
{
    binary(p, node, BINARY_GEGLU);
}

enum unary_kind { UNARY_SCALE, UNARY_SILU, UNARY_GELU, UNARY_SOFTCAP };

/* cap * tanh(x * (1 / cap)): the three roundings of llama.cpp's scale, tanh, scale. */
static void softcap_row(const float *x, float *y, int64_t n, float cap)
{
    const float inv = 1.0f / cap;
    for (int64_t i = 0; i < n; i++)
        y[i] = tanhf(x[i] * inv) * cap;
}

/* One element of a unary op (the strided path). */
static float unary_one(enum unary_kind kind, float x, float param)
{
    float y = x;
    switch (kind) {
    case UNARY_SCALE: y = x * param; break;
    case UNARY_SILU: y = cpu_silu(x); break;
    case UNARY_GELU: y = cpu_gelu(cpu_gelu_table(), x); break;
    case UNARY_SOFTCAP: softcap_row(&x, &y, 1, param); break;
    }
    return y;
}

static void unary(const cpu_params *p, inf_tensor *dst, enum unary_kind kind)
{
    const inf_tensor *a = dst->src[0];
    const float param = inf_op_param_f32(dst, 0);
    const int64_t ne0 = dst->ne[0];
    int64_t begin, end;
    cpu_split(inf_tensor_nrows(dst), p, &begin, &end);
    for (int64_t r = begin; r < end; r++) {
        float *d = (float *)row_of(dst, dst, r);
        const char *ra = row_of(a, dst, r);
        if (a->nb[0] != sizeof(float)) {
            for (int64_t i = 0; i < ne0; i++)
                d[i] = unary_one(kind, at(ra, a->nb[0], i), param);
            continue;
        }
        const float *x = (const float *)ra;
        switch (kind) {
        case UNARY_SCALE:
#pragma omp simd
            for (int64_t i = 0; i < ne0; i++)
                d[i] = x[i] * param;
            break;
        case UNARY_SILU: cpu_vec_get()->silu(x, d, ne0); break;
        case UNARY_GELU: cpu_vec_get()->gelu(cpu_gelu_table(), x, d, ne0); break;
        case UNARY_SOFTCAP: softcap_row(x, d, ne0, param); break;
        }
    }
}

void cpu_scale_compute(const cpu_params *p, inf_tensor *node)
{
    unary(p, node, UNARY_SCALE);
}

void cpu_silu_compute(const cpu_params *p, inf_tensor *node)
{
    unary(p, node, UNARY_SILU);
}

void cpu_gelu_compute(const cpu_params *p, inf_tensor *node)
{
    unary(p, node, UNARY_GELU);
}

void cpu_softcap_compute(const cpu_params *p, inf_tensor *node)
{
    unary(p, node, UNARY_SOFTCAP);
}

/* Rows normalised together by rms_norm_rows. */
enum { RMS_NORM_ROWS = 4 };

/* Rows r0 .. r0 + n - 1 (n <= RMS_NORM_ROWS). Each row's mean of squares is one chain of double
 * additions in element order, as ggml sums it; the rows' chains run side by side, so that the
 * additions' latency, which bounds a single chain, is hidden. */
static void rms_norm_rows(const inf_tensor *a, inf_tensor *node, int64_t r0, int n, float eps)
{
    const int64_t ne0 = node->ne[0];
    const char *ra[RMS_NORM_ROWS];
    double sum[RMS_NORM_ROWS] = {0.0};
    for (int k = 0; k < RMS_NORM_ROWS; k++) /* missing rows repeat the first; never written */
        ra[k] = row_of(a, node, r0 + (k < n ? k : 0));
    for (int64_t i = 0; i < ne0; i++) {
#pragma GCC unroll 4
        for (int k = 0; k < RMS_NORM_ROWS; k++) {
            const float x = at(ra[k], a->nb[0], i);
            sum[k] += (double)(x * x);
        }
    }
    for (int k = 0; k < n; k++) {
        float *d = (float *)row_of(node, node, r0 + k);
        const float scale = 1.0f / sqrtf((float)(sum[k] / (double)ne0) + eps);
        for (int64_t i = 0; i < ne0; i++)
            d[i] = at(ra[k], a->nb[0], i) * scale;
    }
}

/* The mean of squares is summed in double, as ggml does, so long rows lose no precision. */
void cpu_rms_norm_compute(const cpu_params *p, inf_tensor *node)
{
    const inf_tensor *a = node->src[0];
    const float eps = inf_op_param_f32(node, 0);
    int64_t begin, end;
    cpu_split(inf_tensor_nrows(node), p, &begin, &end);
    for (int64_t r = begin; r < end; r += RMS_NORM_ROWS)
        rms_norm_rows(a, node, r, end - r < RMS_NORM_ROWS ? (int)(end - r) : RMS_NORM_ROWS, eps);
}
