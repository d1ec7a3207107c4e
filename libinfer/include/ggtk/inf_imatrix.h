/* inf_imatrix.h - importance matrices: how strongly each input column of each weight matrix is
 * used, measured on a text, so that a quantizer can spend its precision where the activations are
 * large. The statistics, files and arithmetic are llama.cpp's (llama-imatrix writes them,
 * llama-quantize --imatrix reads them); files written here are read by both and vice versa.
 *
 * What an entry holds, for one weight tensor (named as in the model, "blk.0.attn_q.weight") with
 * rows of n_per_row values and n_mat matrices (1 for a dense weight, one per expert for a
 * mixture-of-experts weight):
 *  - values[m * n_per_row + j]: the sum over every token that reached matrix m of x[j]^2, where x
 *    is the activation row multiplied by the weight (accumulated in float, token after token);
 *  - counts[m]: the number of those tokens.
 * The weight a quantizer gives column j of matrix m is values / counts (1 for every column of a
 * matrix no token reached), see inf_imatrix_weights().
 *
 * Two file formats, both little-endian:
 *  - GGUF (llama-imatrix's default): metadata general.type = "imatrix", imatrix.datasets (array of
 *    strings: the texts used), imatrix.chunk_count and imatrix.chunk_size (u32); per entry, in
 *    byte order of the names, two F32 tensors "<name>.in_sum2" [n_per_row, n_mat] holding the
 *    values and "<name>.counts" [1, n_mat] holding the counts as floats.
 *  - legacy (.dat): i32 n_entries; per entry i32 name length, the name's bytes, i32 ncall (the
 *    chunks the entry was collected over, rounded up), i32 n_values, n_values f32 holding
 *    (sum / count) * ncall (1 * ncall for a matrix no token reached); then i32 chunk count, i32
 *    length and the bytes of the dataset name (this trailer may be absent). The matrices of a
 *    legacy entry are not recorded: an entry read from it has n_mat 1, n_per_row = n_values and
 *    counts[0] = ncall.
 * An object remembers which form its values are in (inf_imatrix_get_format()); the raw form (GGUF)
 * can be written in both formats, the legacy form only as legacy (its raw counts are lost).
 *
 * Reading treats the file as hostile: every count and length is checked against the bytes left
 * before anything is allocated, and values must be what a collector can produce (finite, not
 * negative; whole, non-negative counts; a matrix with count 0 has all-zero sums). Partial entries
 * (an expert no token reached, count 0) are kept, unlike llama-imatrix's legacy writer which drops
 * entries without any data; inf_imatrix_coverage() reports the covered share.
 *
 * Errors: see <ggtk/error.h>. Reader errors carry the byte offset of the field at fault and name
 * the file and the field. Lifecycle: inf_imatrix_read / inf_imatrix_new, then inf_imatrix_free.
 * Thread-safety: an imatrix is used by one thread at a time; read-only use may be shared.
 */
#ifndef INF_IMATRIX_H
#define INF_IMATRIX_H

#include <ggtk/export.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggtk/error.h>
#include <ggtk/inf_graph.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The file formats, and the two forms an object's values can be in. */
typedef enum inf_imatrix_format {
    INF_IMATRIX_GGUF = 0, /* raw sums and per-matrix token counts */
    INF_IMATRIX_LEGACY,   /* means times ncall, one count (ncall) per entry */
} inf_imatrix_format;

/* One weight tensor's statistics (see the file comment). Owned by the imatrix; read-only. */
typedef struct inf_imatrix_entry {
    const char *name;
    int64_t n_per_row;
    int64_t n_mat;
    const float *values;   /* n_mat * n_per_row */
    const int64_t *counts; /* n_mat */
} inf_imatrix_entry;

typedef struct inf_imatrix inf_imatrix;

/* ---------------------------------------------------------------------------------------------
 * Files
 * ------------------------------------------------------------------------------------------- */

/* Read the importance matrix at `path`: a file starting with "GGUF" is read as the GGUF format,
 * any other as the legacy one. NULL on failure with `err` set: GGTK_ERR_IO (cannot open or read);
 * the GGUF reader's errors for a damaged GGUF file; GGTK_ERR_TRUNCATED (a length or count runs
 * past the end of the file); GGTK_ERR_INVALID (no entries, a negative or impossible count, an
 * empty name or one holding a NUL byte, a value or count sums cannot have, sums whose size is not
 * a whole number of matrices, an in_sum2 tensor without its counts or the reverse, a tensor that
 * is not F32); GGTK_ERR_NONFINITE (NaN or Inf in the values or counts); GGTK_ERR_TYPE (imatrix.*
 * metadata of the wrong type); GGTK_ERR_DUPLICATE (two legacy entries with one name);
 * GGTK_ERR_LAYOUT (bytes after a legacy file's trailer); GGTK_ERR_NOMEM. */
GGTK_API inf_imatrix *inf_imatrix_read(const char *path, ggtk_error *err);

/* Write `imatrix` to `path` in `format`, byte for byte what llama-imatrix writes for the same
 * statistics: entries in byte order of their names; for legacy output from the raw form, ncall =
 * ceil(max count / chunk size), matrices without tokens stored as 1 * ncall, entries without any
 * token left out (as llama-imatrix does; the coverage is then lost), and the last dataset name.
 * The file appears through a temporary file renamed into place (atomic_file.h), never partial.
 * Errors: GGTK_ERR_USAGE (legacy form written as GGUF; raw form written as legacy with chunk size
 * 0; a name too long for a GGUF tensor name, 63 bytes with its suffix), the writer's errors
 * (GGTK_ERR_IO, GGTK_ERR_PATH), GGTK_ERR_NOMEM. */
