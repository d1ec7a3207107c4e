/* The K-quant quantizers and every importance-weighted quantizer against ggml itself (REF_BIN,
 * see ggml_ref.h): reference quantizers against ggml's from_float_ref, weighted ones against
 * ggml_quantize_chunk with an imatrix, byte for byte, except the blocks where ggml's weighted
 * scales come out non-finite: those must be ours' counted fallbacks, and finite. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_quant.h>
#include "ggml_ref.h"
#include "kquant_golden.h"
#include "quant_data.h"
#include "test.h"

/* A quantized type and where its fp16 scales sit in a block (-1: none). */
typedef struct scale_fields {
    ggtk_tensor_type type;
    int d_offset, min_offset;
} scale_fields;

static const scale_fields weighted_types[] = {
    {GGTK_TENSOR_Q2_K, 80, 82}, {GGTK_TENSOR_Q3_K, 108, -1}, {GGTK_TENSOR_Q4_K, 0, 2},
    {GGTK_TENSOR_Q5_K, 0, 2},   {GGTK_TENSOR_Q6_K, 208, -1}, {GGTK_TENSOR_Q4_0, 0, -1},
    {GGTK_TENSOR_Q4_1, 0, 2},   {GGTK_TENSOR_Q5_0, 0, -1},   {GGTK_TENSOR_Q5_1, 0, 2},
    {GGTK_TENSOR_Q8_0, 0, -1},
};
#define N_WEIGHTED (sizeof weighted_types / sizeof weighted_types[0])

static const ggtk_tensor_type k_types[] = {GGTK_TENSOR_Q2_K, GGTK_TENSOR_Q3_K, GGTK_TENSOR_Q4_K,
                                           GGTK_TENSOR_Q5_K, GGTK_TENSOR_Q6_K, GGTK_TENSOR_Q8_K};

static bool half_finite(const uint8_t *block, int offset)
{
    uint16_t h = 0;
    if (offset >= 0)
        memcpy(&h, block + offset, sizeof h);
    return (h & 0x7C00) != 0x7C00;
}

static bool scales_finite(const scale_fields *f, const uint8_t *block)
{
    return half_finite(block, f->d_offset) && half_finite(block, f->min_offset);
}

static const char *type_name(ggtk_tensor_type type)
{
    return ggtk_tensor_type_info_get(type)->name;
}

TEST(test_kquant_reference_quantizers_match_ggml)
{
    const char *why = NULL;
    ggml_get_traits_fn traits;
    *(void **)&traits = ggml_ref_symbol("ggml_get_type_traits", &why);
    if (!traits)
        SKIP("%s", why);
    const int64_t n = 256 * 17 * 24;
    float *x = malloc((size_t)n * sizeof *x);
    uint8_t *want = malloc((size_t)n * 2), *got = malloc((size_t)n * 2);
    CHECK(x && want && got);
    quant_data_fill_k(x, n, 21, QUANT_DATA_ALL);
    for (size_t t = 0; t < sizeof k_types / sizeof k_types[0]; t++) {
        const ggml_traits_prefix *ref = traits((int)k_types[t]);
        void (*from_float_ref)(const float *, void *, int64_t) = ref ? ref->from_float_ref : NULL;
        if (k_types[t] == GGTK_TENSOR_Q8_K) /* not in ggml's type traits, but exported */
            *(void **)&from_float_ref = ggml_ref_symbol("quantize_row_q8_K_ref", &why);
        CHECK_MSG(from_float_ref, "ggml has no %s quantizer", type_name(k_types[t]));
        const size_t bb = ggtk_tensor_type_info_get(k_types[t])->block_bytes;
        memset(want, 0, (size_t)(n / 256) * bb); /* ggml's Q8_K skips bsums of zero blocks */
        from_float_ref(x, want, n);
        for (int level = 0; level <= (int)inf_simd_detect(); level++) {
            memset(got, 0xCD, (size_t)(n / 256) * bb);
            inf_quant_kernels_at(k_types[t], (inf_simd_level)level)->from_float(x, got, n);
            int64_t bad = 0, first = -1;
            for (int64_t b = 0; b < n / 256; b++)
                if (memcmp(want + b * bb, got + b * bb, bb) != 0 && bad++ == 0)
                    first = b;
            CHECK_MSG(bad == 0, "%s %s: %lld of %lld blocks differ from ggml, first %lld",
                      type_name(k_types[t]), inf_simd_level_name((inf_simd_level)level),
                      (long long)bad, (long long)(n / 256), (long long)first);
        }
    }
    free(x), free(want), free(got);
}

