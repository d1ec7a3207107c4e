/* report.c - gguf-eval's output: results on stdout in llama-perplexity's formats (so the two
 * tools' outputs can be compared line by line) or as JSON; set-up facts and speed on stderr. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "eval_tool.h"
#include <ggtk/inf_vocab.h>

#define MIB (1024.0 * 1024.0)

void eval_print_chunk(const inf_chunk_result *r, const inf_perplexity *run, bool kld, bool tty)
{
    if (!kld) {
        /* llama-perplexity writes every chunk on one line; on a terminal one per line reads
         * better next to the progress line on stderr. */
        printf("[%d]%.4f,%s", r->index + 1, r->ppl, tty ? "\n" : "");
        fflush(stdout);
        return;
    }
    if (r->index == 0)
        printf("chunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence  "
               "            \xce\x94p RMS            Same top p\n");
    inf_kld_summary e = inf_kld_estimates(inf_perplexity_kld_stats(run));
    printf("%4d", r->index + 1);
    printf("    %9.4f \xc2\xb1 %9.4f", e.ppl.value, e.ppl.error);
    printf("    %10.5f \xc2\xb1 %10.5f", e.log_ppl_ratio.value, e.log_ppl_ratio.error);
    printf("    %10.5f \xc2\xb1 %10.5f", e.kld.value, e.kld.error);
    printf("    %6.3f \xc2\xb1 %6.3f %%", 100.0 * e.rms_p_diff.value, 100.0 * e.rms_p_diff.error);
    printf("    %6.3f \xc2\xb1 %6.3f %%\n", 100.0 * e.same_top.value, 100.0 * e.same_top.error);
    fflush(stdout);
}

static void print_kld_blocks(const inf_kld_summary *k)
{
    printf("====== Perplexity statistics ======\n");
    printf("Mean PPL(Q)                   : %10.6f \xc2\xb1 %10.6f\n", k->ppl.value, k->ppl.error);
    printf("Mean PPL(base)                : %10.6f \xc2\xb1 %10.6f\n", k->ppl_base.value,
           k->ppl_base.error);
    printf("Cor(ln(PPL(Q)), ln(PPL(base))): %6.2f%%\n", 100.0 * k->log_ppl_correlation);
    printf("Mean ln(PPL(Q)/PPL(base))     : %10.6f \xc2\xb1 %10.6f\n", k->log_ppl_ratio.value,
           k->log_ppl_ratio.error);
    printf("Mean PPL(Q)/PPL(base)         : %10.6f \xc2\xb1 %10.6f\n", k->ppl_ratio.value,
           k->ppl_ratio.error);
    printf("Mean PPL(Q)-PPL(base)         : %10.6f \xc2\xb1 %10.6f\n\n", k->ppl_diff.value,
           k->ppl_diff.error);

    printf("====== KL divergence statistics ======\n");
    printf("Mean    KLD: %10.6f \xc2\xb1 %10.6f\n", k->kld.value, k->kld.error);
    printf("Maximum KLD: %10.6f\n", k->kld_max);
    for (int i = 0; i < INF_KLD_N_PERCENTILES; i++) {
        float f = inf_kld_percentile_fractions[i];
        if (f == 0.75f || f == 0.25f)
            continue; /* llama-perplexity shows these for dp only */
        if (f == 0.5f)
            printf("Median  KLD: %10.6f\n", k->kld_percentile[i]);
        else
            printf("%4.1f%%   KLD: %10.6f\n", 100.0 * f, k->kld_percentile[i]);
    }
    printf("Minimum KLD: %10.6f\n\n", k->kld_min);

    printf("====== Token probability statistics ======\n");
    printf("Mean    \xce\x94p: %6.3f \xc2\xb1 %5.3f %%\n", 100.0 * k->p_diff.value,
           100.0 * k->p_diff.error);
    printf("Maximum \xce\x94p: %6.3f%%\n", 100.0 * k->p_diff_max);
    for (int i = 0; i < INF_KLD_N_PERCENTILES; i++) {
        float f = inf_kld_percentile_fractions[i];
        if (f == 0.5f)
            printf("Median  \xce\x94p: %6.3f%%\n", 100.0 * k->p_diff_percentile[i]);
        else
            printf("%4.1f%%   \xce\x94p: %6.3f%%\n", 100.0 * f, 100.0 * k->p_diff_percentile[i]);
    }
    printf("Minimum \xce\x94p: %6.3f%%\n", 100.0 * k->p_diff_min);
    printf("RMS \xce\x94p    : %6.3f \xc2\xb1 %5.3f %%\n", 100.0 * k->rms_p_diff.value,
           100.0 * k->rms_p_diff.error);
    printf("Same top p: %6.3f \xc2\xb1 %5.3f %%\n", 100.0 * k->same_top.value,
           100.0 * k->same_top.error);
}

