/* batch.c - takes rows from the plan's tensors, in file order, into batches (see batch.h). */
#include "batch.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Append up to the batch's remaining room of `job`'s next rows; returns false when the batch has
 * no room left for even one of them. */
static bool take_rows(batch *b, tensor_job *job)
{
    uint64_t room = b->n_elements < BATCH_ELEMENTS ? BATCH_ELEMENTS - b->n_elements : 0;
    int64_t rows = (int64_t)(room / (uint64_t)job->ncols);
    if (rows == 0 && b->n_items == 0)
        rows = 1; /* a row longer than a batch makes a batch of its own */
    rows = min64(rows, min64(job->nrows - job->next_row, BATCH_MAX_ROWS - b->n_rows));
    if (rows <= 0 || b->n_items == BATCH_MAX_ITEMS)
        return false;
    batch_item *item = &b->items[b->n_items++];
    item->job = job;
    item->first_row = job->next_row;
    item->n_rows = rows;
    item->batch_row = b->n_rows;
    item->batch_element = b->n_elements;
    item->out_offset = b->out_bytes;
    job->next_row += rows;
    b->n_rows += rows;
    b->n_elements += (uint64_t)rows * (uint64_t)job->ncols;
    if (job->convert)
        b->out_bytes += (uint64_t)rows * job->out_row_bytes;
    return true;
}

bool batch_next(batch_cursor *cursor, batch *b)
{
    b->n_items = 0;
    b->n_rows = 0;
    b->n_elements = 0;
    b->out_bytes = 0;
    while (cursor->next_job < cursor->n_jobs) {
        tensor_job *job = &cursor->jobs[cursor->next_job];
        if (job->next_row == job->nrows) {
            cursor->next_job++;
            continue;
        }
        if (!take_rows(b, job))
            break;
    }
    return b->n_items > 0;
}

bool batch_item_ends_tensor(const batch_item *item)
{
    return item->first_row + item->n_rows == item->job->nrows;
}
