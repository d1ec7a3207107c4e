/* test_cuda_emulated_failures.c - what a user sees when there is no device, when the driver is
 * older than the runtime, and when device memory runs out with a known amount free. A GPU machine
 * cannot be put in these states on demand; the emulator can (INF_CUDA_EMU_DEVICES,
 * INF_CUDA_EMU_FAIL, INF_CUDA_EMU_MEMORY), so these tests run in make test CUDA_EMU=1 only. Each
 * test runs in its own process, so the environment it sets goes no further. */
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_backend_cuda.h>

#include "test.h"

static void require_emulator(void)
{
    if (!inf_cuda_emulated())
        SKIP("needs the CUDA emulator (make test CUDA_EMU=1)");
}

/* inf_cuda_device_count() and inf_backend_cuda_new() both give `expected` as the whole message. */
static void check_no_device_message(const char *expected)
{
    ggtk_error err = {0};
    CHECK(inf_cuda_device_count(&err) == 0);
    CHECK(err.status == GGTK_ERR_UNSUPPORTED);
    CHECK_MSG(strcmp(err.message, expected) == 0, "message: %s", err.message);
    ggtk_error from_new = {0};
    CHECK(inf_backend_cuda_new(0, &from_new) == NULL);
    CHECK_MSG(strcmp(from_new.message, expected) == 0, "message: %s", from_new.message);
}

TEST(test_cuda_no_visible_device_is_named_in_one_line)
{
    require_emulator();
    setenv("INF_CUDA_EMU_DEVICES", "0", 1);
    check_no_device_message("cuda: no usable device: no CUDA-capable device is detected (driver "
                            "13.0, runtime 13.0)");
}

TEST(test_cuda_driver_older_than_the_runtime_is_named_in_one_line)
{
    require_emulator();
    setenv("INF_CUDA_EMU_FAIL", "driver", 1);
    check_no_device_message("cuda: no usable device: CUDA driver version is insufficient for CUDA "
                            "runtime version (driver 12.2, runtime 13.0)");
}

TEST(test_cuda_out_of_device_memory_says_what_was_asked_and_what_is_free)
{
    require_emulator();
    setenv("INF_CUDA_EMU_MEMORY", "67108864", 1); /* 64 MiB */
    ggtk_error err = {0};
    inf_backend *cuda = inf_backend_cuda_new(0, &err);
    CHECK_MSG(cuda, "%s", err.message);
    inf_buffer *first = inf_backend_alloc_buffer(cuda, (size_t)40 << 20);
    CHECK(first);
    inf_context *ctx = inf_context_new(4 * inf_tensor_overhead(), true);
    inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, (int64_t)(25 << 20) / 4 + 1);
    CHECK(inf_backend_alloc_context_tensors(cuda, ctx, &err) == NULL);
    CHECK(err.status == GGTK_ERR_NOMEM);
    CHECK_MSG(strcmp(err.message, "cuda: out of device memory allocating 26 MiB (24 MiB free of "
                                  "64 MiB)") == 0,
              "message: %s", err.message);
    inf_context_free(ctx);
    inf_buffer_free(first);
    inf_buffer *after = inf_backend_alloc_buffer(cuda, (size_t)60 << 20);
    CHECK_MSG(after, "freed memory is not available again");
    inf_buffer_free(after);
    inf_backend_free(cuda);
}
