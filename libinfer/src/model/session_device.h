/* session_device.h - where a session computes: the device its parameters ask for resolved
 * against the build and the machine (inf_device_check()), llama.cpp's -ngl turned into the blocks
 * the device runs, the backend made for it, and the line describing it. */
#ifndef SESSION_DEVICE_H
#define SESSION_DEVICE_H

#include <stddef.h>

#include "model_internal.h"

typedef struct session_placement {
    inf_device device;    /* INF_DEVICE_CPU or INF_DEVICE_CUDA */
    int32_t n_gpu_layers; /* 0 on the CPU; else the blocks on the device, n_layer + 1 when the
                             output layer is there too */
} session_placement;

/* Resolve p->device and p->n_gpu_layers for `model`. False with `err` set when the device cannot
 * be used. */
bool session_place(const inf_model *model, const inf_session_params *p, session_placement *out,
                   ggtk_error *err);

/* The backend of a placement (n_threads for the CPU's). NULL with `err` set on failure. */
inf_backend *session_backend_new(const session_placement *placement, int n_threads,
                                 ggtk_error *err);

/* One line naming the device into buf: "CPU, 4 threads" or "CUDA0: NAME, 79.1 GiB, 30 of 30 layers
 * and the output layer". */
void session_describe(const session_placement *placement, const inf_model *model, int n_threads,
                      char *buf, size_t size);

#endif
