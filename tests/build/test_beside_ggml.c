/* test_beside_ggml.c - our libgguf linked beside ggml's libggml-base in one program: no exported
 * name in common, and both readers work in either link order. REF_BIN names llama.cpp's
 * build/bin folder (libggml-base.so); ggml's headers come from REF_SRC/ggml/include, where REF_SRC
 * defaults to REF_BIN/../.. (the llama.cpp checkout holding that build). Skipped when REF_BIN is
 * unset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_support.h"
#include "test.h"

/* REF_BIN, or skip the calling test. */
static const char *ref_bin_or_skip(void)
{
    const char *dir = getenv("REF_BIN");
    if (!dir || !*dir)
        SKIP("REF_BIN is unset (set it to llama.cpp's build/bin, holding libggml-base.so)");
    char path[4096];
    snprintf(path, sizeof path, "%s/libggml-base.so", dir);
    if (access(path, R_OK) != 0)
        SKIP("REF_BIN has no libggml-base.so");
    return dir;
}

/* The folder of ggml's public headers (gguf.h), or skip the calling test. */
static const char *ggml_include_or_skip(const char *ref_bin)
{
    static char dir[4096];
    const char *src = getenv("REF_SRC");
    if (src && *src)
        snprintf(dir, sizeof dir, "%s/ggml/include", src);
    else
        snprintf(dir, sizeof dir, "%s/../../ggml/include", ref_bin);
    char header[4200];
    snprintf(header, sizeof header, "%s/gguf.h", dir);
    if (access(header, R_OK) != 0)
        SKIP("no ggml headers at %s (set REF_SRC to the llama.cpp checkout)", dir);
    return dir;
}

TEST(test_libgguf_and_libggml_base_export_no_common_name)
{
    const char *ref_bin = ref_bin_or_skip();
    require_tool("nm", "binutils");
    char ggml_lib[4200];
    snprintf(ggml_lib, sizeof ggml_lib, "%s/libggml-base.so", ref_bin);
    name_list ggml = {0}, ours = {0};
    bool ok = names_exported(ggml_lib, &ggml) && names_exported(build_lib("libgguf.so"), &ours) &&
              names_exported(build_lib("libinfer.so"), &ours);
    for (size_t i = 0; ok && i < ours.count; i++)
        if (names_contain(&ggml, ours.names[i])) {
            test_fail(__FILE__, __LINE__, "both export %s", ours.names[i]);
            ok = false;
        }
    bool sane = ggml.count > 100 && names_contain(&ggml, "gguf_find_key");
    names_free(&ggml);
    names_free(&ours);
    CHECK(ok);
    CHECK_MSG(sane, "%s does not look like ggml's library", ggml_lib);
}

/* Build beside_ggml.c with the libraries in `libs` order and run it on the model. */
static bool builds_and_agrees(const char *ref_bin, const char *include, const char *libs)
{
    const char *program = test_tmpfile("beside_ggml");
    char *output = NULL;
    int rc = test_run(&output, "%s -std=c11 -Wall -Wextra -Werror -I'%s' -Ilibgguf/include -o '%s' "
                               "tests/build/programs/beside_ggml.c -L'%s' -L%s/lib %s "
                               "-Wl,-rpath,'%s' -Wl,-rpath,%s/lib %s && '%s' '%s'",
                      TEST_CC, include, program, ref_bin, TEST_BUILD_DIR, libs, ref_bin,
                      TEST_BUILD_DIR, TEST_LINK_FLAGS, program, test_model_path());
    bool ok = rc == 0 && strstr(output, ": agree\n");
    if (!ok)
        test_fail(__FILE__, __LINE__, "linked with %s: exit %d, output:\n%s", libs, rc, output);
    free(output);
    return ok;
}

TEST(test_program_linking_ggml_base_and_libgguf_reads_with_both_in_either_order)
{
    const char *ref_bin = ref_bin_or_skip();
    const char *include = ggml_include_or_skip(ref_bin);
    if (!test_model_path())
        SKIP("the model is missing (make models)");
    CHECK(builds_and_agrees(ref_bin, include, "-lggml-base -lgguf"));
    CHECK(builds_and_agrees(ref_bin, include, "-lgguf -lggml-base"));
}
