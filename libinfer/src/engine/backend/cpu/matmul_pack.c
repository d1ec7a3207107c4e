/* matmul_pack.c - portable packing of weight panels into the formats of matmul.h. The scalar
 * level uses these; the SIMD levels have faster packers of the same formats. */
#include <string.h>

#include "matmul.h"
#include "engine/quant_kernels/quant_internal.h"

/* The 32 unsigned bytes a weight block contributes (see matmul.h), its scale and minimum. */
static void unpack_block(ggtk_tensor_type type, const char *block, uint8_t u[MM_BLOCK], float *d,
                         float *m)
{
    if (type == GGTK_TENSOR_Q8_0) {
        const block_q8_0 *b = (const block_q8_0 *)block;
        for (int e = 0; e < MM_BLOCK; e++)
            u[e] = (uint8_t)b->qs[e] ^ 0x80;
        *d = inf_fp16_to_fp32(b->d);
        *m = 0.0f;
        return;
    }
    const uint8_t *qs;
    if (type == GGTK_TENSOR_Q4_0) {
        const block_q4_0 *b = (const block_q4_0 *)block;
        qs = b->qs;
        *d = inf_fp16_to_fp32(b->d);
        *m = 0.0f;
    } else {
        const block_q4_1 *b = (const block_q4_1 *)block;
        qs = b->qs;
        *d = inf_fp16_to_fp32(b->d);
        *m = inf_fp16_to_fp32(b->m);
    }
    for (int e = 0; e < MM_BLOCK / 2; e++) {
        u[e] = qs[e] & 0x0F;
        u[e + MM_BLOCK / 2] = qs[e] >> 4;
    }
}

static size_t block_bytes(ggtk_tensor_type type)
{
    return type == GGTK_TENSOR_Q8_0 ? sizeof(block_q8_0)
           : type == GGTK_TENSOR_Q4_0 ? sizeof(block_q4_0)
                                      : sizeof(block_q4_1);
}

void mm_pack_q_generic(ggtk_tensor_type type, const char *w, size_t row_stride, int rows,
                       int64_t n_blocks, int p, uint8_t *qs, float *d, float *m)
{
    const size_t bytes = block_bytes(type);
    for (int64_t b = 0; b < n_blocks; b++) {
        uint8_t *out = qs + (size_t)b * (size_t)p * MM_BLOCK;
        for (int i = 0; i < p; i++) {
            uint8_t u[MM_BLOCK] = {0};
            float scale = 0.0f, min = 0.0f;
            if (i < rows)
                unpack_block(type, w + (size_t)i * row_stride + (size_t)b * bytes, u, &scale, &min);
            for (int g = 0; g < MM_BLOCK / 4; g++)
                memcpy(out + ((size_t)g * p + i) * 4, u + 4 * g, 4);
            d[b * p + i] = scale;
            m[b * p + i] = min;
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

void mm_pack_act_f_generic(const float *const *rows, int g, int64_t K, float *group)
{
    for (int j = 0; j < g; j++) {
        for (int64_t k = 0; k < K; k++)
            group[k * g + j] = rows[j] ? rows[j][k] : 0.0f;
    }
}
