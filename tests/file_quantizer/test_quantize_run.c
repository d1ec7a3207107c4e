/* Tests of running a file quantization (inf_quantize_run): the file written matches the plan,
 * bytes do not depend on threads, error statistics make sense, and every failure (NaN/Inf input,
 * out-of-range values, output = input) leaves no output and an existing one untouched. */
#include "gguf/writer_test_support.h"
#include <ggtk/inf_quant.h>
#include <ggtk/inf_quantize_file.h>
#include "test.h"
#include "tools/quantize_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Plan and run `input` -> `output` as `file_type` (pure) with `threads`; returns the status. */
static ggtk_status quantize(const char *input, const char *output, ggtk_file_type file_type,
                                    int threads, inf_quantize_tensor_stats *stats,
                                    ggtk_error *err)
{
    inf_quantize_options o = inf_quantize_options_default(file_type);
    o.pure = true;
    o.n_threads = threads;
    inf_quantize_plan *plan = inf_quantize_plan_new(input, &o, err);
    ggtk_status status = plan ? inf_quantize_run(plan, output, NULL, stats, err) : err->status;
    inf_quantize_plan_free(plan);
    return status;
}

static char *path_in(const char *dir, const char *name)
{
    char *path = NULL;
    if (asprintf(&path, "%s/%s", dir, name) < 0)
        abort();
    return path;
}

TEST(test_run_writes_the_planned_types_and_size)
{
    const char *dir = support_make_dir("run_planned");
    char *in = path_in(dir, "in.gguf"), *out = path_in(dir, "out.gguf");
    CHECK(fixture_write(in, &(fixture_options){.alignment = 64}));
    inf_quantize_options o = inf_quantize_options_default(GGTK_FILE_TYPE_Q4_1);
    ggtk_error err;
    inf_quantize_plan *plan = inf_quantize_plan_new(in, &o, &err);
    CHECK_MSG(plan, "%s", err.message);
    uint64_t expected_size = plan->file_size_after;
    inf_quantize_tensor_stats stats[16];
    CHECK_MSG(inf_quantize_run(plan, out, NULL, stats, &err) == GGTK_OK, "%s",
              err.message);
    CHECK(inf_quantize_run(plan, out, NULL, NULL, &err) == GGTK_ERR_USAGE);
    ggtk_file *f = ggtk_open(out, GGTK_OPEN_MMAP, NULL);
    CHECK(f && ggtk_file_size(f) == expected_size && ggtk_alignment(f) == 64);
    for (int64_t i = 0; i < plan->n_tensors; i++) {
        CHECK(strcmp(ggtk_tensor(f, i)->name, plan->tensors[i].info->name) == 0);
        CHECK(ggtk_tensor(f, i)->type == plan->tensors[i].new_type);
        CHECK(stats[i].converted == (plan->tensors[i].new_type != plan->tensors[i].info->type));
    }
    uint64_t ftype = 0, qversion = 0;
    CHECK(ggtk_get_uint(f, "general.file_type", &ftype) == GGTK_OK && ftype == 3);
    CHECK(ggtk_get_uint(f, "general.quantization_version", &qversion) == GGTK_OK && qversion == 2);
    const char *name = NULL;
    CHECK(ggtk_get_string(f, "general.name", &name) == GGTK_OK &&
          strcmp(name, "quantize fixture") == 0);
    ggtk_close(f);
    inf_quantize_plan_free(plan);
    CHECK(support_dir_entries(dir) == 2); /* no temporary file left */
}

TEST(test_run_output_bytes_do_not_depend_on_thread_count)
{
    const char *dir = support_make_dir("run_threads");
    char *in = path_in(dir, "in.gguf"), *one = path_in(dir, "one.gguf");
    char *three = path_in(dir, "three.gguf");
    CHECK(fixture_write(in, &(fixture_options){0}));
    ggtk_error err;
    CHECK(quantize(in, one, GGTK_FILE_TYPE_Q5_1, 1, NULL, &err) == GGTK_OK);
    CHECK(quantize(in, three, GGTK_FILE_TYPE_Q5_1, 3, NULL, &err) == GGTK_OK);
    CHECK(support_same_bytes(one, three));
}

