/* test_emu_cublas.cpp - the emulated cuBLAS GEMMs against a plain loop written from cuBLAS's
 * definition (column-major, op(A) is m x k, lda/ldb/ldc the stored leading dimensions), for each
 * type combination and transpose, with padded leading dimensions and batches. */
#include "emu_test.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

struct gemm_case {
    cudaDataType ab_type;
    cudaDataType c_type;
    cublasComputeType_t compute;
};

size_t size_of(cudaDataType t)
{
    return t == CUDA_R_32F ? 4 : 2;
}

float to_float(const std::vector<uint8_t> &bytes, cudaDataType t, size_t i)
{
    if (t == CUDA_R_32F) {
        float f;
        memcpy(&f, &bytes[4 * i], 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, &bytes[2 * i], 2);
    return t == CUDA_R_16F ? __half2float(__ushort_as_half(h)) : __bfloat162float(__ushort_as_bfloat16(h));
}

void from_float(std::vector<uint8_t> &bytes, cudaDataType t, size_t i, float v)
{
    if (t == CUDA_R_32F) {
        memcpy(&bytes[4 * i], &v, 4);
        return;
    }
    uint16_t h = t == CUDA_R_16F ? __half_as_ushort(__float2half(v)) : __bfloat16_as_ushort(__float2bfloat16(v));
    memcpy(&bytes[2 * i], &h, 2);
}

/* A column-major matrix of `rows` x `cols` with leading dimension `ld`, pseudo-random values
 * representable in every input type. */
std::vector<uint8_t> random_matrix(int rows, int cols, int ld, cudaDataType t, unsigned int seed)
{
    std::vector<uint8_t> bytes(static_cast<size_t>(ld) * cols * size_of(t));
    for (int c = 0; c < cols; c++)
        for (int r = 0; r < ld; r++) {
            seed = seed * 1103515245u + 12345u;
            float v = static_cast<float>(static_cast<int>((seed >> 16) % 33) - 16) / 8.0f;
            from_float(bytes, t, static_cast<size_t>(c) * ld + r, r < rows ? v : NAN);
        }
    return bytes;
}

void *upload(const std::vector<uint8_t> &bytes)
{
    void *d = nullptr;
    if (cudaMalloc(&d, bytes.size()) != cudaSuccess ||
        cudaMemcpy(d, bytes.data(), bytes.size(), cudaMemcpyHostToDevice) != cudaSuccess)
        return nullptr;
    return d;
}

/* The loop cuBLAS's documentation defines, in double. */
float reference(const std::vector<uint8_t> &a, const std::vector<uint8_t> &b, const std::vector<uint8_t> &c0,
                const gemm_case &g, bool ta, bool tb, int k, int lda, int ldb, int ldc, int i, int j, float alpha,
                float beta)
{
    double sum = 0.0;
    for (int p = 0; p < k; p++) {
        size_t ai = ta ? static_cast<size_t>(i) * lda + p : static_cast<size_t>(p) * lda + i;
        size_t bi = tb ? static_cast<size_t>(p) * ldb + j : static_cast<size_t>(j) * ldb + p;
        sum += static_cast<double>(to_float(a, g.ab_type, ai)) * to_float(b, g.ab_type, bi);
    }
    double c = beta == 0.0f ? 0.0 : beta * static_cast<double>(to_float(c0, g.c_type, static_cast<size_t>(j) * ldc + i));
    return static_cast<float>(alpha * sum + c);
}

/* Runs one GemmEx (or a strided batch of 3) and compares every element of C. Products of these
 * inputs are multiples of 1/64 below 2^9, so float sums are exact and only C's rounding differs. */
bool check_gemm(const gemm_case &g, bool ta, bool tb, bool batched, float beta)
{
    const int m = 37, n = 19, k = 70, batches = batched ? 3 : 1;
    int a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
    int lda = a_rows + 3, ldb = b_rows + 1, ldc = m + 2;
    long long sa = static_cast<long long>(lda) * a_cols, sb = static_cast<long long>(ldb) * b_cols,
              sc = static_cast<long long>(ldc) * n;
    std::vector<uint8_t> a = random_matrix(a_rows, a_cols * batches, lda, g.ab_type, 1);
    std::vector<uint8_t> b = random_matrix(b_rows, b_cols * batches, ldb, g.ab_type, 2);
    std::vector<uint8_t> c = random_matrix(m, n * batches, ldc, g.c_type, 3);
    if (beta == 0.0f) /* C must not be read: NaN in it must not show */
        for (size_t i = 0; i < c.size() / size_of(g.c_type); i++)
            from_float(c, g.c_type, i, NAN);
    void *da = upload(a), *db = upload(b), *dc = upload(c);
    cublasHandle_t handle;
    if (!da || !db || !dc || cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS)
        return false;
    float alpha = 0.5f;
    __half alpha_h = __float2half(alpha), beta_h = __float2half(beta);
    bool half_scale = g.compute == CUBLAS_COMPUTE_16F;
    const void *pa = half_scale ? static_cast<const void *>(&alpha_h) : &alpha;
    const void *pb = half_scale ? static_cast<const void *>(&beta_h) : &beta;
    cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasStatus_t st =
        batched ? cublasGemmStridedBatchedEx(handle, opa, opb, m, n, k, pa, da, g.ab_type, lda, sa, db, g.ab_type, ldb,
                                             sb, pb, dc, g.c_type, ldc, sc, batches, g.compute, CUBLAS_GEMM_DEFAULT)
                : cublasGemmEx(handle, opa, opb, m, n, k, pa, da, g.ab_type, lda, db, g.ab_type, ldb, pb, dc, g.c_type,
                               ldc, g.compute, CUBLAS_GEMM_DEFAULT);
    std::vector<uint8_t> out(c.size());
    cudaMemcpy(out.data(), dc, out.size(), cudaMemcpyDeviceToHost);
    cublasDestroy(handle);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "status %s\n", cublasGetStatusName(st));
        return false;
    }
    for (int bt = 0; bt < batches; bt++) {
        std::vector<uint8_t> ab(a.begin() + bt * sa * size_of(g.ab_type), a.end());
        std::vector<uint8_t> bb(b.begin() + bt * sb * size_of(g.ab_type), b.end());
        std::vector<uint8_t> cb(c.begin() + bt * sc * size_of(g.c_type), c.end());
        std::vector<uint8_t> ob(out.begin() + bt * sc * size_of(g.c_type), out.end());
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                std::vector<uint8_t> want_bytes(4);
                from_float(want_bytes, g.c_type, 0, reference(ab, bb, cb, g, ta, tb, k, lda, ldb, ldc, i, j, alpha, beta));
                float want = to_float(want_bytes, g.c_type, 0);
                float got = to_float(ob, g.c_type, static_cast<size_t>(j) * ldc + i);
                if (got != want) {
                    fprintf(stderr, "batch %d C(%d,%d) = %g, want %g\n", bt, i, j, got, want);
                    return false;
                }
            }
    }
    /* Padding rows of C (between m and ldc) are untouched. */
    for (int j = 0; j < n * batches; j++)
        for (int i = m; i < ldc; i++) {
            size_t at = static_cast<size_t>(j) * ldc + i;
            float got = to_float(out, g.c_type, at), was = to_float(c, g.c_type, at);
            if (!(std::isnan(got) && std::isnan(was)) && got != was) {
                fprintf(stderr, "padding C(%d,%d) changed\n", i, j);
                return false;
            }
        }
    return true;
}

