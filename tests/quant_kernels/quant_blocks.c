/* quant_blocks.c - random quantized blocks with finite scales (see quant_blocks.h). The scale
 * offsets below are written out from the format, independently of libinfer's structs. */
#include "quant_blocks.h"

#include <string.h>

#include "quant_data.h"

/* Where a block keeps its scales: up to two fp16 fields, or a float32 (Q8_K), or IQ1_M's fp16
 * spread over four nibbles. E8M0/E4M3 scales (MXFP4, NVFP4) are finite for every byte. */
typedef enum scale_kind { SCALES_FP16, SCALES_F32, SCALES_IQ1_M } scale_kind;

typedef struct block_scales {
    ggtk_tensor_type type;
    scale_kind kind;
    int n_fp16;
    int offset[2];
} block_scales;

static const block_scales scale_table[] = {
    {GGTK_TENSOR_Q4_0, SCALES_FP16, 1, {0}},       {GGTK_TENSOR_Q4_1, SCALES_FP16, 2, {0, 2}},
    {GGTK_TENSOR_Q5_0, SCALES_FP16, 1, {0}},       {GGTK_TENSOR_Q5_1, SCALES_FP16, 2, {0, 2}},
    {GGTK_TENSOR_Q8_0, SCALES_FP16, 1, {0}},       {GGTK_TENSOR_Q8_1, SCALES_FP16, 2, {0, 2}},
    {GGTK_TENSOR_Q2_K, SCALES_FP16, 2, {80, 82}},  {GGTK_TENSOR_Q3_K, SCALES_FP16, 1, {108}},
    {GGTK_TENSOR_Q4_K, SCALES_FP16, 2, {0, 2}},    {GGTK_TENSOR_Q5_K, SCALES_FP16, 2, {0, 2}},
    {GGTK_TENSOR_Q6_K, SCALES_FP16, 1, {208}},     {GGTK_TENSOR_Q8_K, SCALES_F32, 0, {0}},
    {GGTK_TENSOR_IQ2_XXS, SCALES_FP16, 1, {0}},    {GGTK_TENSOR_IQ2_XS, SCALES_FP16, 1, {0}},
    {GGTK_TENSOR_IQ2_S, SCALES_FP16, 1, {0}},      {GGTK_TENSOR_IQ3_XXS, SCALES_FP16, 1, {0}},
    {GGTK_TENSOR_IQ3_S, SCALES_FP16, 1, {0}},      {GGTK_TENSOR_IQ1_S, SCALES_FP16, 1, {0}},
    {GGTK_TENSOR_IQ1_M, SCALES_IQ1_M, 0, {0}},     {GGTK_TENSOR_IQ4_NL, SCALES_FP16, 1, {0}},
    {GGTK_TENSOR_IQ4_XS, SCALES_FP16, 1, {0}},     {GGTK_TENSOR_TQ1_0, SCALES_FP16, 1, {52}},
    {GGTK_TENSOR_TQ2_0, SCALES_FP16, 1, {64}},     {GGTK_TENSOR_MXFP4, SCALES_FP16, 0, {0}},
    {GGTK_TENSOR_NVFP4, SCALES_FP16, 0, {0}},      {GGTK_TENSOR_Q1_0, SCALES_FP16, 1, {0}},
    {GGTK_TENSOR_Q2_0, SCALES_FP16, 1, {0}},
};

#define N_SCALE_TABLE ((int)(sizeof scale_table / sizeof scale_table[0]))

const ggtk_tensor_type quant_blocks_types[] = {
    GGTK_TENSOR_Q4_0,   GGTK_TENSOR_Q4_1,    GGTK_TENSOR_Q5_0,   GGTK_TENSOR_Q5_1,
    GGTK_TENSOR_Q8_0,   GGTK_TENSOR_Q8_1,    GGTK_TENSOR_Q2_K,   GGTK_TENSOR_Q3_K,
    GGTK_TENSOR_Q4_K,   GGTK_TENSOR_Q5_K,    GGTK_TENSOR_Q6_K,   GGTK_TENSOR_Q8_K,
    GGTK_TENSOR_IQ2_XXS, GGTK_TENSOR_IQ2_XS, GGTK_TENSOR_IQ2_S,  GGTK_TENSOR_IQ3_XXS,
    GGTK_TENSOR_IQ3_S,  GGTK_TENSOR_IQ1_S,   GGTK_TENSOR_IQ1_M,  GGTK_TENSOR_IQ4_NL,
    GGTK_TENSOR_IQ4_XS, GGTK_TENSOR_TQ1_0,   GGTK_TENSOR_TQ2_0,  GGTK_TENSOR_MXFP4,
    GGTK_TENSOR_NVFP4,  GGTK_TENSOR_Q1_0,    GGTK_TENSOR_Q2_0,
};
const int quant_blocks_type_count = (int)(sizeof quant_blocks_types / sizeof quant_blocks_types[0]);

/* Clear the top exponent bit of an all-ones exponent (Inf/NaN become large finite values). The
 * exponent of the fp16 at `half` spans bits 10-14, the float's at `f32` bits 23-30. */
static void make_fp16_finite(uint8_t *half)
{
    if ((half[1] & 0x7C) == 0x7C)
        half[1] &= (uint8_t)~0x40;
}

static void make_f32_finite(uint8_t *f32)
{
    if ((f32[3] & 0x7F) == 0x7F && (f32[2] & 0x80))
        f32[3] &= (uint8_t)~0x40;
}

/* IQ1_M's fp16 scale is the top nibbles of its four little-endian uint16 scale words (bytes 49,
 * 51, 53, 55 of the block): exponent bits 10-14 are bits 2-3 of byte 53's nibble and bits 0-2 of
 * byte 55's. Clearing bit 14 (bit 6 of byte 55) makes it finite. */
static void make_iq1_m_finite(uint8_t *block)
{
    const unsigned exponent = ((block[53] >> 6) & 3) | (((block[55] >> 4) & 7) << 2);
    if (exponent == 0x1F)
        block[55] &= (uint8_t)~0x40;
}

bool quant_blocks_fill(ggtk_tensor_type type, void *blocks, int64_t nblocks, uint64_t seed)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    const block_scales *scales = NULL;
    for (int i = 0; i < N_SCALE_TABLE; i++)
        if (scale_table[i].type == type)
            scales = &scale_table[i];
    if (!info || !scales)
        return false;
    uint8_t *bytes = blocks;
    uint64_t state = seed;
    const size_t total = (size_t)nblocks * info->block_bytes;
    for (size_t i = 0; i < total; i += 8) {
        uint64_t r = quant_data_next(&state);
        memcpy(bytes + i, &r, total - i < 8 ? total - i : 8);
    }
    for (int64_t b = 0; b < nblocks; b++) {
        uint8_t *block = bytes + (size_t)b * info->block_bytes;
        if (scales->kind == SCALES_F32)
            make_f32_finite(block);
        else if (scales->kind == SCALES_IQ1_M)
            make_iq1_m_finite(block);
        for (int f = 0; f < scales->n_fp16; f++)
            make_fp16_finite(block + scales->offset[f]);
    }
    return true;
}
