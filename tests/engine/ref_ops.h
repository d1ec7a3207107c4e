/* ref_ops.h - naive reference implementations of libinfer's operations, written for clarity:
 * each reads its sources element by element (any layout) and writes a dense float array
 * [ne3][ne2][ne1][ne0] of the result's shape, computing in double where that is simplest. */
#ifndef REF_OPS_H
#define REF_OPS_H

#include <ggtk/inf_ops.h>

/* Dense copy of a float tensor's elements (F32, F16, BF16). Caller frees. */
float *ref_dense(const inf_tensor *t);

void ref_binary(const inf_tensor *a, const inf_tensor *b, inf_op op, float *out);
void ref_scale(const inf_tensor *a, float s, float *out);
void ref_silu(const inf_tensor *a, float *out);
void ref_swiglu(const inf_tensor *gate, const inf_tensor *up, float *out);
void ref_rms_norm(const inf_tensor *a, float eps, float *out);
/* Angles follow ggml's recurrence theta_{i+1} = theta_i * base^(-2/n_dims) in float; the
 * rotation itself is computed in double. */
void ref_rope(const inf_tensor *a, const inf_tensor *pos, int n_dims, inf_rope_mode mode,
              float freq_base, float freq_scale, float *out);
/* mask may be NULL; causal with n_past when causal is true. */
void ref_soft_max(const inf_tensor *a, const inf_tensor *mask, float scale, bool causal,
                  int64_t n_past, float *out);
/* Rows of any dequantizable type. */
void ref_get_rows(const inf_tensor *a, const inf_tensor *ids, float *out);
/* dst[n][m] = sum_k W[m][k] X[n][k] in double, W dequantized and, for quantized W, X rounded
 * through the activation format llama.cpp uses (Q8_0, or Q8_1 for Q4_1). */
void ref_mul_mat(const inf_tensor *w, const inf_tensor *x, float *out);

#endif
