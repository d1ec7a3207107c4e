/* inf_quantize_file.h - convert a whole GGUF model file to another tensor type, the way
 * llama.cpp's llama-quantize does for the simple types (q8_0, q4_0, q4_1, q5_0, q5_1, f16, bf16,
 * f32), streaming the tensors in file order from the mapped input to the output.
 *
 * Two steps: inf_quantize_plan_new() decides which tensor gets which type (no data is touched,
 * so it also serves --dry-run), then inf_quantize_run() converts and writes the file through a
 * temporary file that is renamed into place only when everything was written.
 *
 * Which tensors change (the rules of llama-quantize, src/llama-quant.cpp):
 *  - only tensors with 2 or more dimensions whose name ends in "weight" are converted; norms,
 *    biases, 1-D tensors and a few small special tensors (expert gates, position embeddings, ...)
 *    keep their type;
 *  - --embd-type sets token_embd.weight, --output-type sets output.weight;
 *  - for a quantized file type, the first --tensor-type rule whose pattern matches the name
 *    (a POSIX extended regular expression searched anywhere in the name, like llama.cpp's
 *    std::regex_search) chooses the type;
 *  - otherwise, unless `pure`, output.weight (and token_embd.weight when the model has no
 *    output.weight, i.e. tied embeddings) gets more bits: llama.cpp uses Q6_K there unless the file
 *    type is Q8_0 or the row length is not a multiple of 256. We use Q6_K only when the kernels can
 *    produce it, and Q8_0 otherwise (documented difference);
 *  - a tensor whose row length is not a multiple of the chosen type's block size falls back to a
 *    type that fits (llama.cpp's table for K/IQ types, else F16) and a warning is recorded; where
 *    llama.cpp stops with an error for q4_0..q8_0, we fall back to F16 instead.
 *
 * Metadata is copied in order; general.file_type is set to llama.cpp's LLAMA_FTYPE value for the
 * file type and general.quantization_version to 2. Tensor order and alignment are kept.
 *
 * Errors: see <ggtk/error.h>. The input's reader errors come back as the reader reported them
 * (status and offset); the writer's likewise. Specific to the quantizer: GGTK_ERR_USAGE for bad
 * options, GGTK_ERR_PATH for an output path that names the input, GGTK_ERR_REQUANTIZE for a
 * quantized tensor without allow_requantize, GGTK_ERR_NONFINITE for NaN/Inf in the input.
 * Lifecycle: a plan is built in memory (inf_quantize_plan_new / inf_quantize_plan_free).
 *
 * Thread-safety: a plan is used by one thread at a time; inf_quantize_run() parallelises itself
 * with OpenMP. No function installs signal handlers or prints anything.
 */
#ifndef INF_QUANTIZE_FILE_H
#define INF_QUANTIZE_FILE_H

#include <ggtk/error.h>
#include <ggtk/gguf.h>
#include <ggtk/inf_imatrix.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Types
 * ------------------------------------------------------------------------------------------- */

/* True when `type` can be given as the file type: the kernels produce it (inf_type_can_quantize())
 * and llama.cpp has a file type (LLAMA_FTYPE) for it. */
GGTK_API bool inf_quantize_file_type_supported(ggtk_tensor_type type);

/* llama.cpp's LLAMA_FTYPE value written to general.file_type for a file of `type`
 * (ALL_F32 = 0, MOSTLY_F16 = 1, MOSTLY_Q4_0 = 2, ...), or -1 when there is none. */
GGTK_API int inf_quantize_llama_ftype(ggtk_tensor_type type);

/* True when `type` can be given for single tensors (--output-type, --embd-type, --tensor-type):
 * the kernels produce it and llama.cpp stores weights in it (Q8_1 and Q8_K, which ggml uses only
 * for activations, are refused). Which types the kernels read is inf_type_can_dequantize(). */
GGTK_API bool inf_quantize_tensor_type_supported(ggtk_tensor_type type);

/* ---------------------------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------------------------- */

/* A --tensor-type rule: tensors whose name matches `pattern` get `type`. */
typedef struct inf_quantize_tensor_rule {
    const char *pattern; /* POSIX extended regular expression, searched in the tensor name */
    ggtk_tensor_type type;
} inf_quantize_tensor_rule;

/* What to produce. Pointers are borrowed and must outlive the plan. */
typedef struct inf_quantize_options {
    ggtk_tensor_type type;  /* the file type (must pass inf_quantize_file_type_supported()) */
    bool pure;              /* every convertible tensor gets `type`: no output.weight upgrade */
    int output_type;        /* type for output.weight, or -1 for the rule above */
    int embd_type;          /* type for token_embd.weight, or -1 for the rule above */
    const inf_quantize_tensor_rule *tensor_rules; /* tried in order, first match wins */
    size_t n_tensor_rules;
    bool allow_requantize;  /* convert tensors that are already quantized (dequantize first) */
    int n_threads;          /* threads for the conversion; 0 or less: OpenMP's default */
    const inf_imatrix *imatrix; /* importance weights read from a file (NULL: none); see below */
} inf_quantize_options;

