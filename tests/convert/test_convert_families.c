/* Every family gguf-convert knows, on a tiny random Hugging Face folder written by numpy and
 * PyPI safetensors (tests/convert/py/tiny_hf.py): the F32 GGUF holds the keys, tensor names,
 * shapes and values convert_hf_to_gguf.py's rules give (read by gguf-py); --to-hf gives back
 * arrays equal to the GGUF's with every transformation undone (check_roundtrip.py, PyPI
 * safetensors), and converting that folder again gives the same file (tokenizer keys included).
 * With REF_BIN, llama.cpp loads and runs each converted model as it is. */
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const families[] = {"llama", "mistral", "qwen2", "qwen3",
                                       "gemma2", "gemma3", "phi3"};

static bool oracle_available(void)
{
    return test_run(NULL, "python3 -c 'import gguf, numpy, safetensors, tokenizers' 2>/dev/null") == 0;
}

/* Run a command; on failure print its output. */
static bool ok(const char *what, char *log, int rc)
{
    if (rc != 0)
        fprintf(stderr, "    %s failed (%d):\n%s", what, rc, log ? log : "");
    free(log);
    return rc == 0;
}

static bool family_round_trip(const char *family)
{
    char dir[400], gguf[512], hf[512], back[512];
    snprintf(dir, sizeof dir, "%s", test_tmpfile(family));
    snprintf(gguf, sizeof gguf, "%s.gguf", dir);
    snprintf(hf, sizeof hf, "%s-hf", dir);
    snprintf(back, sizeof back, "%s-back.gguf", dir);
    const char *tool = test_tool("gguf-convert");
    char *log = NULL;
    return ok("make", log, test_run(&log, "python3 tests/convert/py/tiny_hf.py make %s %s", family, dir)) &&
           ok("convert", log, test_run(&log, "%s --outtype f32 %s %s", tool, dir, gguf)) &&
           ok("check", log, test_run(&log, "python3 tests/convert/py/tiny_hf.py check %s %s %s",
                                     family, dir, gguf)) &&
           ok("--to-hf", log, test_run(&log, "%s --to-hf %s %s", tool, gguf, hf)) &&
           ok("export", log, test_run(&log, "python3 tests/convert/py/check_roundtrip.py export %s %s",
                                      gguf, hf)) &&
           ok("back", log, test_run(&log, "%s --outtype f32 --metadata %s/gguf_metadata.json %s %s",
                                    tool, hf, hf, back)) &&
           ok("same", log, test_run(&log, "python3 tests/convert/py/check_roundtrip.py same %s %s",
                                    gguf, back));
}

TEST(test_convert_every_family_matches_the_reference_rules_and_round_trips)
{
    if (!oracle_available())
        SKIP("python3 with gguf, numpy, safetensors and tokenizers is needed (tests/requirements.txt)");
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        CHECK_MSG(family_round_trip(families[i]), "family %s", families[i]);
}

TEST(test_convert_every_family_loads_in_llama_cpp)
{
    const char *ref = getenv("REF_BIN");
    if (!ref || !*ref)
        SKIP("REF_BIN is unset (llama.cpp's build/bin)");
    if (!oracle_available())
        SKIP("python3 with gguf, numpy, safetensors and tokenizers is needed (tests/requirements.txt)");
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        char dir[400], gguf[512];
        snprintf(dir, sizeof dir, "%s-ref", test_tmpfile(families[i]));
        snprintf(gguf, sizeof gguf, "%s.gguf", dir);
        char *log = NULL;
        CHECK(ok("make", log, test_run(&log, "python3 tests/convert/py/tiny_hf.py make %s %s",
                                       families[i], dir)));
        CHECK(ok("convert", log, test_run(&log, "%s %s %s", test_tool("gguf-convert"), dir, gguf)));
        int rc = test_run(&log, "%s/llama-bench -m %s -p 16 -n 4 -r 1 -t 1 -o csv", ref, gguf);
        CHECK_MSG(rc == 0 && log && strstr(log, gguf), "%s: llama-bench failed (%d): %s",
                  families[i], rc, log ? log : "");
        free(log);
    }
}
