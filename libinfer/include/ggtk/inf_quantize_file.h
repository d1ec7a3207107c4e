/* inf_quantize_file.h - convert a whole GGUF model file to one of llama.cpp's file types (F32,
 * F16, BF16, Q4_0 .. Q8_0 and the K mixes Q2_K, Q3_K_S/M/L, Q4_K_S/M, Q5_K_S/M, Q6_K) the way
 * llama.cpp's llama-quantize does, streaming the tensors in file order from the mapped input to
 * the output.
 *
 * Two steps: inf_quantize_plan_new() decides which tensor gets which type (no data is touched,
 * so it also serves --dry-run, for every file type the rules know), then inf_quantize_run()
 * converts and writes the file through a temporary file that is renamed into place only when
 * everything was written. Whether the kernels can write each chosen tensor type is checked by the
 * run, not the plan: a plan may name types this build cannot write yet (the plan warns).
 *
 * Which tensor gets which type (the rules of llama-quantize, src/llama-quant.cpp), in order:
 *  1. only tensors with 2 or more dimensions whose name ends in "weight" are converted; norms,
 *     biases, 1-D tensors and a few small special tensors (expert gates, position embeddings, ...)
 *     keep their type;
 *  2. --embd-type sets token_embd.weight, --output-type sets output.weight;
 *  3. the file type's tensor type (gguf_util.h, ggtk_file_type_info.tensor_type: Q4_K for
 *     Q4_K_S and Q4_K_M) is the starting point; for F32/F16/BF16 files nothing else applies;
 *  4. the first --tensor-type rule whose pattern matches the name (a POSIX extended regular
 *     expression searched anywhere in the name, like llama.cpp's std::regex_search) chooses;
 *  5. otherwise, unless `pure`, the mixture rules of the file type (rules_mix.c):
 *     - output.weight, and token_embd.weight when the model has no output.weight (tied
 *       embeddings): --output-type if given, else Q8_0 for Falcon or when its rows are not a
 *       multiple of the file's block size, else Q6_K (Q8_0 files keep Q8_0);
 *     - token_embd.weight (untied): Q4_K for TQ1_0, TQ2_0 and Q2_0 files;
 *     - attn_v (also attn_qkv, attn_kv_b), counted in llama-quantize's tensor order (by layer
 *       number, then name): Q2_K -> Q4_K when n_head/n_head_kv >= 4, else Q3_K; Q3_K_M -> Q5_K
 *       for the first two, Q4_K after; Q3_K_L -> Q5_K; Q4_K_M/Q5_K_M -> Q6_K on use_more_bits
 *       layers (the first and last eighth and every third between); Q4_K_S -> Q5_K for the first
 *       four; then Q3_K/Q4_K -> Q5_K in 70B models; Q8_0 in 8-expert models;
 *     - attn_k: Q8_0 in 8-expert models;
 *     - ffn_down, by layer (the counter, or the blk.N. number in MoE models): Q2_K -> Q3_K;
 *       Q3_K_M -> Q5_K in the first 16th of layers, else Q4_K (Falcon: Q4_K on use_more_bits
 *       layers, Q3_K elsewhere); Q3_K_L -> Q5_K (Falcon Q4_K); Q4_K_M -> Q6_K on use_more_bits
 *       layers (Falcon: Q6_K first 16th, Q5_K use_more_bits, Q4_K else); Q5_K_M -> Q6_K on
 *       use_more_bits layers; Q4_K_S -> Q5_K in the first eighth (not Falcon);
 *     - attn_output: Q2_K -> Q3_K, Q3_K_M -> Q4_K, Q3_K_L -> Q5_K (Falcon: Q3_K_L -> Q4_K only);
 *       in 8-expert models Q5_K for Q2_K, Q3_K_S, Q3_K_M, Q4_K_S and Q4_K_M instead;
 *     (70B: llama with 80 layers and grouped-query attention, deci/olmo/qwen2 with 80, jais2 with
 *     68; llama.cpp's own attn_qkv rule never applies, since attn_qkv takes the attn_v rule);
 *  6. a tensor whose row length is not a multiple of the chosen type's block size falls back to
 *     a type that fits (Q2_K/Q3_K -> Q4_0, Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, IQ types
 *     -> IQ4_NL; F16 when that does not fit either, and for the simple types, where llama.cpp
 *     stops with an error), with a warning; with `no_fallback` the plan fails instead.
 *
 * Metadata is copied in order; general.file_type is set to the file type and
 * general.quantization_version to 2. Tensor order and alignment are kept.
 *
 * Errors: see <ggtk/error.h>. The input's reader errors come back as the reader reported them
 * (status and offset); the writer's likewise. Specific to the quantizer: GGTK_ERR_USAGE for bad
 * options, GGTK_ERR_PATH for an output path that names the input, GGTK_ERR_REQUANTIZE for a
 * quantized tensor without allow_requantize, GGTK_ERR_NONFINITE for NaN/Inf in the input,
 * GGTK_ERR_UNSUPPORTED for a tensor type no kernel reads or writes.
 * Lifecycle: a plan is built in memory (inf_quantize_plan_new / inf_quantize_plan_free).
 *
 * Thread-safety: a plan is used by one thread at a time; inf_quantize_run() parallelises itself
 * with OpenMP. No function installs signal handlers or prints anything.
 */
