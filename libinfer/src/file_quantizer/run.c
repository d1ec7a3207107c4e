/* run.c - executes a plan: the tensors' rows go from the mapped input through the kernels to the
 * streaming writer (output.h: one file, or the parts of a split output), one batch (batch.h) at a
 * time. Within a batch threads take units of rows and,
 * row by row while it is hot in cache, reads it as F32, sums its squares (which
 * also detects NaN/Inf), converts it (with its matrix's importance weights when the plan has an
 * imatrix entry for the tensor) and reads the result back for the error statistics. The
 * per-row sums are then folded in row order, so results do not depend on the thread count. */
#include "batch.h"
#include "imatrix_use.h"
#include "output.h"
#include "quantize_internal.h"
#include "source.h"
#include "stats.h"

#include <ggtk/inf_quant.h>

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Batches with fewer values than PARALLEL_MIN_ELEMENTS run on one thread: a parallel region
 * costs more. Threads take rows in units of UNIT_ELEMENTS values (a unit holds the rows that
 * start inside it). */
enum { PARALLEL_MIN_ELEMENTS = 1 << 16, UNIT_ELEMENTS = 1 << 15 };

/* Memory reused by every batch. */
typedef struct run_buffers {
    uint8_t *out;        /* a batch of converted rows */
    float *scratch;      /* two rows per thread: the input as F32, the output read back */
    double *sum_squares; /* per row of the batch */
    double *sum_diff;    /* per row of the batch */
    int64_t *fallbacks;  /* per row of the batch: blocks the weighted search left unweighted */
    int64_t row_floats;  /* floats per scratch row: the longest row of the plan */
} run_buffers;

typedef struct run_state {
    inf_quantize_plan *plan;
    const inf_quantize_callbacks *callbacks;
    ggtk_error *err;
    quantize_output output;
    quantize_source source;
    tensor_job *jobs;
    float **weights;     /* per job: importance weights while its rows are converted, or NULL */
    int64_t *fallbacks;  /* per job: weighted-search fallbacks so far */
    run_buffers buf;
    int n_threads;
    uint64_t bytes_done;
} run_state;

/* The output file tensor `index` goes to: its part when the output is split, else 0. */
static int output_file_of(const inf_quantize_plan *plan, int64_t index)
{
    int file = 0;
    for (; file < plan->n_output_parts; file++) {
        int64_t in_part = ggtk_writer_tensor_count(plan->output_parts[file]);
        if (index < in_part)
            break;
        index -= in_part;
    }
    return file;
}

