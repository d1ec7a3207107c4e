/* Every dequantizer on random blocks (random codes, indices and signs, finite scales) against
 * gguf-py's numpy dequantization, an independent implementation of ggml's dequantize_row_*:
 * identical float bits at every SIMD level. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_quant.h>
#include "quant_blocks.h"
#include "test.h"

/* Elements per type: a multiple of every block size (32, 64, 128, 256). */
#define ORACLE_ELEMENTS (256 * 300)

static bool write_file(const char *path, const void *data, size_t bytes)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, bytes, f) == bytes;
    return fclose(f) == 0 && ok;
}

/* The GGMLQuantizationType spelling of a type name ("q4_K" -> "Q4_K"). */
static void upper_name(const char *name, char *out, size_t size)
{
    size_t i = 0;
    for (; name[i] && i + 1 < size; i++)
        out[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    out[i] = '\0';
}

/* Dequantize random blocks of `type` at every level (all equal to scalar), write blocks and floats
 * and append "NAME:BLOCKS:FLOATS" to args. */
static bool prepare_type(ggtk_tensor_type type, char *args, size_t args_size)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    const int64_t nblocks = ORACLE_ELEMENTS / info->block_size;
    uint8_t *blocks = malloc((size_t)nblocks * info->block_bytes);
    float *want = malloc(ORACLE_ELEMENTS * sizeof *want), *got = malloc(ORACLE_ELEMENTS * 4);
    bool ok = blocks && want && got && quant_blocks_fill(type, blocks, nblocks, 1000 + type);
    if (ok)
        inf_quant_kernels_at(type, INF_SIMD_SCALAR)->to_float(blocks, want, ORACLE_ELEMENTS);
    for (int level = INF_SIMD_SCALAR + 1; ok && level <= (int)inf_simd_detect(); level++) {
        inf_quant_kernels_at(type, (inf_simd_level)level)->to_float(blocks, got, ORACLE_ELEMENTS);
        ok = memcmp(want, got, ORACLE_ELEMENTS * sizeof *got) == 0;
        if (!ok)
            test_fail(__FILE__, __LINE__, "%s: %s differs from scalar", info->name,
                      inf_simd_level_name((inf_simd_level)level));
    }
    char name[16], bname[64], fname[64], bpath[1024], fpath[1024];
    upper_name(info->name, name, sizeof name);
    snprintf(bname, sizeof bname, "dequant_%s.bin", info->name);
    snprintf(fname, sizeof fname, "dequant_%s.f32", info->name);
    snprintf(bpath, sizeof bpath, "%s", test_tmpfile(bname));
    snprintf(fpath, sizeof fpath, "%s", test_tmpfile(fname));
    ok = ok && write_file(bpath, blocks, (size_t)nblocks * info->block_bytes) &&
         write_file(fpath, want, ORACLE_ELEMENTS * sizeof *want);
    size_t len = strlen(args);
    snprintf(args + len, args_size - len, " %s:%s:%s", name, bpath, fpath);
    free(blocks), free(want), free(got);
    return ok;
}

TEST(test_dequantizers_match_gguf_py_on_random_blocks)
{
    static char args[16384];
    args[0] = '\0';
    for (int t = 0; t < quant_blocks_type_count; t++)
        CHECK_MSG(prepare_type(quant_blocks_types[t], args, sizeof args), "%s",
                  ggtk_tensor_type_name(quant_blocks_types[t]));
    char *report = NULL;
    int rc = test_run(&report, "python3 tests/quant_kernels/py/check_dequant.py%s", args);
    CHECK_MSG(rc == 0, "oracle exited %d:\n%s", rc, report ? report : "");
    /* every type gguf-py 0.19 dequantizes (all but Q1_0 and Q2_0) must have been compared */
    static const char *const compared[] = {
        "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K", "Q3_K", "Q4_K",
        "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S",
        "IQ1_M", "IQ4_NL", "IQ4_XS", "TQ1_0", "TQ2_0", "MXFP4", "NVFP4",
    };
    char *lines = malloc(strlen(report ? report : "") + 2); /* "\n" + report: whole lines */
    CHECK(lines);
    snprintf(lines, strlen(report ? report : "") + 2, "\n%s", report ? report : "");
    for (size_t i = 0; i < sizeof compared / sizeof compared[0]; i++) {
        const ggtk_tensor_type type = (ggtk_tensor_type)ggtk_tensor_type_from_name(compared[i]);
        char line[64];
        snprintf(line, sizeof line, "\n%s: %d blocks identical", compared[i],
                 ORACLE_ELEMENTS / (int)ggtk_tensor_type_info_get(type)->block_size);
        CHECK_MSG(strstr(lines, line), "no comparison of %s in:\n%s", compared[i], lines);
    }
    free(lines);
    free(report);
}

/* The IQ lookup tables are gguf-py's, expanded by their generator and not edited since. */
TEST(test_iq_grids_match_their_generator)
{
    char *output = NULL;
    int status = test_run(&output, "python3 scripts/gen_iq_grids.py --check "
                                   "libinfer/src/engine/quant_kernels/iq_grids.c");
    CHECK_MSG(status == 0, "%s", output ? output : "");
    free(output);
}
