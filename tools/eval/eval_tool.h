/* eval_tool.h - the parts of gguf-eval: command-line options, and the printing of results in
 * llama-perplexity's formats (text) or as one JSON object. */
#ifndef EVAL_TOOL_H
#define EVAL_TOOL_H

#include <stdbool.h>
#include <stdint.h>

#include <ggtk/inf_eval.h>
#include <ggtk/inf_model.h>

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

typedef struct eval_options {
    const char *model;
    const char *text;
    int32_t n_ctx;
    bool n_ctx_given;
    int32_t n_batch;
    int n_threads;
    int32_t n_chunks;
    bool use_mmap;
    bool use_mlock;
    bool json;
    const char *kld_base;   /* --kl-divergence-base FILE */
    bool kld;               /* --kl-divergence: compare with kld_base instead of writing it */
    inf_kld_base_format kld_base_format; /* --kl-divergence-base-format llama|compact */
    inf_kld_compact_params kld_compact;  /* --kl-divergence-epsilon, --kl-divergence-max-entries */
    bool kld_compact_given;              /* either of those given */
    const char *convert_in, *convert_out; /* --kl-divergence-base-convert IN OUT */
    const char *plot;
    ggtk_tensor_type kv_type;
    inf_device device;                 /* --device / -dev cpu|cuda (default auto) */
    int32_t n_gpu_layers;              /* -ngl / --n-gpu-layers N (default -1: all) */
    const char *imatrix_out;           /* --imatrix-out FILE */
    inf_imatrix_format imatrix_format; /* --imatrix-format gguf|dat (default gguf) */
    bool imatrix_format_given;
    int32_t imatrix_out_freq;          /* --output-frequency N: rewrite FILE every N chunks */
    int32_t imatrix_save_freq;         /* --save-frequency N: keep FILE.at_K every N chunks */
} eval_options;

/* Parse argv. Returns 0 (run), or an exit code with *exit_now set (--help: 0, errors: 2 after a
 * message on stderr). */
int eval_options_parse(eval_options *opts, int argc, char **argv, bool *exit_now);
/* The files the run will write (the base file unless --kl-divergence, the plot) against the files
 * it reads and each other, before anything is loaded: output_path.h's checks. */
ggtk_status eval_options_check_paths(const eval_options *opts, ggtk_error *err);

/* --kl-divergence-base-convert IN OUT (convert.c): rewrite the llama-format base IN as a compact
 * base OUT chosen by opts->kld_compact. */
ggtk_status eval_convert_base(const eval_options *opts, ggtk_error *err);

/* The importance matrix of --imatrix-out (imatrix_out.c). eval_imatrix_new: NULL with *err set
 * on failure; warns on stderr when the format and the file name disagree, as llama-imatrix does.
 * eval_imatrix_after_chunk writes the periodic copies; eval_imatrix_finish the final file and a
 * one-line summary (partly covered entries each get a warning line). */
inf_imatrix *eval_imatrix_new(const eval_options *opts, int32_t n_ctx, ggtk_error *err);
ggtk_status eval_imatrix_after_chunk(const eval_options *opts, const inf_imatrix *imatrix,
                                     int32_t chunks_done, ggtk_error *err);
ggtk_status eval_imatrix_finish(const eval_options *opts, const inf_imatrix *imatrix,
                                ggtk_error *err);

/* Per-chunk results kept for the plot and the JSON. */
typedef struct eval_history {
    double *ppl;       /* running estimate after each chunk */
    double *chunk_ppl;
    double *chunk_kld; /* NULL without a base */
    int32_t n;
} eval_history;

/* Everything the final report shows. */
typedef struct eval_summary {
    const eval_options *opts;
    const inf_model *model;
    const inf_session *session;
    const char *text_member;  /* zip entry read, "" otherwise */
    double load_seconds;      /* opening and validating the model (mmap: independent of its size) */
    size_t n_text_tokens;     /* 0 in KLD mode */
    int32_t n_ctx;
    int32_t n_chunks;
    int32_t n_scored;
    const inf_ppl_stats *stats;
    const inf_kld_summary *kld; /* NULL without a base */
    const eval_history *history;
    double seconds;           /* the chunk loop */
    double tokens_per_second;
    long peak_rss_kib;
} eval_summary;

/* Text output, as llama-perplexity prints it on stdout. */
void eval_print_chunk(const inf_chunk_result *r, const inf_perplexity *run, bool kld, bool tty);
void eval_print_final(const eval_summary *s);
/* One JSON object on stdout. */
void eval_print_json(const eval_summary *s);

/* Start-up facts and the closing speed/memory line, on stderr. */
void eval_print_setup(const eval_summary *s);
void eval_print_speed(const eval_summary *s);

#endif
