/* test_cuda_eval.c - evaluation on a CUDA device: the scoring kernel against its host reference,
 * then whole perplexity and KL-divergence runs of tiny models on a CUDA session against the same
 * runs on the CPU backend (within float summation spread), long decodes whose logits rows stay on
 * the device, base files written from device rows, the session's device memory, and the errors
 * (partial offload without the scheduler, out of device memory, no device). Without a device the
 * tests that need one are skipped with the reason; with CUDA_EMU=1 they run on the emulator, so
 * the models are tiny and the chunks short. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_backend_cuda.h>
#include <ggtk/inf_eval.h>

#include "cuda_op_compare.h"
#include "engine/backend/cuda/logits_score.h"
#include "eval/logits_score.h"
#include "model/gemma_test_support.h"
#include "model/model_test_support.h"
#include "model/session_logits.h"
#include "test.h"

/* ---------------------------------------------------------------------------------------------
 * The scoring kernel alone
 * ------------------------------------------------------------------------------------------- */

static float uniform(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((*state >> 40) & 0xffffff) / (float)0x1000000;
}

/* Rows of random logits, wide enough that each thread of a block sums many of them. */
static void random_logits(float *x, size_t n, float spread, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        x[i] = spread * (2.0f * uniform(&seed) - 1.0f);
}

/* Relative difference with a floor, for sums that are compared across summation orders. */
static double rel_diff(double a, double b)
{
    return fabs(a - b) / (fabs(b) > 1e-12 ? fabs(b) : 1e-12);
}

static bool same_score(const cuda_row_score *got, const cuda_row_score *want, char *why,
                       size_t why_size)
{
    if (got->max_logit != want->max_logit || got->top != want->top ||
        got->target_logit != want->target_logit || got->top_base != want->top_base)
        snprintf(why, why_size, "max %g/%g top %d/%d target %g/%g top_base %d/%d",
                 got->max_logit, want->max_logit, got->top, want->top, got->target_logit,
                 want->target_logit, got->top_base, want->top_base);
    else if (rel_diff(got->sum_exp, want->sum_exp) > 1e-6)
        snprintf(why, why_size, "sum_exp %.9g vs %.9g", got->sum_exp, want->sum_exp);
    else if (fabs(got->kld - want->kld) > 1e-6 * (1 + fabs(want->kld)))
        snprintf(why, why_size, "kld %.9g vs %.9g", got->kld, want->kld);
    else
        return true;
    return false;
}

/* Score `n_rows` rows of `n_vocab` on the device (plain, against llama rows, against entries) and
 * compare each with cuda_score_row_reference(). */
static void check_kernel(int32_t n_vocab, int32_t n_rows, uint64_t seed)
{
    inf_backend *cuda = cuda_test_backend();
    const size_t n = (size_t)n_vocab * (size_t)n_rows;
    const size_t row_words = inf_logprob_row_words(n_vocab);
    float *logits = malloc(n * sizeof *logits), *base_logits = malloc(n * sizeof *base_logits);
    uint16_t *rows = malloc((size_t)n_rows * row_words * sizeof *rows);
    int32_t *targets = malloc((size_t)n_rows * sizeof *targets);
    int32_t *begin = malloc(((size_t)n_rows + 1) * sizeof *begin);
    int32_t *ids = malloc(n * sizeof *ids);
    float *log_p = malloc(n * sizeof *log_p);
    cuda_row_score *got = malloc((size_t)n_rows * sizeof *got);
    inf_buffer *device = inf_backend_alloc_buffer(cuda, n * sizeof *logits);
    CHECK(logits && base_logits && rows && targets && begin && ids && log_p && got && device);
    random_logits(logits, n, 12.0f, seed);
    random_logits(base_logits, n, 12.0f, seed + 1);
    logits[3] = logits[n_vocab - 1] = 40.0f; /* a tie for the top: the first one counts */
    int32_t n_entries = 0;
    for (int32_t r = 0; r < n_rows; r++) {
        targets[r] = (int32_t)((uint64_t)r * 7919 % (uint64_t)n_vocab);
        inf_logprob_row_encode(base_logits + (size_t)r * n_vocab, n_vocab, targets[r],
                               rows + (size_t)r * row_words);
        begin[r] = n_entries;
        for (int32_t i = r; i < n_vocab; i += 5) { /* a compact row's entries: every fifth id */
            ids[n_entries] = i;
            log_p[n_entries++] = -0.001f * (float)i;
        }
    }
    begin[n_rows] = n_entries;
    device->ops->write(device, device->base, logits, n * sizeof *logits);
    cuda_score_rows_job job = {.logits = device->base, .n_vocab = n_vocab, .n_rows = n_rows,
                               .targets = targets, .row_words = row_words};
    for (int mode = 0; mode < 3; mode++) {
        job.llama_rows = mode == 1 ? rows : NULL;
        job.entry_begin = mode == 2 ? begin : NULL;
        job.entry_ids = ids;
        job.entry_log_p = log_p;
        ggtk_error err = {0};
        CHECK_MSG(cuda_score_rows(cuda, &job, got, &err) == GGTK_OK, "%s", err.message);
        for (int32_t r = 0; r < n_rows; r++) {
            cuda_row_score want;
            cuda_score_row_reference(logits + (size_t)r * n_vocab, n_vocab, targets[r],
                                     mode == 1 ? rows + (size_t)r * row_words : NULL,
                                     mode == 2 ? ids + begin[r] : NULL, log_p + begin[r],
                                     begin[r + 1] - begin[r], &want);
            char why[256];
            CHECK_MSG(same_score(&got[r], &want, why, sizeof why), "vocab %d mode %d row %d: %s",
                      n_vocab, mode, r, why);
        }
    }
    inf_buffer_free(device);
    free(logits), free(base_logits), free(rows), free(targets), free(begin), free(ids);
    free(log_p), free(got);
}

