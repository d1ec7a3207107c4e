/* test_imatrix_llama_cpp.c - our importance matrices against llama.cpp's tools (REF_BIN names its
 * build/bin; skipped when unset or without the model). On SmolLM2 in F32 (so that both engines
 * compute nearly the same activations), 2 chunks of 512 tokens:
 *  - llama-imatrix's files read and written back byte for byte, and its legacy file equal to
 *    ours written from its GGUF file (same statistics, same float arithmetic);
 *  - gguf-eval's imatrix against llama-imatrix's: same entries in the same order, same counts and
 *    metadata, values within the spread of two engines' activations (at most 1e-3 of an entry's
 *    mass, 1e-2 of a column; measured 1.8e-4 and 1.9e-3);
 *  - llama-quantize accepting ours (both formats), and gguf-quantize with the same (GGUF)
 *    imatrix writing the same tensor bytes and imatrix metadata as llama-quantize (Q4_0, whose
 *    weighted quantizer is ggml's; the K-quant mixes follow once their rules are merged). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ggtk/gguf.h>
#include <ggtk/inf_imatrix.h>

#include "imatrix_fixture.h"
#include "test.h"

/* REF_BIN when it holds the llama.cpp tools and the model is fetched; else skip. */
static const char *ref_bin(void)
{
    const char *bin = getenv("REF_BIN");
    if (!bin || !*bin)
        SKIP("REF_BIN is unset (set it to llama.cpp's build/bin)");
    char tool[1024];
    snprintf(tool, sizeof tool, "%s/llama-imatrix", bin);
    if (access(tool, X_OK) != 0)
        SKIP("REF_BIN has no llama-imatrix");
    if (!test_model_path())
        SKIP("the real model is not fetched (make models)");
    return bin;
}

/* tmpdir/name, made by `command` (a format whose one %s is the path) unless it exists. */
static const char *made(const char *name, const char *command)
{
    static char path[8][512];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, sizeof path[0], "%s", test_tmpfile(name));
    if (access(p, F_OK) == 0)
        return p;
    char *out = NULL;
    int rc = test_run(&out, command, p);
    if (rc != 0) {
        fprintf(stderr, "    making %s failed (%d): %s\n", name, rc, out ? out : "");
        p = NULL;
    }
    free(out);
    return p;
}

static const char *f32_model(void)
{
    char command[1024];
    snprintf(command, sizeof command, "%s -q --allow-requantize '%s' '%%s' f32",
             test_tool("gguf-quantize"), test_model_path());
    return made("smollm2-f32.gguf", command);
}

static const char *plain_text(void)
{
    return made("licenses.txt", "gzip -dc tests/eval/data/licenses.txt.gz > '%s'");
}

/* llama-imatrix's file (`format` gguf or dat) for the F32 model, 2 chunks of 512. */
static const char *reference_imatrix(const char *format)
{
    const char *model = f32_model(), *text = plain_text();
    if (!model || !text)
        return NULL;
    char command[2048], name[64];
    snprintf(command, sizeof command,
             "%s/llama-imatrix -m '%s' -f '%s' -c 512 -b 512 --chunks 2 -t 2 "
             "--output-format %s -o '%%s' > /dev/null 2>&1",
             ref_bin(), model, text, format);
    snprintf(name, sizeof name, "llama-imatrix.%s", format);
    return made(name, command);
}

/* gguf-eval's file in `format` for the same model, text and settings. */
static const char *our_imatrix(const char *format)
{
    const char *model = f32_model(), *text = plain_text();
    if (!model || !text)
        return NULL;
    char command[2048], name[64];
    snprintf(command, sizeof command,
             "%s -m '%s' -f '%s' -c 512 -b 512 --chunks 2 -t 2 --imatrix-format %s "
             "--imatrix-out '%%s' > /dev/null 2>&1",
             test_tool("gguf-eval"), model, text, format);
    snprintf(name, sizeof name, "gguf-eval-imatrix.%s", format);
    return made(name, command);
}

TEST(test_imatrix_llama_imatrix_files_round_trip_byte_for_byte)
{
    const char *gguf = reference_imatrix("gguf"), *dat = reference_imatrix("dat");
    CHECK(gguf && dat);
    const char *formats[2] = {gguf, dat};
    for (int f = 0; f < 2; f++) {
        ggtk_error err;
        inf_imatrix *m = inf_imatrix_read(formats[f], &err);
        CHECK_MSG(m, "%s", err.message);
        const char *copy = test_tmpfile(f ? "copy.dat" : "copy.gguf");
        CHECK(inf_imatrix_write(m, copy, f ? INF_IMATRIX_LEGACY : INF_IMATRIX_GGUF, NULL) ==
              GGTK_OK);
        CHECK_MSG(fixture_same_file(copy, formats[f]), "%s", formats[f]);
        if (f == 0) {
            /* The legacy file llama-imatrix writes from the same statistics. */
            const char *legacy = test_tmpfile("from-gguf.dat");
            CHECK(inf_imatrix_write(m, legacy, INF_IMATRIX_LEGACY, NULL) == GGTK_OK);
            CHECK(fixture_same_file(legacy, dat));
        }
        inf_imatrix_free(m);
    }
}

static double entry_mass_difference(const inf_imatrix_entry *a, const inf_imatrix_entry *b,
                                    double *worst_column)
{
    double diff = 0, mass = 0;
    *worst_column = 0;
    for (int64_t j = 0; j < a->n_mat * a->n_per_row; j++) {
        double d = fabs((double)a->values[j] - b->values[j]);
        diff += d;
        mass += fabs((double)b->values[j]);
        double rel = d / fmax(fabs((double)b->values[j]), 1e-30);
        *worst_column = rel > *worst_column ? rel : *worst_column;
    }
    return mass > 0 ? diff / mass : diff;
}