const gemm_case cases[] = {
    {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F},  {CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F},
    {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F},  {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F},
    {CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F}, {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F},
    {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_16F},
};

TEST(test_emulator_cublas_gemm_ex_types_and_transposes)
{
    for (const gemm_case &g : cases)
        for (int t = 0; t < 4; t++)
            CHECK_MSG(check_gemm(g, t & 1, t & 2, false, 0.25f), "types %d/%d compute %d, transa %d transb %d",
                      g.ab_type, g.c_type, g.compute, t & 1, (t >> 1) & 1);
}

TEST(test_emulator_cublas_strided_batched_and_beta_zero_ignores_c)
{
    for (const gemm_case &g : cases) {
        CHECK_MSG(check_gemm(g, true, false, true, 0.25f), "batched types %d/%d", g.ab_type, g.c_type);
        CHECK_MSG(check_gemm(g, false, true, false, 0.0f), "beta 0, types %d/%d", g.ab_type, g.c_type);
    }
}

TEST(test_emulator_cublas_batched_pointer_arrays_and_sgemm)
{
    const int m = 5, n = 4, k = 3;
    float a[2][m * k], b[2][k * n], c[2][m * n];
    for (int i = 0; i < m * k; i++)
        a[0][i] = static_cast<float>(i), a[1][i] = static_cast<float>(-i);
    for (int i = 0; i < k * n; i++)
        b[0][i] = static_cast<float>(i % 5), b[1][i] = 1.0f;
    void *da[2], *db[2], *dc[2];
    for (int t = 0; t < 2; t++) {
        da[t] = device_copy(a[t], m * k);
        db[t] = device_copy(b[t], k * n);
        dc[t] = device_copy(c[t], m * n);
    }
    void **dlists = nullptr;
    CHECK(cudaMalloc(reinterpret_cast<void **>(&dlists), 6 * sizeof(void *)) == cudaSuccess);
    void *lists[6] = {da[0], da[1], db[0], db[1], dc[0], dc[1]};
    cudaMemcpy(dlists, lists, sizeof lists, cudaMemcpyHostToDevice);
    cublasHandle_t h;
    CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
    float one = 1.0f, zero = 0.0f;
    CHECK(cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dlists, CUDA_R_32F, m, dlists + 2, CUDA_R_32F,
                              k, &zero, dlists + 4, CUDA_R_32F, m, 2, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    for (int t = 0; t < 2; t++) {
        cudaMemcpy(c[t], dc[t], sizeof c[t], cudaMemcpyDeviceToHost);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                float want = 0.0f;
                for (int p = 0; p < k; p++)
                    want += a[t][p * m + i] * b[t][j * k + p];
                CHECK_MSG(c[t][j * m + i] == want, "batch %d C(%d,%d) = %g, want %g", t, i, j, c[t][j * m + i], want);
            }
    }
    /* Sgemm: C = A^T A for A 5x3 gives a 3x3 Gram matrix. */
    CHECK(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, k, k, m, &one, static_cast<float *>(da[0]), m,
                      static_cast<float *>(da[0]), m, &zero, static_cast<float *>(dc[0]), k) == CUBLAS_STATUS_SUCCESS);
    float gram[9];
    cudaMemcpy(gram, dc[0], sizeof gram, cudaMemcpyDeviceToHost);
    for (int j = 0; j < k; j++)
        for (int i = 0; i < k; i++) {
            float want = 0.0f;
            for (int p = 0; p < m; p++)
                want += a[0][i * m + p] * a[0][j * m + p];
            CHECK_MSG(gram[j * k + i] == want, "gram(%d,%d) = %g, want %g", i, j, gram[j * k + i], want);
        }
    cublasDestroy(h);
}

