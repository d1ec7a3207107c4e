/* Our kernels against ggml itself: REF_BIN names llama.cpp's build/bin folder, whose
 * libggml-base.so is loaded at run time and its reference quantizers (from_float_ref, what
 * llama-quantize writes without an importance matrix) and dequantizers (to_float) called on the
 * full test data, signed zeros and denormals included. Skipped when REF_BIN is unset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_quant.h>
#include "ggml_ref.h"
#include "quant_data.h"
#include "test.h"

static const ggtk_tensor_type ggml_types[] = {
    GGTK_TENSOR_F16,  GGTK_TENSOR_BF16, GGTK_TENSOR_Q4_0, GGTK_TENSOR_Q4_1,
    GGTK_TENSOR_Q5_0, GGTK_TENSOR_Q5_1, GGTK_TENSOR_Q8_0, GGTK_TENSOR_Q8_1,
};

TEST(test_quantizers_match_ggml_reference_library)
{
    const char *why = NULL;
    ggml_get_traits_fn traits = ggml_ref_load(&why);
    if (!traits)
        SKIP("%s", why);
    const int64_t n = 32 * 17 * 400;
    float *x = malloc((size_t)n * sizeof *x);
    float *want_f = malloc((size_t)n * sizeof *want_f), *got_f = malloc((size_t)n * 4);
    uint8_t *want = malloc((size_t)n * 4), *got = malloc((size_t)n * 4);
    CHECK(x && want_f && got_f && want && got);
    quant_data_fill(x, n, 11, QUANT_DATA_ALL);
    for (size_t t = 0; t < sizeof ggml_types / sizeof ggml_types[0]; t++) {
        const ggml_traits_prefix *ref = traits((int)ggml_types[t]);
        const char *name = ggtk_tensor_type_info_get(ggml_types[t])->name;
        CHECK_MSG(ref && ref->from_float_ref, "ggml has no %s quantizer", name);
        uint64_t bytes;
        ggtk_tensor_type_bytes(ggml_types[t], (uint64_t)n, &bytes);
        ref->from_float_ref(x, want, n);
        for (int level = 0; level <= (int)inf_simd_detect(); level++) {
            const inf_quant_kernels *k = inf_quant_kernels_at(ggml_types[t], (inf_simd_level)level);
            k->from_float(x, got, n);
            CHECK_MSG(memcmp(want, got, (size_t)bytes) == 0, "%s %s: bytes differ from ggml",
                      name, inf_simd_level_name((inf_simd_level)level));
            if (!ref->to_float) /* ggml does not dequantize Q8_1 */
                continue;
            ref->to_float(want, want_f, n);
            k->to_float(want, got_f, n);
            CHECK_MSG(memcmp(want_f, got_f, (size_t)n * 4) == 0,
                      "%s %s: dequantized floats differ from ggml", name,
                      inf_simd_level_name((inf_simd_level)level));
        }
    }
    free(x), free(want_f), free(got_f), free(want), free(got);
}