TEST(test_run_relative_rmse_orders_the_types)
{
    const char *dir = support_make_dir("run_rmse");
    char *in = path_in(dir, "in.gguf"), *out = path_in(dir, "out.gguf");
    CHECK(fixture_write(in, &(fixture_options){0}));
    static const ggtk_file_type order[] = {GGTK_FILE_TYPE_F32, GGTK_FILE_TYPE_F16,
                                           GGTK_FILE_TYPE_Q8_0, GGTK_FILE_TYPE_Q5_1,
                                           GGTK_FILE_TYPE_Q4_0};
    double previous = -1.0;
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        inf_quantize_tensor_stats stats[16];
        ggtk_error err;
        unlink(out);
        CHECK_MSG(quantize(in, out, order[k], 0, stats, &err) == GGTK_OK, "%s",
                  err.message);
        const inf_quantize_tensor_stats *q = &stats[2]; /* blk.0.attn_q.weight */
        CHECK(q->rms > 0.01 && q->rms < 0.1);
        CHECK_MSG(q->rel_rmse > previous && q->rel_rmse < 0.2, "type %d: %g after %g",
                  (int)order[k], q->rel_rmse, previous);
        CHECK(fabs(q->rel_rmse - q->rmse / q->rms) < 1e-12);
        previous = order[k] == GGTK_FILE_TYPE_F32 ? 0.0 : q->rel_rmse;
        CHECK(order[k] != GGTK_FILE_TYPE_F32 || q->rmse == 0.0);
    }
}

/* A poisoned input must fail naming tensor and row, create nothing, and keep an old output. */
static void check_poison_refused(const char *dir_name, float poison, ggtk_file_type type,
                                 const char *expect)
{
    const char *dir = support_make_dir(dir_name);
    char *in = path_in(dir, "in.gguf"), *out = path_in(dir, "out.gguf");
    fixture_options f = {.poison_tensor = "blk.0.ffn_down.weight", .poison_row = 17,
                         .poison = poison};
    CHECK(fixture_write(in, &f));
    FILE *old = fopen(out, "w");
    CHECK(old && fputs("old", old) >= 0 && fclose(old) == 0);
    ggtk_error err;
    CHECK(quantize(in, out, type, 2, NULL, &err) == GGTK_ERR_NONFINITE);
    CHECK_MSG(strstr(err.message, "blk.0.ffn_down.weight") && strstr(err.message, "row 17") &&
                  strstr(err.message, expect),
              "%s", err.message);
    size_t size = 0;
    unsigned char *bytes = support_read_file(out, &size);
    CHECK(bytes && size == 3 && memcmp(bytes, "old", 3) == 0);
    CHECK(support_dir_entries(dir) == 2);
}

TEST(test_run_refuses_nan_input_naming_tensor_and_row)
{
    check_poison_refused("run_nan", NAN, GGTK_FILE_TYPE_Q8_0, "NaN");
}

TEST(test_run_refuses_inf_input)
{
    check_poison_refused("run_inf", INFINITY, GGTK_FILE_TYPE_Q4_0, "column 3 holds Inf");
}

TEST(test_run_refuses_values_out_of_the_target_range)
{
    check_poison_refused("run_range", 1e6f, GGTK_FILE_TYPE_F16, "out of the range of f16");
}