/* With an imatrix (llama-quantize --imatrix): each converted tensor whose name has an entry with
 * ne0 * ne2 weights is quantized with them (inf_imatrix_weights(); matrix e of a 3-D tensor with
 * the weights of matrix e) by inf_quantize_rows_imatrix(), which types without a weighted
 * quantizer ignore; a tensor without an entry is quantized without weights (a warning for weighted
 * types, except token_embd.weight and output.weight, which no imatrix holds); an entry of another
 * size fails the plan (token_embd.weight excepted, quantized without weights as llama-quantize
 * does); an entry covering only some of its matrices (experts no token reached) is used, with
 * equal weights for those, and warned about. The output records quantize.imatrix.file (the path,
 * cut to 127 bytes), quantize.imatrix.dataset (the first dataset, cut likewise, when there is
 * one), quantize.imatrix.entries_count and, when not 0, quantize.imatrix.chunks_count, appended
 * after the other metadata as llama-quantize does. A GGUF imatrix without its imatrix.* metadata
 * is refused, as llama-quantize refuses it. */

/* The defaults for a file of `type`: not pure, no overrides (output_type and embd_type -1), no
 * tensor rules, no requantizing, default threads, no imatrix. */
GGTK_API inf_quantize_options inf_quantize_options_default(ggtk_tensor_type type);

/* ---------------------------------------------------------------------------------------------
 * The plan: which tensor gets which type
 * ------------------------------------------------------------------------------------------- */

/* Why a tensor gets its new type. */
typedef enum inf_quantize_reason {
    INF_QUANTIZE_REASON_KEPT = 0,      /* not a convertible weight (1-D, norm, ...): type kept */
    INF_QUANTIZE_REASON_FILE_TYPE,     /* the file type */
    INF_QUANTIZE_REASON_OUTPUT_RULE,   /* output.weight (or tied token_embd) upgrade, not pure */
    INF_QUANTIZE_REASON_OUTPUT_OPTION, /* options.output_type */
    INF_QUANTIZE_REASON_EMBD_OPTION,   /* options.embd_type */
    INF_QUANTIZE_REASON_TENSOR_RULE,   /* a --tensor-type rule matched */
} inf_quantize_reason;

/* Short name of a reason ("kept", "file type", ...). Never NULL. */
GGTK_API const char *inf_quantize_reason_name(inf_quantize_reason reason);

/* The decision for one tensor, in file order. */
typedef struct inf_quantize_plan_tensor {
    const ggtk_tensor_info *info; /* the input tensor, owned by the input file */
    ggtk_tensor_type new_type;    /* type it is written as */
    ggtk_tensor_type wanted_type; /* type the rules chose; differs from new_type after a fallback */
    inf_quantize_reason reason;
    bool fallback;                /* the row length did not fit wanted_type */
    bool requantize;              /* the input is quantized and converted (dequantized first) */
    uint64_t new_size;            /* bytes of data written for it */
} inf_quantize_plan_tensor;

/* A plan for one input file. The public fields are read-only for the caller. */
typedef struct inf_quantize_plan {
    ggtk_file *input;                  /* the input's header (GGTK_OPEN_METADATA), owned */
    inf_quantize_options options;      /* copy of the options (pointers still borrowed) */
    int64_t n_tensors;
    inf_quantize_plan_tensor *tensors; /* n_tensors entries in file order */
    int64_t n_converted;               /* tensors whose type changes */
    int64_t n_fallback;                /* tensors that needed a fallback type */
    int64_t n_requantized;             /* converted tensors that were already quantized */
    int64_t n_imatrix_used;            /* converted tensors quantized with importance weights */
    uint64_t n_elements;               /* weights in the model */
    uint64_t data_size_before;         /* sum of the input tensors' data sizes */
    uint64_t data_size_after;          /* sum of the output tensors' data sizes */
    uint64_t file_size_before;         /* input file size */
    uint64_t file_size_after;          /* exact size the output file will have */
    char **warnings;                   /* n_warnings lines (fallbacks, requantizing) */
    int64_t n_warnings;
    ggtk_writer *writer;               /* private: the output's header, ready to write */
} inf_quantize_plan;

