/* run.c - executes a plan: every tensor goes from the mapped input through the kernels to the
 * streaming writer, a chunk of rows at a time. Each row is checked for NaN/Inf, converted and read
 * back (for the error statistics) by one thread while it is hot in cache. */
#include "quantize_internal.h"
#include "source.h"
#include "stats.h"

#include "inf_quant.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Input rows per chunk are chosen so that a chunk holds about this many bytes of F32 values:
 * large enough to amortise thread start-up, small enough to stay in the caches. */
enum { CHUNK_F32_BYTES = 4u << 20 };

/* Memory reused by every chunk, sized once for the largest chunk of the plan. */
typedef struct run_buffers {
    float *rows;          /* a chunk of input rows as F32 (inputs of other types) */
    uint8_t *out;         /* a chunk of converted rows */
    float *round_trip;    /* one row per thread: converted values read back */
    double *sum_squares;  /* per row of the chunk */
    double *sum_diff;     /* per row of the chunk */
} run_buffers;

typedef struct run_state {
    inf_quantize_plan *plan;
    const inf_quantize_callbacks *callbacks;
    inf_quantize_error *err;
    gguf_writer *writer;
    quantize_source source;
    run_buffers buf;
    int n_threads;
    uint64_t bytes_done;
    uint64_t bytes_total;
} run_state;

/* What one tensor is being turned into, shared by all its chunks. */
typedef struct tensor_job {
    const inf_quantize_plan_tensor *entry;
    const uint8_t *data;      /* the input tensor in the map */
    int64_t ncols;
    int64_t nrows;
    uint64_t in_row_bytes;
    uint64_t out_row_bytes;
    bool readable;            /* the input type converts to F32 (else it is copied unchecked) */
    bool convert;             /* the type changes */
    double sum_squares;
    double sum_diff;
} tensor_job;

static int64_t chunk_rows(int64_t ncols)
{
    int64_t rows = (int64_t)(CHUNK_F32_BYTES / sizeof(float)) / ncols;
    return rows > 0 ? rows : 1;
}

static uint64_t row_bytes(gguf_tensor_type type, int64_t ncols)
{
    uint64_t bytes = 0;
    gguf_tensor_type_bytes(type, (uint64_t)ncols, &bytes); /* validated when planned */
    return bytes;
}

static inf_quantize_status alloc_buffers(run_state *run)
{
    int64_t max_elements = 1, max_rows = 1, max_ncols = 1;
    for (int64_t i = 0; i < run->plan->n_tensors; i++) {
        const gguf_tensor_info *info = run->plan->tensors[i].info;
        int64_t ncols = (int64_t)info->ne[0];
        int64_t nrows = (int64_t)(gguf_tensor_elements(info) / info->ne[0]);
        int64_t rows = chunk_rows(ncols) < nrows ? chunk_rows(ncols) : nrows;
        if (rows * ncols > max_elements)
            max_elements = rows * ncols;
        if (rows > max_rows)
            max_rows = rows;
        if (ncols > max_ncols)
            max_ncols = ncols;
    }
    /* No supported type takes more than 4 bytes per element, so F32-sized buffers fit all. */
    run->buf.rows = malloc((size_t)max_elements * sizeof(float));
    run->buf.out = malloc((size_t)max_elements * sizeof(float));
    run->buf.round_trip = malloc((size_t)max_ncols * run->n_threads * sizeof(float));
    run->buf.sum_squares = malloc((size_t)max_rows * sizeof(double));
    run->buf.sum_diff = malloc((size_t)max_rows * sizeof(double));
    if (!run->buf.rows || !run->buf.out || !run->buf.round_trip || !run->buf.sum_squares ||
        !run->buf.sum_diff)
        return quantize_fail(run->err, INF_QUANTIZE_ERR_NOMEM, "out of memory");
    return INF_QUANTIZE_OK;
}

static void free_buffers(run_buffers *buf)
{
    free(buf->rows);
    free(buf->out);
    free(buf->round_trip);
    free(buf->sum_squares);
    free(buf->sum_diff);
}

/* Convert and measure rows [0, n) of a chunk whose F32 values start at `x`. Returns false when
 * a kernel refused (cannot happen for a validated plan). */