TEST(test_cuda_score_rows_match_the_host_reference)
{
    check_kernel(1000, 5, 42);
    check_kernel(49152, 2, 7);
}

/* ---------------------------------------------------------------------------------------------
 * Whole runs: a CUDA session against a CPU session
 * ------------------------------------------------------------------------------------------- */

enum { N_CTX = 32, N_CHUNKS = 3, N_TOKENS = N_CTX * N_CHUNKS };

typedef struct run_result {
    inf_ppl_stats ppl;
    inf_kld_summary kld;
} run_result;

/* The tokens a run evaluates: the start of the evaluation text for a real vocabulary, the oracle's
 * spread (within the vocabulary) for a tiny one. */
static void eval_tokens(const inf_model *model, inf_token *tokens)
{
    const inf_vocab *vocab = inf_model_get_vocab(model);
    const int32_t n_vocab = inf_vocab_n_tokens(vocab);
    char *text = NULL;
    inf_token *ids = NULL;
    size_t n_ids = 0;
    if (n_vocab > 1000 &&
        test_run(&text, "gzip -dc tests/eval/data/licenses.txt.gz | head -c 4000") == 0 &&
        inf_vocab_tokenize(vocab, text, strlen(text), INF_TOKENIZE_ADD_SPECIAL, &ids, &n_ids,
                           NULL) == GGTK_OK && n_ids >= N_TOKENS) {
        memcpy(tokens, ids, N_TOKENS * sizeof *tokens);
    } else {
        oracle_tokens(tokens, N_TOKENS);
        for (int32_t i = 0; i < N_TOKENS; i++)
            tokens[i] %= n_vocab;
    }
    free(text);
    free(ids);
}

/* A session of N_CTX positions over `model` on `device` (batch n_batch). */
static inf_session *session_on(inf_model *model, inf_device device, int32_t n_gpu_layers,
                               int32_t n_batch, ggtk_error *err)
{
    inf_session_params sp = inf_session_params_default();
    sp.n_ctx = N_CTX;
    sp.n_batch = n_batch;
    sp.n_threads = 1;
    sp.device = device;
    sp.n_gpu_layers = n_gpu_layers;
    return inf_session_new(model, &sp, err);
}

/* Perplexity (base_in NULL) or KL-divergence run of N_CHUNKS chunks; writes `base_out` (llama or
 * compact) when given. False with the reason on stderr. */