/* Read the header of the GGUF file at `input_path` and decide the type of every tensor under
 * `options`. Nothing is written and no tensor data is read, so this is also the whole of a dry
 * run. Returns the plan (free it with inf_quantize_plan_free()) or NULL with `err` set:
 * the reader's error when the file cannot be opened or is invalid (GGTK_ERR_IO, GGTK_ERR_MAGIC,
 * GGTK_ERR_TRUNCATED, ...); GGTK_ERR_USAGE (unsupported file type, bad regex, override type the
 * kernels cannot write, split file); GGTK_ERR_REQUANTIZE (a tensor would be converted from a
 * quantized type without allow_requantize); GGTK_ERR_UNSUPPORTED (no kernel reads the input type
 * or writes the new one); GGTK_ERR_NOMEM. */
GGTK_API inf_quantize_plan *inf_quantize_plan_new(const char *input_path,
                                                  const inf_quantize_options *options,
                                                  ggtk_error *err);

/* Free a plan and close its input. NULL is allowed. */
GGTK_API void inf_quantize_plan_free(inf_quantize_plan *plan);

/* ---------------------------------------------------------------------------------------------
 * Running the plan
 * ------------------------------------------------------------------------------------------- */

/* Refuse an output that would destroy the input: the same path, or a path that already exists
 * and is the same file (same device and inode, e.g. a hard link or a symbolic link).
 * Returns GGTK_OK or GGTK_ERR_PATH (GGTK_ERR_IO when the input cannot be stat'ed). */
GGTK_API ggtk_status inf_quantize_check_paths(const char *input_path, const char *output_path,
                                              ggtk_error *err);

/* Progress after each batch of rows (about 8 MiB of F32 values, from one or more tensors). */
typedef struct inf_quantize_progress {
    int64_t tensor_index;  /* last tensor of the batch, 0-based */
    int64_t n_tensors;
    const char *tensor_name;
    uint64_t bytes_done;   /* input data bytes processed so far */
    uint64_t bytes_total;  /* input data bytes in all */
} inf_quantize_progress;

/* Hooks the caller may set; any may be NULL. They run on the calling thread. */
typedef struct inf_quantize_callbacks {
    /* Called once, right after the temporary output file was created, with its path (valid until
     * inf_quantize_run() returns). A tool copies it for a signal handler that unlinks it. */
    void (*on_temp_file)(const char *temp_path, void *user);
    /* Called after each batch of rows has been written. */
    void (*on_progress)(const inf_quantize_progress *progress, void *user);
    void *user;
} inf_quantize_callbacks;

/* What happened to one tensor. */
typedef struct inf_quantize_tensor_stats {
    bool converted;    /* false when the data was copied unchanged */
    double rms;        /* root mean square of the tensor's values (as F32) */
    double rmse;       /* root mean square of (value - value after the round trip) */
    double rel_rmse;   /* rmse / rms (0 when rms is 0) */
    bool imatrix;      /* quantized with importance weights */
    int64_t imatrix_fallbacks; /* blocks whose weighted search gave a non-finite scale and were
                                  quantized unweighted instead (inf_quantize_rows_imatrix()) */
} inf_quantize_tensor_stats;

/* Convert and write the file planned by `plan` to `output_path`; a plan runs at most once.
 * Tensors are processed in file order in batches of rows (about 8 MiB of F32 values, a batch
 * may span several small tensors), the rows of a batch shared among OpenMP threads; each row is
 * checked, converted and read back by one thread. Memory use stays a few batches (the input is
 * mapped read-only and pages already processed are released from the process), and the output
 * does not depend on the thread count. The input must not have changed since planning. Every input value is checked: NaN/Inf anywhere fails the run.
 * The output appears at `output_path` only when everything succeeded; on any failure it is not
 * created (an existing file there is left untouched) and the temporary file is removed. A
 * process killed meanwhile leaves only the temporary file (named by the writer, next to
 * `output_path`), never a partial `output_path`.
 * `stats` may be NULL or hold plan->n_tensors entries, filled for each tensor.
 * Errors: GGTK_ERR_PATH (see inf_quantize_check_paths()), GGTK_ERR_NONFINITE (NaN/Inf in the
 * input, naming tensor, row and column; or a value out of the target type's range), the writer's
 * error when the output cannot be created, written or renamed (GGTK_ERR_IO, ...), GGTK_ERR_IO
 * when the input cannot be mapped or changed since planning, GGTK_ERR_USAGE (plan already run),
 * GGTK_ERR_NOMEM. */
GGTK_API ggtk_status inf_quantize_run(inf_quantize_plan *plan, const char *output_path,
                                      const inf_quantize_callbacks *callbacks,
                                      inf_quantize_tensor_stats *stats, ggtk_error *err);

#ifdef __cplusplus
}
#endif

#endif /* INF_QUANTIZE_FILE_H */