static ggtk_status init_jobs(run_state *run)
{
    inf_quantize_plan *plan = run->plan;
    run->jobs = calloc((size_t)plan->n_tensors + 1, sizeof *run->jobs);
    run->weights = calloc((size_t)plan->n_tensors + 1, sizeof *run->weights);
    run->fallbacks = calloc((size_t)plan->n_tensors + 1, sizeof *run->fallbacks);
    if (!run->jobs || !run->weights || !run->fallbacks)
        return ggtk_error_set(run->err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    for (int64_t i = 0; i < plan->n_tensors; i++) {
        const inf_quantize_plan_tensor *entry = &plan->tensors[i];
        const ggtk_tensor_info *info = entry->info;
        tensor_job *job = &run->jobs[i];
        job->entry = entry;
        job->ncols = (int64_t)info->ne[0];
        job->nrows = (int64_t)(ggtk_tensor_elements(info) / info->ne[0]);
        /* Both sizes were validated when planned: whole blocks, no overflow. */
        ggtk_tensor_type_bytes(info->type, info->ne[0], &job->in_row_bytes);
        ggtk_tensor_type_bytes(entry->new_type, info->ne[0], &job->out_row_bytes);
        job->out_file = output_file_of(plan, i);
        job->readable = inf_type_can_dequantize(info->type);
        job->convert = entry->new_type != info->type;
        ggtk_split_tensor(plan->input_parts, i, &job->part);
        job->data = quantize_source_tensor(&run->source, job->part, info);
        if (!job->data)
            return ggtk_error_set(run->err, GGTK_ERR_LAYOUT, GGTK_NO_OFFSET,
                                  "%s: tensor '%s' data lies outside the file",
                                  ggtk_path(ggtk_split_part(plan->input_parts, job->part)),
                                  info->name);
        if (job->ncols > run->buf.row_floats)
            run->buf.row_floats = job->ncols;
    }
    return GGTK_OK;
}

static ggtk_status alloc_buffers(run_state *run)
{
    /* A batch holds BATCH_ELEMENTS values or one longer row; no type takes over 4 bytes each. */
    uint64_t elements = (uint64_t)run->buf.row_floats > BATCH_ELEMENTS
                            ? (uint64_t)run->buf.row_floats : BATCH_ELEMENTS;
    run->buf.out = malloc(elements * sizeof(float));
    run->buf.scratch = malloc((size_t)run->buf.row_floats * 2 * run->n_threads * sizeof(float));
    run->buf.sum_squares = malloc(BATCH_MAX_ROWS * sizeof(double));
    run->buf.sum_diff = malloc(BATCH_MAX_ROWS * sizeof(double));
    run->buf.fallbacks = malloc(BATCH_MAX_ROWS * sizeof(int64_t));
    if (!run->buf.out || !run->buf.scratch || !run->buf.sum_squares || !run->buf.sum_diff ||
        !run->buf.fallbacks)
        return ggtk_error_set(run->err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    return GGTK_OK;
}

static void free_buffers(run_buffers *buf)
{
    free(buf->out);
    free(buf->scratch);
    free(buf->sum_squares);
    free(buf->sum_diff);
    free(buf->fallbacks);
}

/* Row `row` of a job as F32: in place when the input is aligned F32, else converted into
 * `scratch`. NULL when the type has no F32 form. */
static const float *row_as_f32(const tensor_job *job, int64_t row, float *scratch)
{
    const uint8_t *src = job->data + (uint64_t)row * job->in_row_bytes;
    ggtk_tensor_type type = job->entry->info->type;
    if (type == GGTK_TENSOR_F32 && (uintptr_t)src % sizeof(float) == 0)
        return (const float *)src;
    if (type == GGTK_TENSOR_F32) {
        memcpy(scratch, src, (size_t)job->ncols * sizeof(float));
        return scratch;
    }
    if (!job->readable || !inf_dequantize_row(type, src, scratch, job->ncols))
        return NULL;
    return scratch;
}

/* Convert row r of a batch item, with the importance weights of its matrix when it has some. */
static bool convert_row(run_state *run, const batch_item *item, int64_t r, const float *x,
                        uint8_t *q)
{
    const tensor_job *job = item->job;
    const float *weights = run->weights[job - run->jobs];
    if (!weights)
        return inf_quantize_row(job->entry->new_type, x, q, job->ncols);
    const ggtk_tensor_info *info = job->entry->info;
    const int64_t matrix = (int64_t)(((uint64_t)(item->first_row + r) / info->ne[1]) % info->ne[2]);
    int64_t fallbacks = inf_quantize_rows_imatrix(job->entry->new_type, x, q, 1, job->ncols,
                                                  weights + matrix * job->ncols);
    run->buf.fallbacks[item->batch_row + r] = fallbacks;
    return fallbacks >= 0;
}

/* Row r of a batch item: sums and conversion. `scratch` holds two rows. */
static bool process_row(run_state *run, const batch_item *item, int64_t r, float *scratch)
{
    const tensor_job *job = item->job;
    int64_t slot = item->batch_row + r;
    run->buf.sum_squares[slot] = 0.0;
    run->buf.sum_diff[slot] = 0.0;
    run->buf.fallbacks[slot] = 0;
    const float *x = row_as_f32(job, item->first_row + r, scratch);
    if (!x)
        return true; /* copied unchecked: integer types */
    run->buf.sum_squares[slot] = quantize_sum_squares(x, job->ncols);
    if (!job->convert)
        return true;
    ggtk_tensor_type new_type = job->entry->new_type;
    uint8_t *q = run->buf.out + item->out_offset + (uint64_t)r * job->out_row_bytes;
    if (!convert_row(run, item, r, x, q))
        return false;
    if (new_type == GGTK_TENSOR_F32)
        return true; /* an exact copy */
    float *back = scratch + run->buf.row_floats;
    if (!inf_dequantize_row(new_type, q, back, job->ncols))
        return false;
    run->buf.sum_diff[slot] = quantize_sum_squared_diff(x, back, job->ncols);
    return true;
}

/* The rows of `b` whose first value lies in [lo, hi), in batch order. */
static bool process_share(run_state *run, const batch *b, uint64_t lo, uint64_t hi, float *scratch)
{
    bool ok = true;
    for (int i = 0; ok && i < b->n_items; i++) {
        const batch_item *item = &b->items[i];
        uint64_t ncols = (uint64_t)item->job->ncols;
        uint64_t first = item->batch_element;
        uint64_t end = first + (uint64_t)item->n_rows * ncols;
        if (end <= lo || first >= hi)
            continue;
        int64_t r0 = lo > first ? (int64_t)((lo - first + ncols - 1) / ncols) : 0;
        int64_t r1 = hi < end ? (int64_t)((hi - first + ncols - 1) / ncols) : item->n_rows;
        for (int64_t r = r0; ok && r < r1; r++)
            ok = process_row(run, item, r, scratch);
    }
    return ok;
}

/* Every row of a batch. Threads take units of about UNIT_ELEMENTS values as they come free, so a
 * thread the system delays (other processes, a page fault) holds up little work. */
static bool process_batch(run_state *run, const batch *b)
{
    int64_t n_units = (int64_t)((b->n_elements + UNIT_ELEMENTS - 1) / UNIT_ELEMENTS);
    bool ok = true;
#pragma omp parallel num_threads(run->n_threads) if (b->n_elements >= PARALLEL_MIN_ELEMENTS) \
    reduction(&& : ok)
    {
        uint64_t t = (uint64_t)omp_get_thread_num();
        float *scratch = run->buf.scratch + t * 2 * (uint64_t)run->buf.row_floats;
#pragma omp for schedule(dynamic, 1)
        for (int64_t u = 0; u < n_units; u++) {
            uint64_t lo = (uint64_t)u * UNIT_ELEMENTS, hi = lo + UNIT_ELEMENTS;
            ok = ok && process_share(run, b, lo, hi < b->n_elements ? hi : b->n_elements, scratch);
        }
    }
    return ok;
}

/* Fold an item's per-row sums into its tensor, failing on the first non-finite row. */
static ggtk_status check_item(run_state *run, const batch_item *item)
{
    tensor_job *job = item->job;
    const char *path = ggtk_path(ggtk_split_part(run->plan->input_parts, job->part));
    const char *name = job->entry->info->name;
    for (int64_t r = 0; r < item->n_rows; r++) {
        int64_t slot = item->batch_row + r, row = item->first_row + r;
        if (!isfinite(run->buf.sum_squares[slot])) {
            const float *x = row_as_f32(job, row, run->buf.scratch);
            int64_t col = quantize_first_nonfinite(x, job->ncols);
            return ggtk_error_set(run->err, GGTK_ERR_NONFINITE, GGTK_NO_OFFSET,
                                  "%s: tensor '%s' row %lld column %lld holds %s", path, name,
                                  (long long)row, (long long)col,
                                  col >= 0 && isnan(x[col]) ? "NaN" : "Inf");
        }
        if (!isfinite(run->buf.sum_diff[slot]))
            return ggtk_error_set(run->err, GGTK_ERR_NONFINITE, GGTK_NO_OFFSET,
                                  "%s: tensor '%s' row %lld: values out of the range of %s", path,
                                  name, (long long)row, quantize_type_name(job->entry->new_type));
        job->sum_squares += run->buf.sum_squares[slot];
        job->sum_diff += run->buf.sum_diff[slot];
        run->fallbacks[job - run->jobs] += run->buf.fallbacks[slot];
    }
    return GGTK_OK;
}

static ggtk_status write_item(run_state *run, const batch_item *item)
{
    const tensor_job *job = item->job;
    const uint8_t *src = job->data + (uint64_t)item->first_row * job->in_row_bytes;
    const uint8_t *src_end = src + (uint64_t)item->n_rows * job->in_row_bytes;
    const void *data = job->convert ? run->buf.out + item->out_offset : src;
    uint64_t size = (uint64_t)item->n_rows * (job->convert ? job->out_row_bytes : job->in_row_bytes);
    ggtk_status status =
        quantize_output_write(&run->output, job->out_file, data, (size_t)size, run->err);
    if (status != GGTK_OK)
        return status;
    quantize_source_release(&run->source, job->part, src_end);
    run->bytes_done += (uint64_t)(src_end - src);
    return GGTK_OK;
}

static void report_progress(run_state *run, const tensor_job *job)
{
    if (!run->callbacks || !run->callbacks->on_progress)
        return;
    inf_quantize_progress progress = {job->entry - run->plan->tensors, run->plan->n_tensors,
                                      job->entry->info->name, run->bytes_done,
                                      run->plan->data_size_before};
    run->callbacks->on_progress(&progress, run->callbacks->user);
}

/* The importance weights of the tensors whose first rows are in `b` (computed only now, so that
 * the weights of one tensor at a time are in memory). */
static ggtk_status load_weights(run_state *run, const batch *b)
{
    for (int i = 0; i < b->n_items; i++) {
        const tensor_job *job = b->items[i].job;
        if (b->items[i].first_row == 0 && job->convert &&
            !quantize_imatrix_weights(run->plan, job->entry, &run->weights[job - run->jobs]))
            return ggtk_error_set(run->err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                                  "out of memory for the importance weights of %s",
                                  job->entry->info->name);
    }
    return GGTK_OK;
}

/* A tensor's last rows are written: its statistics, and its weights are no longer needed. */
static void finish_tensor(run_state *run, const tensor_job *job, inf_quantize_tensor_stats *stats)
{
    const int64_t index = job - run->jobs;
    if (stats) {
        inf_quantize_tensor_stats *s = &stats[job->entry - run->plan->tensors];
        s->converted = job->convert;
        s->imatrix = run->weights[index] != NULL;
        s->imatrix_fallbacks = run->fallbacks[index];
        quantize_stats_finish(s, job->sum_squares, job->sum_diff,
                              ggtk_tensor_elements(job->entry->info));
    }
    free(run->weights[index]);
    run->weights[index] = NULL;
}

static ggtk_status run_batches(run_state *run, inf_quantize_tensor_stats *stats)
{
    batch_cursor cursor = {run->jobs, run->plan->n_tensors, 0};
    batch *b = malloc(sizeof *b);
    if (!b)
        return ggtk_error_set(run->err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    ggtk_status status = GGTK_OK;
    while (status == GGTK_OK && batch_next(&cursor, b)) {
        if ((status = load_weights(run, b)) != GGTK_OK)
            break;
        if (!process_batch(run, b)) {
            status = ggtk_error_set(run->err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                                    "a conversion kernel refused its arguments");
            break;
        }
        for (int i = 0; status == GGTK_OK && i < b->n_items; i++) {
            const batch_item *item = &b->items[i];
            status = check_item(run, item);
            if (status == GGTK_OK)
                status = write_item(run, item);
            if (status == GGTK_OK && batch_item_ends_tensor(item))
                finish_tensor(run, item->job, stats);
        }
        if (status == GGTK_OK)
            report_progress(run, b->items[b->n_items - 1].job);
    }
    free(b);
    return status;
}

/* No output file may be an input part (inf_quantize_check_paths() for every pair). */
static ggtk_status check_paths(const run_state *run)
{
    const ggtk_split *input = run->plan->input_parts;
    ggtk_status status = GGTK_OK;
    for (int p = 0; p < ggtk_split_part_count(input) && status == GGTK_OK; p++)
        for (int f = 0; f < run->output.n_files && status == GGTK_OK; f++)
            status = inf_quantize_check_paths(ggtk_path(ggtk_split_part(input, p)),
                                              run->output.paths[f], run->err);
    return status;
}

/* Plans may name types this build cannot write (a dry run shows them); a run refuses them before
 * anything is created. */
static ggtk_status check_writable(const inf_quantize_plan *plan, ggtk_error *err)
{
    for (int64_t i = 0; i < plan->n_tensors; i++) {
        const inf_quantize_plan_tensor *entry = &plan->tensors[i];
        if (entry->new_type != entry->info->type && !inf_type_can_quantize(entry->new_type))
            return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                                  "%s: tensor '%s': no kernel of this build writes type %s",
                                  ggtk_path(plan->input), entry->info->name,
                                  quantize_type_name(entry->new_type));
    }
    return GGTK_OK;
}

static ggtk_status run_all(run_state *run, const char *output_path,
                                   inf_quantize_tensor_stats *stats)
{
    ggtk_status status =
        quantize_output_open(&run->output, run->plan, output_path, run->callbacks, run->err);
    if (status == GGTK_OK)
        status = check_paths(run);
    if (status == GGTK_OK)
        status = quantize_source_open(&run->source, run->plan->input_parts, run->err);
    if (status == GGTK_OK)
        status = init_jobs(run);
    if (status == GGTK_OK)
        status = alloc_buffers(run);
    if (status == GGTK_OK)
        status = run_batches(run, stats);
    if (status == GGTK_OK)
        status = quantize_output_finish(&run->output, run->err);
    return status;
}

ggtk_status inf_quantize_run(inf_quantize_plan *plan, const char *output_path,
                                     const inf_quantize_callbacks *callbacks,
                                     inf_quantize_tensor_stats *stats, ggtk_error *err)
{
    if (!plan->writer)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "this plan has already been run");
    ggtk_status status = check_writable(plan, err);
    if (status != GGTK_OK)
        return status;
    run_state run = {.plan = plan, .callbacks = callbacks, .err = err};
    run.n_threads = plan->options.n_threads > 0 ? plan->options.n_threads : omp_get_max_threads();
    run.buf.row_floats = 1;
    if (stats)
        memset(stats, 0, (size_t)plan->n_tensors * sizeof *stats);
    status = run_all(&run, output_path, stats);
    /* Files not renamed are removed; a writer that did not finish removes its temporary file
     * when freed. */
    quantize_output_close(&run.output);
    ggtk_writer_free(plan->writer);
    plan->writer = NULL;
    ggtk_writer_split_free(plan->output_parts, plan->n_output_parts);
    plan->output_parts = NULL; /* n_output_parts still says how many were written */
    free_buffers(&run.buf);
    for (int64_t i = 0; run.weights && i < plan->n_tensors; i++)
        free(run.weights[i]);
    free(run.weights);
    free(run.fallbacks);
    free(run.jobs);
    quantize_source_close(&run.source);
    return status;
}
