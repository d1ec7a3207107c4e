/* cpu_gelu.c - GELU (tanh approximation) as ggml's CPU backend computes it. ggml does not
 * evaluate the formula per element: it rounds x to fp16 and reads the fp16-rounded GELU of that
 * value from a table of all 65536 halves (inputs at or beyond +-10 bypass the table). Gemma's
 * feed-forward activations equal llama.cpp's only if we do the same, so the table is built here
 * from the same formula and rounding, once per process. */
#include <math.h>
#include <pthread.h>

#include "cpu_gelu.h"

/* The table as floats: the fp16 entry widened once, so a lookup is one load. */
static float gelu_table[1 << 16];
static pthread_once_t gelu_table_once = PTHREAD_ONCE_INIT;

/* The formula in float, in ggml's operation order. 1 + a x^2 is one fused multiply-add: ggml is
 * compiled with contraction on and the compiler fuses it there (without it one of the 65536
 * entries differs; tests/engine/test_ops_gemma.c compares with ggml's table). */
static float gelu_formula(float x)
{
    const float sqrt_2_over_pi = 0.79788456080286535587989211986876f;
    const float coef_a = 0.044715f;
    return 0.5f * x * (1.0f + tanhf(sqrt_2_over_pi * x * fmaf(coef_a * x, x, 1.0f)));
}

static void build_gelu_table(void)
{
    for (uint32_t h = 0; h < (1u << 16); h++) {
        float x = quant_fp16_to_fp32((inf_fp16)h);
        gelu_table[h] = quant_fp16_to_fp32(quant_fp32_to_fp16(gelu_formula(x)));
    }
}

const float *cpu_gelu_table(void)
{
    pthread_once(&gelu_table_once, build_gelu_table);
    return gelu_table;
}
