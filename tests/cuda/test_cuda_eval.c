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
#include "model/gemma_test_support.h"
#include "model/model_test_support.h"
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

enum { N_CTX = 32, N_CHUNKS = 3 };

typedef struct run_result {
    inf_ppl_stats ppl;
    inf_kld_summary kld;
    bool has_kld;
} run_result;

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
    inf_token tokens[N_CTX * N_CHUNKS];
    oracle_tokens(tokens, N_CTX * N_CHUNKS);
    ggtk_error err = {0};
    inf_perplexity_params pp = inf_perplexity_params_default();
    pp.n_ctx = N_CTX;
    pp.kld_base_out = base_out;
    pp.kld_base_out_format = out_format;
    if (base_in && !(pp.kld_base_in = inf_kld_base_open(base_in, &err))) {
        fprintf(stderr, "    %s\n", err.message);
        return false;
    }
    inf_perplexity *run = inf_perplexity_new(s, base_in ? NULL : tokens,
                                             base_in ? 0 : N_CTX * N_CHUNKS, &pp, &err);
    bool ok = run != NULL;
    for (int32_t c = 0; ok && c < inf_perplexity_n_chunks(run); c++) {
        inf_chunk_result r;
        ok = inf_perplexity_next(run, &r, &err) == GGTK_OK;
    }
    ok = ok && inf_perplexity_finish(run, &err) == GGTK_OK;
    if (ok) {
        out->ppl = *inf_perplexity_stats(run);
        out->has_kld = base_in != NULL;
        if (base_in)
            out->kld = inf_perplexity_kld_summary(run);
    } else {
        fprintf(stderr, "    %s\n", err.message);
    }
    inf_perplexity_free(run);
    inf_kld_base_close(pp.kld_base_in);
    return ok;
}

/* `model_path` evaluated on the CPU and on CUDA (ngl, batch) alike: the results must agree
 * within float summation spread (1e-4 relative). */
static void check_same_run(const char *model_path, int32_t n_gpu_layers, int32_t n_batch,
                           const char *base_in)
{
    inf_backend *cuda = cuda_test_backend(); /* skips without a device */
    (void)cuda;
    ggtk_error err = {0};
    inf_model *model = inf_model_open(model_path, NULL, &err);
    CHECK_MSG(model, "%s", err.message);
    inf_session *cpu = session_on(model, INF_DEVICE_CPU, 0, n_batch, &err);
    CHECK_MSG(cpu, "%s", err.message);
    inf_session *gpu = session_on(model, INF_DEVICE_CUDA, n_gpu_layers, n_batch, &err);
    CHECK_MSG(gpu, "%s", err.message);
    CHECK(inf_session_get_params(gpu).device == INF_DEVICE_CUDA);
    run_result want = {0}, got = {0};
    CHECK(run_eval(cpu, base_in, NULL, INF_KLD_BASE_LLAMA, &want));
    CHECK(run_eval(gpu, base_in, NULL, INF_KLD_BASE_LLAMA, &got));
    CHECK(got.ppl.count == want.ppl.count);
    const double ppl_cpu = inf_ppl_stats_ppl(&want.ppl), ppl_gpu = inf_ppl_stats_ppl(&got.ppl);
    CHECK_MSG(rel_diff(ppl_gpu, ppl_cpu) < 1e-4, "PPL %.9f on CUDA, %.9f on the CPU", ppl_gpu,
              ppl_cpu);
    if (base_in) {
        CHECK_MSG(fabs(got.kld.kld.value - want.kld.kld.value) < 1e-4 * want.kld.kld.value + 1e-7,
                  "mean KLD %.9g on CUDA, %.9g on the CPU", got.kld.kld.value,
                  want.kld.kld.value);
        CHECK_MSG(fabs(got.kld.same_top.value - want.kld.same_top.value) <= 1.0 / got.kld.count,
                  "same top %.6f vs %.6f", got.kld.same_top.value, want.kld.same_top.value);
        CHECK_MSG(rel_diff(got.kld.ppl_base.value, want.kld.ppl_base.value) < 1e-6,
                  "PPL(base) %.9f vs %.9f", got.kld.ppl_base.value, want.kld.ppl_base.value);
        CHECK_MSG(fabs(got.kld.rms_p_diff.value - want.kld.rms_p_diff.value) < 1e-5,
                  "RMS dp %.9f vs %.9f", got.kld.rms_p_diff.value, want.kld.rms_p_diff.value);
    }
    inf_session_free(gpu);
    inf_session_free(cpu);
    inf_model_close(model);
}

TEST(test_cuda_perplexity_equals_the_cpu_backend)
{
    cuda_test_backend();
    const char *path = tiny_model("default");
    CHECK(path != NULL);
    check_same_run(path, -1, N_CTX, NULL);
}