TEST(test_imatrix_quantizers_match_ggml_quantize_chunk)
{
    const char *why = NULL;
    ggml_quantize_chunk_fn chunk;
    *(void **)&chunk = ggml_ref_symbol("ggml_quantize_chunk", &why);
    if (!chunk)
        SKIP("%s", why);
    const int64_t rows = 12, cols = 256 * 8, n = rows * cols;
    float *x = malloc((size_t)n * sizeof *x), *imatrix = malloc((size_t)cols * sizeof *imatrix);
    uint8_t *want = malloc((size_t)n * 2), *got = malloc((size_t)n * 2);
    uint8_t *plain = malloc((size_t)n * 2);
    CHECK(x && imatrix && want && got && plain);
    quant_data_fill_rows(x, rows, cols, 5);
    int64_t rescued_total = 0;
    for (int kind = 0; kind < IMATRIX_KINDS; kind++) {
        imatrix_fill(imatrix, cols, (imatrix_kind)kind, 100 + (uint64_t)kind);
        for (size_t t = 0; t < N_WEIGHTED; t++) {
            const scale_fields *f = &weighted_types[t];
            const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(f->type);
            const int64_t blocks = n / info->block_size;
            chunk((int)f->type, x, want, 0, rows, cols, imatrix);
            int64_t fallbacks = inf_quantize_rows_imatrix(f->type, x, got, rows, cols, imatrix);
            CHECK(inf_quantize_rows_imatrix(f->type, x, plain, rows, cols, NULL) == 0);
            const bool weighted = inf_quant_kernels_get(f->type)->from_float_imatrix != NULL;
            int64_t ggml_nonfinite = 0, rescued = 0, wrong = 0, first = -1;
            for (int64_t b = 0; b < blocks; b++) {
                const size_t at = (size_t)b * info->block_bytes;
                /* Where ggml's scales are not finite ours are the reference search's. */
                const uint8_t *expect =
                    !weighted || scales_finite(f, want + at) ? want + at : plain + at;
                ggml_nonfinite += expect != want + at;
                rescued += expect != want + at && scales_finite(f, got + at);
                if (memcmp(expect, got + at, info->block_bytes) != 0 && wrong++ == 0)
                    first = b;
            }
            CHECK_MSG(wrong == 0, "%s imatrix %s: %lld blocks wrong, first %lld", info->name,
                      imatrix_kind_name((imatrix_kind)kind), (long long)wrong, (long long)first);
            CHECK_MSG(fallbacks == ggml_nonfinite, "%s imatrix %s: %lld fallbacks, ggml %lld non-finite",
                      info->name, imatrix_kind_name((imatrix_kind)kind), (long long)fallbacks,
                      (long long)ggml_nonfinite);
            rescued_total += rescued;
        }
    }
    /* The fallback is needed: some blocks ggml writes with NaN or Inf scales are finite here
     * (NaN and tiny imatrix entries; the other non-finite blocks hold values beyond the type's
     * fp16 range, which the reference search cannot represent either). */
    CHECK_MSG(rescued_total > 0, "no block needed the fallback");
    free(x), free(imatrix), free(want), free(got), free(plain);
}

/* Where ggml's fp16 scales of the block at `at` sit, for the golden types. */
static const scale_fields *fields_of(ggtk_tensor_type type)
{
    for (size_t t = 0; t < N_WEIGHTED; t++)
        if (weighted_types[t].type == type)
            return &weighted_types[t];
    return NULL;
}

/* The golden hashes (kquant_golden_table.inc) are ggml's bytes: the reference quantizers'
 * output, and ggml_quantize_chunk's with an imatrix where its non-finite blocks are replaced by
 * the reference search's (our counted fallbacks). */
TEST(test_kquant_golden_hashes_are_ggml_bytes)
{
    const char *why = NULL;
    ggml_quantize_chunk_fn chunk;
    *(void **)&chunk = ggml_ref_symbol("ggml_quantize_chunk", &why);
    void (*q8_k_ref)(const float *, void *, int64_t);
    *(void **)&q8_k_ref = ggml_ref_symbol("quantize_row_q8_K_ref", &why);
    if (!chunk || !q8_k_ref)
        SKIP("%s", why);
    const int64_t n = (int64_t)GOLDEN_ROWS * GOLDEN_COLS;
    float *x = malloc((size_t)n * sizeof *x), *imatrix = malloc(GOLDEN_COLS * sizeof *imatrix);
    uint8_t *want = malloc((size_t)n * 2), *plain = malloc((size_t)n * 2);
    CHECK(x && imatrix && want && plain);
    for (int i = 0; i < kquant_golden_count; i++) {
        const kquant_golden *g = &kquant_goldens[i];
        const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(g->type);
        const size_t bytes = (size_t)(n / info->block_size) * info->block_bytes;
        const bool weighted = g->imatrix != IMATRIX_NONE;
        golden_input(x, imatrix, g->imatrix);
        memset(want, 0, bytes);
        if (g->type == GGTK_TENSOR_Q8_K)
            q8_k_ref(x, want, n);
        else
            chunk((int)g->type, x, want, 0, GOLDEN_ROWS, GOLDEN_COLS, weighted ? imatrix : NULL);
        CHECK(inf_quantize_rows_imatrix(g->type, x, plain, GOLDEN_ROWS, GOLDEN_COLS, NULL) == 0);
        const scale_fields *f = fields_of(g->type);
        for (int64_t b = 0; weighted && b < n / info->block_size; b++)
            if (!scales_finite(f, want + b * info->block_bytes))
                memcpy(want + b * info->block_bytes, plain + b * info->block_bytes,
                       info->block_bytes);
        uint64_t h = golden_hash(want, bytes);
        CHECK_MSG(h == g->hash, "%s imatrix %s: ggml's bytes hash to 0x%016llx, table 0x%016llx",
                  info->name, imatrix_kind_name(g->imatrix), (unsigned long long)h,
                  (unsigned long long)g->hash);
    }
    free(x), free(imatrix), free(want), free(plain);
}
