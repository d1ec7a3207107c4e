/* safetensors_internal.h - shared by the safetensors reader and writer; not public. */
#ifndef INF_SAFETENSORS_INTERNAL_H
#define INF_SAFETENSORS_INTERNAL_H

#include "output_set.h"

#include <ggtk/inf_convert.h>

/* One safetensors dtype: its header name, bytes per element, GGUF type of the same layout or -1. */
typedef struct safetensors_dtype {
    const char *name;
    uint32_t size;
    int type;
} safetensors_dtype;

/* The row named `name` exactly, or NULL. */
const safetensors_dtype *safetensors_dtype_find(const char *name);
/* The row whose layout is GGUF type `type`, or NULL. */
const safetensors_dtype *safetensors_dtype_of_type(ggtk_tensor_type type);

/* Hooks around each temporary file the writer creates (output_set.h); set before begin. */
void safetensors_writer_set_hooks(inf_safetensors_writer *writer, void (*before)(void *user),
                                  void (*on_temp_file)(const char *path, void *user), void *user);

/* inf_safetensors_writer_finish() without the renames: the writer's files join `into`, to be
 * renamed with the caller's other files (output_set_commit()). On failure they are removed. */
ggtk_status safetensors_writer_finish_into(inf_safetensors_writer *writer, output_set *into,
                                          ggtk_error *err);

#endif