GGTK_API ggtk_status inf_imatrix_write(const inf_imatrix *imatrix, const char *path,
                                       inf_imatrix_format format, ggtk_error *err);

/* Free the imatrix. NULL allowed. */
GGTK_API void inf_imatrix_free(inf_imatrix *imatrix);

/* ---------------------------------------------------------------------------------------------
 * Contents
 * ------------------------------------------------------------------------------------------- */

/* The form the values are in: INF_IMATRIX_LEGACY for a file read in that format, else GGUF. */
GGTK_API inf_imatrix_format inf_imatrix_get_format(const inf_imatrix *imatrix);
/* Number of entries, and entry `index` (0 <= index < n) in byte order of the names. */
GGTK_API int64_t inf_imatrix_n_entries(const inf_imatrix *imatrix);
GGTK_API const inf_imatrix_entry *inf_imatrix_entry_at(const inf_imatrix *imatrix, int64_t index);
/* The entry for weight tensor `name`, or NULL. */
GGTK_API const inf_imatrix_entry *inf_imatrix_find(const inf_imatrix *imatrix, const char *name);
/* Chunks the statistics were collected over (imatrix.chunk_count; a legacy trailer's count). */
GGTK_API int32_t inf_imatrix_chunk_count(const inf_imatrix *imatrix);
/* Tokens per chunk (imatrix.chunk_size); 0 when unknown (legacy files, GGUF without the key). */
GGTK_API int32_t inf_imatrix_chunk_size(const inf_imatrix *imatrix);
/* True when a GGUF file had all three imatrix.* keys; llama-quantize refuses a GGUF imatrix
 * without them. Always true for the legacy form and for collected matrices. */
GGTK_API bool inf_imatrix_has_metadata(const inf_imatrix *imatrix);
/* The dataset names (the texts), in order. */
GGTK_API int64_t inf_imatrix_n_datasets(const inf_imatrix *imatrix);
GGTK_API const char *inf_imatrix_dataset(const inf_imatrix *imatrix, int64_t index);

/* The path the imatrix was read from (as given to inf_imatrix_read()), NULL for a collected one. */
GGTK_API const char *inf_imatrix_path(const inf_imatrix *imatrix);

/* Keep the entries llama-quantize keeps with --exclude-weights / --include-weights: first every
 * entry whose name contains one of the `n_exclude` strings is removed, then, when n_include > 0,
 * every entry whose name contains none of the `n_include` strings. */
GGTK_API void inf_imatrix_filter(inf_imatrix *imatrix, const char *const *include,
                                 size_t n_include, const char *const *exclude, size_t n_exclude);

/* The n_mat * n_per_row weights a quantizer uses for `entry`, as llama-quantize computes them:
 * raw form values[m, j] / (float)counts[m] (1 for every column of a matrix with count 0); legacy
 * form values / (float)ncall. */
GGTK_API void inf_imatrix_weights(const inf_imatrix *imatrix, const inf_imatrix_entry *entry,
                                  float *weights);

/* Share of `entry`'s matrices that at least one token reached, in [0, 1] (1 for a legacy entry,
 * whose matrices are not recorded). */
GGTK_API double inf_imatrix_coverage(const inf_imatrix_entry *entry);

/* ---------------------------------------------------------------------------------------------
 * Collecting
 * ------------------------------------------------------------------------------------------- */

/* An empty importance matrix to collect into, in the raw form: `chunk_size` tokens per chunk
 * (>= 1; the chunk count follows from the counts), `dataset` the text's name as the user gave it
 * (NULL: none). NULL with `err` set: GGTK_ERR_USAGE for chunk_size < 1, GGTK_ERR_NOMEM. */
GGTK_API inf_imatrix *inf_imatrix_new(int32_t chunk_size, const char *dataset, ggtk_error *err);

/* Add `n_rows` activation rows of `n_per_row` floats (row r at x + r * row_stride floats) that
 * were multiplied by matrix `mat` (0 <= mat < n_mat) of the weight `name`: values += x^2 per
 * column in row order, counts[mat] += n_rows. The entry is created on first use with n_mat
 * matrices. GGTK_ERR_INVALID when the entry exists with another shape, or when a sum is no longer
 * finite (naming the entry and the column); GGTK_ERR_USAGE for a legacy-form imatrix or bad
 * arguments; GGTK_ERR_NOMEM. */
GGTK_API ggtk_status inf_imatrix_accumulate(inf_imatrix *imatrix, const char *name, int64_t n_mat,
                                            int64_t mat, const float *x, int64_t n_per_row,
                                            int64_t n_rows, int64_t row_stride, ggtk_error *err);

/* An inf_node_observer (inf_backend.h; `user` is the imatrix) that collects what llama-imatrix
 * collects: for each matrix product whose weight (src[0]) is a leaf named "blk.*", with F32
 * activations (src[1]) of at least 16 rows, every activation row goes to the weight's entry
 * (activations broadcast over the batch dimensions go to matrix (i3 % ne3) * ne2 + (i2 % ne2) of a
 * weight with ne2 * ne3 matrices). Run after the node, its activations are still live. On failure
 * it records the error (inf_imatrix_status()) and returns false, which stops the compute. */
GGTK_API bool inf_imatrix_observe(const inf_graph *graph, int node_index, void *imatrix);

/* An inf_node_filter for inf_imatrix_observe(): true for the products it collects, so that a
 * compute stops its threads for those nodes only (inf_backend_compute_filtered()). */
GGTK_API bool inf_imatrix_wants(const inf_tensor *node, void *imatrix);

/* GGTK_OK, or the first failure inf_imatrix_observe() recorded (copied into `err`). */
GGTK_API ggtk_status inf_imatrix_status(const inf_imatrix *imatrix, ggtk_error *err);

#ifdef __cplusplus
}
#endif

#endif /* INF_IMATRIX_H */
