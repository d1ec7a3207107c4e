/* cuda_score_absent.c - backend/cuda/logits_score.h's functions in a build without CUDA (plain
 * `make`), as cuda_absent.c is for the public ones: no session keeps its logits on a device there,
 * so they only answer that the build has no device code. Replaced by backend/cuda/logits_score.cu
 * in `make CUDA=1` and `make CUDA_EMU=1` (cuda.mk). */
#include <string.h>

#include "engine/backend/cuda/logits_score.h"

ggtk_status cuda_score_rows(inf_backend *backend, const cuda_score_rows_job *job,
                            cuda_row_score *out, ggtk_error *err)
{
    (void)backend;
    (void)out;
    return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                          "scoring %d rows on a device: built without CUDA: rebuild with make "
                          "CUDA=1", job->n_rows);
}

void cuda_score_row_reference(const float *logits, int32_t n_vocab, int32_t target,
                              const uint16_t *base_row, const int32_t *ids, const float *log_p,
                              int32_t n_entries, cuda_row_score *out)
{
    (void)logits, (void)n_vocab, (void)target, (void)base_row, (void)ids, (void)log_p;
    (void)n_entries;
    memset(out, 0, sizeof *out);
}
