/* emu_cublas.cpp - the GEMM family of cuBLAS on the host.
 *
 * Every product is C = alpha op(A) op(B) + beta C with cuBLAS's column-major layouts and leading
 * dimensions, checked as cuBLAS checks them (types, leading dimensions) plus what a GPU would
 * only show as a crash: A, B and C must lie in device (or pinned) memory. Inputs are widened to
 * float, except where the compute type allows cuBLAS to narrow them (FAST_16F / FAST_16BF /
 * FAST_TF32, TF32 math mode): there they are rounded to that type first, so that tolerances in
 * tests cover what tensor cores may do. Each output element is one float sum over k in order,
 * then alpha and beta are applied in float and the result rounded to C's type. When beta is 0, C
 * is not read (it may hold NaNs); when alpha is 0, A and B are not read.
 *
 * Speed: op(A) is widened into panels of `panel_rows` rows stored k-major, so that the inner
 * loop adds a contiguous panel row times one B element into a small accumulator. */
#include "emu_cublas.h"
#include "emu_half.h"

#include <cstdio>
#include <cstring>
#include <vector>

struct cublasContext {
    cudaStream_t stream;
    cublasMath_t math_mode;
    cublasPointerMode_t pointer_mode;
};

namespace {

constexpr int panel_rows = 64;

/* How inputs are narrowed before the products. */
enum input_rounding { ROUND_NONE, ROUND_HALF, ROUND_BF16, ROUND_TF32 };

/* One matrix operand: element (r, c) of op(X) is data[r + c*ld] when not transposed, else
 * data[c + r*ld]. */
struct operand {
    const void *data;
    cudaDataType type;
    int ld;
    bool transposed;
};

size_t type_size(cudaDataType type)
{
    switch (type) {
    case CUDA_R_32F: return 4;
    case CUDA_R_16F: return 2;
    case CUDA_R_16BF: return 2;
    case CUDA_R_64F: return 8;
    case CUDA_R_8I: return 1;
    case CUDA_R_32I: return 4;
    }
    return 0;
}

float round_tf32(float x)
{
    uint32_t u = emu::float_bits(x);
    if ((u & 0x7f800000u) == 0x7f800000u)
        return x;
    u += 0xfffu + ((u >> 13) & 1u);
    return emu::bits_float(u & ~0x1fffu);
}

float load(const void *data, cudaDataType type, size_t i, input_rounding rounding)
{
    float v;
    switch (type) {
    case CUDA_R_16F: return emu::half_bits_to_float(static_cast<const uint16_t *>(data)[i]);
    case CUDA_R_16BF: return emu::bf16_bits_to_float(static_cast<const uint16_t *>(data)[i]);
    default: v = static_cast<const float *>(data)[i]; break;
    }
    switch (rounding) {
    case ROUND_HALF: return emu::half_bits_to_float(emu::float_to_half_bits(v));
    case ROUND_BF16: return emu::bf16_bits_to_float(emu::float_to_bf16_bits(v));
    case ROUND_TF32: return round_tf32(v);
    case ROUND_NONE: break;
    }
    return v;
}

void store(void *data, cudaDataType type, size_t i, float v)
{
    switch (type) {
    case CUDA_R_16F: static_cast<uint16_t *>(data)[i] = emu::float_to_half_bits(v); break;
    case CUDA_R_16BF: static_cast<uint16_t *>(data)[i] = emu::float_to_bf16_bits(v); break;
    default: static_cast<float *>(data)[i] = v; break;
    }
}

float element(const operand &x, int r, int c, input_rounding rounding)
{
    size_t i = x.transposed ? static_cast<size_t>(c) + static_cast<size_t>(r) * x.ld
                            : static_cast<size_t>(r) + static_cast<size_t>(c) * x.ld;
    return load(x.data, x.type, i, rounding);
}

/* Elements an operand of rows x cols (as stored) spans from its start. */
size_t span(int rows, int cols, int ld)
{
    if (rows == 0 || cols == 0)
        return 0;
    return static_cast<size_t>(ld) * (cols - 1) + rows;
}

bool in_device_memory(const char *call, const char *name, const void *p, size_t elements, cudaDataType type)
{
    if (elements == 0 || emu::device_range_ok(p, elements * type_size(type), true))
        return true;
    fprintf(stderr, "cuda emulator: %s: %s [%p, +%zu bytes) is not inside device memory\n", call, name, p,
            elements * type_size(type));
    return false;
}

/* Whether cuBLAS supports these types with this compute type (the cublasGemmEx table). */
bool types_supported(cudaDataType a, cudaDataType b, cudaDataType c, cublasComputeType_t compute)
{
    if (a != b)
        return false;
    switch (compute) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
        return a == CUDA_R_16F && c == CUDA_R_16F;
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
        return (a == CUDA_R_32F && c == CUDA_R_32F) || (a == CUDA_R_16F && (c == CUDA_R_16F || c == CUDA_R_32F)) ||
               (a == CUDA_R_16BF && (c == CUDA_R_16BF || c == CUDA_R_32F));
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
        return a == CUDA_R_32F && c == CUDA_R_32F;
    default:
        return false;
    }
}

