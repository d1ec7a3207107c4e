/* test_eval_device.c - gguf-eval's device options as llama.cpp spells them (--device/-dev,
 * -ngl/--n-gpu-layers/--gpu-layers): the values it takes, the device line it prints, and one error
 * line when CUDA is asked for and cannot be had (a build without CUDA, or no device). Runs in every
 * build; tests/cuda/test_cuda_eval.c covers the device itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_backend_cuda.h>

#include "model/model_test_support.h"
#include "test.h"

#define TEXT "tests/eval/data/licenses.txt.gz"

/* Run gguf-eval; stdout in *out, stderr in *err; returns the exit status. */
static int eval(char **out, char **err, const char *args)
{
    const char *err_path = test_tmpfile("eval_device.stderr");
    int rc = test_run(out, "%s %s 2>'%s'", test_tool("gguf-eval"), args, err_path);
    test_run(err, "cat '%s'", err_path);
    return rc;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

TEST(test_eval_device_cuda_without_a_device_is_one_error_line)
{
    ggtk_error why = {0};
    if (inf_cuda_device_count(&why) > 0)
        SKIP("a CUDA device is present (tests/cuda covers it)");
    const char *model = tiny_model("default");
    CHECK(model != NULL);
    char args[1024], *out = NULL, *err = NULL;
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 64 --device cuda", model);
    const int rc = eval(&out, &err, args);
    const char *expected = inf_cuda_built() ? "cuda: no usable device" : "built without CUDA";
    CHECK_MSG(rc == 1 && count_lines(err) == 1 && strstr(err, expected) &&
              strncmp(err, "gguf-eval: error: ", 18) == 0 && out && !*out,
              "exit %d, stderr '%s'", rc, err ? err : "");
    free(out);
    free(err);
    /* llama.cpp's name of the first device is the same request. */
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 64 -dev CUDA0", model);
    CHECK(eval(&out, &err, args) == 1 && strstr(err, expected));
    free(out);
    free(err);
}

TEST(test_eval_device_options_refuse_bad_values_in_one_line)
{
    const char *cases[][2] = {
        {"--device tpu", "--device must be cpu or cuda, got 'tpu'"},
        {"-ngl many", "needs a whole number"},
        {"--n-gpu-layers -2", "needs a whole number in -1.."},
        {"--gpu-layers", "--gpu-layers needs N"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[256], *out = NULL, *err = NULL;
        snprintf(args, sizeof args, "-m x.gguf -f " TEXT " %s", cases[i][0]);
        const int rc = eval(&out, &err, args);
        CHECK_MSG(rc == 2 && count_lines(err) == 1 && strstr(err, cases[i][1]),
                  "%s -> exit %d, '%s'", cases[i][0], rc, err ? err : "");
        free(out);
        free(err);
    }
}

TEST(test_eval_device_cpu_spellings_give_the_same_numbers_and_say_so)
{
    const char *model = tiny_model("default");
    CHECK(model != NULL);
    char args[1024], *cpu_out = NULL, *none_out = NULL, *err = NULL;
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 64 --chunks 2 -t 1 --device cpu", model);
    CHECK(eval(&cpu_out, &err, args) == 0);
    CHECK_MSG(strstr(err, "gguf-eval: device: CPU, 1 threads\n"), "stderr: %s", err);
    free(err);
    /* -ngl is ignored on the CPU, as llama.cpp ignores it without a device. */
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 64 --chunks 2 -t 1 -dev none -ngl 3",
             model);
    CHECK(eval(&none_out, &err, args) == 0);
    CHECK_MSG(strcmp(cpu_out, none_out) == 0, "'%s' vs '%s'", cpu_out, none_out);
    free(err);
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 64 --chunks 2 -t 1 --device cpu --json",
             model);
    free(cpu_out);
    CHECK(eval(&cpu_out, &err, args) == 0);
    CHECK_MSG(strstr(cpu_out, "\"device\": \"cpu\"") && strstr(cpu_out, "\"n_gpu_layers\": 0") &&
              strstr(cpu_out, "\"weights\": 0"), "%s", cpu_out);
    free(err);
    free(cpu_out);
    free(none_out);
}
