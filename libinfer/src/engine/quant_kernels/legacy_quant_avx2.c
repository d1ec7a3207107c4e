/* legacy_quant_avx2.c - the Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and Q8_1 row kernels with AVX2: a block
 * is four 8-lane vectors. */
#include "quant_avx2.h"

#define QUANT_LEVEL avx2
#include "legacy_quant_body.h"
