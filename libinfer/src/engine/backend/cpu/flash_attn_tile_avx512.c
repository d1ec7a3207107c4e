/* flash_attn_tile_avx512.c - the FLASH_ATTN tile loops compiled for AVX-512. */
#define FA_TABLE cpu_fa_avx512
#include "flash_attn_tile_body.h"