input_rounding rounding_for(cublasComputeType_t compute, cublasMath_t mode, cudaDataType a)
{
    if (a != CUDA_R_32F)
        return ROUND_NONE;
    if (compute == CUBLAS_COMPUTE_32F_FAST_16F)
        return ROUND_HALF;
    if (compute == CUBLAS_COMPUTE_32F_FAST_16BF)
        return ROUND_BF16;
    if (compute == CUBLAS_COMPUTE_32F_FAST_TF32 || (compute == CUBLAS_COMPUTE_32F && (mode & 0xf) == CUBLAS_TF32_TENSOR_OP_MATH))
        return ROUND_TF32;
    return ROUND_NONE;
}

/* The shape and scaling of one call, shared by every product of a batch. */
struct gemm_shape {
    int m, n, k;
    float alpha, beta;
    input_rounding rounding;
};

/* C = alpha op(A) op(B) + beta C for one product. `panel` and `bcol` are scratch. */
void gemm_one(const gemm_shape &s, const operand &a, const operand &b, void *c, cudaDataType ctype, int ldc,
              std::vector<float> &panel, std::vector<float> &bcol)
{
    if (s.alpha == 0.0f || s.k == 0) {
        for (int j = 0; j < s.n; j++) {
            for (int i = 0; i < s.m; i++) {
                size_t ci = static_cast<size_t>(i) + static_cast<size_t>(j) * ldc;
                float old = s.beta == 0.0f ? 0.0f : s.beta * load(c, ctype, ci, ROUND_NONE);
                store(c, ctype, ci, old);
            }
        }
        return;
    }
    bcol.resize(static_cast<size_t>(s.k) * s.n);
    for (int j = 0; j < s.n; j++)
        for (int p = 0; p < s.k; p++)
            bcol[static_cast<size_t>(j) * s.k + p] = element(b, p, j, s.rounding);
    panel.resize(static_cast<size_t>(s.k) * panel_rows);
    for (int i0 = 0; i0 < s.m; i0 += panel_rows) {
        int rows = s.m - i0 < panel_rows ? s.m - i0 : panel_rows;
        for (int p = 0; p < s.k; p++)
            for (int r = 0; r < panel_rows; r++)
                panel[static_cast<size_t>(p) * panel_rows + r] = r < rows ? element(a, i0 + r, p, s.rounding) : 0.0f;
        for (int j = 0; j < s.n; j++) {
            float acc[panel_rows] = {0};
            const float *bj = &bcol[static_cast<size_t>(j) * s.k];
            for (int p = 0; p < s.k; p++) {
                const float *row = &panel[static_cast<size_t>(p) * panel_rows];
                float bv = bj[p];
                for (int r = 0; r < panel_rows; r++)
                    acc[r] += row[r] * bv;
            }
            for (int r = 0; r < rows; r++) {
                size_t ci = static_cast<size_t>(i0 + r) + static_cast<size_t>(j) * ldc;
                float v = s.alpha * acc[r];
                if (s.beta != 0.0f)
                    v += s.beta * load(c, ctype, ci, ROUND_NONE);
                store(c, ctype, ci, v);
            }
        }
    }
}

/* Everything cublasGemm*Ex share: validation, then each product of the batch. A, B and C of
 * product `i` are given by the callbacks' arrays or strides. */
struct batch {
    const void *const *a_list, *const *b_list;
    void *const *c_list;
    const void *a, *b;
    void *c;
    long long stride_a, stride_b, stride_c;
    int count;

    const void *a_at(int i, cudaDataType t) const
    {
        return a_list ? a_list[i] : static_cast<const char *>(a) + i * stride_a * static_cast<long long>(type_size(t));
    }
    const void *b_at(int i, cudaDataType t) const
    {
        return b_list ? b_list[i] : static_cast<const char *>(b) + i * stride_b * static_cast<long long>(type_size(t));
    }
    void *c_at(int i, cudaDataType t) const
    {
        return c_list ? c_list[i] : static_cast<char *>(c) + i * stride_c * static_cast<long long>(type_size(t));
    }
};

