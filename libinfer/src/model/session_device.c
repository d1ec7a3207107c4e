/* session_device.c - see session_device.h; also the public inf_device_name() and
 * inf_device_check(). A build without CUDA answers through <ggtk/inf_backend_cuda.h>'s stand-ins,
 * so nothing here depends on the build. */
#include <stdio.h>

#include <ggtk/inf_backend_cuda.h>

#include "session_device.h"

const char *inf_device_name(inf_device device)
{
    switch (device) {
    case INF_DEVICE_CPU: return "cpu";
    case INF_DEVICE_CUDA: return "cuda";
    case INF_DEVICE_AUTO: return "auto";
    }
    return "unknown";
}

ggtk_status inf_device_check(inf_device device, ggtk_error *err)
{
    if (device != INF_DEVICE_CUDA)
        return GGTK_OK;
    ggtk_error inner;
    if (inf_cuda_device_count(&inner) > 0)
        return GGTK_OK;
    return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET, "%s", inner.message);
}

bool session_place(const inf_model *model, const inf_session_params *p, session_placement *out,
                   ggtk_error *err)
{
    const int32_t n_layer = (int32_t)model->hparams.n_layer;
    inf_device device = p->device;
    if (device == INF_DEVICE_AUTO)
        device = inf_cuda_device_count(NULL) > 0 ? INF_DEVICE_CUDA : INF_DEVICE_CPU;
    else if (device != INF_DEVICE_CPU && inf_device_check(device, err) != GGTK_OK)
        return false;
    int32_t n_gpu = p->n_gpu_layers < 0 || p->n_gpu_layers > n_layer ? n_layer + 1
                                                                       : p->n_gpu_layers;
    if (device == INF_DEVICE_CPU || n_gpu == 0) {
        *out = (session_placement){INF_DEVICE_CPU, 0};
        return true;
    }
    *out = (session_placement){device, n_gpu};
    return true;
}

inf_backend *session_backend_new(const session_placement *placement, int n_threads,
                                 ggtk_error *err)
{
    if (placement->device == INF_DEVICE_CUDA)
        return inf_backend_cuda_new(0, err);
    inf_backend *backend = inf_backend_cpu_new(n_threads);
    if (!backend)
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory for the CPU backend");
    return backend;
}

void session_describe(const session_placement *placement, const inf_model *model, int n_threads,
                      char *buf, size_t size)
{
    inf_cuda_device_info info;
    if (placement->device != INF_DEVICE_CUDA || inf_cuda_device_describe(0, &info, NULL) != GGTK_OK) {
        snprintf(buf, size, "CPU, %d threads", n_threads);
        return;
    }
    const uint32_t n_layer = model->hparams.n_layer;
    const int32_t n_gpu = placement->n_gpu_layers;
    snprintf(buf, size, "CUDA0: %s%s, %.1f GiB, %d of %u layers%s", info.name,
             inf_cuda_emulated() ? " (emulated)" : "", info.total_memory / 1073741824.0,
             n_gpu > (int32_t)n_layer ? (int)n_layer : n_gpu, n_layer,
             n_gpu > (int32_t)n_layer ? " and the output layer" : "");
}
