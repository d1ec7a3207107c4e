/* quant_blocks.h - random quantized blocks for the dequantizer tests: every code, index and sign
 * bit random, every scale field finite, so any faithful dequantizer gives finite, defined
 * floats. */
#ifndef QUANT_BLOCKS_H
#define QUANT_BLOCKS_H

#include <stdbool.h>
#include <stdint.h>

#include <ggtk/gguf.h>

/* Fill `nblocks` blocks of `type` (ggtk_tensor_type_info_get's block_bytes each) from a
 * deterministic generator seeded with `seed`. Returns false for a type whose scale fields are
 * unknown here (the non-block types included). */
bool quant_blocks_fill(ggtk_tensor_type type, void *blocks, int64_t nblocks, uint64_t seed);

/* The block types that have a dequantizer, and their count. */
extern const ggtk_tensor_type quant_blocks_types[];
extern const int quant_blocks_type_count;

#endif