bool op_valid(cublasOperation_t op)
{
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

cublasStatus_t gemm(const char *call, cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                    int m, int n, int k, const void *alpha, cudaDataType atype, int lda, cudaDataType btype, int ldb,
                    const void *beta, cudaDataType ctype, int ldc, const batch &bt,
                    cublasComputeType_t compute)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!op_valid(transa) || !op_valid(transb) || m < 0 || n < 0 || k < 0 || bt.count < 0 || !alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    bool ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
    int a_rows = ta ? k : m, a_cols = ta ? m : k;
    int b_rows = tb ? n : k, b_cols = tb ? k : n;
    if (lda < (a_rows > 1 ? a_rows : 1) || ldb < (b_rows > 1 ? b_rows : 1) || ldc < (m > 1 ? m : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (!types_supported(atype, btype, ctype, compute))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (!emu::stream_valid(handle->stream))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    gemm_shape s;
    s.m = m;
    s.n = n;
    s.k = k;
    bool half_scale = compute == CUBLAS_COMPUTE_16F || compute == CUBLAS_COMPUTE_16F_PEDANTIC;
    s.alpha = half_scale ? emu::half_bits_to_float(*static_cast<const uint16_t *>(alpha)) : *static_cast<const float *>(alpha);
    s.beta = half_scale ? emu::half_bits_to_float(*static_cast<const uint16_t *>(beta)) : *static_cast<const float *>(beta);
    s.rounding = rounding_for(compute, handle->math_mode, atype);
    bool reads_ab = s.alpha != 0.0f && k > 0;
    for (int i = 0; i < bt.count; i++) {
        if ((reads_ab && (!in_device_memory(call, "A", bt.a_at(i, atype), span(a_rows, a_cols, lda), atype) ||
                          !in_device_memory(call, "B", bt.b_at(i, btype), span(b_rows, b_cols, ldb), btype))) ||
            !in_device_memory(call, "C", bt.c_at(i, ctype), span(m, n, ldc), ctype))
            return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    std::vector<float> panel, bcol;
    for (int i = 0; i < bt.count; i++) {
        operand a{bt.a_at(i, atype), atype, lda, ta};
        operand b{bt.b_at(i, btype), btype, ldb, tb};
        gemm_one(s, a, b, bt.c_at(i, ctype), ctype, ldc, panel, bcol);
    }
    return CUBLAS_STATUS_SUCCESS;
}

} // namespace

cublasStatus_t cublasCreate(cublasHandle_t *handle)
{
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (emu::runtime_status() != cudaSuccess)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    *handle = new cublasContext{nullptr, CUBLAS_DEFAULT_MATH, CUBLAS_POINTER_MODE_HOST};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t *stream)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!stream)
        return CUBLAS_STATUS_INVALID_VALUE;
    *stream = handle->stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if ((mode & ~CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) > CUBLAS_TF32_TENSOR_OP_MATH)
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->math_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode)
        return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->math_mode;
    return CUBLAS_STATUS_SUCCESS;
}

/* Scalars are read through the pointer in both modes (device memory is host memory here). */
cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->pointer_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void *workspace, size_t bytes)
{
    (void)workspace;
    (void)bytes;
    return handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

const char *cublasGetStatusName(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    }
    return "CUBLAS_STATUS_UNKNOWN";
}

const char *cublasGetStatusString(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
    case CUBLAS_STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR: return "error detected trying to check the license";
    }
    return "unknown error";
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void *alpha, const void *A, cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta, void *C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    (void)algo;
    batch bt{nullptr, nullptr, nullptr, A, B, C, 0, 0, 0, 1};
    return gemm("cublasGemmEx", handle, transa, transb, m, n, k, alpha, Atype, lda, Btype, ldb, beta, Ctype, ldc, bt,
                computeType);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
                                          int lda, long long int strideA, const void *B, cudaDataType Btype, int ldb,
                                          long long int strideB, const void *beta, void *C, cudaDataType Ctype,
                                          int ldc, long long int strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    (void)algo;
    batch bt{nullptr, nullptr, nullptr, A, B, C, strideA, strideB, strideC, batchCount};
    return gemm("cublasGemmStridedBatchedEx", handle, transa, transb, m, n, k, alpha, Atype, lda, Btype, ldb, beta,
                Ctype, ldc, bt, computeType);
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                   int n, int k, const void *alpha, const void *const Aarray[], cudaDataType Atype,
                                   int lda, const void *const Barray[], cudaDataType Btype, int ldb,
                                   const void *beta, void *const Carray[], cudaDataType Ctype, int ldc,
                                   int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    (void)algo;
    if (batchCount > 0 && (!Aarray || !Barray || !Carray))
        return CUBLAS_STATUS_INVALID_VALUE;
    batch bt{Aarray, Barray, Carray, nullptr, nullptr, nullptr, 0, 0, 0, batchCount};
    return gemm("cublasGemmBatchedEx", handle, transa, transb, m, n, k, alpha, Atype, lda, Btype, ldb, beta, Ctype,
                ldc, bt, computeType);
}

cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                           int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                           const float *beta, float *C, int ldc)
{
    return cublasGemmEx(handle, transa, transb, m, n, k, alpha, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, beta, C,
                        CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const float *alpha, const float *A, int lda,
                                         long long int strideA, const float *B, int ldb, long long int strideB,
                                         const float *beta, float *C, int ldc, long long int strideC,
                                         int batchCount)
{
    return cublasGemmStridedBatchedEx(handle, transa, transb, m, n, k, alpha, A, CUDA_R_32F, lda, strideA, B,
                                      CUDA_R_32F, ldb, strideB, beta, C, CUDA_R_32F, ldc, strideC, batchCount,
                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}