TEST(test_run_refuses_nan_even_in_tensors_it_copies)
{
    const char *dir = support_make_dir("run_nan_copy");
    char *in = path_in(dir, "in.gguf"), *out = path_in(dir, "out.gguf");
    fixture_options f = {.poison_tensor = "blk.0.ffn_gate_inp.weight", .poison_row = 2,
                         .poison = NAN};
    CHECK(fixture_write(in, &f));
    ggtk_error err;
    CHECK(quantize(in, out, GGTK_FILE_TYPE_Q8_0, 1, NULL, &err) == GGTK_ERR_NONFINITE);
    CHECK(strstr(err.message, "blk.0.ffn_gate_inp.weight' row 2"));
    CHECK(access(out, F_OK) != 0 && support_dir_entries(dir) == 1);
}

TEST(test_check_paths_refuses_same_path_hard_link_and_symlink)
{
    const char *dir = support_make_dir("same_file");
    char *in = path_in(dir, "in.gguf"), *hard = path_in(dir, "hard.gguf");
    char *soft = path_in(dir, "soft.gguf"), *other = path_in(dir, "other.gguf");
    CHECK(fixture_write(in, &(fixture_options){0}));
    CHECK(link(in, hard) == 0 && symlink(in, soft) == 0);
    ggtk_error err;
    CHECK(inf_quantize_check_paths(in, in, &err) == GGTK_ERR_PATH);
    CHECK(inf_quantize_check_paths(in, hard, &err) == GGTK_ERR_PATH);
    CHECK(strstr(err.message, "same inode"));
    CHECK(inf_quantize_check_paths(in, soft, &err) == GGTK_ERR_PATH);
    CHECK(inf_quantize_check_paths(in, other, &err) == GGTK_OK);
    CHECK(quantize(in, hard, GGTK_FILE_TYPE_Q8_0, 1, NULL, &err) == GGTK_ERR_PATH);
    CHECK(support_same_bytes(in, hard));
}

/* Records what the callbacks saw. */
typedef struct seen {
    char temp[512];
    bool temp_existed;
    uint64_t last_done, total;
    bool monotonic;
    int calls;
} seen;

static void on_temp(const char *path, void *user)
{
    seen *s = user;
    snprintf(s->temp, sizeof s->temp, "%s", path);
    s->temp_existed = access(path, F_OK) == 0;
}

static void on_progress(const inf_quantize_progress *p, void *user)
{
    seen *s = user;
    s->monotonic = s->monotonic && p->bytes_done >= s->last_done;
    s->last_done = p->bytes_done;
    s->total = p->bytes_total;
    s->calls++;
}

TEST(test_run_reports_temp_file_and_progress)
{
    const char *dir = support_make_dir("run_progress");
    char *in = path_in(dir, "in.gguf"), *out = path_in(dir, "out.gguf");
    CHECK(fixture_write(in, &(fixture_options){0}));
    inf_quantize_options o = inf_quantize_options_default(GGTK_FILE_TYPE_Q8_0);
    ggtk_error err;
    inf_quantize_plan *plan = inf_quantize_plan_new(in, &o, &err);
    CHECK(plan);
    seen s = {.monotonic = true};
    inf_quantize_callbacks cb = {on_temp, on_progress, &s, NULL};
    CHECK_MSG(inf_quantize_run(plan, out, &cb, NULL, &err) == GGTK_OK, "%s", err.message);
    CHECK(s.temp_existed && strstr(s.temp, "/.out.gguf.") && access(s.temp, F_OK) != 0);
    CHECK(s.monotonic && s.calls >= 1); /* after each batch; the fixture fits in one */
    CHECK(s.last_done == plan->data_size_before && s.total == plan->data_size_before);
    inf_quantize_plan_free(plan);
}

