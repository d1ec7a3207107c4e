/* rope_math.cuh - the angles of rotary embedding as the CPU backend computes them (op_rope.c),
 * as host/device functions: ggml's recurrence theta_{k+1} = theta_k * freq_base^(-2/n_dims) in
 * float, frequency factors, linear scaling and the YaRN blend, in the same order of operations.
 * The two values that need a library call other than cos/sin (the power and the YaRN log) come
 * from the host's libm, as on the CPU, through cuda_rope_math_init(). C11 and CUDA C++;
 * tests/cuda/test_cuda_math.c compares these functions, run on the host, with the CPU op. */
#ifndef INF_CUDA_ROPE_MATH_CUH
#define INF_CUDA_ROPE_MATH_CUH

#include "float_ops.cuh"

/* A ROPE node's angle parameters (op_params, see inf_rope_ext in ops.c). */
typedef struct cuda_rope_math {
    int n_dims;
    float theta_scale;  /* freq_base^(-2/n_dims), from the host's powf */
    float freq_scale;
    float ext_factor;   /* YaRN mix; 0 off */
    float attn_factor;
    float yarn_mscale;  /* 1 + 0.1 ln(1 / freq_scale), from the host's logf */
    float range[2];     /* YaRN: first and last blended pair dimension */
} cuda_rope_math;

/* From a ROPE node's op_params (host only: the library calls must be the CPU's). */
static inline cuda_rope_math cuda_rope_math_init(const int32_t *op_params)
{
    float f[6];
    memcpy(f, &op_params[2], sizeof f); /* [2] freq_base .. [7] range[1] */
    cuda_rope_math m;
    m.n_dims = op_params[0];
    m.theta_scale = powf(f[0], -2.0f / (float)m.n_dims);
    m.freq_scale = f[1];
    m.ext_factor = f[2];
    m.attn_factor = f[3];
    m.yarn_mscale = 1.0f + 0.1f * logf(1.0f / m.freq_scale);
    m.range[0] = f[4];
    m.range[1] = f[5];
    return m;
}

/* YaRN's weight of extrapolation for pair `pair`: 1 below the range, 0 above, linear between. */
static inline INF_CUDA_HD float cuda_rope_yarn_ramp(const cuda_rope_math *m, int pair)
{
    const float width = cuda_sub(m->range[1], m->range[0]);
    const float span = width > 0.001f ? width : 0.001f;
    const float y = cuda_div(cuda_sub((float)pair, m->range[0]), span);
    return cuda_sub(1.0f, y < 0 ? 0.0f : y > 1 ? 1.0f : y);
}

/* The angle of pair `pair` (0 .. n_dims/2 - 1) at `position`, and the factor its cos and sin are
 * scaled by. `factor` is the pair's frequency factor (1 without). theta is multiplied up pair by
 * pair from the position, as the CPU fills its table, so every pair gets the CPU's rounding. */
static inline INF_CUDA_HD float cuda_rope_angle(const cuda_rope_math *m, float position, int pair,
                                                float factor, float *mscale)
{
    float theta = position;
    for (int k = 0; k < pair; k++)
        theta = cuda_mul(theta, m->theta_scale);
    const float extrapolated = cuda_div(theta, factor);
    float angle = cuda_mul(m->freq_scale, extrapolated);
    *mscale = m->attn_factor;
    if (m->ext_factor != 0.0f) {
        const float mix = cuda_mul(cuda_rope_yarn_ramp(m, pair), m->ext_factor);
        angle = cuda_add(cuda_mul(angle, cuda_sub(1.0f, mix)), cuda_mul(extrapolated, mix));
        *mscale = cuda_mul(*mscale, m->yarn_mscale);
    }
    return angle;
}

/* Rotate the pair (x0, x1) by the angle whose scaled cosine and sine are c and s. */
static inline INF_CUDA_HD void cuda_rope_rotate(float x0, float x1, float c, float s, float *y0,
                                                float *y1)
{
    *y0 = cuda_sub(cuda_mul(x0, c), cuda_mul(x1, s));
    *y1 = cuda_add(cuda_mul(x0, s), cuda_mul(x1, c));
}

#endif
