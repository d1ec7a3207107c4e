/* model_arch.h - the table of architectures: one row per general.architecture name with its
 * hyper-parameter reader, its tensor lists (names, slots, shapes) and its graph builder.
 *
 * Adding a family is adding a row to MODEL_ARCHS (model_arch.c) and a short file arch_<name>.c
 * that defines the row's parts from the shared pieces:
 *  - hyper-parameters: model_read_hparams() reads every key llama.cpp reads for all families
 *    (model_hparams.c); the row's `read_hparams` reads the family's own keys with the hp_* readers
 *    below and checks what the family's graph needs (e.g. qwen2 wants n_rot == head size);
 *  - tensors: `model_tensors` and `layer_tensors` list every tensor llama.cpp creates for the
 *    family; the loader binds each into its slot with the shape checked, and refuses any tensor
 *    of the file no row took;
 *  - the graph: `build_layer` gives block_decoder_layer() (graph_blocks.h) the family's options
 *    (rope, query scale, attention options, FFN activation); optional hooks change the embedding
 *    and the logits.
 * A family that needs something new (a softcap, a sliding window, a post-norm) adds it as an
 * option of a shared block or as a hook here, not as a copy of another family's builder. */
#ifndef MODEL_ARCH_H
#define MODEL_ARCH_H

#include "graph_blocks.h"
#include "model_internal.h"

/* Symbolic sizes of weight dimensions, resolved from the hyper-parameters. */
typedef enum tensor_dim {
    DIM_ONE,      /* 1: the tensor is a vector */
    DIM_EMBD,     /* n_embd */
    DIM_Q,        /* n_embd_head * n_head */
    DIM_KV,       /* n_embd_head * n_head_kv */
    DIM_QKV,      /* DIM_Q + 2 DIM_KV: fused Q|K|V */
    DIM_HEAD,     /* n_embd_head: per-head norms */
    DIM_FF,       /* n_ff */
    DIM_FF2,      /* 2 n_ff: fused gate|up */
    DIM_VOCAB,    /* n_vocab */
    DIM_ROT_HALF, /* n_rot / 2: rope frequency factors */
} tensor_dim;

/* One weight. Per-layer names are "blk.<i>.<name>". `slot` is the byte offset of its inf_tensor *
 * in inf_model (model_tensors) or model_layer (layer_tensors). Vectors (ne1 DIM_ONE) must be F32;
 * matrices may have any type the engine multiplies. */
typedef struct tensor_spec {
    const char *name;
    size_t slot;
    tensor_dim ne0, ne1;
    bool optional;
    /* NULL: always read. Else read only when it returns true for the model and, for per-layer
     * tensors, the layer as bound so far (rows are bound in order), and refused as unexpected when
     * present otherwise: attn_q/k/v only without a fused attn_qkv, rope_factors_long only with
     * longrope scaling. */
    bool (*when)(const inf_model *model, const model_layer *layer);
} tensor_spec;

#define MODEL_SLOT(field) offsetof(inf_model, field)
#define LAYER_SLOT(field) offsetof(model_layer, field)

/* What the hyper-parameter readers need: the file, the key prefix ("<arch>."), and where errors
 * go. */
typedef struct hparams_reader {
    const ggtk_file *file;
    const char *arch;
    ggtk_error *err;
} hparams_reader;

/* Read "<arch>.<name>" as an integer in [1, max] (hp_count) or [0, max] (hp_count0, always
 * optional), or a positive finite float. `required` false: an absent key keeps *out. False with
 * `err` set (one line naming the file and the key) on a missing required key, a wrong type or a
 * value out of range. */
bool hp_count(const hparams_reader *r, const char *name, bool required, uint32_t max,
              uint32_t *out);
bool hp_count0(const hparams_reader *r, const char *name, uint32_t max, uint32_t *out);
bool hp_float(const hparams_reader *r, const char *name, bool required, float *out);

/* A family's refusal of a hyper-parameter value: `err` gets `status` (GGTK_ERR_INVALID,
 * GGTK_ERR_UNSUPPORTED, ...) with the offset of "<arch>.<name>" and the formatted message after
 * the file name. Returns false. */
bool hp_refuse(const hparams_reader *r, ggtk_status status, const char *name, const char *fmt,
               ...) __attribute__((format(printf, 4, 5)));

/* The keys every family shares (model_hparams.c): sizes, heads, rope and its scaling, norm
 * epsilon; then the row's read_hparams. Fills model->hparams (n_vocab is left 0 for the
 * loader) and model->rope. */
bool model_read_hparams(inf_model *model, ggtk_error *err);

struct model_arch {
    const char *name;      /* general.architecture */
    inf_rope_mode rope_mode;
    /* The family's own keys and checks, after the shared ones (NULL: none). */
    bool (*read_hparams)(const hparams_reader *r, inf_model *model);
    const tensor_spec *model_tensors;
    size_t n_model_tensors;
    const tensor_spec *layer_tensors;
    size_t n_layer_tensors;
    /* Block il: x [n_embd, n] -> [n_embd, n'] (n' < n in the last block when only some tokens'
     * logits are wanted; see block_attention()), NULL when the last block has nothing left to
     * compute or a constructor failed (b->ok false). */
    inf_tensor *(*build_layer)(graph_builder *b, int il, inf_tensor *x);
    /* Hooks, NULL for none: the token embeddings before the first block (gemma scales them by
     * sqrt(n_embd)), and the logits after the output projection (gemma2 soft-caps them). */
    inf_tensor *(*finish_embedding)(graph_builder *b, inf_tensor *x);
    inf_tensor *(*finish_logits)(graph_builder *b, inf_tensor *logits);
};

