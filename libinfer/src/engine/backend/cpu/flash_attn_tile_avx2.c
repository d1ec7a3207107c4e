/* flash_attn_tile_avx2.c - the FLASH_ATTN tile loops compiled for AVX2. */
#define FA_TABLE cpu_fa_avx2
#include "flash_attn_tile_body.h"
