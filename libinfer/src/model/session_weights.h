/* session_weights.h - the weights a device session computes with: a copy of each weight tensor
 * in the backend's memory, uploaded once from the model's (mapped) data, and a view of the model
 * whose weight slots point at those copies, so that model_build_graph() builds the same forward
 * pass over them. The model itself is left as it is: its file map stays the CPU's copy. */
#ifndef SESSION_WEIGHTS_H
#define SESSION_WEIGHTS_H

#include <stdbool.h>

#include "model_internal.h"

/* Which weights go to the device: llama.cpp's -ngl split. */
typedef struct weights_split {
    uint32_t first_layer; /* blocks first_layer .. n_layer - 1 (n_layer: none) */
    bool output;          /* output_norm, output (and its bias) */
    bool embedding;       /* token_embd (the rope factors move with the blocks) */
} weights_split;

typedef struct device_weights {
    inf_model view;        /* the model with the chosen slots pointing at device copies */
    model_layer *layers;   /* the view's blocks */
    inf_context *ctx;      /* the copies' tensor records */
    inf_buffer *buffer;    /* their device memory */
    size_t bytes;          /* of the buffer */
} device_weights;

/* Copy the weights `split` names into one buffer of `backend` and set up the view. False with
 * `err` naming what did not fit ("the weights (N MiB) ...") or the upload's failure; *w is then
 * to be freed with device_weights_free(). */
bool device_weights_upload(device_weights *w, const inf_model *model, weights_split split,
                           inf_backend *backend, ggtk_error *err);

/* Free the copies (NULL fields allowed). */
void device_weights_free(device_weights *w);

#endif
