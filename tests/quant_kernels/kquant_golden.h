/* kquant_golden.h - fixed inputs for the searching quantizers (K types and the importance-
 * weighted legacy types) and a 64-bit FNV-1a hash of the bytes they must produce, recorded on x86-64 from
 * ggml's own output (see kquant_golden.c). Shared by the x86 tests and the arm64 cross check,
 * so that every CPU is held to the same bytes. */
#ifndef KQUANT_GOLDEN_H
#define KQUANT_GOLDEN_H

#include <stdint.h>

#include <ggtk/inf_quant.h>

/* Importance matrices of the kinds the tests use; IMATRIX_NONE means no imatrix. */
typedef enum imatrix_kind {
    IMATRIX_NONE = -1,
    IMATRIX_POSITIVE,
    IMATRIX_ZEROS,
    IMATRIX_TINY,
    IMATRIX_NAN,
    IMATRIX_KINDS
} imatrix_kind;

/* Shape of the golden input: rows x cols floats. */
#define GOLDEN_ROWS 4
#define GOLDEN_COLS (256 * 8)

/* One recorded case. */
typedef struct kquant_golden {
    ggtk_tensor_type type;
    imatrix_kind imatrix;
    uint64_t hash;
} kquant_golden;

extern const kquant_golden kquant_goldens[];
extern const int kquant_golden_count;

/* Printable name of an imatrix kind. */
const char *imatrix_kind_name(imatrix_kind kind);

/* Fill w[0..n) with an importance matrix of `kind`: positive (0.01 .. 5), with zeros (30%
 * zeros, 1e-30 and denormal entries, every fourth super-block all zero), tiny (1e-20 down to
 * denormals) or with NaN entries (2%). */
void imatrix_fill(float *w, int64_t n, imatrix_kind kind, uint64_t seed);

/* The golden input matrix (GOLDEN_ROWS x GOLDEN_COLS) and the imatrix of `kind` for it. */
void golden_input(float *x, float *imatrix, imatrix_kind kind);

/* 64-bit FNV-1a of n bytes (self-contained, so the arm64 cross build needs no library). */
uint64_t golden_hash(const void *p, size_t n);

/* Quantize every golden case with inf_quantize_rows_imatrix at the active SIMD level and
 * count the cases whose bytes differ from the recorded hash; each mismatch is printed to
 * stderr with the hash found. */
int golden_mismatches(void);

#endif