/* The row named `name`, or NULL. */
const model_arch *model_arch_find(const char *name);

/* "llama, qwen2, ..." for an error message, into buf (cut to `size` bytes with the NUL). */
void model_arch_names(char *buf, size_t size);

/* The rows' parts, each defined in arch_<name>.c. */
extern const model_arch MODEL_ARCH_LLAMA;
extern const model_arch MODEL_ARCH_GEMMA2;
extern const model_arch MODEL_ARCH_GEMMA3;

/* The parts llama-like families share (arch_llama.c). The hyper-parameter check: rotary
 * embedding over the whole head. The block: block_decoder_layer() with the model's rope, scores
 * scaled by 1/sqrt(head) and a SwiGLU feed-forward. */
bool llama_like_read_hparams(const hparams_reader *r, inf_model *model);
inf_tensor *llama_like_build_layer(graph_builder *b, int il, inf_tensor *x);

/* The fields of a llama-like row named `arch_name` with rope mode `mode`, from the file's
 * MODEL_TENSORS and LAYER_TENSORS arrays. */
#define LLAMA_LIKE_ARCH(arch_name, mode)                                                          \
    .name = arch_name, .rope_mode = mode, .read_hparams = llama_like_read_hparams,                \
    ARCH_TENSOR_LISTS(MODEL_TENSORS, LAYER_TENSORS), .build_layer = llama_like_build_layer

/* The rows of the llama-like families (arch_qwen2.c, arch_qwen3.c, arch_phi3.c). */
extern const model_arch MODEL_ARCH_QWEN2, MODEL_ARCH_QWEN3, MODEL_ARCH_PHI3;

/* `when` predicates of the shared rows: the layer has a fused attn_qkv, or has not. */
bool layer_has_fused_qkv(const inf_model *model, const model_layer *layer);
bool layer_has_separate_qkv(const inf_model *model, const model_layer *layer);

/* Tensors every family here shares: token_embd, output_norm, output (optional: tied). */
#define COMMON_MODEL_TENSORS                                                                      \
    {"token_embd.weight", MODEL_SLOT(tok_embd), DIM_EMBD, DIM_VOCAB, false, NULL},            \
    {"output_norm.weight", MODEL_SLOT(output_norm), DIM_EMBD, DIM_ONE, false, NULL},          \
    {"output.weight", MODEL_SLOT(output), DIM_EMBD, DIM_VOCAB, true, NULL}

/* Q/K/V as llama.cpp's create_tensor_qkv reads them for every family: one fused attn_qkv (with an
 * optional bias), or else separate attn_q/k/v with optional biases. */
#define COMMON_QKV_TENSORS                                                                        \
    {"attn_qkv.weight", LAYER_SLOT(wqkv), DIM_EMBD, DIM_QKV, true, NULL},                     \
    {"attn_qkv.bias", LAYER_SLOT(bqkv), DIM_QKV, DIM_ONE, true, layer_has_fused_qkv},         \
    {"attn_q.weight", LAYER_SLOT(wq), DIM_EMBD, DIM_Q, false, layer_has_separate_qkv},         \
    {"attn_k.weight", LAYER_SLOT(wk), DIM_EMBD, DIM_KV, false, layer_has_separate_qkv},        \
    {"attn_v.weight", LAYER_SLOT(wv), DIM_EMBD, DIM_KV, false, layer_has_separate_qkv},        \
    {"attn_q.bias", LAYER_SLOT(bq), DIM_Q, DIM_ONE, true, layer_has_separate_qkv},             \
    {"attn_k.bias", LAYER_SLOT(bk), DIM_KV, DIM_ONE, true, layer_has_separate_qkv},            \
    {"attn_v.bias", LAYER_SLOT(bv), DIM_KV, DIM_ONE, true, layer_has_separate_qkv}

/* The rows of block_decoder_layer()'s attention input (its pre-norm, then Q/K/V as above), its
 * output projection, and its pre-normed SwiGLU/GEGLU feed-forward with separate gate and up. */
#define ATTN_NORM_TENSOR                                                                          \
    {"attn_norm.weight", LAYER_SLOT(attn_norm), DIM_EMBD, DIM_ONE, false, NULL}
#define ATTN_OUTPUT_TENSOR                                                                        \
    {"attn_output.weight", LAYER_SLOT(wo), DIM_Q, DIM_EMBD, false, NULL}
#define FFN_NORM_TENSOR                                                                           \
    {"ffn_norm.weight", LAYER_SLOT(ffn_norm), DIM_EMBD, DIM_ONE, false, NULL}
#define GATED_FFN_TENSORS                                                                         \
    FFN_NORM_TENSOR,                                                                              \
    {"ffn_gate.weight", LAYER_SLOT(ffn_gate), DIM_EMBD, DIM_FF, false, NULL},                 \
    {"ffn_up.weight", LAYER_SLOT(ffn_up), DIM_EMBD, DIM_FF, false, NULL},                     \
    {"ffn_down.weight", LAYER_SLOT(ffn_down), DIM_FF, DIM_EMBD, false, NULL}

/* A row's tensor-list fields from its two arrays. */
#define ARCH_TENSOR_LISTS(model, layer)                                                           \
    .model_tensors = model, .n_model_tensors = sizeof model / sizeof model[0],                    \
    .layer_tensors = layer, .n_layer_tensors = sizeof layer / sizeof layer[0]

#endif
