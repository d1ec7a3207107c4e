/* batch.h - cutting a plan's tensors into batches of rows (batch.c); not public.
 *
 * A batch is a run of consecutive rows, possibly from several small tensors, holding about
 * BATCH_ELEMENTS values: all threads work on one batch at a time and it is written in one go, so
 * small tensors do not each pay for a parallel region, and large tensors are cut so that the
 * output buffer stays small. */
#ifndef INF_QUANTIZE_BATCH_H
#define INF_QUANTIZE_BATCH_H

#include <ggtk/inf_quantize_file.h>

enum {
    BATCH_ELEMENTS = 2 << 20, /* values per batch (8 MiB as F32) unless one row is longer */
    BATCH_MAX_ROWS = 1 << 16, /* rows per batch: bounds the per-row sums */
    BATCH_MAX_ITEMS = 256,    /* tensor pieces per batch */
};

/* One tensor as the run streams it; its sums grow batch by batch. */
typedef struct tensor_job {
    const inf_quantize_plan_tensor *entry;
    const uint8_t *data;      /* the input tensor in the map */
    int part;                 /* the input part holding it (0 unless the input is split) */
    int out_file;             /* the output file it goes to (0 unless the output is split) */
    int64_t ncols;
    int64_t nrows;
    int64_t next_row;         /* first row not yet in a batch */
    uint64_t in_row_bytes;
    uint64_t out_row_bytes;
    bool readable;            /* the input type converts to F32 (else it is copied unchecked) */
    bool convert;             /* the type changes */
    double sum_squares;
    double sum_diff;
} tensor_job;

/* Rows [first_row, first_row + n_rows) of one tensor inside a batch. */
typedef struct batch_item {
    tensor_job *job;
    int64_t first_row;
    int64_t n_rows;
    int64_t batch_row;        /* index of its first row among the batch's rows */
    uint64_t batch_element;   /* index of its first value among the batch's values */
    uint64_t out_offset;      /* where its converted rows go in the output buffer */
} batch_item;

typedef struct batch {
    batch_item items[BATCH_MAX_ITEMS];
    int n_items;
    int64_t n_rows;
    uint64_t n_elements;
    uint64_t out_bytes;
} batch;

/* Where the next batch starts: a tensor index (its job's next_row says the row). */
typedef struct batch_cursor {
    tensor_job *jobs;
    int64_t n_jobs;
    int64_t next_job;
} batch_cursor;

/* Fill `b` with the rows that follow the cursor; returns false when every row was taken. */
bool batch_next(batch_cursor *cursor, batch *b);

/* True when `item` holds its tensor's last rows. */
bool batch_item_ends_tensor(const batch_item *item);

#endif
