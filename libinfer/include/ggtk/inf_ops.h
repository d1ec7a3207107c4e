/* inf_ops.h - constructors of the operations a Llama forward pass needs.
 *
 * Each function records an operation and returns the tensor that will hold its result; nothing is
 * computed until a backend runs a graph containing it (inf_backend.h). Results are F32 unless
 * stated. Errors: see <ggtk/error.h>; constructors are its builder-style exception: on error (bad
 * shapes or types, context full, a NULL source) a constructor returns NULL and the context keeps
 * the first failure as a ggtk_error (inf_context_error()).
 *
 * Broadcasting, where allowed, repeats `b` along every dimension i where b->ne[i] divides
 * a->ne[i]. Sources may be non-contiguous (views, permutations) unless a constructor says
 * otherwise; element order is always row-major by dimension 0 first.
 *
 * Thread-safety: as for inf_tensor.h - one thread at a time per context.
 */
#ifndef INF_OPS_H
#define INF_OPS_H

#include <ggtk/export.h>

#include <ggtk/inf_tensor.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Contiguous copy of `a` (F32 or F16) with a's type and shape: makes a permuted view usable where
 * contiguity is required, e.g. before a reshape. */
GGTK_API inf_tensor *inf_cont(inf_context *ctx, inf_tensor *a);

/* Copy the elements of `a` (F32 or F16) in row-major order into `b` (F32, F16 or BF16; same element
 * count; may be a view into a cache), converting the type. Returns a view of `b` that depends on
 * the copy: consumers that must see the copied data should read through it. */
GGTK_API inf_tensor *inf_cpy(inf_context *ctx, inf_tensor *a, inf_tensor *b);

/* Write row i of `src` (F32, [ne0, n, ne2, ne3]) into row ids[i] of `dst` (F32, F16 or BF16,
 * [ne0, rows, ne2, ne3]), converting the type; `ids` is I32 [n] and shared by every ne2/ne3
 * slice. Indices out of [0, rows) make the compute fail. Returns a view of `dst` that depends on
 * the write (read the cache through it, as for inf_cpy). */
GGTK_API inf_tensor *inf_set_rows(inf_context *ctx, inf_tensor *dst, inf_tensor *src, inf_tensor *ids);

/* Rows of `a` ([ne0, rows], any type libinfer can dequantize: see inf_type_can_dequantize())
 * picked by `ids` (I32 [n]), dequantized: result F32 [ne0, n]. Out-of-range ids make the compute
 * fail. */
GGTK_API inf_tensor *inf_get_rows(inf_context *ctx, inf_tensor *a, inf_tensor *ids);

/* a + b and a * b element-wise, F32, b broadcast over a; the result has a's shape. */
GGTK_API inf_tensor *inf_add(inf_context *ctx, inf_tensor *a, inf_tensor *b);
GGTK_API inf_tensor *inf_mul(inf_context *ctx, inf_tensor *a, inf_tensor *b);

/* a * s, F32. */
GGTK_API inf_tensor *inf_scale(inf_context *ctx, inf_tensor *a, float s);

/* x * sigmoid(x) element-wise, F32. */
GGTK_API inf_tensor *inf_silu(inf_context *ctx, inf_tensor *a);

/* silu(gate) * up element-wise (the SwiGLU feed-forward product); same shapes, F32. */
GGTK_API inf_tensor *inf_swiglu(inf_context *ctx, inf_tensor *gate, inf_tensor *up);

/* GELU with the tanh approximation, 0.5 x (1 + tanh(sqrt(2/pi) x (1 + 0.044715 x^2))), computed
 * as ggml's CPU backend does, so results equal llama.cpp's bit for bit: x <= -10 gives 0, x >= 10
 * gives x, and in between x is rounded to fp16 and the result is the fp16-rounded GELU of that
 * value (ggml's lookup table). F32. */
GGTK_API inf_tensor *inf_gelu(inf_context *ctx, inf_tensor *a);

/* gelu(gate) * up element-wise (the GEGLU feed-forward product of Gemma), gelu as inf_gelu();
 * same shapes, F32. */
