/* test_eval_nonfinite.c - gguf-eval refuses NaN and infinity instead of printing them: a model
 * with a NaN weight, a base file with a corrupt row; and --json keeps every chunk and every
 * number when a statistic is not finite. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/gguf.h>

#include "model/model_test_support.h"
#include "test.h"

#define TEXT "tests/eval/data/licenses.txt.gz"

/* Write `bytes` at `offset` of the file `path`. */
static bool patch_file(const char *path, long offset, const void *bytes, size_t size)
{
    FILE *f = fopen(path, "r+b");
    bool ok = f && fseek(f, offset, SEEK_SET) == 0 && fwrite(bytes, 1, size, f) == size;
    if (f)
        ok = fclose(f) == 0 && ok;
    return ok;
}

/* A copy of `source` named `name` with `size` bytes of tensor `tensor`'s data, from byte
 * `offset` of it, replaced by `bytes`. */
static const char *model_with_bytes(const char *source, const char *name, const char *tensor,
                                    long offset, const void *bytes, size_t size)
{
    static char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile(name));
    ggtk_error err;
    ggtk_file *file = ggtk_open(source, GGTK_OPEN_METADATA, &err);
    if (!file)
        return NULL;
    int64_t index = ggtk_find_tensor(file, tensor);
    long data = index < 0 ? -1 : (long)(ggtk_data_offset(file) + ggtk_tensor(file, index)->offset);
    ggtk_close(file);
    bool ok = data >= 0 && test_run(NULL, "cp '%s' '%s'", source, path) == 0 &&
              patch_file(path, data + offset, bytes, size);
    return ok ? path : NULL;
}

/* Run gguf-eval with `args`; stdout into *out, stderr into *err. */
static int eval(char **out, char **err, const char *args)
{
    char err_path[512];
    snprintf(err_path, sizeof err_path, "%s", test_tmpfile("nonfinite.stderr"));
    int rc = test_run(out, "%s %s 2>'%s'", test_tool("gguf-eval"), args, err_path);
    test_run(err, "cat '%s'", err_path);
    return rc;
}

/* The one error line of `err` (stderr also holds the set-up lines), or NULL when there is not
 * exactly one. */
static const char *error_line(const char *err)
{
    const char *line = err ? strstr(err, "gguf-eval: error: ") : NULL;
    if (!line || strstr(line + 1, "gguf-eval: error: ") || strchr(line, '\n') != line + strlen(line) - 1)
        return NULL;
    return line;
}

TEST(test_eval_stops_at_a_nan_weight_naming_the_chunk_and_the_tensor)
{
    const char *tiny = tiny_model("default");
    CHECK(tiny != NULL);
    char source[512], model[512], args[2048], base[512];
    snprintf(source, sizeof source, "%s", tiny);
    const float nan = NAN;
    const char *nan_model = model_with_bytes(source, "nan_weight.gguf", "blk.1.ffn_down.weight",
                                             5 * 4, &nan, sizeof nan);
    CHECK(nan_model != NULL);
    snprintf(model, sizeof model, "%s", nan_model);
    char *out = NULL, *err = NULL;
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 32 --chunks 3", model);
    CHECK(eval(&out, &err, args) == 1);
    const char *line = error_line(err);
    CHECK_MSG(line && strstr(line, "chunk 1: non-finite log-probability") &&
              strstr(line, "tensor blk.1.ffn_down.weight holds a NaN or infinity (row 0)"),
              "stderr: %s", err);
    CHECK_MSG(out && !strstr(out, "nan") && !strstr(out, "Final estimate"), "stdout: %s", out);
    free(out);
    free(err);

    /* Writing a base file: the same error, and no file left behind. */
    snprintf(base, sizeof base, "%s", test_tmpfile("nan.kld"));
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 32 --chunks 3 --kl-divergence-base '%s'",
             model, base);
    CHECK(eval(&out, &err, args) == 1);
    CHECK_MSG(error_line(err) && strstr(err, "tensor blk.1.ffn_down.weight"), "stderr: %s", err);
    CHECK(test_run(NULL, "ls '%s' | grep -q '^nan.kld'", test_tmpdir()) != 0);
    free(out);
    free(err);
}