static bool run_eval(inf_session *s, const char *base_in, const char *base_out,
                     inf_kld_base_format out_format, run_result *out)
{
    inf_token tokens[N_TOKENS];
    eval_tokens(inf_session_model(s), tokens);
    ggtk_error err = {0};
    inf_perplexity_params pp = inf_perplexity_params_default();
    pp.n_ctx = N_CTX;
    pp.kld_base_out = base_out;
    pp.kld_base_out_format = out_format;
    if (base_in && !(pp.kld_base_in = inf_kld_base_open(base_in, &err))) {
        fprintf(stderr, "    %s\n", err.message);
        return false;
    }
    inf_perplexity *run = inf_perplexity_new(s, base_in ? NULL : tokens, base_in ? 0 : N_TOKENS,
                                             &pp, &err);
    bool ok = run != NULL;
    for (int32_t c = 0; ok && c < inf_perplexity_n_chunks(run); c++) {
        inf_chunk_result r;
        ok = inf_perplexity_next(run, &r, &err) == GGTK_OK;
    }
    ok = ok && inf_perplexity_finish(run, &err) == GGTK_OK;
    if (ok) {
        out->ppl = *inf_perplexity_stats(run);
        if (base_in)
            out->kld = inf_perplexity_kld_summary(run);
    } else {
        fprintf(stderr, "    %s\n", err.message);
    }
    inf_perplexity_free(run);
    inf_kld_base_close(pp.kld_base_in);
    return ok;
}

/* Evaluate `model_path` on the CPU (*cpu) and on CUDA with ngl and batch (*gpu), against base_in
 * when given. */
static void run_both(const char *model_path, int32_t n_gpu_layers, int32_t n_batch,
                     const char *base_in, run_result *cpu_result, run_result *gpu_result)
{
    ggtk_error err = {0};
    inf_model *model = inf_model_open(model_path, NULL, &err);
    CHECK_MSG(model, "%s", err.message);
    inf_session *cpu = session_on(model, INF_DEVICE_CPU, 0, n_batch, &err);
    CHECK_MSG(cpu, "%s", err.message);
    inf_session *gpu = session_on(model, INF_DEVICE_CUDA, n_gpu_layers, n_batch, &err);
    CHECK_MSG(gpu, "%s", err.message);
    CHECK(inf_session_get_params(gpu).device == INF_DEVICE_CUDA);
    CHECK(run_eval(cpu, base_in, NULL, INF_KLD_BASE_LLAMA, cpu_result));
    CHECK(run_eval(gpu, base_in, NULL, INF_KLD_BASE_LLAMA, gpu_result));
    CHECK(gpu_result->ppl.count == cpu_result->ppl.count);
    inf_session_free(gpu);
    inf_session_free(cpu);
    inf_model_close(model);
}

/* One decode's rows scored where the session keeps them (the device) and, downloaded, on the host:
 * the same floats in, so only the order of the sums may differ. Plain, against llama rows and
 * against compact rows (both made from perturbed copies of the rows). */
