/* The searching quantizers without llama.cpp at hand: their bytes for fixed inputs against
 * hashes recorded from ggml's bytes (kquant_golden.c), at every SIMD level; and the same rules
 * the ggml comparison checks (non-finite input, fallback accounting) on small cases. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_quant.h>
#include "kquant_golden.h"
#include "quant_data.h"
#include "test.h"

TEST(test_kquant_bytes_match_recorded_ggml_hashes_at_every_level)
{
    const inf_simd_level active = inf_simd_active();
    for (int level = INF_SIMD_SCALAR; level <= (int)inf_simd_detect(); level++) {
        inf_simd_force((inf_simd_level)level);
        int bad = golden_mismatches();
        inf_simd_force(active);
        CHECK_MSG(bad == 0, "%d of %d golden cases differ at %s (details on stderr)", bad,
                  kquant_golden_count, inf_simd_level_name((inf_simd_level)level));
    }
}

/* The K types and where their fp16 scales sit (-1: none). */
static const struct {
    ggtk_tensor_type type;
    int d_offset, min_offset;
} k_types[] = {
    {GGTK_TENSOR_Q2_K, 80, 82}, {GGTK_TENSOR_Q3_K, 108, -1}, {GGTK_TENSOR_Q4_K, 0, 2},
    {GGTK_TENSOR_Q5_K, 0, 2},   {GGTK_TENSOR_Q6_K, 208, -1},
};

/* A super-block holding NaN or Inf becomes the NaN block (d, and dmin, 0x7E00; all else 0),
 * with and without an imatrix, and is not counted as a fallback. */
TEST(test_kquant_nonfinite_superblocks_become_nan_blocks)
{
    float x[512], w[512];
    uint8_t q[2 * 256], want[256];
    quant_data_fill(x, 512, 9, QUANT_DATA_DEFINED);
    imatrix_fill(w, 512, IMATRIX_POSITIVE, 1);
    x[300] = NAN;
    x[511] = -INFINITY;
    for (size_t t = 0; t < sizeof k_types / sizeof k_types[0]; t++) {
        const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(k_types[t].type);
        memset(want, 0, sizeof want);
        want[k_types[t].d_offset + 1] = 0x7E;
        if (k_types[t].min_offset >= 0)
            want[k_types[t].min_offset + 1] = 0x7E;
        for (int with = 0; with < 2; with++) {
            memset(q, 0xCD, sizeof q);
            CHECK(inf_quantize_rows_imatrix(k_types[t].type, x, q, 1, 512, with ? w : NULL) == 0);
            CHECK_MSG(memcmp(q + info->block_bytes, want, info->block_bytes) == 0,
                      "%s %s imatrix: not the NaN block", info->name, with ? "with" : "without");
        }
    }
}

/* An imatrix of NaN entries makes ggml's weighted Q4_0 scale NaN in every block: each one is
 * a counted fallback holding the reference quantizer's bytes. */
TEST(test_imatrix_fallback_blocks_are_counted_and_finite)
{
    float rows[512], w[256], none_w[256];
    uint8_t got[256], want[256];
    quant_data_fill_rows(rows, 2, 256, 4);
    const float *x = rows + 256; /* Gaussian weights, every seventh block zero */
    for (int i = 0; i < 256; i++)
        w[i] = NAN, none_w[i] = 1.0f;
    CHECK(inf_quantize_rows_imatrix(GGTK_TENSOR_Q4_0, x, got, 1, 256, w) == 7); /* not block 3 */
    CHECK(inf_quantize_row(GGTK_TENSOR_Q4_0, x, want, 256));
    CHECK(memcmp(got, want, 3 * 18) == 0 && memcmp(got + 4 * 18, want + 4 * 18, 4 * 18) == 0);
    CHECK(inf_quantize_rows_imatrix(GGTK_TENSOR_Q4_0, x, got, 1, 256, none_w) == 0);
    CHECK(inf_quantize_rows_imatrix(GGTK_TENSOR_Q8_0, x, got, 1, 256, w) == 0);
}

/* Quantize and dequantize Gaussian rows: the error relative to the row's RMS stays below a
 * bound per type (a wrong packing of codes or scales breaks it by far). Needs the K-quant
 * dequantizers. */
TEST(test_kquant_round_trip_error_is_bounded)
{
    static const struct {
        ggtk_tensor_type type;
        double max_rel_rms;
    } bounds[] = {
        {GGTK_TENSOR_Q2_K, 0.45}, {GGTK_TENSOR_Q3_K, 0.25}, {GGTK_TENSOR_Q4_K, 0.12},
        {GGTK_TENSOR_Q5_K, 0.06}, {GGTK_TENSOR_Q6_K, 0.03}, {GGTK_TENSOR_Q8_K, 0.01},
    };
    enum { N = 256 * 64 };
    float *x = malloc(N * sizeof *x), *back = malloc(N * sizeof *back), *w = malloc(N * 4);
    uint8_t *q = malloc(N * 2);
    CHECK(x && back && q && w);
    uint64_t s = 17;
    for (int i = 0; i < N; i++) {
        double u = ((double)(quant_data_next(&s) >> 11) + 0.5) * 0x1p-53;
        double v = (double)(quant_data_next(&s) >> 11) * 0x1p-53;
        x[i] = (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
    }
    imatrix_fill(w, 256 * 8, IMATRIX_POSITIVE, 3);
    for (size_t t = 0; t < sizeof bounds / sizeof bounds[0]; t++) {
        const inf_quant_kernels *k = inf_quant_kernels_get(bounds[t].type);
        if (!k->to_float)
            SKIP("no %s dequantizer in this build", ggtk_tensor_type_info_get(bounds[t].type)->name);
        for (int with = 0; with < 2; with++) {
            CHECK(inf_quantize_rows_imatrix(bounds[t].type, x, q, 8, 256 * 8, with ? w : NULL) == 0);
            k->to_float(q, back, N);
            double err = 0, ref = 0;
            for (int i = 0; i < N; i++)
                err += ((double)back[i] - x[i]) * ((double)back[i] - x[i]), ref += (double)x[i] * x[i];
            double rel = sqrt(err / ref);
            CHECK_MSG(rel < bounds[t].max_rel_rms, "%s %s imatrix: relative RMS error %.4f",
                      ggtk_tensor_type_info_get(bounds[t].type)->name, with ? "with" : "without", rel);
        }
    }
    free(x), free(back), free(q), free(w);
}