#ifndef INF_QUANTIZE_FILE_H
#define INF_QUANTIZE_FILE_H

#include <ggtk/error.h>
#include <ggtk/gguf.h>
#include <ggtk/gguf_util.h>
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

/* True when the plan knows llama-quantize's per-tensor rules for `file_type` (a ggtk_file_type):
 * F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K_S/M/L, Q4_K_S/M, Q5_K_S/M, Q6_K, TQ1_0,
 * TQ2_0, Q1_0 and Q2_0. Not the IQ mixes, Q2_K_S or MXFP4_MOE. Whether this build's kernels can
 * write the tensor types a plan chooses is checked by inf_quantize_run(). */
GGTK_API bool inf_quantize_file_type_supported(uint32_t file_type);

/* The file type llama-quantize's TYPE argument names: one of its names in any case ("Q4_K_M",
 * "q6_k", "f16"; "Q3_K", "Q4_K" and "Q5_K" mean the _M mixes) or its decimal number ("15"), or -1
 * when llama-quantize has no such file type (llama-quantize's "COPY" is not one). */
GGTK_API int inf_quantize_file_type_from_name(const char *name);

/* llama-quantize's name of `file_type` ("Q4_K_M", "F32"; static storage), or NULL when
 * llama-quantize cannot write that file type. */
GGTK_API const char *inf_quantize_file_type_name(uint32_t file_type);

/* True when `type` can be given for single tensors (--output-type, --embd-type, --tensor-type):
 * llama.cpp stores weights in it (refused: Q8_1 and Q8_K, which ggml uses only for activations,
 * and the integer and F64 types). Whether this build writes it is inf_type_can_quantize(), checked
 * by inf_quantize_run(); which types the kernels read is inf_type_can_dequantize(). */
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
    ggtk_file_type file_type; /* must pass inf_quantize_file_type_supported() */
    bool pure;              /* every convertible tensor gets the file type's tensor type: no
                             * mixture rules (--tensor-type rules and fallbacks still apply) */
    bool no_fallback;       /* fail naming the tensor instead of falling back (rule 6) */
    int output_type;        /* type for output.weight, or -1 for the rule above */
    int embd_type;          /* type for token_embd.weight, or -1 for the rule above */
    const inf_quantize_tensor_rule *tensor_rules; /* tried in order, first match wins */
    size_t n_tensor_rules;
    bool allow_requantize;  /* convert tensors that are already quantized (dequantize first) */
    int n_threads;          /* threads for the conversion; 0 or less: OpenMP's default */
    /* max_tensors or max_bytes > 0: write the output as the parts of a split model, cut as
     * llama-gguf-split cuts the whole output file (ggtk_writer_split()), the output path being
     * the parts' prefix; both 0 (the default): one file. */
    ggtk_split_options split;
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

/* The defaults for a file of `file_type`: not pure, fallbacks allowed, no overrides (output_type
 * and embd_type -1), no tensor rules, no requantizing, default threads, one output file (no
 * split), no imatrix. */
GGTK_API inf_quantize_options inf_quantize_options_default(ggtk_file_type file_type);

/* ---------------------------------------------------------------------------------------------
 * The plan: which tensor gets which type
 * ------------------------------------------------------------------------------------------- */

/* Why a tensor gets its new type. */
typedef enum inf_quantize_reason {
    INF_QUANTIZE_REASON_KEPT = 0,      /* not a convertible weight (1-D, norm, ...): type kept */
    INF_QUANTIZE_REASON_FILE_TYPE,     /* the file type's tensor type */
    INF_QUANTIZE_REASON_OUTPUT_RULE,   /* output.weight (or tied token_embd) rule, not pure */
    INF_QUANTIZE_REASON_OUTPUT_OPTION, /* options.output_type */
    INF_QUANTIZE_REASON_EMBD_OPTION,   /* options.embd_type */
    INF_QUANTIZE_REASON_TENSOR_RULE,   /* a --tensor-type rule matched */
    INF_QUANTIZE_REASON_MIX_RULE,      /* a mixture rule of the file type (attn_v, ffn_down, ...) */
} inf_quantize_reason;

/* Short name of a reason ("kept", "file type", ...). Never NULL. */
GGTK_API const char *inf_quantize_reason_name(inf_quantize_reason reason);

