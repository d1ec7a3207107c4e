/* test_alloc.c - the graph allocator: planned sizes against the true peak of live bytes on
 * hand-built graphs, in-place reuse, pinned inputs and outputs, re-planning, and a Llama-shaped
 * pass computed with freed memory poisoned that must equal the same pass without any reuse. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer_util.h"
#include "synth_llama.h"
#include "test.h"

/* The true peak: the largest sum of sizes of tensors alive at one step, where a node's memory
 * lives from its own step to the step of its last consumer (to the end for outputs and leaves).
 * Valid for graphs without views or in-place operations. */
static size_t true_peak(const inf_graph *g)
{
    const int n = inf_graph_n_nodes(g);
    int *last = malloc((size_t)n * sizeof *last);
    for (int i = 0; i < n; i++) {
        const inf_tensor *t = inf_graph_node(g, i);
        last[i] = (t->flags & INF_TENSOR_OUTPUT) ? n : i;
        for (int j = i + 1; j < n; j++)
            for (int s = 0; s < INF_MAX_SRC; s++)
                if (inf_graph_node(g, j)->src[s] == t)
                    last[i] = j > last[i] ? j : last[i];
    }
    size_t leaves = 0, peak = 0;
    for (int i = 0; i < inf_graph_n_leaves(g); i++)
        if (!inf_graph_leaf(g, i)->data)
            leaves += inf_tensor_nbytes(inf_graph_leaf(g, i));
    for (int step = 0; step < n; step++) {
        size_t live = leaves;
        for (int i = 0; i <= step; i++)
            if (last[i] >= step)
                live += inf_tensor_nbytes(inf_graph_node(g, i));
        peak = live > peak ? live : peak;
    }
    free(last);
    return peak;
}

static inf_tensor *copy(inf_context *ctx, inf_tensor *t)
{
    return inf_cont(ctx, t);
}

TEST(test_planned_size_equals_true_peak_for_hand_built_graphs)
{
    inf_backend *cpu = inf_backend_cpu_new(1);
    for (int shape = 0; shape < 3; shape++) {
        inf_context *ctx = inf_context_new(1 << 20, true);
        inf_tensor *x = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 256);
        inf_tensor_set_input(x);
        inf_tensor *out;
        if (shape == 0) { /* a chain: two blocks alternate */
            out = copy(ctx, copy(ctx, copy(ctx, copy(ctx, x))));
        } else if (shape == 1) { /* a diamond: both branches live at the join */
            inf_tensor *a = copy(ctx, x), *b = copy(ctx, a), *c = copy(ctx, a);
            out = inf_mul_mat(ctx, inf_reshape_2d(ctx, b, 256, 1), inf_reshape_2d(ctx, c, 256, 1));
        } else { /* sizes that differ: a freed large block is reused by two small ones */
            inf_tensor *big = copy(ctx, inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 1024));
            inf_tensor *big2 = copy(ctx, big);
            inf_tensor *s1 = copy(ctx, x), *s2 = copy(ctx, s1);
            out = inf_mul_mat(ctx, inf_reshape_2d(ctx, big2, 256, 4), inf_reshape_2d(ctx, s2, 256, 1));
        }
        inf_tensor_set_output(out);
        inf_graph *g = inf_graph_new(ctx, 64);
        CHECK(inf_graph_expand(g, out, NULL) == GGTK_OK);
        inf_graph_allocator *alloc = inf_graph_allocator_new(cpu);
        CHECK(inf_graph_allocator_reserve(alloc, g, NULL) == GGTK_OK);
        inf_alloc_stats st = inf_graph_allocator_stats(alloc);
        size_t peak = true_peak(g);
        inf_graph_allocator_free(alloc);
        inf_context_free(ctx);
        CHECK_MSG(st.buffer_size == peak, "graph %d: planned %zu, true peak %zu", shape,
                  st.buffer_size, peak);
    }
    inf_backend_free(cpu);
}

TEST(test_element_wise_ops_run_in_place_on_their_last_use)
{
    inf_backend *cpu = inf_backend_cpu_new(1);
    inf_context *ctx = inf_context_new(1 << 20, true);
    inf_tensor *x = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 256);
    inf_tensor_set_input(x);
    inf_tensor *a = inf_cont(ctx, x);
    inf_tensor *out = inf_add(ctx, inf_silu(ctx, inf_scale(ctx, a, 2.0f)), x);
    inf_tensor_set_output(out);
    inf_graph *g = inf_graph_new(ctx, 16);
    CHECK(inf_graph_expand(g, out, NULL) == GGTK_OK);
    inf_graph_allocator *alloc = inf_graph_allocator_new(cpu);
    CHECK(inf_graph_allocator_alloc(alloc, g, NULL) == GGTK_OK);
    inf_alloc_stats st = inf_graph_allocator_stats(alloc);
    CHECK_MSG(st.n_in_place == 3 && st.buffer_size == 2 * 1024, "in place %d, size %zu",
              st.n_in_place, st.buffer_size);
    CHECK(out->data == a->data && x->data != a->data);
    inf_graph_allocator_free(alloc);
    inf_context_free(ctx);
    inf_backend_free(cpu);
}

