/* convert_internal.h - the Hugging Face families the converters know (hf_families.c: one table),
 * the config.json <-> metadata mapping (hf_config.c), tensor names and transformations
 * (tensor_names.c, tensor_transform.c); not public. */
#ifndef INF_CONVERT_INTERNAL_H
#define INF_CONVERT_INTERNAL_H

#include <ggtk/inf_convert.h>

#include <jansson.h>

/* How one GGUF key is found in config.json (convert_hf_to_gguf.py's find_hparam and friends). */
typedef enum config_kind {
    CK_U32,           /* first of `hf` present, as uint32 */
    CK_F32,           /* first of `hf` present, as float32 */
    CK_F32_TRUTHY,    /* as CK_F32, written only when not 0 */
    CK_FILE_TYPE,     /* general.file_type: the output's file type (no config key) */
    CK_ROPE_THETA,    /* rope_parameters/rope_scaling "rope_theta", then the `hf` names */
    CK_ROPE_THETA_SWA,/* rope_parameters.sliding_attention.rope_theta, then the `hf` names */
    CK_ROPE_SCALING,  /* rope_scaling type and factor (linear, yarn) */
    CK_ROPE_DIM,      /* head_dim, else hidden_size / num_attention_heads */
    CK_ROPE_DIM_PARTIAL, /* int(partial_rotary_factor * hidden_size) // num_attention_heads */
    CK_SLIDING_WINDOW_UNLESS_PATTERN_1, /* sliding_window, unless sliding_window_pattern == 1 */
} config_kind;

enum {
    CK_REQUIRED = 1,   /* absent: an error */
    CK_DEFAULT = 2,    /* absent: `fallback` */
    CK_NULL_ZERO = 4,  /* absent or null: 0 */
};

typedef struct config_key {
    const char *gguf;          /* key after "<arch>.", or a whole "general." key */
    config_kind kind;
    unsigned flags;
    double fallback;
    const char *hf[7];         /* config.json names tried in order; NULL-terminated */
} config_key;

/* What the converter does to a family's tensors besides renaming them. */
enum {
    FAMILY_PERMUTE_QK = 1,     /* Llama-family rotary layout: q/k rows regrouped per head */
    FAMILY_NORM_PLUS_ONE = 2,  /* Gemma: RMS norm weights are stored as 1 + w */
    FAMILY_SKIP_LM_HEAD = 4,   /* Gemma 2: lm_head.weight is dropped (tied to the embedding) */
    FAMILY_TRIM_EMBEDDING = 8, /* Gemma 3: embedding rows cut to the tokenizer's size */
    FAMILY_GEMMA_NORMS = 16,   /* post_attention/pre_feedforward/post_feedforward norm names */
    FAMILY_QK_NORM = 32,       /* q_norm / k_norm tensors */
    FAMILY_FUSED_PHI3 = 64,    /* qkv_proj and gate_up_proj kept fused */
};

/* One row of the family table. */
typedef struct hf_family {
    const char *hf_arch;       /* config.json "architectures"[0] */
    const char *gguf_arch;     /* general.architecture */
    const char *model_type;    /* config.json "model_type" written by --to-hf */
    unsigned flags;
    const config_key *keys;    /* the order convert_hf_to_gguf.py writes them in */
    size_t n_keys;
} hf_family;

/* The row for config.json's architecture, or NULL. */
const hf_family *hf_family_by_hf_arch(const char *hf_arch);
/* The row --to-hf uses for a GGUF architecture (llama -> LlamaForCausalLM), or NULL. */
const hf_family *hf_family_by_gguf_arch(const char *gguf_arch);
/* "LlamaForCausalLM, ..." for messages. */
const char *hf_family_names(void);

/* config.json -> `<arch>.*` keys and general.file_type, in the family's order. One line per
 * error naming config.json and the key. */
ggtk_status hf_config_to_gguf(const hf_family *family, const json_t *config, const char *config_path,
                              uint32_t file_type, ggtk_writer *writer, ggtk_error *err);

/* The metadata of `gguf` -> config.json entries (set into `config`); keys it lacks are left out. */
void hf_config_from_gguf(const hf_family *family, const ggtk_file *gguf, json_t *config);

/* The config.json value for `name`: top level, else in "text_config"; NULL when absent or null. */
const json_t *hf_config_get(const json_t *config, const char *name);

/* Head counts the tensor transformations need, from config.json. */
typedef struct hf_heads {
    uint64_t n_head;
    uint64_t n_head_kv;
} hf_heads;

/* Tensor names: the GGUF name of HF tensor `hf_name`, written into `out` (64 bytes). Returns 1
 * when mapped, 0 when the converter drops the tensor (rotary caches, Gemma 2's lm_head), -1 when
 * the family has no such tensor. */
int tensor_name_to_gguf(const hf_family *family, const char *hf_name, char out[64]);
/* The HF name of GGUF tensor `gguf_name` into `out` (128 bytes); false when unknown. */
bool tensor_name_to_hf(const hf_family *family, const char *gguf_name, char out[128]);

/* The transformations of one tensor, by its GGUF name. */
typedef struct tensor_transform {
    uint64_t permute_heads;   /* > 0: regroup rows of each of this many heads */
    bool norm_plus_one;
} tensor_transform;

tensor_transform tensor_transform_for(const hf_family *family, const hf_heads *heads,
                                      const char *gguf_name);

/* Whether a matrix of `nrows` rows can take transformation `t`: INVALID, naming tensor `name`,
 * when the rows do not split into the heads. Checked when the conversion is planned, so that the
 * error comes before any later problem of the folder; tensor_transform_apply checks it again. */
ggtk_status tensor_transform_check(const tensor_transform *t, uint64_t nrows, const char *name,
                                   ggtk_error *err);

/* Apply (HF -> GGUF) or undo (GGUF -> HF) a transformation on a row-major F32 matrix of `nrows`
 * rows of `ncols` in place; `scratch` holds nrows * ncols floats. Errors: INVALID when the rows
 * do not split into the heads (named in the message with `name`). */
ggtk_status tensor_transform_apply(const tensor_transform *t, bool to_gguf, float *data,
                                   float *scratch, uint64_t nrows, uint64_t ncols,
                                   const char *name, ggtk_error *err);

/* general.* metadata: from a --metadata JSON file (NULL: name from `default_name`, size label
 * from `n_params`), written in convert_hf_to_gguf.py's order. */
ggtk_status general_metadata_to_gguf(const char *metadata_path, const char *default_name,
                                     uint64_t n_params, ggtk_writer *writer, ggtk_error *err);
/* The general.* keys of `gguf` a conversion does not recompute, as such a JSON object. */
json_t *general_metadata_from_gguf(const ggtk_file *gguf);

#endif