/* The decision for one tensor, in file order. */
typedef struct inf_quantize_plan_tensor {
    const ggtk_tensor_info *info; /* the input tensor, owned by its input part */
    ggtk_tensor_type new_type;    /* type it is written as */
    ggtk_tensor_type wanted_type; /* type the rules chose; differs from new_type after a fallback */
    inf_quantize_reason reason;
    /* For OUTPUT_RULE and MIX_RULE: which rule, in words ("ffn_down: use_more_bits layer");
     * static storage. NULL for the other reasons. */
    const char *rule;
    bool fallback;                /* the row length did not fit wanted_type */
    bool requantize;              /* the input is quantized and converted (dequantized first) */
    uint64_t new_size;            /* bytes of data written for it */
} inf_quantize_plan_tensor;

/* A plan for one input model. The public fields are read-only for the caller. */
typedef struct inf_quantize_plan {
    ggtk_split *input_parts;           /* the input's headers (GGTK_OPEN_METADATA): one file, or
                                        * every part of a split model; owned */
    const ggtk_file *input;            /* its first part: the metadata */
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
    uint64_t file_size_before;         /* input file size (all parts) */
    uint64_t file_size_after;          /* exact size the output file (all parts) will have */
    char **warnings;                   /* n_warnings lines (fallbacks, requantizing, types no
                                        * kernel writes) */
    int64_t n_warnings;
    ggtk_writer *writer;               /* private: the output's header, ready to write */
    ggtk_writer **output_parts;        /* private: with options.split, the parts' headers */
    int n_output_parts;                /* parts written (options.split), 0 for one file */
} inf_quantize_plan;

/* Read the header of the GGUF file at `input_path` and decide the type of every tensor under
 * `options`. `input_path` may be any part of a split model (ggtk_split_open()): the tensors of
 * all parts are planned, in the order of the merged file, and the output is one file without the
 * split.* keys, as llama-quantize writes it. Nothing is written and no tensor data is read, so
 * this is also the whole of a dry run. Returns the plan (free it with inf_quantize_plan_free())
 * or NULL with `err` set: the reader's error when the file cannot be opened or is invalid
 * (GGTK_ERR_IO, GGTK_ERR_MAGIC, GGTK_ERR_TRUNCATED, ...) or a split set that does not hold
 * together; GGTK_ERR_USAGE (unsupported file type, bad regex, override type llama.cpp never
 * stores weights in, a fallback needed under no_fallback (naming the tensor, its row length and
 * the wanted type), a MoE ffn tensor without a blk.N. layer number); GGTK_ERR_REQUANTIZE (a
 * tensor would be converted from a quantized type without allow_requantize);
 * GGTK_ERR_UNSUPPORTED (no kernel reads the input type); GGTK_ERR_NOMEM. Tensor types the
 * kernels cannot write do not fail the plan: they get a warning, and inf_quantize_run() refuses
 * the plan. */
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
    /* Called right after a temporary output file was created (once, or once per part of a split
     * output), with its path (valid until inf_quantize_run() returns). A tool copies it for a
     * signal handler that unlinks it. */
    void (*on_temp_file)(const char *temp_path, void *user);
    /* Called after each batch of rows has been written. */
    void (*on_progress)(const inf_quantize_progress *progress, void *user);
    void *user;
    /* Called right before each temporary output file is created, so that a tool can hold its
     * signals back until on_temp_file has tracked the file (last, so that initialisers written
     * before it still fit). */
    void (*before_temp_file)(void *user);
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

/* Convert and write the file planned by `plan` to `output_path` (with options.split, the parts
 * `output_path`-00001-of-0000N.gguf, ...: ggtk_split_part_path()); a plan runs at most once.
 * Tensors are processed in file order in batches of rows (about 8 MiB of F32 values, a batch
 * may span several small tensors), the rows of a batch shared among OpenMP threads; each row is
 * checked, converted and read back by one thread. Memory use stays a few batches (the input is
 * mapped read-only and pages already processed are released from the process), and the output
 * does not depend on the thread count. The input must not have changed since planning. Every input value is checked: NaN/Inf anywhere fails the run.
 * The output appears at `output_path` only when everything succeeded; on any failure it is not
 * created (an existing file there is left untouched) and the temporary file is removed. A
 * process killed meanwhile leaves only the temporary file (named by the writer, next to
 * `output_path`), never a partial `output_path`. The parts of a split output are written one
 * after the other, each through its temporary file, and renamed only once all were written; when
 * a rename fails, the parts already renamed are removed.
 * `stats` may be NULL or hold plan->n_tensors entries, filled for each tensor.
 * Errors: GGTK_ERR_UNSUPPORTED (no kernel of this build writes a planned tensor type; nothing is
 * created), GGTK_ERR_PATH (see inf_quantize_check_paths()), GGTK_ERR_NONFINITE (NaN/Inf in the
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