TEST(test_cuda_device_scores_equal_host_scores_of_the_same_rows)
{
    cuda_test_backend();
    ggtk_error err = {0};
    inf_model *model = inf_model_open(tiny_model("default"), NULL, &err);
    CHECK_MSG(model, "%s", err.message);
    inf_session *gpu = session_on(model, INF_DEVICE_CUDA, -1, N_CTX, &err);
    CHECK_MSG(gpu, "%s", err.message);
    inf_token tokens[N_TOKENS];
    eval_tokens(model, tokens);
    const int32_t first = N_CTX / 2, n = N_CTX - 1 - first;
    CHECK_MSG(inf_session_decode(gpu, tokens, N_CTX, first, &err) == GGTK_OK, "%s", err.message);
    int32_t n_rows = 0;
    CHECK(session_device_logits(gpu, &n_rows) != NULL && n_rows == N_CTX - first);
    const int32_t n_vocab = (int32_t)inf_model_get_hparams(model)->n_vocab;
    const float *host = inf_session_logits(gpu, NULL);
    CHECK(host != NULL);
    const size_t row_words = inf_logprob_row_words(n_vocab);
    uint16_t *rows = malloc((size_t)n * row_words * sizeof *rows);
    sparse_row sparse[N_CTX] = {0};
    float *noisy = malloc((size_t)n_vocab * sizeof *noisy), *log_p = malloc((size_t)n_vocab * 4);
    sparse_scratch scratch = {0};
    CHECK(rows && noisy && log_p && sparse_scratch_init(&scratch, n_vocab));
    const inf_kld_compact_params compact = inf_kld_compact_params_default();
    uint64_t seed = 99;
    for (int32_t r = 0; r < n; r++) {
        for (int32_t i = 0; i < n_vocab; i++)
            noisy[i] = host[(size_t)r * n_vocab + i] + 0.5f * uniform(&seed);
        inf_logprob_row_encode(noisy, n_vocab, tokens[first + r + 1], rows + (size_t)r * row_words);
        bool ok = false;
        sparse_row_from_logits(noisy, n_vocab, tokens[first + r + 1], &compact, log_p, &scratch,
                               &sparse[r], &ok);
        CHECK(ok);
    }
    for (int mode = 0; mode < 3; mode++) {
        double nll_h[N_CTX], nll_d[N_CTX];
        inf_kld_stats slots_h[N_CTX], slots_d[N_CTX];
        float kld_h[N_CTX], kld_d[N_CTX], dp_h[N_CTX], dp_d[N_CTX];
        score_job h = {.n_vocab = n_vocab, .n_rows = n, .targets = tokens + first + 1,
                       .llama_rows = mode == 1 ? rows : NULL,
                       .sparse_rows = mode == 2 ? sparse : NULL, .nll = nll_h,
                       .kld_slots = slots_h, .kld = kld_h, .p_diff = dp_h};
        score_job d = h;
        d.nll = nll_d, d.kld_slots = slots_d, d.kld = kld_d, d.p_diff = dp_d;
        score_rows_host(host, &h, 1);
        CHECK_MSG(score_rows_device(gpu, 0, &d, &err) == GGTK_OK, "%s", err.message);
        for (int32_t r = 0; r < n; r++) {
            CHECK_MSG(rel_diff(nll_d[r], nll_h[r]) < 1e-6, "mode %d row %d: score %.9g vs %.9g",
                      mode, r, nll_d[r], nll_h[r]);
            if (mode == 0)
                continue;
            CHECK_MSG(fabs(kld_d[r] - kld_h[r]) < 1e-6 + 1e-5 * fabs(kld_h[r]),
                      "mode %d row %d: KLD %.9g vs %.9g", mode, r, kld_d[r], kld_h[r]);
            CHECK_MSG(fabsf(dp_d[r] - dp_h[r]) < 1e-6f, "mode %d row %d: dp %.9g vs %.9g", mode,
                      r, dp_d[r], dp_h[r]);
            CHECK(slots_d[r].n_same_top == slots_h[r].n_same_top && slots_d[r].count == 1);
        }
    }
    /* A row range the session does not hold is refused in one line. */
    score_job past = {.n_vocab = n_vocab, .n_rows = 2, .targets = tokens};
    CHECK(score_rows_device(gpu, n_rows - 1, &past, &err) == GGTK_ERR_UNSUPPORTED);
    for (int32_t r = 0; r < n; r++)
        sparse_row_free(&sparse[r]);
    sparse_scratch_free(&scratch);
    free(rows), free(noisy), free(log_p);
    inf_session_free(gpu);
    inf_model_close(model);
}

/* An F32 model evaluated on the CPU and on CUDA alike: the forward passes agree to float
 * rounding, so PPL (and, against a base, the statistics) must agree within 1e-4 relative. */
static void check_same_run(const char *model_path, int32_t n_gpu_layers, int32_t n_batch,
                           const char *base_in)
{
    run_result want = {0}, got = {0};
    run_both(model_path, n_gpu_layers, n_batch, base_in, &want, &got);
    const double ppl_cpu = inf_ppl_stats_ppl(&want.ppl), ppl_gpu = inf_ppl_stats_ppl(&got.ppl);
    CHECK_MSG(rel_diff(ppl_gpu, ppl_cpu) < 1e-4, "PPL %.9f on CUDA, %.9f on the CPU", ppl_gpu,
              ppl_cpu);
    if (!base_in)
        return;
    /* A KL-divergence is a small difference of near-equal terms: the forward passes' float
     * spread (about 1e-5 in a logit) moves it by a few 1e-6 however exactly it is scored (the
     * scoring alone is checked to 1e-6 above). */
    CHECK_MSG(fabs(got.kld.kld.value - want.kld.kld.value) < 1e-5 + 1e-4 * want.kld.kld.value,
              "mean KLD %.9g on CUDA, %.9g on the CPU", got.kld.kld.value, want.kld.kld.value);
    CHECK_MSG(got.kld.same_top.value == want.kld.same_top.value, "same top %.6f vs %.6f",
              got.kld.same_top.value, want.kld.same_top.value);
    CHECK_MSG(rel_diff(got.kld.ppl_base.value, want.kld.ppl_base.value) < 1e-9,
              "PPL(base) %.9f vs %.9f", got.kld.ppl_base.value, want.kld.ppl_base.value);
    CHECK_MSG(fabs(got.kld.rms_p_diff.value - want.kld.rms_p_diff.value) < 1e-5,
              "RMS dp %.9f vs %.9f", got.kld.rms_p_diff.value, want.kld.rms_p_diff.value);
}