TEST(test_cuda_quantized_perplexity_equals_the_cpu_backend)
{
    cuda_test_backend();
    const char *path = tiny_model("q8_0");
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

/* SmolLM2 (Q4_1 with a Q8_0 embedding), two chunks of 64 tokens: the real model's layer count and
 * 49152-token rows. */
TEST(test_cuda_smollm2_perplexity_equals_the_cpu_backend)
{
    cuda_test_backend();
    const char *path = test_model_path();
    if (!path)
        SKIP("SmolLM2 model not present (make models)");
    check_same_run(path, -1, N_CTX, NULL);
}

/* A base of the default model written on the CPU in `format`, at `name` in the scratch folder. */
static const char *cpu_base(const char *name, inf_kld_base_format format)
{
    static char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile(name));
    ggtk_error err = {0};
    inf_model *model = inf_model_open(tiny_model("default"), NULL, &err);
    inf_session *s = model ? session_on(model, INF_DEVICE_CPU, 0, N_CTX, &err) : NULL;
    run_result r;
    bool ok = s && run_eval(s, NULL, path, format, &r);
    if (!ok && err.message[0])
        fprintf(stderr, "    %s\n", err.message);
    inf_session_free(s);
    inf_model_close(model);
    return ok ? path : NULL;
}

TEST(test_cuda_kl_divergence_equals_the_cpu_backend_for_both_base_formats)
{
    cuda_test_backend();
    const char *q8 = tiny_model("q8_0");
    CHECK(q8 != NULL);
    char llama[512];
    const char *base = cpu_base("cpu.kld", INF_KLD_BASE_LLAMA);
    CHECK(base != NULL);
    snprintf(llama, sizeof llama, "%s", base);
    const char *compact = cpu_base("cpu.ckld", INF_KLD_BASE_COMPACT);
    CHECK(compact != NULL);
    check_same_run(q8, -1, N_CTX, llama);
    check_same_run(q8, -1, N_CTX, compact);
}

TEST(test_cuda_base_file_written_from_device_rows_matches_the_cpu_base)
{
    cuda_test_backend();
    ggtk_error err = {0};
    const char *cpu_path = cpu_base("cpu_ref.kld", INF_KLD_BASE_LLAMA);
    CHECK(cpu_path != NULL);
    char cpu_copy[512];
    snprintf(cpu_copy, sizeof cpu_copy, "%s", cpu_path);
    inf_model *model = inf_model_open(tiny_model("default"), NULL, &err);
    CHECK_MSG(model, "%s", err.message);
    inf_session *gpu = session_on(model, INF_DEVICE_CUDA, -1, N_CTX, &err);
    CHECK_MSG(gpu, "%s", err.message);
    const char *gpu_path = test_tmpfile("gpu.kld");
    run_result written, compared;
    CHECK(run_eval(gpu, NULL, gpu_path, INF_KLD_BASE_LLAMA, &written));
    /* The CPU's base against the device's: the same model, so only float spread is left. */
    inf_session *cpu = session_on(model, INF_DEVICE_CPU, 0, N_CTX, &err);
    CHECK_MSG(cpu, "%s", err.message);
    CHECK(run_eval(cpu, gpu_path, NULL, INF_KLD_BASE_LLAMA, &compared));
    CHECK_MSG(compared.kld.kld.value < 1e-6, "mean KLD of the CPU against the device's base %g",
              compared.kld.kld.value);
    CHECK_MSG(compared.kld.same_top.value == 1.0, "same top %f", compared.kld.same_top.value);
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
    const size_t copied = inf_session_weight_device_bytes(gpu);
    CHECK_MSG(copied >= weights && copied < weights + 256 * 64, "%zu device bytes for %zu",
              copied, weights);
    CHECK(inf_session_weight_device_bytes(cpu) == 0);
    CHECK(inf_session_kv_bytes(gpu) >= inf_session_kv_bytes(cpu));
    CHECK(inf_session_kv_bytes(gpu) < inf_session_kv_bytes(cpu) + 256 * 2 * n_layer);
    CHECK(inf_session_compute_bytes(gpu) > 0);
    inf_session_free(gpu);
    inf_session_free(cpu);
    inf_model_close(model);
}

TEST(test_cuda_partial_offload_without_the_scheduler_is_one_clear_error)
{
    cuda_test_backend();
    ggtk_error err = {0};
    inf_model *model = inf_model_open(tiny_model("default"), NULL, &err);
    CHECK_MSG(model, "%s", err.message);
    const int32_t n_layer = (int32_t)inf_model_get_hparams(model)->n_layer;
    for (int32_t ngl = 1; ngl <= n_layer; ngl++) {
        inf_session *s = session_on(model, INF_DEVICE_CUDA, ngl, N_CTX, &err);
        CHECK(s == NULL && err.status == GGTK_ERR_UNSUPPORTED);
        CHECK_MSG(strstr(err.message, "partial offload needs") && !strchr(err.message, '\n'),
                  "%s", err.message);
    }
    /* -ngl 0 is the CPU. */
    inf_session *s = session_on(model, INF_DEVICE_CUDA, 0, N_CTX, &err);
    CHECK_MSG(s && inf_session_get_params(s).device == INF_DEVICE_CPU, "%s", err.message);
    inf_session_free(s);
    inf_model_close(model);
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
