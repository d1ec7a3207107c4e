/* kquant_golden.c - golden inputs and hashes of the searching quantizers (see kquant_golden.h).
 *
 * How the hashes were recorded: on x86-64 with REF_BIN set, test_kquant_ggml.c checks that
 * ggml's own bytes for these inputs (quantize_row_*_ref without an imatrix,
 * ggml_quantize_chunk with one, its non-finite blocks replaced by our counted fallback blocks)
 * hash to exactly these values. Without REF_BIN they still hold every build and CPU to ggml's
 * bytes. */
#include "kquant_golden.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "quant_data.h"

const kquant_golden kquant_goldens[] = {
#include "kquant_golden_table.inc"
};
const int kquant_golden_count = (int)(sizeof kquant_goldens / sizeof kquant_goldens[0]);

const char *imatrix_kind_name(imatrix_kind kind)
{
    static const char *const names[] = {"none", "positive", "zeros", "tiny", "NaN"};
    return kind >= IMATRIX_NONE && kind < IMATRIX_KINDS ? names[kind + 1] : "?";
}

void imatrix_fill(float *w, int64_t n, imatrix_kind kind, uint64_t seed)
{
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        double u = (double)(quant_data_next(&s) >> 11) * 0x1p-53;
        w[i] = (float)(0.01 + 5.0 * u * u);
        if (kind == IMATRIX_ZEROS) {
            int r = (int)(quant_data_next(&s) % 10);
            w[i] = r < 3 ? 0.0f : r == 3 ? 1e-30f : r == 4 ? 1e-42f : w[i];
            if (i / 256 % 4 == 1)
                w[i] = 0.0f;
        }
        if (kind == IMATRIX_TINY)
            w[i] = ldexpf(w[i], -66 - (int)(quant_data_next(&s) % 84));
        if (kind == IMATRIX_NAN && quant_data_next(&s) % 50 == 0)
            w[i] = NAN;
    }
}

void golden_input(float *x, float *imatrix, imatrix_kind kind)
{
    quant_data_fill_rows(x, GOLDEN_ROWS, GOLDEN_COLS, 77);
    if (kind != IMATRIX_NONE)
        imatrix_fill(imatrix, GOLDEN_COLS, kind, 300 + (uint64_t)kind);
}

uint64_t golden_hash(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001B3ull;
    return h;
}

int golden_mismatches(void)
{
    const int64_t n = (int64_t)GOLDEN_ROWS * GOLDEN_COLS;
    float *x = malloc((size_t)n * sizeof *x), *imatrix = malloc(GOLDEN_COLS * sizeof *imatrix);
    uint8_t *q = malloc((size_t)n * 2);
    int bad = x && imatrix && q ? 0 : kquant_golden_count;
    for (int i = 0; i < kquant_golden_count && x && imatrix && q; i++) {
        const kquant_golden *g = &kquant_goldens[i];
        uint64_t bytes = 0;
        ggtk_tensor_type_bytes(g->type, (uint64_t)n, &bytes);
        golden_input(x, imatrix, g->imatrix);
        inf_quantize_rows_imatrix(g->type, x, q, GOLDEN_ROWS, GOLDEN_COLS,
                                  g->imatrix == IMATRIX_NONE ? NULL : imatrix);
        uint64_t h = golden_hash(q, (size_t)bytes);
        if (h != g->hash) {
            fprintf(stderr, "golden %s imatrix %s: hash 0x%016llx, recorded 0x%016llx\n",
                    ggtk_tensor_type_info_get(g->type)->name, imatrix_kind_name(g->imatrix),
                    (unsigned long long)h, (unsigned long long)g->hash);
            bad++;
        }
    }
    free(x), free(imatrix), free(q);
    return bad;
}
