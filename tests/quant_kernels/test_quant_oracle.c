/* Our quantizers against gguf-py's numpy port of ggml's reference quantizers (an independent
 * implementation of the same definitions): identical bytes, and identical dequantized floats. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_quant.h>
#include "quant_data.h"
#include "test.h"

static const ggtk_tensor_type oracle_types[] = {
    GGTK_TENSOR_F16,  GGTK_TENSOR_BF16, GGTK_TENSOR_Q4_0, GGTK_TENSOR_Q4_1,
    GGTK_TENSOR_Q5_0, GGTK_TENSOR_Q5_1, GGTK_TENSOR_Q8_0, GGTK_TENSOR_Q8_1,
};
#define N_ORACLE (sizeof oracle_types / sizeof oracle_types[0])

static bool write_file(const char *path, const void *data, size_t bytes)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, bytes, f) == bytes;
    return fclose(f) == 0 && ok;
}

/* Quantize and dequantize x with every oracle type at `level`, write the files and run the
 * oracle on them. Returns the script's exit status; its output goes to *report. */
static int run_oracle(const float *x, int64_t n, inf_simd_level level, char **report)
{
    char args[4096] = "";
    uint8_t *q = malloc((size_t)n * 4);
    float *back = malloc((size_t)n * sizeof *back);
    if (!q || !back || !write_file(test_tmpfile("oracle_in.f32"), x, (size_t)n * 4))
        return -1;
    for (size_t t = 0; t < N_ORACLE; t++) {
        const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(oracle_types[t]);
        const inf_quant_kernels *k = inf_quant_kernels_at(oracle_types[t], level);
        uint64_t bytes;
        ggtk_tensor_type_bytes(oracle_types[t], (uint64_t)n, &bytes);
        k->from_float(x, q, n);
        k->to_float(q, back, n);
        char qname[64], fname[64], path_q[1024], path_f[1024];
        snprintf(qname, sizeof qname, "oracle_%s.bin", info->name);
        snprintf(fname, sizeof fname, "oracle_%s.f32", info->name);
        snprintf(path_q, sizeof path_q, "%s", test_tmpfile(qname));
        snprintf(path_f, sizeof path_f, "%s", test_tmpfile(fname));
        if (!write_file(path_q, q, bytes) || !write_file(path_f, back, (size_t)n * 4))
            return -1;
        char name[16];
        for (size_t i = 0; i <= strlen(info->name); i++) /* GGMLQuantizationType names */
            name[i] = (char)(info->name[i] >= 'a' && info->name[i] <= 'z' ? info->name[i] - 32
                                                                          : info->name[i]);
        size_t len = strlen(args);
        snprintf(args + len, sizeof args - len, " %s:%s:%s", name, path_q, path_f);
    }
    free(q), free(back);
    return test_run(report, "python3 tests/quant_kernels/py/check_ggml_ref.py %s%s",
                    test_tmpfile("oracle_in.f32"), args);
}

/* Inputs both sides define identically on this machine (see quant_data.h). */
#if defined(__x86_64__)
#define ORACLE_DATA QUANT_DATA_X86_CASTS
#else
#define ORACLE_DATA QUANT_DATA_DEFINED
#endif

static void check_level(inf_simd_level level)
{
    const int64_t n = 32 * 6000;
    float *x = malloc((size_t)n * sizeof *x);
    CHECK(x);
    quant_data_fill(x, n, 2024, ORACLE_DATA);
    char *report = NULL;
    int rc = run_oracle(x, n, level, &report);
    CHECK_MSG(rc == 0, "oracle at %s exited %d:\n%s", inf_simd_level_name(level), rc,
              report ? report : "");
    CHECK(report && strstr(report, "Q8_0: 6000 blocks identical"));
    free(report);
    free(x);
}

TEST(test_scalar_quantizers_match_gguf_py_reference)
{
    check_level(INF_SIMD_SCALAR);
}

TEST(test_best_simd_quantizers_match_gguf_py_reference)
{
    if (inf_simd_detect() == INF_SIMD_SCALAR)
        SKIP("this CPU has no SIMD level beyond scalar");
    check_level(inf_simd_detect());
}