GGTK_API inf_tensor *inf_geglu(inf_context *ctx, inf_tensor *gate, inf_tensor *up);

/* Soft-capping, cap * tanh(a * (1 / cap)) element-wise with 1 / cap rounded to float first: the
 * same floats as llama.cpp's scale, tanh, scale (Gemma 2's attention and final logits). `cap`
 * must be > 0 and finite. F32. */
GGTK_API inf_tensor *inf_softcap(inf_context *ctx, inf_tensor *a, float cap);

/* Each row of `a` (F32) divided by sqrt(mean of its squares + eps). No weight: multiply by the
 * norm weight with inf_mul(). */
GGTK_API inf_tensor *inf_rms_norm(inf_context *ctx, inf_tensor *a, float eps);

/* How rotary embedding pairs the elements of a head. */
typedef enum inf_rope_mode {
    INF_ROPE_NORMAL = 0, /* pairs (2i, 2i+1) - Llama as converted by llama.cpp */
    INF_ROPE_NEOX = 2,   /* pairs (i, i + n_dims/2) - GPT-NeoX, Qwen, ... */
} inf_rope_mode;

/* How rotary embedding turns positions into angles, as ggml_rope_ext takes it. Pair i of n_dims
 * at position p turns by theta = p * freq_base^(-2i/n_dims) / factor[i] (factor 1 without
 * frequency factors), interpolated to freq_scale * theta; with ext_factor != 0 (YaRN) the pairs
 * between the correction dimensions of beta_fast and beta_slow rotations over n_ctx_orig
 * positions blend interpolation and extrapolation, and cos/sin are scaled by attn_factor *
 * (1 + 0.1 ln(1 / freq_scale)); without, by attn_factor alone. */
typedef struct inf_rope_params {
    float freq_base;    /* > 0 (10000 for Llama 2) */
    float freq_scale;   /* > 0: 1 plain, below 1 interpolation (linear or YaRN scaling) */
    float ext_factor;   /* YaRN extrapolation mix in [0, 1]: 0 off */
    float attn_factor;  /* > 0: multiplies cos and sin */
    float beta_fast;    /* YaRN correction range, in rotations (llama.cpp: 32 and 1) */
    float beta_slow;
    int32_t n_ctx_orig; /* YaRN: the context the range refers to (the training context) */
} inf_rope_params;

/* Plain (or linearly scaled) RoPE: freq_base and freq_scale as given, ext_factor 0, attn_factor
 * 1, beta_fast 32, beta_slow 1, n_ctx_orig 0. */
GGTK_API inf_rope_params inf_rope_params_plain(float freq_base, float freq_scale);

/* Rotary position embedding. `a` is F32 [head_dim, n_head, n_tokens, 1] (any strides); `pos` is I32
 * [n_tokens] (the position of each token); `freq_factors` is NULL or F32 with at least n_dims/2
 * contiguous elements (Llama 3.1's rope_freqs, LongRoPE's factors). The first `n_dims` (even,
 * <= head_dim) elements of every head are rotated as `params` says, the rest are copied; the
 * result is contiguous. Angles follow ggml's recurrence and operation order, so results match
 * llama.cpp's to float rounding (its build fuses multiply-adds, libinfer's does not). NULL
 * (context error) on bad shapes, types or parameters. */
GGTK_API inf_tensor *inf_rope_ext(inf_context *ctx, inf_tensor *a, inf_tensor *pos,
                                  inf_tensor *freq_factors, int n_dims, inf_rope_mode mode,
                                  const inf_rope_params *params);

/* inf_rope_ext() without frequency factors and with inf_rope_params_plain(freq_base,
 * freq_scale): pair i turns by pos * freq_scale * freq_base^(-2i/n_dims). */
GGTK_API inf_tensor *inf_rope(inf_context *ctx, inf_tensor *a, inf_tensor *pos, int n_dims,
                     inf_rope_mode mode, float freq_base, float freq_scale);

/* Softmax over dimension 0 of (a * scale + mask). `a` is F32 [n_kv, n_q, ne2, ne3]; `mask` is F32
 * [n_kv, n_q] broadcast over ne2 and ne3 (-INFINITY hides an element), or NULL for none. */
