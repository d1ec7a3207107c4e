/* quantize_fixture.h - small llama-like GGUF models for the gguf-quantize tests, written with
 * libgguf: the tensor kinds the quantizer treats differently, deterministic values, and optional
 * poison (NaN/Inf/huge) at a chosen row. */
#ifndef QUANTIZE_FIXTURE_H
#define QUANTIZE_FIXTURE_H

#include <ggtk/gguf.h>

#include <stdbool.h>
#include <stdint.h>

typedef struct fixture_options {
    bool tied;                    /* leave out output.weight (token_embd doubles as the output) */
    ggtk_tensor_type matrix_type; /* type of the weight matrices: F32 (default), F16 or Q8_0 */
    uint32_t alignment;           /* general.alignment to write, 0 for none */
    const char *poison_tensor;    /* tensor that gets `poison` at row poison_row, column 3 */
    int64_t poison_row;
    float poison;
} fixture_options;

/* The fixture's tensors, in file order:
 *   token_embd.weight [64 x 40], blk.0.attn_norm.weight [64], blk.0.attn_q.weight [64 x 64],
 *   blk.0.attn_q.bias [64], blk.0.attn_k.weight [64 x 32], blk.0.ffn_down.weight [96 x 64],
 *   blk.0.ffn_gate_inp.weight [64 x 4] (never converted), blk.0.odd.weight [48 x 8] (rows that
 *   do not split into 32-blocks), output_norm.weight [64], output.weight [64 x 40] (not tied).
 * 1-D tensors and ffn_gate_inp are always F32. */
bool fixture_write(const char *path, const fixture_options *options);

/* Type of tensor `name` in the GGUF file at `path`, or -1 when the file or tensor is missing. */
int fixture_tensor_type(const char *path, const char *name);

/* general.file_type of the file at `path`, or -1. */
int64_t fixture_file_type(const char *path);

#endif
