/* matmul_pack.c - portable packing of weight panels into the formats of matmul.h. The scalar
 * level uses these; the SIMD levels have faster packers of the same formats for some types. */
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
