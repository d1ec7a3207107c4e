/* flash_attn_tile_scalar.c - the FLASH_ATTN tile loops compiled for baseline instructions (SSE2 on x86-64, NEON on arm64). */
#define FA_TABLE cpu_fa_scalar
#include "flash_attn_tile_body.h"
