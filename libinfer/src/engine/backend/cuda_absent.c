/* cuda_absent.c - the CUDA backend's public functions in a build without CUDA (plain `make`):
 * every one reports that this libinfer has no CUDA backend, so programs are written once and
 * decide at run time. Replaced by backend/cuda/ in `make CUDA=1` and `make CUDA_EMU=1`. */
#include <string.h>

#include <ggtk/inf_backend_cuda.h>

static ggtk_status not_built(ggtk_error *err)
{
    return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                          "built without CUDA: rebuild with make CUDA=1");
}

bool inf_cuda_built(void)
{
    return false;
}

bool inf_cuda_emulated(void)
{
    return false;
}

int inf_cuda_device_count(ggtk_error *err)
{
    not_built(err);
    return 0;
}

ggtk_status inf_cuda_device_describe(int device, inf_cuda_device_info *info, ggtk_error *err)
{
    (void)device;
    if (info)
        memset(info, 0, sizeof *info);
    return not_built(err);
}

inf_backend *inf_backend_cuda_new(int device, ggtk_error *err)
{
    (void)device;
    not_built(err);
    return NULL;
}

bool inf_backend_is_cuda(const inf_backend *backend)
{
    (void)backend;
    return false;
}

bool inf_buffer_is_cuda(const inf_buffer *buffer)
{
    (void)buffer;
    return false;
}

int inf_backend_cuda_device(const inf_backend *backend)
{
    (void)backend;
    return -1;
}

inf_cuda_memory inf_backend_cuda_memory(const inf_backend *backend)
{
    (void)backend;
    return (inf_cuda_memory){0, 0, 0};
}