TEST(test_cuda_perplexity_equals_the_cpu_backend)
{
    cuda_test_backend();
    const char *path = tiny_model("default");
    CHECK(path != NULL);
    check_same_run(path, -1, N_CTX, NULL);
}

TEST(test_cuda_long_decode_keeps_its_rows_on_the_device)
{
    cuda_test_backend();
    const char *path = tiny_model("default");
    CHECK(path != NULL);
    check_same_run(path, -1, 8, NULL); /* four graphs per chunk write into one rows buffer */
}

/* Gemma 2 (soft-capped attention and logits) and Gemma 3 (a window pattern, its own rope base) with
 * a window of 16-24 positions and batches of 8: the sliding-window caches drop and move positions
 * in device memory between the graphs of a chunk. */
TEST(test_cuda_gemma_sliding_windows_equal_the_cpu_backend)
{
    cuda_test_backend();
    const char *variants[] = {"gemma2", "gemma3_pattern"};
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        const char *path = gemma_model(variants[i]);
        CHECK(path != NULL);
        check_same_run(path, -1, 8, NULL);
    }
}

/* A base of model `model_path` written by a CPU session in `format`, at `name` in the scratch
 * folder (static buffer per call site: copy it). */
static const char *cpu_base(const char *model_path, const char *name, inf_kld_base_format format)
{
    static char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile(name));
    ggtk_error err = {0};
    inf_model *model = inf_model_open(model_path, NULL, &err);
    inf_session *s = model ? session_on(model, INF_DEVICE_CPU, 0, N_CTX, &err) : NULL;
    run_result r;
    bool ok = s && run_eval(s, NULL, path, format, &r);
    if (!ok && err.message[0])
        fprintf(stderr, "    %s\n", err.message);
    inf_session_free(s);
    inf_model_close(model);
    return ok ? path : NULL;
}

/* The F32 model against the Q8_0 copy's base, both formats: the statistics on CUDA equal the
 * CPU's. */
TEST(test_cuda_kl_divergence_equals_the_cpu_backend_for_both_base_formats)
{
    cuda_test_backend();
    char q8[512], llama[512], compact[512];
    CHECK(tiny_model("q8_0") != NULL);
    snprintf(q8, sizeof q8, "%s", tiny_model("q8_0"));
    CHECK(cpu_base(q8, "q8.kld", INF_KLD_BASE_LLAMA) != NULL);
    snprintf(llama, sizeof llama, "%s", cpu_base(q8, "q8.kld", INF_KLD_BASE_LLAMA));
    CHECK(cpu_base(q8, "q8.ckld", INF_KLD_BASE_COMPACT) != NULL);
    snprintf(compact, sizeof compact, "%s", cpu_base(q8, "q8.ckld", INF_KLD_BASE_COMPACT));
    const char *f32 = tiny_model("default");
    CHECK(f32 != NULL);
    check_same_run(f32, -1, N_CTX, llama);
    check_same_run(tiny_model("default"), -1, N_CTX, compact);
}

/* A quantized model on CUDA differs from the CPU's run by the two backends' own arithmetic (the
 * device's activations are quantized differently, its sums run in another order): that difference
 * must stay below what quantizing the model costs, its KL-divergence from the F32 model. */
