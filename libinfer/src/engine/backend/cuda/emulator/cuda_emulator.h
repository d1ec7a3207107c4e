/* cuda_emulator.h - everything cuda_compat.cuh takes from the CUDA toolkit when the backend is
 * built with INF_CUDA_EMULATION: the device language (emu_device.h, emu_half.h), launches
 * (emu_launch.h), the runtime (emu_runtime.h) and cuBLAS (emu_cublas.h), all running on the CPU.
 * docs/cuda_emulator.md says what it checks and what it cannot. */
#ifndef INF_CUDA_EMULATOR_H
#define INF_CUDA_EMULATOR_H

#include "emu_cublas.h"
#include "emu_device.h"
#include "emu_half.h"
#include "emu_launch.h"
#include "emu_runtime.h"

#endif
