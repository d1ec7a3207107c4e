/* Cross-checks of the writer against gguf-py (tests/gguf/py/gguf_py_oracle.py): gguf-py reads
 * what libgguf writes, and both write the same bytes for the same content. */
#include "gguf.h"
#include "test.h"
#include "writer_test_support.h"

#include <stdlib.h>

/* Let gguf-py write its file and describe it; NULL (test failed or skipped) when it cannot. */
static json_t *oracle_content(const char *gguf_path, const char *json_path)
{
    char *output = NULL;
    int status = oracle_write(gguf_path, json_path, &output);
    if (status != 0) {
        test_fail(__FILE__, __LINE__, "gguf-py oracle failed (%d): %s", status, output);
        free(output);
        return NULL;
    }
    free(output);
    return oracle_load(json_path);
}

TEST(test_gguf_py_reads_what_the_writer_writes)
{
    char *dir = support_make_dir("gguf_py_reads_writer");
    char a[512], b[512], json[512];
    snprintf(a, sizeof a, "%s/gguf_py.gguf", dir);
    snprintf(b, sizeof b, "%s/libgguf.gguf", dir);
    snprintf(json, sizeof json, "%s/content.json", dir);
    json_t *doc = oracle_content(a, json);
    CHECK(doc);
    gguf_error err = {0};
    /* Every entry, also the empty arrays gguf-py cannot write; data in 13-byte pieces. */
    CHECK_MSG(oracle_write_with_libgguf(doc, true, b, 13, &err) == GGUF_OK, "%s", err.message);
    char *output = NULL;
    int status = test_run(&output, "python3 %s check '%s' --all", ORACLE_SCRIPT, b);
    CHECK_MSG(status == 0, "gguf-py check failed (%d):\n%s", status, output);
    free(output);
    json_decref(doc);
}

/* The Q8_1 and Q2_0 tensor types are absent from this check: gguf-py disagrees with ggml on the
 * size of a Q8_1 block and does not know Q2_0 (see the oracle script). */
TEST(test_writer_bytes_equal_gguf_py_bytes)
{
    char *dir = support_make_dir("gguf_py_same_bytes");
    char a[512], b[512], json[512];
    snprintf(a, sizeof a, "%s/gguf_py.gguf", dir);
    snprintf(b, sizeof b, "%s/libgguf.gguf", dir);
    snprintf(json, sizeof json, "%s/content.json", dir);
    json_t *doc = oracle_content(a, json);
    CHECK(doc);
    gguf_error err = {0};
    CHECK_MSG(oracle_write_with_libgguf(doc, false, b, 4096, &err) == GGUF_OK, "%s",
              err.message);
    char *output = NULL;
    int status = test_run(&output, "cmp '%s' '%s'", a, b);
    CHECK_MSG(status == 0, "libgguf and gguf-py files differ: %s", output);
    free(output);
    json_decref(doc);
}
