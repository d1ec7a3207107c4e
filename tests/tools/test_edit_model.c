/* Tests of gguf-edit on the real SmolLM2 model: the same edit made by gguf-py's
 * gguf_new_metadata script gives the same bytes, gguf-py reads our result back with its tensor
 * data unchanged, and a hash manifest of the original verifies the tensor data of the result
 * while naming the edited keys. */
#include "edit_fixture.h"
#include "gguf/writer_test_support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *model_or_skip(void)
{
    const char *model = test_model_path();
    if (!model)
        SKIP("the SmolLM2 model is not there (make models)");
    return model;
}

/* The absolute path of the model, for runs inside another directory. */
static const char *absolute(const char *path)
{
    static char resolved[4096];
    if (!realpath(path, resolved))
        snprintf(resolved, sizeof resolved, "%s", path);
    return resolved;
}

TEST(test_edit_smollm2_equals_gguf_new_metadata_byte_for_byte)
{
    const char *model = absolute(model_or_skip());
    const char *dir = support_make_dir("edit_vs_gguf_py");
    char *out = NULL;
    if (test_run(&out, "python3 -c 'import gguf.scripts.gguf_new_metadata' 2>&1") != 0)
        SKIP("gguf-py's gguf_new_metadata script is not installed: %s", out);
    free(out);
    int rc = test_run(&out, "cd %s && python3 -m gguf.scripts.gguf_new_metadata --force "
                      "--general-name 'Edited SmolLM2' --pre-tokenizer gpt2 "
                      "--special-token-by-id eos 0 %s py.gguf 2>&1", dir, model);
    CHECK_MSG(rc == 0, "gguf_new_metadata: %s", out);
    free(out);
    edit_run run = edit_tool_run(dir, "-q %s ours.gguf --name 'Edited SmolLM2' --pre-tokenizer gpt2 "
                                      "--special-token-by-id eos=0", model);
    CHECK_MSG(run.rc == 0, "%s", run.err);
    edit_run_free(&run);
    char py[600], ours[600];
    snprintf(py, sizeof py, "%s/py.gguf", dir);
    snprintf(ours, sizeof ours, "%s/ours.gguf", dir);
    CHECK(support_same_bytes(py, ours));
}

TEST(test_edit_smollm2_read_back_by_gguf_py_with_tensor_data_unchanged)
{
    const char *model = absolute(model_or_skip());
    const char *dir = support_make_dir("edit_smollm2");
    edit_run run = edit_tool_run(dir, "%s out.gguf --set tokenizer.ggml.add_bos_token=true "
                                      "--set llama.rope.freq_base=10000.5 --remove general.languages "
                                      "--set 'ggtk.test:arr[i16]=[-1, 2]'", model);
    CHECK_MSG(run.rc == 0, "%s", run.err);
    CHECK_MSG(strstr(run.out, "~ tokenizer.ggml.add_bos_token  bool  false -> true\n") &&
              strstr(run.out, "- general.languages  arr[str]  [\"en\"]\n") &&
              strstr(run.out, "4 keys changed; wrote out.gguf"), "%s", run.out);
    edit_run_free(&run);
    char path[600];
    snprintf(path, sizeof path, "%s/out.gguf", dir);
    char *before = edit_gguf_py_metadata(model), *after = edit_gguf_py_metadata(path);
    CHECK(before && after);
    CHECK_MSG(strstr(after, "tokenizer.ggml.add_bos_token\tBOOL\ttrue\n") &&
              strstr(after, "llama.rope.freq_base\tFLOAT32\t10000.5\n") &&
              strstr(after, "ggtk.test\tARRAY[INT16]\t[-1, 2]\n") &&
              !strstr(after, "general.languages"), "%s", after);
    /* The last line sums every tensor's bytes as gguf-py finds them. */
    const char *sum_before = strstr(before, "\ntensors "), *sum_after = strstr(after, "\ntensors ");
    CHECK(sum_before && sum_after && strcmp(sum_before, sum_after) == 0);
    CHECK(strstr(sum_after, "\ntensors 272 "));
    free(before);
    free(after);
}

TEST(test_edit_smollm2_verify_names_the_edited_keys_and_passes_the_tensors)
{
    const char *model = absolute(model_or_skip());
    const char *dir = support_make_dir("edit_smollm2_verify");
    char manifest[600], edited[600];
    snprintf(manifest, sizeof manifest, "%s/smollm2.xxh64", dir);
    snprintf(edited, sizeof edited, "%s/edited.gguf", dir);
    char *out = NULL;
    CHECK(test_run(NULL, "%s --hash %s > %s", test_tool("gguf-inspect"), model, manifest) == 0);
    edit_run run = edit_tool_run(dir, "-q %s edited.gguf --name renamed --remove general.license",
                                 model);
    CHECK_MSG(run.rc == 0, "%s", run.err);
    edit_run_free(&run);
    int rc = test_run(&out, "%s --verify %s %s", test_tool("gguf-inspect"), manifest, edited);
    CHECK_MSG(rc == 1 && strstr(out, "DIFFERS  key general.name (manifest ") &&
              strstr(out, "MISSING  key general.license") &&
              strstr(out, "tensor data OK, all 272 tensors match") &&
              strstr(out, "(metadata: 2 keys, tensors: 0)") && edit_count_lines(out) == 4,
              "exit %d: %s", rc, out);
    free(out);
    rc = test_run(&out, "%s --verify %s --tensors '*' %s", test_tool("gguf-inspect"), manifest,
                  edited);
    CHECK_MSG(rc == 0 && strstr(out, "OK, matches"), "exit %d: %s", rc, out);
    free(out);
}