void eval_print_final(const eval_summary *s)
{
    if (s->kld) {
        printf("\n");
        if (s->kld->count < 100) {
            printf("(fewer than 100 positions scored: no summary statistics, as in "
                   "llama-perplexity)\n");
            return;
        }
        print_kld_blocks(s->kld);
        return;
    }
    printf("\n");
    double error = inf_ppl_stats_error(s->stats);
    if (isnan(error))
        printf("Final estimate: PPL = %.4f (no uncertainty: the scores do not vary)\n",
               inf_ppl_stats_ppl(s->stats));
    else
        printf("Final estimate: PPL = %.4f +/- %.5f\n", inf_ppl_stats_ppl(s->stats), error);
}

/* A number; JSON has none for NaN and the infinities (jansson refuses them, and the key or the
 * array element they belong to would vanish), so those are the strings "nan", "inf" and "-inf"
 * (docs/eval.md). */
static json_t *number(double v)
{
    if (isfinite(v))
        return json_real(v);
    return json_string(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

static json_t *estimate_json(inf_estimate e)
{
    json_t *obj = json_object();
    json_object_set_new(obj, "value", number(e.value));
    json_object_set_new(obj, "error", number(e.error));
    return obj;
}

static json_t *percentiles_json(const float *values, float min, float max)
{
    json_t *obj = json_object();
    json_object_set_new(obj, "max", number(max));
    for (int i = 0; i < INF_KLD_N_PERCENTILES; i++) {
        char key[16];
        snprintf(key, sizeof key, "p%g", 100.0 * inf_kld_percentile_fractions[i]);
        json_object_set_new(obj, key, number(values[i]));
    }
    json_object_set_new(obj, "min", number(min));
    return obj;
}

static json_t *kld_json(const inf_kld_summary *k)
{
    json_t *obj = json_object();
    json_object_set_new(obj, "ppl", estimate_json(k->ppl));
    json_object_set_new(obj, "ppl_base", estimate_json(k->ppl_base));
    json_object_set_new(obj, "log_ppl_correlation", number(k->log_ppl_correlation));
    json_object_set_new(obj, "log_ppl_ratio", estimate_json(k->log_ppl_ratio));
    json_object_set_new(obj, "ppl_ratio", estimate_json(k->ppl_ratio));
    json_object_set_new(obj, "ppl_diff", estimate_json(k->ppl_diff));
    json_object_set_new(obj, "kld", estimate_json(k->kld));
    json_object_set_new(obj, "kld_percentiles", percentiles_json(k->kld_percentile, k->kld_min,
                                                                 k->kld_max));
    json_object_set_new(obj, "p_diff", estimate_json(k->p_diff));
    json_object_set_new(obj, "p_diff_percentiles",
                        percentiles_json(k->p_diff_percentile, k->p_diff_min, k->p_diff_max));
    json_object_set_new(obj, "rms_p_diff", estimate_json(k->rms_p_diff));
    json_object_set_new(obj, "same_top", estimate_json(k->same_top));
    json_object_set_new(obj, "positions", json_integer(k->count));
    return obj;
}

void eval_print_json(const eval_summary *s)
{
    json_t *root = json_object();
    json_object_set_new(root, "model", json_string(s->opts->model));
    json_object_set_new(root, "text", s->opts->kld ? json_null() : json_string(s->opts->text));
    json_object_set_new(root, "n_ctx", json_integer(s->n_ctx));
    json_object_set_new(root, "n_batch", json_integer(inf_session_get_params(s->session).n_batch));
    json_object_set_new(root, "n_threads",
                        json_integer(inf_session_get_params(s->session).n_threads));
    json_object_set_new(root, "n_chunks", json_integer(s->n_chunks));
    json_object_set_new(root, "scored_tokens", json_integer(s->stats->count));
    json_object_set_new(root, "ppl", number(inf_ppl_stats_ppl(s->stats)));
    json_object_set_new(root, "ppl_error", number(inf_ppl_stats_error(s->stats)));
    json_t *chunks = json_array();
    for (int32_t i = 0; i < s->history->n; i++) {
        json_t *c = json_object();
        json_object_set_new(c, "chunk", json_integer(i + 1));
        json_object_set_new(c, "ppl", number(s->history->ppl[i]));
        json_object_set_new(c, "chunk_ppl", number(s->history->chunk_ppl[i]));
        if (s->history->chunk_kld)
            json_object_set_new(c, "chunk_kld", number(s->history->chunk_kld[i]));
        json_array_append_new(chunks, c);
    }
    json_object_set_new(root, "chunks", chunks);
    if (s->kld)
        json_object_set_new(root, "kl_divergence", kld_json(s->kld));
    json_object_set_new(root, "seconds", number(s->seconds));
    json_object_set_new(root, "tokens_per_second", number(s->tokens_per_second));
    json_object_set_new(root, "peak_rss_bytes", json_integer((json_int_t)s->peak_rss_kib * 1024));
    json_object_set_new(root, "weight_bytes", json_integer((json_int_t)inf_model_weight_bytes(s->model)));
    json_object_set_new(root, "kv_bytes", json_integer((json_int_t)inf_session_kv_bytes(s->session)));
    json_object_set_new(root, "compute_bytes",
                        json_integer((json_int_t)inf_session_compute_bytes(s->session)));
    const inf_session_params sp = inf_session_get_params(s->session);
    json_object_set_new(root, "device", json_string(inf_device_name(sp.device)));
    json_object_set_new(root, "device_description",
                        json_string(inf_session_device_description(s->session)));
    json_object_set_new(root, "n_gpu_layers", json_integer(sp.n_gpu_layers));
    const inf_session_device_memory dm = inf_session_device_bytes(s->session);
    json_t *device = json_object();
    json_object_set_new(device, "weights", json_integer((json_int_t)dm.weights));
    json_object_set_new(device, "kv", json_integer((json_int_t)dm.kv));
    json_object_set_new(device, "compute", json_integer((json_int_t)dm.compute));
    json_object_set_new(device, "logits", json_integer((json_int_t)dm.logits));
    json_object_set_new(root, "device_bytes", device);
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    if (text)
        printf("%s\n", text);
    free(text);
    json_decref(root);
}

void eval_print_setup(const eval_summary *s)
{
    const inf_model_hparams *hp = inf_model_get_hparams(s->model);
    const inf_vocab *vocab = inf_model_get_vocab(s->model);
    const inf_session_params sp = inf_session_get_params(s->session);
    fprintf(stderr, "gguf-eval: model %s: llama, %u layers, %u heads (%u kv), %.2f M parameters\n",
            s->opts->model, hp->n_layer, hp->n_head, hp->n_head_kv,
            inf_model_n_params(s->model) / 1e6);
    fprintf(stderr, "gguf-eval: vocabulary: %s, %d tokens, BOS %s\n",
            inf_vocab_get_type(vocab) == INF_VOCAB_BPE ? "BPE" : "SentencePiece",
            inf_vocab_n_tokens(vocab),
            inf_vocab_adds_bos(vocab) ? "added (and replaces the first token of each chunk)"
                                      : "not added (the vocabulary says add_bos_token = false)");
    if (s->opts->kld)
        fprintf(stderr, "gguf-eval: tokens and chunking from base file %s\n", s->opts->kld_base);
    else
        fprintf(stderr, "gguf-eval: text %s%s%s%s: %zu tokens\n", s->opts->text,
                s->text_member[0] ? " (zip entry " : "", s->text_member,
                s->text_member[0] ? ")" : "", s->n_text_tokens);
    fprintf(stderr, "gguf-eval: %d chunks of %d tokens (the last %d of each scored), batch %d, "
            "%d threads\n", s->n_chunks, s->n_ctx, s->n_scored, sp.n_batch, sp.n_threads);
    fprintf(stderr, "gguf-eval: device: %s\n", inf_session_device_description(s->session));
    fprintf(stderr, "gguf-eval: memory: weights %.2f MiB (%s%s), KV cache %.2f MiB (%s), compute "
            "buffer %.2f MiB\n", inf_model_weight_bytes(s->model) / MIB,
            s->opts->use_mmap ? "mapped" : "read into memory", s->opts->use_mlock ? ", locked" : "",
            inf_session_kv_bytes(s->session) / MIB, sp.kv_type == GGTK_TENSOR_F16 ? "f16" : "f32",
            inf_session_compute_bytes(s->session) / MIB);
    const inf_session_device_memory dm = inf_session_device_bytes(s->session);
    if (sp.device == INF_DEVICE_CUDA)
        fprintf(stderr, "gguf-eval: device memory: weights %.2f MiB, KV cache %.2f MiB, compute "
                "buffer %.2f MiB, logits %.2f MiB\n", dm.weights / MIB, dm.kv / MIB,
                dm.compute / MIB, dm.logits / MIB);
    fprintf(stderr, "gguf-eval: model loaded in %.1f ms\n", s->load_seconds * 1e3);
}

void eval_print_speed(const eval_summary *s)
{
    fprintf(stderr, "gguf-eval: %lld tokens in %.2f s: %.1f tokens/s; peak memory %.1f MiB "
            "(max RSS)\n", (long long)s->n_chunks * s->n_ctx, s->seconds, s->tokens_per_second,
            s->peak_rss_kib / 1024.0);
}