TEST(test_imatrix_gguf_eval_matches_llama_imatrix)
{
    const char *ref_path = reference_imatrix("gguf"), *our_path = our_imatrix("gguf");
    CHECK(ref_path && our_path);
    inf_imatrix *ref = inf_imatrix_read(ref_path, NULL), *ours = inf_imatrix_read(our_path, NULL);
    CHECK(ref && ours);
    CHECK(inf_imatrix_n_entries(ours) == inf_imatrix_n_entries(ref));
    CHECK(inf_imatrix_chunk_count(ours) == 2 && inf_imatrix_chunk_count(ref) == 2);
    CHECK(inf_imatrix_chunk_size(ours) == 512 && inf_imatrix_chunk_size(ref) == 512);
    CHECK(strcmp(inf_imatrix_dataset(ours, 0), inf_imatrix_dataset(ref, 0)) == 0);
    double worst_mass = 0, worst_column = 0;
    for (int64_t i = 0; i < inf_imatrix_n_entries(ref); i++) {
        const inf_imatrix_entry *r = inf_imatrix_entry_at(ref, i), *o = inf_imatrix_entry_at(ours, i);
        CHECK_MSG(strcmp(r->name, o->name) == 0, "entry %lld: %s vs %s", (long long)i, o->name,
                  r->name);
        CHECK(o->n_mat == r->n_mat && o->n_per_row == r->n_per_row);
        CHECK_MSG(o->counts[0] == r->counts[0], "%s: count %lld vs %lld", r->name,
                  (long long)o->counts[0], (long long)r->counts[0]);
        double column;
        double mass = entry_mass_difference(o, r, &column);
        worst_mass = mass > worst_mass ? mass : worst_mass;
        worst_column = column > worst_column ? column : worst_column;
    }
    fprintf(stderr, "    worst entry difference %.2e of its mass, worst column %.2e\n",
            worst_mass, worst_column);
    CHECK(worst_mass < 1e-3 && worst_column < 1e-2);
    inf_imatrix_free(ref);
    inf_imatrix_free(ours);
}

/* Every tensor's bytes and the quantize.imatrix.* values of two files agree. */
static bool same_quantized_model(const char *a_path, const char *b_path)
{
    ggtk_file *a = ggtk_open(a_path, GGTK_OPEN_MMAP, NULL), *b = ggtk_open(b_path, GGTK_OPEN_MMAP, NULL);
    bool same = a && b && ggtk_tensor_count(a) == ggtk_tensor_count(b);
    for (int64_t i = 0; same && i < ggtk_tensor_count(a); i++) {
        const ggtk_tensor_info *ta = ggtk_tensor(a, i);
        int64_t j = ggtk_find_tensor(b, ta->name);
        const ggtk_tensor_info *tb = j >= 0 ? ggtk_tensor(b, j) : NULL;
        same = tb && ta->type == tb->type && ta->size == tb->size &&
               memcmp(ta->data, tb->data, ta->size) == 0;
        if (!same)
            fprintf(stderr, "    tensor %s differs\n", ta->name);
    }
    static const char *const strings[2] = {"quantize.imatrix.file", "quantize.imatrix.dataset"};
    static const char *const counts[2] = {"quantize.imatrix.entries_count",
                                          "quantize.imatrix.chunks_count"};
    for (int k = 0; same && k < 2; k++) {
        const char *sa = NULL, *sb = NULL;
        uint64_t ua = 0, ub = 1;
        same = ggtk_get_string(a, strings[k], &sa) == GGTK_OK &&
               ggtk_get_string(b, strings[k], &sb) == GGTK_OK && strcmp(sa, sb) == 0 &&
               ggtk_get_uint(a, counts[k], &ua) == GGTK_OK &&
               ggtk_get_uint(b, counts[k], &ub) == GGTK_OK && ua == ub;
        if (!same)
            fprintf(stderr, "    %s or %s differs\n", strings[k], counts[k]);
    }
    ggtk_close(a);
    ggtk_close(b);
    return same;
}

/* llama-quantize --pure --imatrix IMATRIX F32-MODEL OUT q4_0; true when it ran and loaded all
 * 210 entries. */
static bool llama_quantize(const char *imatrix, const char *model, const char *out)
{
    char *log = NULL;
    int rc = test_run(&log, "%s/llama-quantize --pure --imatrix '%s' '%s' '%s' q4_0 2 2>&1",
                      ref_bin(), imatrix, model, out);
    bool loaded = rc == 0 && log && strstr(log, "loaded 210 importance matrix entries");
    if (!loaded)
        fprintf(stderr, "    llama-quantize (%d): %s\n", rc, log ? log : "");
    free(log);
    return loaded;
}

TEST(test_imatrix_llama_quantize_takes_ours_and_writes_our_bytes)
{
    const char *model = f32_model(), *gguf = our_imatrix("gguf"), *dat = our_imatrix("dat");
    CHECK(model && gguf && dat);
    char ref_out[512], our_out[512];
    snprintf(ref_out, sizeof ref_out, "%s", test_tmpfile("llama-quantize.gguf"));
    snprintf(our_out, sizeof our_out, "%s", test_tmpfile("gguf-quantize.gguf"));
    CHECK(llama_quantize(dat, model, ref_out));
    CHECK(llama_quantize(gguf, model, ref_out));
    CHECK(test_run(NULL, "%s -q -t 2 --pure --imatrix '%s' '%s' '%s' q4_0",
                   test_tool("gguf-quantize"), gguf, model, our_out) == 0);
    CHECK(same_quantized_model(our_out, ref_out));
    unlink(ref_out);
    unlink(our_out);
}
