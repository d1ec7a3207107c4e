/* random_blocks.c - see random_blocks.h. */
#include "random_blocks.h"

#include <string.h>

#include <ggtk/inf_quant.h>

#include "engine/quant_kernels/quant_iqblocks.h"

static void put_half(void *at, float v)
{
    const inf_fp16 h = inf_fp32_to_fp16(v);
    memcpy(at, &h, sizeof h);
}

bool random_blocks(ggtk_tensor_type type, void *data, size_t nbytes, uint64_t seed)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    uint8_t *bytes = data;
    uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
    for (size_t i = 0; i < nbytes; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        bytes[i] = (uint8_t)(state >> 56);
    }
    for (size_t at = 0; at + info->block_bytes <= nbytes; at += info->block_bytes) {
        uint8_t *block = bytes + at;
        switch (type) {
        case GGTK_TENSOR_IQ4_NL: /* levels up to 127 */
            put_half(&((block_iq4_nl *)block)->d, 1.0f / 127);
            break;
        case GGTK_TENSOR_IQ4_XS: /* levels up to 127 times sub-scales up to 32 */
            put_half(&((block_iq4_xs *)block)->d, 1.0f / (127 * 32));
            break;
        case GGTK_TENSOR_TQ1_0:
            put_half(&((block_tq1_0 *)block)->d, 0.5f);
            break;
        case GGTK_TENSOR_TQ2_0:
            put_half(&((block_tq2_0 *)block)->d, 0.5f);
            break;
        case GGTK_TENSOR_MXFP4: /* codes up to 12 (doubled), scale 2^-3 halved */
            ((block_mxfp4 *)block)->e = 124;
            break;
        case GGTK_TENSOR_NVFP4: /* E4M3 0x30 = 2^(6 - 7) = 0.5 */
            memset(((block_nvfp4 *)block)->d, 0x30, sizeof ((block_nvfp4 *)block)->d);
            break;
        case GGTK_TENSOR_Q1_0:
            put_half(&((block_q1_0 *)block)->d, 0.5f);
            break;
        case GGTK_TENSOR_Q2_0:
            put_half(&((block_q2_0 *)block)->d, 0.5f);
            break;
        default:
            return false;
        }
    }
    return true;
}