TEST(test_cuda_quantized_model_stays_within_the_implementation_spread)
{
    cuda_test_backend();
    char q8[512], q8_base[512], f32_base[512];
    CHECK(tiny_model("q8_0") != NULL);
    snprintf(q8, sizeof q8, "%s", tiny_model("q8_0"));
    CHECK(cpu_base(q8, "q8_spread.kld", INF_KLD_BASE_LLAMA) != NULL);
    snprintf(q8_base, sizeof q8_base, "%s", cpu_base(q8, "q8_spread.kld", INF_KLD_BASE_LLAMA));
    CHECK(cpu_base(tiny_model("default"), "f32.kld", INF_KLD_BASE_LLAMA) != NULL);
    snprintf(f32_base, sizeof f32_base, "%s",
             cpu_base(tiny_model("default"), "f32.kld", INF_KLD_BASE_LLAMA));
    run_result cpu_vs_f32 = {0}, gpu_vs_f32 = {0}, cpu_vs_cpu = {0}, gpu_vs_cpu = {0};
    run_both(q8, -1, N_CTX, f32_base, &cpu_vs_f32, &gpu_vs_f32);
    run_both(q8, -1, N_CTX, q8_base, &cpu_vs_cpu, &gpu_vs_cpu);
    CHECK_MSG(cpu_vs_cpu.kld.kld.value < 1e-9, "the CPU against its own base: %g",
              cpu_vs_cpu.kld.kld.value);
    CHECK_MSG(gpu_vs_cpu.kld.kld.value < cpu_vs_f32.kld.kld.value,
              "Q8_0 on CUDA against the CPU's Q8_0: KLD %.6g; Q8_0 against F32: %.6g",
              gpu_vs_cpu.kld.kld.value, cpu_vs_f32.kld.kld.value);
    /* The device's Q8_0 may be closer to F32 than the CPU's (its activations are not quantized
     * on every route), not much further. */
    CHECK_MSG(gpu_vs_f32.kld.kld.value < 2 * cpu_vs_f32.kld.kld.value,
              "KLD from F32: %.6g on CUDA, %.6g on the CPU", gpu_vs_f32.kld.kld.value,
              cpu_vs_f32.kld.kld.value);
}

/* SmolLM2 (Q4_1 with a Q8_0 embedding), three chunks of 32 tokens of the evaluation text: the
 * real model's layers and 49152-token rows; the device's run against the CPU's base stays
 * within the spread of two implementations (docs/eval.md: about what Q8_0 costs against F32). */
TEST(test_cuda_smollm2_stays_within_the_implementation_spread)
{
    cuda_test_backend();
    const char *model = test_model_path();
    if (!model)
        SKIP("SmolLM2 model not present (make models)");
    char path[512], base[512];
    snprintf(path, sizeof path, "%s", model);
    CHECK(cpu_base(path, "smollm2.kld", INF_KLD_BASE_LLAMA) != NULL);
    snprintf(base, sizeof base, "%s", cpu_base(path, "smollm2.kld", INF_KLD_BASE_LLAMA));
    run_result cpu = {0}, gpu = {0};
    run_both(path, -1, N_CTX, base, &cpu, &gpu);
    printf("    SmolLM2 on CUDA against the CPU: PPL %.4f vs %.4f, KLD %.6f, same top %.1f%%\n",
           inf_ppl_stats_ppl(&gpu.ppl), inf_ppl_stats_ppl(&cpu.ppl), gpu.kld.kld.value,
           100 * gpu.kld.same_top.value);
    CHECK_MSG(gpu.kld.kld.value < 0.02 && gpu.kld.same_top.value > 0.9, "KLD %.6f, same top %.4f",
              gpu.kld.kld.value, gpu.kld.same_top.value);
}

TEST(test_cuda_base_file_written_from_device_rows_matches_the_cpu_base)
{
    cuda_test_backend();
    ggtk_error err = {0};
    inf_model *model = inf_model_open(tiny_model("default"), NULL, &err);
    CHECK_MSG(model, "%s", err.message);
    inf_session *gpu = session_on(model, INF_DEVICE_CUDA, -1, N_CTX, &err);
    CHECK_MSG(gpu, "%s", err.message);
    const char *gpu_path = test_tmpfile("gpu.kld");
    run_result written, compared;
    CHECK(run_eval(gpu, NULL, gpu_path, INF_KLD_BASE_LLAMA, &written));
    /* The CPU against the device's base: the same model, so only float spread is left. */
    inf_session *cpu = session_on(model, INF_DEVICE_CPU, 0, N_CTX, &err);
    CHECK_MSG(cpu, "%s", err.message);
    CHECK(run_eval(cpu, gpu_path, NULL, INF_KLD_BASE_LLAMA, &compared));
    CHECK_MSG(compared.kld.kld.value < 1e-5, "mean KLD of the CPU against the device's base %g",
              compared.kld.kld.value);
    CHECK_MSG(compared.kld.same_top.value == 1.0, "same top %f", compared.kld.same_top.value);
    CHECK_MSG(rel_diff(inf_ppl_stats_ppl(&written.ppl), inf_ppl_stats_ppl(&compared.ppl)) < 1e-4,
              "PPL %.9f written on CUDA, %.9f on the CPU", inf_ppl_stats_ppl(&written.ppl),
              inf_ppl_stats_ppl(&compared.ppl));
    inf_session_free(cpu);
    inf_session_free(gpu);
    inf_model_close(model);
}

