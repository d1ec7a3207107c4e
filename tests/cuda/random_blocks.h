/* random_blocks.h - test weights of the dequantize-only types (IQ4_NL, IQ4_XS, TQ1_0, TQ2_0,
 * MXFP4, NVFP4, Q1_0, Q2_0), which have no quantizer to make them from floats: random code bytes
 * with every scale field set to a moderate value, so that weights are O(1) and finite. */
#ifndef RANDOM_BLOCKS_H
#define RANDOM_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggtk/gguf.h>

/* Fill `nbytes` (whole blocks) with random blocks of `type` from `seed`. False for a type this
 * helper does not know. */
bool random_blocks(ggtk_tensor_type type, void *data, size_t nbytes, uint64_t seed);

#endif