TEST(test_emulator_cublas_rejects_bad_arguments)
{
    cublasHandle_t h;
    CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
    float *d = nullptr;
    CHECK(cudaMalloc(reinterpret_cast<void **>(&d), 64 * 64 * sizeof(float)) == cudaSuccess);
    float one = 1.0f;
    /* lda below m for op N. */
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, d, CUDA_R_32F, 7, d, CUDA_R_32F, 8, &one, d,
                       CUDA_R_32F, 8, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE);
    /* bf16 inputs with a half output is not in cuBLAS's table. */
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, d, CUDA_R_16BF, 8, d, CUDA_R_16BF, 8, &one, d,
                       CUDA_R_16F, 8, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_NOT_SUPPORTED);
    /* A host array where device memory is expected. */
    static float host[64 * 64];
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, host, CUDA_R_32F, 8, d, CUDA_R_32F, 8, &one, d,
                       CUDA_R_32F, 8, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_EXECUTION_FAILED);
    /* C reaching past its allocation. */
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 65, 8, &one, d, CUDA_R_32F, 64, d, CUDA_R_32F, 8, &one, d,
                       CUDA_R_32F, 64, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_EXECUTION_FAILED);
    CHECK(cublasGemmEx(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, d, CUDA_R_32F, 8, d, CUDA_R_32F, 8, &one, d,
                       CUDA_R_32F, 8, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_NOT_INITIALIZED);
    CHECK(strcmp(cublasGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED") == 0);
    cublasDestroy(h);
    cudaFree(d);
}

/* FAST_16F may round float inputs to half, and the emulator does: 1 + 2^-12 is 1 in half. */
TEST(test_emulator_cublas_fast_16f_rounds_inputs)
{
    float a = 1.0f + 1.0f / 4096.0f, b = 1.0f, c = 0.0f, one = 1.0f, zero = 0.0f;
    float *da = device_copy(&a, 1), *db = device_copy(&b, 1), *dc = device_copy(&c, 1);
    cublasHandle_t h;
    CHECK(da && db && dc && cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, da, CUDA_R_32F, 1, db, CUDA_R_32F, 1, &zero, dc,
                       CUDA_R_32F, 1, CUBLAS_COMPUTE_32F_FAST_16F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    cudaMemcpy(&c, dc, sizeof c, cudaMemcpyDeviceToHost);
    CHECK_MSG(c == 1.0f, "fast-16F product %.9g, want 1", c);
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, da, CUDA_R_32F, 1, db, CUDA_R_32F, 1, &zero, dc,
                       CUDA_R_32F, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    cudaMemcpy(&c, dc, sizeof c, cudaMemcpyDeviceToHost);
    CHECK_MSG(c == a, "32F product %.9g, want %.9g", c, a);
    cublasDestroy(h);
}

} // namespace