/* ---------------------------------------------------------------------------------------------
 * Memory and errors
 * ------------------------------------------------------------------------------------------- */

TEST(test_cuda_session_reports_its_device_and_device_memory)
{
    cuda_test_backend();
    ggtk_error err = {0};
    inf_model *model = inf_model_open(tiny_model("default"), NULL, &err);
    CHECK_MSG(model, "%s", err.message);
    inf_session *cpu = session_on(model, INF_DEVICE_CPU, 0, N_CTX, &err);
    inf_session *gpu = session_on(model, INF_DEVICE_AUTO, -1, N_CTX, &err);
    CHECK_MSG(cpu && gpu, "%s", err.message);
    const inf_session_params gp = inf_session_get_params(gpu);
    const uint32_t n_layer = inf_model_get_hparams(model)->n_layer;
    CHECK(gp.device == INF_DEVICE_CUDA && gp.n_gpu_layers == (int32_t)n_layer + 1);
    CHECK(inf_session_get_params(cpu).n_gpu_layers == 0);
    const char *line = inf_session_device_description(gpu);
    CHECK_MSG(strncmp(line, "CUDA0: ", 7) == 0 && strstr(line, "and the output layer") &&
              !strchr(line, '\n'), "'%s'", line);
    CHECK(strncmp(inf_session_device_description(cpu), "CPU", 3) == 0);
    /* Every weight is copied once (256-byte alignment may add a little), none on the CPU. */
    const size_t weights = inf_model_weight_bytes(model);
    const inf_session_device_memory dm = inf_session_device_bytes(gpu);
    const size_t copied = dm.weights;
    CHECK_MSG(copied >= weights && copied < weights + 256 * 64, "%zu device bytes for %zu",
              copied, weights);
    const inf_session_device_memory none = inf_session_device_bytes(cpu);
    CHECK(none.weights == 0 && none.kv == 0 && none.compute == 0 && none.logits == 0);
    CHECK(dm.kv == inf_session_kv_bytes(gpu) && dm.compute > 0 && dm.logits == 0);
    CHECK(inf_session_kv_bytes(gpu) >= inf_session_kv_bytes(cpu));
    CHECK(inf_session_kv_bytes(gpu) < inf_session_kv_bytes(cpu) + 256 * 2 * n_layer);
    CHECK(inf_session_compute_bytes(gpu) > 0);
    inf_session_free(gpu);
    inf_session_free(cpu);
    inf_model_close(model);
}

/* -ngl N with 1 <= N <= n_layer: the last N blocks on the device, the first ones, the embedding
 * and the output layer on the CPU, the scheduler splitting each graph; the results are the full
 * offload's (within float spread), the KV cache split between the two, the logits on the host. */
