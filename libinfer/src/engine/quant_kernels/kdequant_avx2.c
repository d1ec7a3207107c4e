/* kdequant_avx2.c - the K-quant dequantizers (Q2_K .. Q6_K, Q8_K) at the AVX2 level; their
 * bodies are shared with the other x86 level in kdequant_x86.h. */
#include "quant_kdequant_simd.h"

#define KDQ_NAME(prefix) inf_##prefix##_to_float_avx2
#define KDQ_16 kdequant_avx2_16
#define KDQ_32 kdequant_avx2_32
#include "kdequant_x86.h"
