/* matmul_pack.c - portable packing of weight panels into the formats of matmul.h. The scalar
 * level uses these; the SIMD levels have faster packers of the same formats for some types. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "matmul.h"
#include <ggtk/inf_quant.h>
#include "engine/quant_kernels/quant_internal.h"

void mm_pack_q_generic(const mm_weight_format *f, const char *w, size_t row_stride, int rows,
                       int64_t b0, int64_t n_blocks, int p, uint8_t *qs, float *d, float *m)
{
    const int subs = f->subs;
    for (int64_t b = 0; b < n_blocks; b++) {
        uint8_t *out = qs + (size_t)b * (size_t)p * MM_BLOCK;
        for (int i = 0; i < p; i++) {
            uint8_t u[MM_BLOCK] = {0};
            float scale[2] = {0.0f, 0.0f}, min[2] = {0.0f, 0.0f};
            if (i < rows) {
                f->codes(w + (size_t)i * row_stride, b0 + b, u);
                f->scales(w + (size_t)i * row_stride, b0 + b, scale, min);
            }
            for (int g = 0; g < MM_BLOCK / 4; g++)
                memcpy(out + ((size_t)g * p + i) * 4, u + 4 * g, 4);
            for (int s = 0; s < subs; s++) {
                d[(b * subs + s) * p + i] = scale[s];
                m[(b * subs + s) * p + i] = min[s];
            }
        }
    }
}

void mm_pack_f_generic(ggtk_tensor_type type, const char *w, size_t nb0, size_t nb1, int rows,
                       int64_t K, int p, float *panel)
{
    for (int i = 0; i < p; i++) {
        for (int64_t k = 0; k < K; k++)
            panel[k * p + i] = i < rows ? quant_load_float(type, w + (size_t)k * nb0 + (size_t)i * nb1) : 0.0f;
    }
}

void mm_pack_f_dequantized(ggtk_tensor_type type, const char *w, size_t row_stride, int rows,
                           int64_t K, int p, float *panel)
{
    float row[MM_DEQUANT_MAX];
    for (int i = 0; i < p; i++) {
        if (i < rows)
            inf_dequantize_row(type, w + (size_t)i * row_stride, row, K);
        for (int64_t k = 0; k < K; k++)
            panel[k * p + i] = i < rows ? row[k] : 0.0f;
    }
}

void mm_pack_act_f_generic(const float *const *rows, int g, int64_t K, float *group)
{
    for (int j = 0; j < g; j++) {
        for (int64_t k = 0; k < K; k++)
            group[k * g + j] = rows[j] ? rows[j][k] : 0.0f;
    }
}

void mm_quantize_act_q8_f32(const float x[MM_BLOCK], int8_t q[MM_BLOCK], float *d)
{
    float amax = 0.0f;
    bool finite = true;
    for (int e = 0; e < MM_BLOCK; e++) {
        const float ax = fabsf(x[e]);
        finite &= ax <= FLT_MAX;
        amax = ax > amax ? ax : amax;
    }
    *d = finite ? amax / 127.0f : NAN;
    if (!finite || amax < 0x1p-100f) { /* tiny blocks (d not normal) are not worth codes */
        memset(q, 0, MM_BLOCK);
        return;
    }
    /* |x * 127 / amax| <= 127 up to one rounding; adding and removing 1.5 * 2^23 rounds to the
     * nearest integer (ties to even) in any IEEE arithmetic, and vectorizes. */
    const float id = 127.0f / amax, magic = 0x1.8p23f;
    for (int e = 0; e < MM_BLOCK; e++)
        q[e] = (int8_t)(int32_t)((x[e] * id + magic) - magic);
}

void mm_quantize_act_generic(const float *x, int64_t n, int8_t *q, float *d)
{
    for (int64_t b = 0; b < n / MM_BLOCK; b++)
        mm_quantize_act_q8_f32(x + b * MM_BLOCK, q + b * MM_BLOCK, &d[b]);
}