TEST(test_cuda_partial_offload_equals_the_cpu_and_full_offload)
{
    cuda_test_backend();
    ggtk_error err = {0};
    const char *path = tiny_model("default");
    CHECK(path != NULL);
    inf_model *model = inf_model_open(path, NULL, &err);
    CHECK_MSG(model, "%s", err.message);
    const int32_t n_layer = (int32_t)inf_model_get_hparams(model)->n_layer;
    inf_session *cpu = session_on(model, INF_DEVICE_CPU, 0, N_CTX, &err);
    CHECK_MSG(cpu, "%s", err.message);
    for (int32_t ngl = 1; ngl <= n_layer; ngl++) {
        inf_session *part = session_on(model, INF_DEVICE_CUDA, ngl, N_CTX, &err);
        CHECK_MSG(part, "-ngl %d: %s", ngl, err.message);
        const inf_session_params pp = inf_session_get_params(part);
        CHECK(pp.device == INF_DEVICE_CUDA && pp.n_gpu_layers == ngl);
        CHECK_MSG(strstr(inf_session_device_description(part), "layers") &&
                  !strstr(inf_session_device_description(part), "output layer"), "'%s'",
                  inf_session_device_description(part));
        CHECK(session_device_logits(part, NULL) == NULL);
        /* Only the offloaded blocks' weights are copied. */
        const inf_session_device_memory dm = inf_session_device_bytes(part);
        CHECK(dm.weights > 0 && dm.weights < inf_model_weight_bytes(model));
        CHECK(inf_session_kv_bytes(part) >= inf_session_kv_bytes(cpu));
        CHECK_MSG(dm.kv > 0 && dm.kv <= inf_session_kv_bytes(part) && dm.compute > 0,
                  "-ngl %d: device KV %zu of %zu, compute %zu", ngl, dm.kv,
                  inf_session_kv_bytes(part), dm.compute);
        inf_session_free(part);
        check_same_run(path, ngl, N_CTX, NULL);
        check_same_run(path, ngl, 8, NULL);
    }
    /* -ngl 0 is the CPU. */
    inf_session *none = session_on(model, INF_DEVICE_CUDA, 0, N_CTX, &err);
    CHECK_MSG(none && inf_session_get_params(none).device == INF_DEVICE_CPU, "%s", err.message);
    inf_session_free(none);
    inf_session_free(cpu);
    inf_model_close(model);
}

/* The partial offload of a base comparison: KL-divergence statistics as on the CPU. */
TEST(test_cuda_partial_offload_kl_divergence_equals_the_cpu_backend)
{
    cuda_test_backend();
    char q8[512], base[512];
    CHECK(tiny_model("q8_0") != NULL);
    snprintf(q8, sizeof q8, "%s", tiny_model("q8_0"));
    CHECK(cpu_base(q8, "q8_partial.ckld", INF_KLD_BASE_COMPACT) != NULL);
    snprintf(base, sizeof base, "%s", cpu_base(q8, "q8_partial.ckld", INF_KLD_BASE_COMPACT));
    check_same_run(tiny_model("default"), 1, N_CTX, base);
}

/* gguf-eval with `env` set must fail with exit 1 and one line holding `needle`. */
static void eval_fails_in_one_line(const char *env, const char *args, const char *needle)
{
    char *out = NULL, *err = NULL;
    const char *err_path = test_tmpfile("eval.stderr");
    int rc = test_run(&out, "%s %s %s 2>'%s'", env, test_tool("gguf-eval"), args, err_path);
    test_run(&err, "cat '%s'", err_path);
    int lines = 0;
    for (const char *p = err; p && *p; p++)
        lines += *p == '\n';
    CHECK_MSG(rc == 1 && lines == 1 && err && strstr(err, needle) &&
              strncmp(err, "gguf-eval: error: ", 18) == 0,
              "%s gguf-eval %s -> exit %d, stderr '%s' (wanted '%s')", env, args, rc,
              err ? err : "", needle);
    free(out);
    free(err);
}

TEST(test_cuda_out_of_device_memory_names_what_did_not_fit)
{
    cuda_test_backend();
    if (!inf_cuda_emulated())
        SKIP("the device memory limit is the emulator's (INF_CUDA_EMU_MEMORY)");
    char args[1024];
    snprintf(args, sizeof args, "-m '%s' -f tests/eval/data/licenses.txt.gz -c 32 --chunks 2 "
             "--device cuda", tiny_model("default"));
    eval_fails_in_one_line("INF_CUDA_EMU_MEMORY=4096", args, "the weights (");
}

TEST(test_cuda_device_cuda_without_a_device_is_one_line)
{
    cuda_test_backend();
    if (!inf_cuda_emulated())
        SKIP("hiding the devices is the emulator's (INF_CUDA_EMU_DEVICES)");
    char args[1024];
    snprintf(args, sizeof args, "-m '%s' -f tests/eval/data/licenses.txt.gz -c 32 --device cuda",
             tiny_model("default"));
    eval_fails_in_one_line("INF_CUDA_EMU_DEVICES=0", args, "cuda: no usable device");
}
