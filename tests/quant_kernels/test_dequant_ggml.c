/* Every dequantizer against ggml's own to_float (libggml-base.so from REF_BIN) on random blocks
 * with finite scales, at every SIMD level: identical float bits. Skipped when REF_BIN is unset. */
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_quant.h>
#include "ggml_ref.h"
#include "quant_blocks.h"
#include "test.h"

#define GGML_ELEMENTS (256 * 200)

TEST(test_dequantizers_match_ggml_reference_library)
{
    const char *why = NULL;
    ggml_get_traits_fn traits = ggml_ref_load(&why);
    if (!traits)
        SKIP("%s", why);
    uint8_t *blocks = malloc(GGML_ELEMENTS * 4);
    float *want = malloc(GGML_ELEMENTS * sizeof *want), *got = malloc(GGML_ELEMENTS * 4);
    CHECK(blocks && want && got);
    for (int t = 0; t < quant_blocks_type_count; t++) {
        const ggtk_tensor_type type = quant_blocks_types[t];
        const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
        const ggml_traits_prefix *ref = traits((int)type);
        CHECK_MSG(ref && ref->blck_size == (int64_t)info->block_size &&
                      ref->type_size == info->block_bytes,
                  "%s: ggml's block geometry differs", info->name);
        if (!ref->to_float) /* ggml does not dequantize Q8_1 */
            continue;
        CHECK(quant_blocks_fill(type, blocks, GGML_ELEMENTS / info->block_size, 77 + type));
        ref->to_float(blocks, want, GGML_ELEMENTS);
        for (int level = 0; level <= (int)inf_simd_detect(); level++) {
            memset(got, 0xCD, GGML_ELEMENTS * sizeof *got);
            inf_quant_kernels_at(type, (inf_simd_level)level)->to_float(blocks, got, GGML_ELEMENTS);
            CHECK_MSG(memcmp(want, got, GGML_ELEMENTS * sizeof *got) == 0,
                      "%s %s: dequantized floats differ from ggml", info->name,
                      inf_simd_level_name((inf_simd_level)level));
        }
    }
    free(blocks), free(want), free(got);
}