TEST(test_inputs_outputs_keep_their_memory_and_views_own_none)
{
    inf_backend *cpu = inf_backend_cpu_new(1);
    inf_context *ctx = inf_context_new(1 << 20, true);
    inf_tensor *x = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 64, 4);
    inf_tensor_set_input(x);
    inf_tensor *early = inf_cont(ctx, inf_transpose(ctx, x)); /* [4, 64] */
    inf_tensor_set_output(early);
    inf_tensor *view = inf_view_1d(ctx, early, 32, 64);
    inf_tensor *out = copy(ctx, copy(ctx, copy(ctx, view)));
    inf_graph *g = inf_graph_new(ctx, 32);
    CHECK(inf_graph_expand(g, out, NULL) == GGTK_OK);
    inf_graph_allocator *alloc = inf_graph_allocator_new(cpu);
    CHECK(inf_graph_allocator_alloc(alloc, g, NULL) == GGTK_OK);
    CHECK(view->data == (char *)early->data + 64);
    /* Nothing may share the input's or the early output's bytes. */
    for (int i = 0; i < inf_graph_n_nodes(g); i++) {
        const inf_tensor *t = inf_graph_node(g, i);
        if (t == early || t->view_src)
            continue;
        const char *p = t->data;
        for (const inf_tensor *pin = x; pin; pin = pin == x ? early : NULL) {
            const char *q = pin->data;
            CHECK_MSG(p + inf_tensor_nbytes(t) <= q || q + inf_tensor_nbytes(pin) <= p,
                      "node %d overlaps a pinned tensor", i);
        }
    }
    inf_graph_allocator_free(alloc);
    inf_context_free(ctx);
    inf_backend_free(cpu);
}

/* Computes `out` (F32, at most 64 elements) of a graph built by `build` in a fresh no-data context
 * with `alloc`, input a[i] = i (64 elements). Returns the results in 64 floats (malloc'd, zero
 * past the end of out or on failure) and the re-plans made so far. */
typedef inf_tensor *(*graph_builder)(inf_context *ctx, inf_tensor *a, int variant);

static float *compute_with(inf_graph_allocator *alloc, inf_backend *cpu, graph_builder build,
                           int variant, int *n_replans)
{
    inf_context *ctx = inf_context_new(1 << 20, true);
    inf_tensor *a = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 64);
    inf_tensor_set_input(a);
    inf_tensor *out = build(ctx, a, variant);
    inf_graph *g = inf_graph_new(ctx, 32);
    float *result = calloc(64, sizeof *result);
    if (inf_graph_expand(g, out, NULL) == GGTK_OK &&
        inf_graph_allocator_alloc(alloc, g, NULL) == GGTK_OK) {
        for (int i = 0; i < 64; i++) {
            float v = (float)i;
            inf_tensor_write(a, &v, (size_t)i * sizeof v, sizeof v, NULL);
        }
        if (inf_backend_compute(cpu, g, NULL) == GGTK_OK)
            inf_tensor_read(out, result, 0, inf_tensor_nbytes(out), NULL);
    }
    *n_replans = inf_graph_allocator_stats(alloc).n_replans;
    inf_context_free(ctx);
    return result;
}

/* n0 = 2a and n1 = 3a both feed s = n0 + n1; out = s + (a + n0) (variant 0) or s + (a + n1).
 * Shapes, ops and flags are the same; only the wiring differs, and it decides which of n0 and
 * n1 is dead after s, so which block s may overwrite in place. */
static inf_tensor *sum_and_pick(inf_context *ctx, inf_tensor *a, int variant)
{
    inf_tensor *n0 = inf_scale(ctx, a, 2.0f), *n1 = inf_scale(ctx, a, 3.0f);
    inf_tensor *s = inf_add(ctx, n0, n1);
    inf_tensor *out = inf_add(ctx, s, inf_add(ctx, a, variant ? n1 : n0));
    inf_tensor_set_output(out);
    return out;
}