static bool convert_rows(run_state *run, const tensor_job *job, const float *x, int64_t n)
{
    gguf_tensor_type new_type = job->entry->new_type;
    bool ok = true;
#pragma omp parallel for num_threads(run->n_threads) schedule(static) reduction(&& : ok)
    for (int64_t r = 0; r < n; r++) {
        const float *row = x + r * job->ncols;
        run->buf.sum_squares[r] = quantize_sum_squares(row, job->ncols);
        run->buf.sum_diff[r] = 0.0;
        if (!job->convert)
            continue;
        uint8_t *q = run->buf.out + (uint64_t)r * job->out_row_bytes;
        ok = ok && inf_quantize_row(new_type, row, q, job->ncols);
        if (new_type == GGUF_TENSOR_F32)
            continue; /* an exact copy */
        float *back = run->buf.round_trip + (int64_t)omp_get_thread_num() * job->ncols;
        ok = ok && inf_dequantize_row(new_type, q, back, job->ncols);
        run->buf.sum_diff[r] = quantize_sum_squared_diff(row, back, job->ncols);
    }
    return ok;
}

/* Fold a chunk's per-row sums into the tensor's, failing on the first non-finite row. */
static inf_quantize_status check_rows(run_state *run, tensor_job *job, const float *x,
                                      int64_t first_row, int64_t n)
{
    const char *name = job->entry->info->name;
    for (int64_t r = 0; r < n; r++) {
        if (!isfinite(run->buf.sum_squares[r])) {
            int64_t col = quantize_first_nonfinite(x + r * job->ncols, job->ncols);
            return quantize_fail(run->err, INF_QUANTIZE_ERR_NONFINITE,
                                 "%s: tensor '%s' row %lld column %lld holds %s",
                                 gguf_path(run->plan->input), name, (long long)(first_row + r),
                                 (long long)col,
                                 col >= 0 && isnan(x[r * job->ncols + col]) ? "NaN"
                                                                            : "Inf (or overflows)");
        }
        if (!isfinite(run->buf.sum_diff[r]))
            return quantize_fail(run->err, INF_QUANTIZE_ERR_NONFINITE,
                                 "%s: tensor '%s' row %lld: values out of the range of %s",
                                 gguf_path(run->plan->input), name, (long long)(first_row + r),
                                 quantize_type_name(job->entry->new_type));
        job->sum_squares += run->buf.sum_squares[r];
        job->sum_diff += run->buf.sum_diff[r];
    }
    return INF_QUANTIZE_OK;
}

static void report_progress(run_state *run, int64_t index, const char *name)
{
    if (!run->callbacks || !run->callbacks->on_progress)
        return;
    inf_quantize_progress progress = {index, run->plan->n_tensors, name, run->bytes_done,
                                      run->bytes_total};
    run->callbacks->on_progress(&progress, run->callbacks->user);
}

static inf_quantize_status write_bytes(run_state *run, const void *data, uint64_t size)
{
    gguf_error gerr;
    if (gguf_writer_write_data(run->writer, data, (size_t)size, &gerr) != GGUF_OK)
        return quantize_fail(run->err, INF_QUANTIZE_ERR_OUTPUT, "%s", gerr.message);
    return INF_QUANTIZE_OK;
}

/* Rows [first, first + n) of a tensor: to F32, checked, converted, written. */
static inf_quantize_status run_chunk(run_state *run, tensor_job *job, int64_t first, int64_t n)
{
    const uint8_t *src = job->data + (uint64_t)first * job->in_row_bytes;
    gguf_tensor_type in_type = job->entry->info->type;
    if (job->readable) {
        const float *x = (const float *)src;
        if (in_type != GGUF_TENSOR_F32) {
            if (!inf_dequantize_rows(in_type, src, run->buf.rows, n, job->ncols, run->n_threads))
                return quantize_fail(run->err, INF_QUANTIZE_ERR_UNSUPPORTED,
                                     "tensor '%s': cannot read type %s", job->entry->info->name,
                                     quantize_type_name(in_type));
            x = run->buf.rows;
        }
        if (!convert_rows(run, job, x, n))
            return quantize_fail(run->err, INF_QUANTIZE_ERR_UNSUPPORTED,
                                 "tensor '%s': cannot write type %s", job->entry->info->name,
                                 quantize_type_name(job->entry->new_type));
        inf_quantize_status status = check_rows(run, job, x, first, n);
        if (status != INF_QUANTIZE_OK)
            return status;
    }
    inf_quantize_status status =
        job->convert ? write_bytes(run, run->buf.out, (uint64_t)n * job->out_row_bytes)
                     : write_bytes(run, src, (uint64_t)n * job->in_row_bytes);
    quantize_source_release(&run->source, src + (uint64_t)n * job->in_row_bytes);
    run->bytes_done += (uint64_t)n * job->in_row_bytes;
    return status;
}

