/* legacy_quant_avx512.c - the Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and Q8_1 row kernels with AVX-512: a
 * block is two 16-lane vectors. */
#include "quant_avx512.h"

#define QUANT_LEVEL avx512
#include "legacy_quant_body.h"