GGTK_API inf_tensor *inf_soft_max(inf_context *ctx, inf_tensor *a, inf_tensor *mask, float scale);

/* Softmax over dimension 0 of a * scale with a causal mask: query row i (dimension 1) of a
 * sequence whose first query sits at position n_past sees key positions 0..n_past + i only.
 * `a` is F32 [n_kv, n_q, ne2, ne3] with n_kv >= n_past + n_q. */
GGTK_API inf_tensor *inf_soft_max_causal(inf_context *ctx, inf_tensor *a, float scale, int64_t n_past);

/* inf_soft_max_causal() with a sliding window: query row i (position n_past + i) sees only the
 * `window` key positions n_past + i - window + 1 .. n_past + i (a sliding-window attention layer;
 * llama.cpp's standard SWA mask hides a key when query position - key position >= window).
 * Positions are indices into dimension 0 of `a`, so a cache that drops old positions passes
 * n_past relative to its first kept position. window >= 1. */
GGTK_API inf_tensor *inf_soft_max_causal_window(inf_context *ctx, inf_tensor *a, float scale,
                                                int64_t n_past, int64_t window);

/* Matrix product. `a` is [K, M, A2, A3] of any type libinfer can dequantize (weights, a K
 * cache, ...; Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and the K types multiply in 8-bit integers, the others
 * through floats); `b` is F32 [K, N, B2, B3] with B2 a multiple of A2 and B3 of A3 (a's matrices
 * are shared by B2/A2 consecutive b matrices: grouped-query attention). The result is F32
 * [M, N, B2, B3] with dst[n][m] = dot(row m of a, row n of b). A quantized `a` must have
 * contiguous blocks (nb[0] one block); a float `a` and `b` may have any strides (a transposed
 * view of a V cache is fine). */
GGTK_API inf_tensor *inf_mul_mat(inf_context *ctx, inf_tensor *a, inf_tensor *b);

/* Attention in one operation: for every query row i of every head h,
 *   s[j] = dot(q[:, i, h], k[:, j, h / g]), then softcap * tanh(s[j] / softcap) when softcap > 0,
 *   then s[j] * scale; out[:, h, i] = sum_j softmax(s)[j] * v[:, j, h / g]
 * over the keys j the query may see (every key here; see inf_flash_attn_causal()), with
 * g = n_head / n_head_kv (grouped-query attention). The same numbers as MUL_MAT, SOFTCAP,
 * SOFT_MAX and MUL_MAT, within float rounding (the softmax is computed online, tile by tile).
 * q is F32 [D, n_q, n_head, B]; k is F32 or F16 [D, n_kv, n_head_kv, B] with contiguous rows;
 * v is F32 or F16 [D, n_kv, n_head_kv, B], either with contiguous rows or transposed (nb[1] one
 * element: a view of a V cache stored [cells, n_embd_kv] through inf_transpose()); n_head a
 * multiple of n_head_kv. The result is F32 [D, n_head, n_q, B], contiguous: reshaped to
 * [D * n_head, n_q, B] it is the heads of each query side by side. A query that sees no key gets
 * zeros. op_params: [0] scale, [1] softcap, [2] 1 when causal, [3] n_past, [4] window. */
GGTK_API inf_tensor *inf_flash_attn(inf_context *ctx, inf_tensor *q, inf_tensor *k, inf_tensor *v,
                                    float scale, float softcap);

/* inf_flash_attn() with the causal mask of inf_soft_max_causal() and, when window > 0, the
 * sliding window of inf_soft_max_causal_window(): query row i sees key rows
 * max(0, n_past + i - window + 1) .. n_past + i. n_kv >= n_past + n_q; window >= 0. */
GGTK_API inf_tensor *inf_flash_attn_causal(inf_context *ctx, inf_tensor *q, inf_tensor *k,
                                           inf_tensor *v, float scale, float softcap,
                                           int64_t n_past, int64_t window);

#ifdef __cplusplus
}
#endif

#endif /* INF_OPS_H */