TEST(test_alloc_replans_a_graph_that_differs_only_in_wiring)
{
    inf_backend *cpu = inf_backend_cpu_new(1);
    inf_graph_allocator *reused = inf_graph_allocator_new(cpu);
    int replans, fresh_replans;
    float *first = compute_with(reused, cpu, sum_and_pick, 0, &replans);
    float *second = compute_with(reused, cpu, sum_and_pick, 1, &replans);
    inf_graph_allocator *fresh = inf_graph_allocator_new(cpu);
    float *reference = compute_with(fresh, cpu, sum_and_pick, 1, &fresh_replans);
    int wrong = 0;
    for (int i = 0; i < 64; i++) {
        wrong += first[i] != 8.0f * (float)i; /* a + 2a + 5a */
        wrong += second[i] != 9.0f * (float)i || second[i] != reference[i]; /* a + 3a + 5a */
    }
    CHECK_MSG(wrong == 0, "%d wrong results (element 1: %g then %g, fresh allocator %g)", wrong,
              first[1], second[1], reference[1]);
    CHECK_MSG(replans == 2, "%d plans for two differently wired graphs", replans);
    free(first);
    free(second);
    free(reference);
    inf_graph_allocator_free(reused);
    inf_graph_allocator_free(fresh);
    inf_backend_free(cpu);
}

/* out = 2a[32 * variant ...], copied out of a view: graphs differing only in the view offset. */
static inf_tensor *window(inf_context *ctx, inf_tensor *a, int variant)
{
    inf_tensor *doubled = inf_scale(ctx, a, 2.0f);
    const size_t offset = (size_t)variant * 32 * sizeof(float);
    inf_tensor *out = inf_cont(ctx, inf_view_1d(ctx, doubled, 32, offset));
    inf_tensor_set_output(out);
    return out;
}

TEST(test_alloc_keeps_its_plan_when_only_a_view_offset_changes)
{
    inf_backend *cpu = inf_backend_cpu_new(1);
    inf_graph_allocator *alloc = inf_graph_allocator_new(cpu);
    int replans = 0, wrong = 0;
    for (int variant = 0; variant < 2; variant++) {
        float *out = compute_with(alloc, cpu, window, variant, &replans);
        for (int i = 0; i < 32; i++)
            wrong += out[i] != 2.0f * (float)(i + 32 * variant);
        free(out);
    }
    CHECK_MSG(wrong == 0, "%d wrong results", wrong);
    CHECK_MSG(replans == 1, "%d plans: the offset is applied at allocation, not planned", replans);
    inf_graph_allocator_free(alloc);
    inf_backend_free(cpu);
}

static const llama_shape tiny = {.n_embd = 64, .n_layer = 2, .n_head = 4, .n_head_kv = 2,
                                 .n_ff = 96, .n_vocab = 100, .n_ctx = 32,
                                 .weight_type = GGTK_TENSOR_Q8_0};

static void set_inputs(inf_tensor *tokens, inf_tensor *positions, int n_past)
{
    for (int64_t i = 0; i < tokens->ne[0]; i++) {
        int32_t tok = (int32_t)((i * 37 + n_past) % tiny.n_vocab), p = (int32_t)(n_past + i);
        inf_tensor_write(tokens, &tok, (size_t)i * 4, 4, NULL);
        inf_tensor_write(positions, &p, (size_t)i * 4, 4, NULL);
    }
}

typedef struct poison_state {
    inf_graph_allocator *alloc;
} poison_state;

static bool poison(const inf_graph *g, int node, void *user)
{
    poison_state *ps = user;
    return inf_graph_allocator_poison_released(ps->alloc, g, node, 0xFF, NULL) == GGTK_OK;
}

/* Two passes (a prompt, then more tokens reading the cache) with or without the allocator. */
static float *run_passes(bool allocate, inf_alloc_stats *stats)
{
    inf_backend *cpu = inf_backend_cpu_new(2);
    llama_model *m = synth_model_new(cpu, &tiny, true, 5);
    const int steps[2][2] = {{12, 0}, {5, 12}}; /* n_tokens, n_past */
    inf_graph_allocator *alloc = inf_graph_allocator_new(cpu);
    float *logits = NULL;
    for (int s = 0; s < 2; s++) {
        inf_context *ctx = allocate ? inf_context_new(4 << 20, true) : data_context(16);
        inf_tensor *tokens, *positions;
        inf_tensor *out = synth_forward(ctx, m, steps[s][0], steps[s][1], &tokens, &positions);
        inf_graph *g = inf_graph_new(ctx, 1024);
        if (!out || inf_graph_expand(g, out, NULL) != GGTK_OK)
            abort();
        poison_state ps = {alloc};
        if (allocate && inf_graph_allocator_alloc(alloc, g, NULL) != GGTK_OK)
            abort();
        set_inputs(tokens, positions, steps[s][1]);
        if (inf_backend_compute_observed(cpu, g, allocate ? poison : NULL, &ps, NULL) != GGTK_OK)
            abort();
        free(logits);
        logits = malloc(inf_tensor_nbytes(out));
        inf_tensor_read(out, logits, 0, inf_tensor_nbytes(out), NULL);
        inf_context_free(ctx);
    }
    *stats = inf_graph_allocator_stats(alloc);
    inf_graph_allocator_free(alloc);
    synth_model_free(m);
    inf_backend_free(cpu);
    return logits;
}

