/* logits_score_device.c - the device implementation of logits_score.h: the group's base goes up
 * (llama rows as they are, compact rows as flat entry arrays), the CUDA kernel scores the rows
 * where the session left them (engine/backend/cuda/logits_score.cu), and each row's numbers are
 * finished into statistics by score_finish_row(), as the CPU scorers would. */
#include <stdlib.h>
#include <string.h>

#include "logits_score.h"
#include "model/session_logits.h"

/* A compact group's entries as one flat array each, and the first entry of each row. */
typedef struct flat_entries {
    int32_t *begin; /* n_rows + 1 */
    int32_t *ids;
    float *log_p;
} flat_entries;

static void flat_entries_free(flat_entries *f)
{
    free(f->begin);
    free(f->ids);
    free(f->log_p);
}

static bool flatten(const score_job *job, flat_entries *f)
{
    f->begin = malloc(((size_t)job->n_rows + 1) * sizeof *f->begin);
    if (!f->begin)
        return false;
    size_t n = 0;
    for (int32_t r = 0; r < job->n_rows; r++) {
        f->begin[r] = (int32_t)n;
        n += (size_t)job->sparse_rows[r].n;
    }
    f->begin[job->n_rows] = (int32_t)n;
    f->ids = malloc((n ? n : 1) * sizeof *f->ids);
    f->log_p = malloc((n ? n : 1) * sizeof *f->log_p);
    if (!f->ids || !f->log_p)
        return false;
    for (int32_t r = 0; r < job->n_rows; r++) {
        const sparse_row *row = &job->sparse_rows[r];
        memcpy(f->ids + f->begin[r], row->ids, (size_t)row->n * sizeof *f->ids);
        memcpy(f->log_p + f->begin[r], row->log_p, (size_t)row->n * sizeof *f->log_p);
    }
    return true;
}

/* A compact row's most likely token as sparse_kld_token() finds it: the first entry with the
 * largest log-probability. */
static int32_t sparse_top(const sparse_row *row)
{
    int32_t top = 0;
    for (int32_t e = 1; e < row->n; e++)
        if (row->log_p[e] > row->log_p[top])
            top = e;
    return row->ids[top];
}

ggtk_status score_rows_device(const inf_session *session, int32_t first_row, const score_job *job,
                              ggtk_error *err)
{
    int32_t n_rows = 0;
    const float *logits = session_device_logits(session, &n_rows);
    if (!logits || first_row < 0 || first_row + job->n_rows > n_rows)
        return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                              "scoring rows %d..%d on the device: the session holds %d there",
                              first_row, first_row + job->n_rows - 1, logits ? n_rows : 0);
    flat_entries flat = {0};
    cuda_row_score *scores = malloc((size_t)job->n_rows * sizeof *scores);
    if (!scores || (job->sparse_rows && !flatten(job, &flat))) {
        free(scores);
        flat_entries_free(&flat);
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    }
    const cuda_score_rows_job device_job = {
        .logits = logits + (size_t)first_row * (size_t)job->n_vocab,
        .n_vocab = job->n_vocab, .n_rows = job->n_rows, .targets = job->targets,
        .llama_rows = job->llama_rows, .row_words = inf_logprob_row_words(job->n_vocab),
        .entry_begin = flat.begin, .entry_ids = flat.ids, .entry_log_p = flat.log_p};
    ggtk_status st = cuda_score_rows(session_logits_backend(session), &device_job, scores, err);
    for (int32_t r = 0; st == GGTK_OK && r < job->n_rows; r++) {
        if (job->sparse_rows)
            scores[r].top_base = sparse_top(&job->sparse_rows[r]);
        score_finish_row(job, r, &scores[r]);
    }
    free(scores);
    flat_entries_free(&flat);
    return st;
}