TEST(test_eval_names_a_quantized_tensor_whose_block_scale_is_nan)
{
    /* A Q8_0 block is an fp16 scale and 32 int8: the weight is found through the dequantizer.
     * Row 1 of blk.0.attn_k.weight (64 columns: two blocks per row) gets a NaN scale. */
    const char *tiny = tiny_model("q8_0");
    CHECK(tiny != NULL);
    char source[512], model[512], args[2048];
    snprintf(source, sizeof source, "%s", tiny);
    const unsigned char nan_fp16[2] = {0x00, 0x7e};
    const char *nan_model = model_with_bytes(source, "nan_scale.gguf", "blk.0.attn_k.weight",
                                             2 * 34, nan_fp16, sizeof nan_fp16);
    CHECK(nan_model != NULL);
    snprintf(model, sizeof model, "%s", nan_model);
    char *out = NULL, *err = NULL;
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 32 --chunks 2", model);
    CHECK(eval(&out, &err, args) == 1);
    const char *line = error_line(err);
    CHECK_MSG(line && strstr(line, "chunk 1: non-finite") &&
              strstr(line, "tensor blk.0.attn_k.weight holds a NaN or infinity (row 1)"),
              "stderr: %s", err);
    free(out);
    free(err);
}

/* Bytes of the header fields of a base file. */
static bool read_base_shape(const char *path, int32_t shape[3])
{
    FILE *f = fopen(path, "rb");
    bool ok = f && fseek(f, 8, SEEK_SET) == 0 && fread(shape, 4, 3, f) == 3;
    if (f)
        fclose(f);
    return ok;
}

TEST(test_eval_refuses_a_base_file_row_that_is_not_finite)
{
    const char *tiny = tiny_model("default");
    CHECK(tiny != NULL);
    char model[512], base[512], args[2048];
    snprintf(model, sizeof model, "%s", tiny);
    snprintf(base, sizeof base, "%s", test_tmpfile("corrupt_row.kld"));
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 32 --chunks 3 --kl-divergence-base '%s'",
             model, base);
    char *out = NULL, *err = NULL;
    CHECK(eval(&out, &err, args) == 0);
    free(out);
    free(err);
    int32_t shape[3]; /* n_ctx, n_vocab, n_chunk */
    CHECK(read_base_shape(base, shape) && shape[0] == 32 && shape[2] == 3);
    long row_bytes = 2 * (2 * ((shape[1] + 1) / 2) + 4), rows = 32 - 1 - 32 / 2;
    long chunk2_row3 = 20 + 3 * 32 * 4 + rows * row_bytes + 3 * row_bytes;
    const float inf = INFINITY;
    CHECK(patch_file(base, chunk2_row3 + 4, &inf, sizeof inf)); /* lp_min */
    snprintf(args, sizeof args, "-m '%s' --kl-divergence-base '%s' --kl-divergence", model, base);
    CHECK(eval(&out, &err, args) == 1);
    const char *line = error_line(err);
    CHECK_MSG(line && strstr(line, base) && strstr(line, "chunk 2: corrupt row 3") &&
              strstr(line, "lp_min inf"), "stderr: %s", err);
    CHECK_MSG(out && strstr(out, "\n   1 ") && !strstr(out, "\n   2 "), "stdout: %s", out);
    free(out);
    free(err);
}

TEST(test_eval_json_keeps_every_chunk_and_spells_non_finite_numbers)
{
    /* Nine positions: too few for uncertainties, so the correlation of the two models' scores is
     * 0 / 0. JSON has no NaN; jansson refused the value and the key vanished. */
    const char *tiny = tiny_model("default");
    CHECK(tiny != NULL);
    char model[512], base[512], json[512], args[2048];
    snprintf(model, sizeof model, "%s", tiny);
    snprintf(base, sizeof base, "%s", test_tmpfile("json.kld"));
    snprintf(json, sizeof json, "%s", test_tmpfile("nonfinite.json"));
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 8 --chunks 3 --kl-divergence-base '%s'",
             model, base);
    CHECK(eval(NULL, NULL, args) == 0);
    snprintf(args, sizeof args, "-m '%s' --kl-divergence-base '%s' --kl-divergence --json > '%s'",
             model, base, json);
    CHECK(eval(NULL, NULL, args) == 0);
    char *out = NULL;
    int rc = test_run(&out, "python3 -c \"import json,sys; d=json.load(open(sys.argv[1])); "
                            "k=d['kl_divergence']; "
                            "assert [c['chunk'] for c in d['chunks']] == [1, 2, 3], d['chunks']; "
                            "assert k['log_ppl_correlation'] == 'nan', k; "
                            "assert isinstance(k['kld']['value'], float), k\" '%s'", json);
    CHECK_MSG(rc == 0, "%s", out);
    free(out);
}
