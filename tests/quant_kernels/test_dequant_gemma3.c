/* The dequantizers on a real K-quant file: sampled rows of every tensor of Gemma 3 270M Q4_K_M
 * (Q4_K, Q6_K, Q5_0, Q8_0 and F32 tensors) dequantize to the same float bits as with gguf-py,
 * and at every SIMD level to the same bits as the scalar kernels. Skipped without the model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ggtk/gguf.h>
#include <ggtk/inf_quant.h>
#include "test.h"

#define GEMMA3_PATH "models/gemma-3-270m-q4_k_m.gguf"
/* Rows compared per tensor, evenly spaced from the first to the last. */
#define ROWS_PER_TENSOR 64

/* The GGMLQuantizationType spelling of a type name ("q4_K" -> "Q4_K"). */
static void upper_name(const char *name, char *out, size_t size)
{
    size_t i = 0;
    for (; name[i] && i + 1 < size; i++)
        out[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    out[i] = '\0';
}

/* Dequantize ROWS_PER_TENSOR rows of `t`, evenly spaced, at every level, check the levels agree,
 * append the scalar floats to `floats` and the tensor's line to `rows` (see
 * py/check_gemma3.py). */
static bool dequantize_samples(const ggtk_file *file, const ggtk_tensor_info *t, FILE *rows,
                               FILE *floats)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(t->type);
    const int64_t ne0 = (int64_t)t->ne[0];
    const int64_t nrows = (int64_t)(ggtk_tensor_elements(t) / t->ne[0]);
    const size_t row_bytes = (size_t)(ne0 / info->block_size * info->block_bytes);
    float *want = malloc((size_t)ne0 * sizeof *want), *got = malloc((size_t)ne0 * sizeof *got);
    bool ok = want && got;
    char type_name[16];
    upper_name(info->name, type_name, sizeof type_name);
    fprintf(rows, "%s %s %llu %zu", t->name, type_name,
            (unsigned long long)(ggtk_data_offset(file) + t->offset), row_bytes);
    int64_t previous = -1;
    for (int i = 0; ok && i < ROWS_PER_TENSOR; i++) {
        const int64_t r = i * (nrows - 1) / (ROWS_PER_TENSOR - 1);
        if (r == previous)
            continue;
        previous = r;
        fprintf(rows, " %lld", (long long)r);
        const uint8_t *row = (const uint8_t *)t->data + (size_t)r * row_bytes;
        inf_quant_kernels_at(t->type, INF_SIMD_SCALAR)->to_float(row, want, ne0);
        for (int level = INF_SIMD_SCALAR + 1; ok && level <= (int)inf_simd_detect(); level++) {
            inf_quant_kernels_at(t->type, (inf_simd_level)level)->to_float(row, got, ne0);
            ok = memcmp(want, got, (size_t)ne0 * sizeof *got) == 0;
            if (!ok)
                test_fail(__FILE__, __LINE__, "%s row %lld: %s differs from scalar", t->name,
                          (long long)r, inf_simd_level_name((inf_simd_level)level));
        }
        ok = ok && fwrite(want, sizeof *want, (size_t)ne0, floats) == (size_t)ne0;
    }
    fputc('\n', rows);
    free(want), free(got);
    return ok;
}

TEST(test_gemma3_k_quant_tensors_dequantize_like_gguf_py)
{
    if (access(GEMMA3_PATH, R_OK) != 0)
        SKIP("%s is absent (make models fetches it)", GEMMA3_PATH);
    ggtk_error err;
    ggtk_file *file = ggtk_open(GEMMA3_PATH, GGTK_OPEN_MMAP, &err);
    CHECK_MSG(file, "%s", err.message);
    char rows_path[1024], floats_path[1024];
    snprintf(rows_path, sizeof rows_path, "%s", test_tmpfile("gemma3_rows.txt"));
    snprintf(floats_path, sizeof floats_path, "%s", test_tmpfile("gemma3_rows.f32"));
    FILE *rows = fopen(rows_path, "w"), *floats = fopen(floats_path, "wb");
    CHECK(rows && floats);
    for (int64_t i = 0; i < ggtk_tensor_count(file); i++) {
        const ggtk_tensor_info *t = ggtk_tensor(file, i);
        CHECK_MSG(inf_type_can_dequantize(t->type), "%s: no dequantizer for %s", t->name,
                  ggtk_tensor_type_name(t->type));
        CHECK_MSG(dequantize_samples(file, t, rows, floats), "%s", t->name);
    }
    CHECK(fclose(rows) == 0 && fclose(floats) == 0);
    ggtk_close(file);
    char *report = NULL;
    int rc = test_run(&report, "python3 tests/quant_kernels/py/check_gemma3.py %s %s %s",
                      GEMMA3_PATH, rows_path, floats_path);
    CHECK_MSG(rc == 0, "oracle exited %d:\n%s", rc, report ? report : "");
    static const char *const expected[] = {
        "Q4_K: 27 tensors", "Q6_K: 9 tensors", "Q5_0: 81 tensors", "Q8_0: 10 tensors",
        "F32: 109 tensors",
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        CHECK_MSG(report && strstr(report, expected[i]), "no \"%s\" in:\n%s", expected[i],
                  report ? report : "");
    free(report);
}
