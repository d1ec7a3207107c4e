/* split_limits.h - llama-gguf-split's part limits as its command line gives them, for the tools
 * that write split models (gguf-split, gguf-quantize). Shared by the tools (tools/common is linked
 * into each tool, not installed). */
#ifndef TOOLS_SPLIT_LIMITS_H
#define TOOLS_SPLIT_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

/* --split-max-tensors N: a decimal count from 1 to INT32_MAX, nothing else around it. */
bool split_limit_parse_tensors(const char *text, int *tensors);

/* --split-max-size N(M|G): a decimal N from 1 to INT32_MAX followed by M (10^6 bytes) or G (10^9
 * bytes), as llama-gguf-split reads it. */
bool split_limit_parse_size(const char *text, uint64_t *bytes);

#endif
