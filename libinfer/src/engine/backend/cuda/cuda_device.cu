/* cuda_device.cu - what the CUDA runtime says: checked calls turned into one-line errors, how many
 * devices there are (or why none), and what each one is. */
#include <stdio.h>
#include <string.h>

#include <ggtk/inf_backend_cuda.h>

#include "cuda_internal.cuh"

ggtk_status cuda_check(cudaError_t status, const char *call, const char *where, ggtk_error *err)
{
    if (status == cudaSuccess)
        return GGTK_OK;
    ggtk_status code = status == cudaErrorMemoryAllocation ? GGTK_ERR_NOMEM : GGTK_ERR_IO;
    return ggtk_error_set(err, code, GGTK_NO_OFFSET, "cuda: %.160s failed in %s: %s (%s)", call,
                          where, cudaGetErrorString(status), cudaGetErrorName(status));
}

ggtk_status cublas_check(cublasStatus_t status, const char *call, const char *where,
                         ggtk_error *err)
{
    if (status == CUBLAS_STATUS_SUCCESS)
        return GGTK_OK;
    ggtk_status code = status == CUBLAS_STATUS_ALLOC_FAILED ? GGTK_ERR_NOMEM : GGTK_ERR_IO;
    return ggtk_error_set(err, code, GGTK_NO_OFFSET, "cuda: %.160s failed in %s: cuBLAS: %s", call,
                          where, cublasGetStatusString(status));
}

bool inf_cuda_built(void)
{
    return true;
}

bool inf_cuda_emulated(void)
{
#ifdef INF_CUDA_EMULATION
    return true;
#else
    return false;
#endif
}

/* Why cudaGetDeviceCount() found nothing, as one line. The usual cause on a machine without a GPU
 * is a missing or older driver, so both versions are named (12040 is 12.4). */
static void no_device(cudaError_t status, ggtk_error *err)
{
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    char driver_text[48];
    if (driver == 0)
        snprintf(driver_text, sizeof driver_text, "no NVIDIA driver found");
    else
        snprintf(driver_text, sizeof driver_text, "driver %d.%d", driver / 1000,
                 driver % 1000 / 10);
    const char *reason = status == cudaSuccess ? "no CUDA device is visible"
                                               : cudaGetErrorString(status);
    ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                   "cuda: no usable device: %s (%s, runtime %d.%d)", reason, driver_text,
                   runtime / 1000, runtime % 1000 / 10);
}

int inf_cuda_device_count(ggtk_error *err)
{
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count <= 0) {
        /* A failed query leaves a sticky error for cudaGetLastError(); clear it. */
        cudaGetLastError();
        no_device(status, err);
        return 0;
    }
    return count;
}

/* Fill *info for an existing device. */
static ggtk_status describe(int device, inf_cuda_device_info *info, ggtk_error *err)
{
    cudaDeviceProp prop;
    CUDA_TRY(cudaGetDeviceProperties(&prop, device), err);
    CUDA_TRY(cudaSetDevice(device), err);
    CUDA_TRY(cudaMemGetInfo(&info->free_memory, &info->total_memory), err);
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    info->compute_capability = prop.major * 10 + prop.minor;
    info->multiprocessors = prop.multiProcessorCount;
    return GGTK_OK;
}

ggtk_status inf_cuda_device_describe(int device, inf_cuda_device_info *info, ggtk_error *err)
{
    memset(info, 0, sizeof *info);
    ggtk_error reason;
    int count = inf_cuda_device_count(&reason);
    if (count == 0)
        return ggtk_error_set(err, reason.status, GGTK_NO_OFFSET, "%s", reason.message);
    if (device < 0 || device >= count)
        return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                              "cuda: no device %d (devices are 0 to %d)", device, count - 1);
    ggtk_status status = describe(device, info, err);
    if (status != GGTK_OK)
        memset(info, 0, sizeof *info);
    return status;
}