TEST(test_run_reads_unaligned_f32_data)
{
    /* With general.alignment = 1 the data section may start at any byte, so F32 rows in the map
     * are not 4-byte aligned; the result must equal that of an aligned input. */
    const char *dir = support_make_dir("run_unaligned");
    char *in1 = path_in(dir, "in1.gguf"), *in32 = path_in(dir, "in32.gguf");
    char *out1 = path_in(dir, "out1.gguf"), *out32 = path_in(dir, "out32.gguf");
    CHECK(fixture_write(in1, &(fixture_options){.alignment = 1}));
    CHECK(fixture_write(in32, &(fixture_options){.alignment = 32}));
    ggtk_file *f = ggtk_open(in1, GGTK_OPEN_METADATA, NULL);
    CHECK(f && ggtk_data_offset(f) % 4 != 0);
    ggtk_close(f);
    inf_quantize_tensor_stats s1[16], s32[16];
    ggtk_error err;
    CHECK_MSG(quantize(in1, out1, GGTK_FILE_TYPE_Q8_0, 2, s1, &err) == GGTK_OK, "%s",
              err.message);
    CHECK(quantize(in32, out32, GGTK_FILE_TYPE_Q8_0, 2, s32, &err) == GGTK_OK);
    ggtk_file *a = ggtk_open(out1, GGTK_OPEN_MMAP, NULL), *b = ggtk_open(out32, GGTK_OPEN_MMAP, NULL);
    CHECK(a && b && ggtk_tensor_count(a) == ggtk_tensor_count(b));
    for (int64_t i = 0; i < ggtk_tensor_count(a); i++) {
        const ggtk_tensor_info *ta = ggtk_tensor(a, i), *tb = ggtk_tensor(b, i);
        CHECK(ta->size == tb->size && memcmp(ta->data, tb->data, ta->size) == 0);
        CHECK(s1[i].rel_rmse == s32[i].rel_rmse);
    }
    ggtk_close(a);
    ggtk_close(b);
}

TEST(test_run_accepts_huge_finite_values_a_type_can_hold)
{
    /* 1e30 squared overflows a float but not the statistics; bf16 holds it, q8_0's fp16 scale
     * does not. */
    const char *dir = support_make_dir("run_huge");
    char *in = path_in(dir, "in.gguf"), *out = path_in(dir, "out.gguf");
    fixture_options f = {.poison_tensor = "blk.0.ffn_down.weight", .poison_row = 9, .poison = 1e30f};
    CHECK(fixture_write(in, &f));
    inf_quantize_tensor_stats stats[16];
    ggtk_error err;
    CHECK_MSG(quantize(in, out, GGTK_FILE_TYPE_BF16, 2, stats, &err) == GGTK_OK, "%s",
              err.message);
    CHECK(isfinite(stats[5].rms) && stats[5].rms > 1e26 && isfinite(stats[5].rel_rmse));
    unlink(out);
    CHECK(quantize(in, out, GGTK_FILE_TYPE_Q8_0, 2, NULL, &err) == GGTK_ERR_NONFINITE);
    CHECK_MSG(strstr(err.message, "row 9: values out of the range of q8_0"), "%s", err.message);
}

TEST(test_run_refuses_a_plan_naming_a_type_no_kernel_writes)
{
    /* Plans are made for every type llama.cpp stores (a dry run shows them); the run checks the
     * kernels. IQ4_NL is read but not written by this build. */
    if (inf_type_can_quantize(GGTK_TENSOR_IQ4_NL))
        SKIP("this build writes iq4_nl");
    const char *dir = support_make_dir("run_unwritable");
    char *in = path_in(dir, "in.gguf"), *out = path_in(dir, "out.gguf");
    CHECK(fixture_write(in, &(fixture_options){0}));
    inf_quantize_options o = inf_quantize_options_default(GGTK_FILE_TYPE_Q8_0);
    o.output_type = GGTK_TENSOR_IQ4_NL;
    ggtk_error err;
    inf_quantize_plan *plan = inf_quantize_plan_new(in, &o, &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(plan->n_warnings == 2 && strstr(plan->warnings[1], "no kernel of this build writes iq4_nl"));
    CHECK(inf_quantize_run(plan, out, NULL, NULL, &err) == GGTK_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(err.message, "output.weight") && strstr(err.message, "iq4_nl"), "%s",
              err.message);
    CHECK(access(out, F_OK) != 0 && support_dir_entries(dir) == 1);
    inf_quantize_plan_free(plan);
}