TEST(test_poisoning_freed_memory_never_changes_a_llama_pass)
{
    inf_alloc_stats none, st;
    float *plain = run_passes(false, &none);
    float *reused = run_passes(true, &st);
    const size_t n = (size_t)tiny.n_vocab * 5;
    size_t differ = 0;
    for (size_t i = 0; i < n; i++)
        differ += memcmp(&plain[i], &reused[i], sizeof(float)) != 0;
    fprintf(stderr, "    tiny llama: buffer %zu bytes for %zu bytes of tensors (reuse %.2fx), "
            "%d in place, %d re-plans\n", st.buffer_size, st.tensor_bytes,
            (double)st.tensor_bytes / (double)st.buffer_size, st.n_in_place, st.n_replans);
    free(plain);
    free(reused);
    CHECK_MSG(differ == 0, "%zu of %zu logits differ", differ, n);
    CHECK(st.n_replans == 2 && st.n_in_place > 0 && st.tensor_bytes > 2 * st.buffer_size);
}

TEST(test_alloc_replans_only_when_the_graph_shape_changes)
{
    inf_backend *cpu = inf_backend_cpu_new(1);
    llama_model *m = synth_model_new(cpu, &tiny, false, 1);
    inf_graph_allocator *alloc = inf_graph_allocator_new(cpu);
    const int n_tokens[3] = {8, 8, 9};
    const int replans[3] = {1, 1, 2};
    for (int s = 0; s < 3; s++) {
        inf_context *ctx = inf_context_new(4 << 20, true);
        inf_tensor *tokens, *positions;
        inf_graph *g = inf_graph_new(ctx, 1024);
        CHECK(inf_graph_expand(g, synth_forward(ctx, m, n_tokens[s], 0, &tokens, &positions), NULL) == GGTK_OK);
        CHECK(inf_graph_allocator_alloc(alloc, g, NULL) == GGTK_OK);
        CHECK_MSG(inf_graph_allocator_stats(alloc).n_replans == replans[s], "step %d", s);
        inf_context_free(ctx);
    }
    inf_graph_allocator_free(alloc);
    synth_model_free(m);
    inf_backend_free(cpu);
}

TEST(test_smollm2_shaped_512_token_pass_plans_its_compute_buffer)
{
    const llama_shape smol = {.n_embd = 576, .n_layer = 30, .n_head = 9, .n_head_kv = 3,
                              .n_ff = 1536, .n_vocab = 49152, .n_ctx = 512,
                              .weight_type = GGTK_TENSOR_Q8_0};
    inf_backend *cpu = inf_backend_cpu_new(1);
    llama_model *m = synth_model_new(cpu, &smol, false, 1);
    CHECK(m);
    inf_context *ctx = inf_context_new(16 << 20, true);
    inf_tensor *tokens, *positions;
    inf_tensor *logits = synth_forward(ctx, m, 512, 0, &tokens, &positions);
    inf_graph *g = inf_graph_new(ctx, 4096);
    CHECK(inf_graph_expand(g, logits, NULL) == GGTK_OK);
    inf_graph_allocator *alloc = inf_graph_allocator_new(cpu);
    CHECK(inf_graph_allocator_reserve(alloc, g, NULL) == GGTK_OK);
    inf_alloc_stats st = inf_graph_allocator_stats(alloc);
    fprintf(stderr, "    SmolLM2 shape, 512 tokens: %d nodes, compute buffer %.2f MiB for %.2f MiB "
            "of tensors (reuse %.1fx), %d in place; logits alone %.2f MiB; cpu work buffer %.2f MiB\n",
            inf_graph_n_nodes(g), st.buffer_size / 1048576.0, st.tensor_bytes / 1048576.0,
            (double)st.tensor_bytes / (double)st.buffer_size, st.n_in_place,
            inf_tensor_nbytes(logits) / 1048576.0, inf_backend_cpu_work_size(cpu, g) / 1048576.0);
    /* The logits must be there; beyond them one layer's activations, not thirty layers'. */
    CHECK(st.buffer_size >= inf_tensor_nbytes(logits));
    CHECK(st.buffer_size < inf_tensor_nbytes(logits) + (size_t)(16 << 20));
    inf_graph_allocator_free(alloc);
    inf_context_free(ctx);
    synth_model_free(m);
    inf_backend_free(cpu);
}