static inf_quantize_status run_tensor(run_state *run, int64_t index,
                                      inf_quantize_tensor_stats *stats)
{
    const inf_quantize_plan_tensor *entry = &run->plan->tensors[index];
    const gguf_tensor_info *info = entry->info;
    tensor_job job = {.entry = entry, .ncols = (int64_t)info->ne[0]};
    job.nrows = (int64_t)(gguf_tensor_elements(info) / info->ne[0]);
    job.in_row_bytes = row_bytes(info->type, job.ncols);
    job.out_row_bytes = row_bytes(entry->new_type, job.ncols);
    job.readable = inf_type_can_dequantize(info->type);
    job.convert = entry->new_type != info->type;
    job.data = quantize_source_tensor(&run->source, info);
    if (!job.data)
        return quantize_fail(run->err, INF_QUANTIZE_ERR_INPUT,
                             "%s: tensor '%s' data lies outside the file",
                             gguf_path(run->plan->input), info->name);
    int64_t step = chunk_rows(job.ncols);
    for (int64_t first = 0; first < job.nrows; first += step) {
        int64_t n = job.nrows - first < step ? job.nrows - first : step;
        inf_quantize_status status = run_chunk(run, &job, first, n);
        if (status != INF_QUANTIZE_OK)
            return status;
        report_progress(run, index, info->name);
    }
    if (stats) {
        stats->converted = job.convert;
        quantize_stats_finish(stats, job.sum_squares, job.sum_diff, gguf_tensor_elements(info));
    }
    return INF_QUANTIZE_OK;
}

static inf_quantize_status begin_output(run_state *run, const char *output_path)
{
    gguf_error gerr;
    if (gguf_writer_begin(run->writer, output_path, &gerr) != GGUF_OK)
        return quantize_fail(run->err, INF_QUANTIZE_ERR_OUTPUT, "%s", gerr.message);
    if (run->callbacks && run->callbacks->on_temp_file)
        run->callbacks->on_temp_file(gguf_writer_temp_path(run->writer), run->callbacks->user);
    return INF_QUANTIZE_OK;
}

static inf_quantize_status run_all(run_state *run, const char *output_path,
                                   inf_quantize_tensor_stats *stats)
{
    inf_quantize_status status = quantize_source_open(&run->source, run->plan->input, run->err);
    if (status == INF_QUANTIZE_OK)
        status = alloc_buffers(run);
    if (status == INF_QUANTIZE_OK)
        status = begin_output(run, output_path);
    for (int64_t i = 0; status == INF_QUANTIZE_OK && i < run->plan->n_tensors; i++)
        status = run_tensor(run, i, stats ? &stats[i] : NULL);
    if (status == INF_QUANTIZE_OK) {
        gguf_error gerr;
        if (gguf_writer_finish(run->writer, &gerr) != GGUF_OK)
            status = quantize_fail(run->err, INF_QUANTIZE_ERR_OUTPUT, "%s", gerr.message);
    }
    return status;
}

inf_quantize_status inf_quantize_run(inf_quantize_plan *plan, const char *output_path,
                                     const inf_quantize_callbacks *callbacks,
                                     inf_quantize_tensor_stats *stats, inf_quantize_error *err)
{
    if (!plan->writer)
        return quantize_fail(err, INF_QUANTIZE_ERR_USAGE, "this plan has already been run");
    inf_quantize_status status = inf_quantize_check_paths(gguf_path(plan->input), output_path, err);
    if (status != INF_QUANTIZE_OK)
        return status;
    run_state run = {.plan = plan, .callbacks = callbacks, .err = err, .writer = plan->writer};
    run.n_threads = plan->options.n_threads > 0 ? plan->options.n_threads : omp_get_max_threads();
    run.bytes_total = plan->data_size_before;
    if (stats)
        memset(stats, 0, (size_t)plan->n_tensors * sizeof *stats);
    status = run_all(&run, output_path, stats);
    /* A writer that did not finish removes its temporary file when freed. */
    gguf_writer_free(plan->writer);
    plan->writer = NULL;
    free_buffers(&run.buf);
    quantize_source_close(&run.source);
    return status;
}
