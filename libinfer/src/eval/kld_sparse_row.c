/* kld_sparse_row.c - the storage of a compact base row and the 1-2 byte code of an entry's
 * log-probability (kld_sparse.h): what the compact file's reader and writer need, apart from
 * choosing entries and scoring, which run on the CPU kernels (kld_sparse.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kld_sparse.h"

bool sparse_row_reserve(sparse_row *row, int32_t n)
{
    if (n <= row->capacity)
        return true;
    inf_token *ids = realloc(row->ids, (size_t)n * sizeof *ids);
    if (ids)
        row->ids = ids;
    float *log_p = realloc(row->log_p, (size_t)n * sizeof *log_p);
    if (log_p)
        row->log_p = log_p;
    if (!ids || !log_p)
        return false;
    row->capacity = n;
    return true;
}

void sparse_row_free(sparse_row *row)
{
    free(row->ids);
    free(row->log_p);
    memset(row, 0, sizeof *row);
}

uint16_t sparse_code(float log_p)
{
    const float v = log_p < 0 ? -log_p : 0.0f;
    const long c = lroundf(v * SPARSE_HEAD_STEPS);
    if (c <= 0x7fff)
        return (uint16_t)(0x8000 | c);
    /* A tail code stands for the middle of its step. */
    const long t = (long)((v - SPARSE_HEAD) * SPARSE_TAIL_STEPS);
    return (uint16_t)(t < 0 ? 0 : t > 0x7f ? 0x7f : t);
}

float sparse_code_value(uint16_t code)
{
    if (code >= 0x8000)
        return -(float)(code & 0x7fff) / SPARSE_HEAD_STEPS;
    return -(SPARSE_HEAD + ((float)code + 0.5f) / SPARSE_TAIL_STEPS);
}
