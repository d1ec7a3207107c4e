/* inf_model.h - transformer language models from GGUF files (the architectures of libinfer's
 * table, docs/models.md), and sessions that run them.
 *
 * A model is the file's hyper-parameters, its vocabulary and its weights. Weights are used in
 * place from the file's read-only map (default) or from one heap copy of the data section
 * (use_mmap false); either way no tensor is converted at load time.
 *
 * A session is one decoding context over a model: a KV cache sized to n_ctx positions (a
 * sliding-window layer's, as Gemma's, to min(n_ctx, n_swa + n_batch): it drops positions its
 * queries can no longer see), a backend (the CPU with its threads, or a CUDA device with the
 * weights it computes with uploaded into its memory), and a graph allocator whose compute
 * buffer is sized once, at creation, for the largest batch. Decoding a batch builds the forward pass as a graph on the engine
 * (inf_ops.h), allocates it in that buffer and computes it.
 *
 * The forward pass is the one llama.cpp builds for the file's general.architecture (docs/models.md
 * lists the supported ones and what each computes): "llama" is token embedding, then per layer
 * RMS-norm, Q/K/V projections (optional biases), rotary embedding (Llama 3.1 frequency factors and
 * linear/YaRN/LongRoPE scaling as the file says), grouped-query attention over the cache with a
 * causal mask, output projection and residual, RMS-norm, SwiGLU feed-forward and residual; a final
 * RMS-norm and the output projection (the token embedding when the file has no output.weight).
 * Other families vary that pattern (biases, per-head Q/K norms, NeoX rotary pairing, fused
 * projections, partial rotary dimensions).
 *
 * Errors: see <ggtk/error.h>. A model's errors about its file carry the byte offset of the
 * metadata pair or tensor-info entry at fault; session errors carry GGTK_NO_OFFSET.
 * Lifecycle: a model reads its file in place, so it is opened and closed (inf_model_open /
 * inf_model_close); a session is built in memory (inf_session_new / inf_session_free).
 *
 * Thread-safety: a model is immutable after loading and may be shared by sessions in one thread
 * at a time each; a session is used by one thread at a time (it runs its own threads inside).
 */
#ifndef INF_MODEL_H
#define INF_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggtk/gguf.h>
#include <ggtk/error.h>
#include <ggtk/inf_backend.h>
#include <ggtk/inf_vocab.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Models
 * ------------------------------------------------------------------------------------------- */

/* How a model stretches rotary embedding beyond its training context (<arch>.rope.scaling.type,
 * as llama.cpp reads it: absent means linear, whose factor defaults to 1). */
typedef enum inf_rope_scaling {
    INF_ROPE_SCALING_NONE = 0, /* "none": positions unscaled whatever the factor */
    INF_ROPE_SCALING_LINEAR,   /* "linear": positions times 1 / rope.scaling.factor */
    INF_ROPE_SCALING_YARN,     /* "yarn": YaRN's blend of interpolation and extrapolation */
    INF_ROPE_SCALING_LONGROPE, /* "longrope": per-frequency factors (rope_factors_long/short) */
} inf_rope_scaling;

/* Hyper-parameters, read from "<arch>.*" metadata (defaults as llama.cpp's where a key is
 * optional). */
typedef struct inf_model_hparams {
    const char *arch;     /* general.architecture: "llama", "qwen2", ... (static storage) */
    uint32_t n_ctx_train; /* context_length */
    uint32_t n_embd;      /* embedding_length */
    uint32_t n_layer;     /* block_count */
    uint32_t n_ff;        /* feed_forward_length */
    uint32_t n_head;      /* attention.head_count */
    uint32_t n_head_kv;   /* attention.head_count_kv (default n_head) */
    uint32_t n_embd_head; /* attention.key_length (default n_embd / n_head) */
    uint32_t n_rot;       /* rope.dimension_count (default n_embd_head) */
    uint32_t n_vocab;     /* tokens of the vocabulary (= rows of token_embd.weight) */
    uint32_t n_swa;       /* attention.sliding_window: window of sliding-window layers, 0 none
                             (gemma2: default 4096; phi3 reads it but, as llama.cpp, attends to
                             the whole context) */
    uint32_t n_ctx_orig;  /* rope.scaling.original_context_length (default n_ctx_train) */
    inf_rope_scaling rope_scaling; /* rope.scaling.type (default linear) */
    float rope_freq_base;   /* rope.freq_base (default 10000) */
    float rope_freq_scale;  /* 1 / rope.scaling.factor (or rope.scale_linear); 1 when there is
                               no factor or the type is none */
    float rope_attn_factor; /* rope.scaling.attn_factor (default 1) */
    float rms_eps;          /* attention.layer_norm_rms_epsilon */
} inf_model_hparams;

typedef struct inf_model_params {
    bool use_mmap;  /* map the file and use weights in place (true) or read them into memory */
    bool use_mlock; /* lock the weights in RAM (mlock); failing to is an error */
} inf_model_params;

/* The defaults: use_mmap true, use_mlock false. */
GGTK_API inf_model_params inf_model_params_default(void);

typedef struct inf_model inf_model;

/* Open the model at `path` (params NULL: defaults). `path` may be any part of a split model: the
 * set is opened with ggtk_split_open(), metadata comes from its first part and each weight is
 * bound in its own part's map. Checks, each failure one line in `err` naming the file and what is
 * wrong:
 *  - a GGUF error from the reader, with its status (GGTK_ERR_IO for a file that cannot be opened,
 *    GGTK_ERR_TRUNCATED, GGTK_ERR_MAGIC, ...), or a split set that does not hold together;
 *  - a general.architecture libinfer does not build: GGTK_ERR_UNSUPPORTED, "unsupported
 *    architecture 'X' (supported: llama, ...)";
 *  - a missing (GGTK_ERR_NOT_FOUND) or mistyped (GGTK_ERR_TYPE) hyper-parameter key, or values
 *    that do not fit together (GGTK_ERR_INVALID, or GGTK_ERR_UNSUPPORTED for features such as
 *    mixture-of-experts, or a rope scaling type other than none/linear/yarn/longrope, named);
 *  - the vocabulary (inf_vocab_new's error, e.g. a BPE vocabulary without merges);
 *  - a missing tensor (GGTK_ERR_NOT_FOUND), by name, with the shape it should have; a tensor of
 *    the wrong shape (GGTK_ERR_INVALID), with the expected and actual shapes; a tensor of a type
 *    the engine cannot use there (GGTK_ERR_TYPE); a tensor the architecture does not read
 *    (GGTK_ERR_UNSUPPORTED, e.g. mixture-of-experts tensors, or rope_freqs.weight in a qwen2 file);
 *  - use_mlock and the weights cannot be locked (GGTK_ERR_IO); out of memory (GGTK_ERR_NOMEM).
 * Returns NULL on failure. Close with inf_model_close(). */
GGTK_API inf_model *inf_model_open(const char *path, const inf_model_params *params,
                                   ggtk_error *err);

/* Close the model (its sessions must be freed first). NULL allowed. */
GGTK_API void inf_model_close(inf_model *model);

/* The hyper-parameters, owned by the model. */
GGTK_API const inf_model_hparams *inf_model_get_hparams(const inf_model *model);
/* The vocabulary, owned by the model. */
GGTK_API const inf_vocab *inf_model_get_vocab(const inf_model *model);
/* The opened file (metadata and tensor infos), owned by the model; the first part of a split
 * model (its metadata, and the tensor infos of that part only). */
GGTK_API const ggtk_file *inf_model_get_file(const inf_model *model);
/* Bytes of weight data the model uses. */
GGTK_API uint64_t inf_model_weight_bytes(const inf_model *model);
/* Number of parameters (elements of all weight tensors). */
GGTK_API uint64_t inf_model_n_params(const inf_model *model);

/* ---------------------------------------------------------------------------------------------
 * Sessions
 * ------------------------------------------------------------------------------------------- */

/* The device a session computes on (llama.cpp's --device). */
typedef enum inf_device {
    INF_DEVICE_CPU = 0, /* the CPU backend; a zeroed inf_session_params asks for it */
    INF_DEVICE_CUDA,    /* CUDA device 0 (<ggtk/inf_backend_cuda.h>); an error when the build has
                           no CUDA backend or no device is usable */
    INF_DEVICE_AUTO,    /* CUDA device 0 when the build has CUDA and a device is found, else the
                           CPU */
} inf_device;

/* "cpu", "cuda" or "auto". */
GGTK_API const char *inf_device_name(inf_device device);

/* Whether `device` can be used now: GGTK_OK, or GGTK_ERR_UNSUPPORTED with one line saying why
 * ("built without CUDA: rebuild with make CUDA=1", "cuda: no usable device: ..."). INF_DEVICE_CPU
 * and INF_DEVICE_AUTO are always usable. Lets a program refuse a request before it loads a
 * model. */
GGTK_API ggtk_status inf_device_check(inf_device device, ggtk_error *err);

typedef struct inf_session_params {
    int32_t n_ctx;            /* positions the KV cache holds (1 ..= the model's n_ctx_train) */
    int32_t n_batch;          /* most tokens computed by one graph (1 ..= n_ctx) */
    int n_threads;            /* CPU threads (<= 0: one per core) */
    ggtk_tensor_type kv_type; /* GGTK_TENSOR_F16 (default) or GGTK_TENSOR_F32 */
    inf_device device;        /* where the graph runs (default INF_DEVICE_AUTO) */
    int32_t n_gpu_layers;     /* on a CUDA device, llama.cpp's -ngl: the last N blocks run on the
                                 device, and the output layer too when N > n_layer; < 0 (default)
                                 means all of them and the output layer. Ignored on the CPU. 0
                                 computes everything on the CPU */
} inf_session_params;

/* The defaults: n_ctx 512, n_batch 512, n_threads 0, kv_type F16, device INF_DEVICE_AUTO,
 * n_gpu_layers -1 (everything on the device when there is one). */
GGTK_API inf_session_params inf_session_params_default(void);

typedef struct inf_session inf_session;

/* A session over `model` (which must outlive it; params NULL: defaults). Allocates the KV cache,
 * and plans and allocates the compute buffer for a full batch at the end of a full cache.
 * On a CUDA device the weights the device computes with are uploaded once into device memory
 * (the model's file map stays the CPU's copy, used in place), and the KV cache, compute buffer
 * and logits live in device memory: a decode's logits come back to the host only when
 * inf_session_logits() asks for them. With 1 <= n_gpu_layers <= n_layer the graph is split
 * (<ggtk/inf_sched.h>): the last n_gpu_layers blocks, their weights and KV cache on the device;
 * the embedding, the first blocks and the output layer on the CPU, the logits on the host.
 * Errors (NULL, `err` set): n_ctx above the model's context length or below 1, or n_batch out of
 * range (GGTK_ERR_INVALID); a KV type other than F16/F32, or an operation of the forward pass the
 * backend cannot compute, naming the tensor and its types (GGTK_ERR_UNSUPPORTED; split between
 * a device and the CPU, the CPU computes what the device cannot); a device that cannot be used
 * (inf_device_check()'s error); out of memory (GGTK_ERR_NOMEM; on the device, naming what did
 * not fit: "the weights (N MiB) do not fit: cuda: ..."). */
GGTK_API inf_session *inf_session_new(inf_model *model, const inf_session_params *params,
                                      ggtk_error *err);

/* Free the session. NULL allowed. */
GGTK_API void inf_session_free(inf_session *session);

/* Empty the KV cache: the next decode starts at position 0. */
GGTK_API void inf_session_reset(inf_session *session);

/* Positions already in the cache (the position the next decoded token gets). */
GGTK_API int32_t inf_session_n_past(const inf_session *session);

/* Decode tokens[0..n_tokens) at positions n_past .. n_past + n_tokens - 1 (in graphs of at most
 * n_batch tokens) and add them to the cache. Logits are computed for tokens[first_output ..
 * n_tokens) only (0 <= first_output <= n_tokens) and read with inf_session_logits(). Returns
 * GGTK_ERR_INVALID for a token id outside the vocabulary ("token T at index I is outside the
 * vocabulary of N"), a bad first_output or more tokens than the cache has room for,
 * GGTK_ERR_NOMEM, or a backend failure ("compute failed: ..."). After a failure the cache content
 * is unspecified: call inf_session_reset(). */
GGTK_API ggtk_status inf_session_decode(inf_session *session, const inf_token *tokens,
                                        int32_t n_tokens, int32_t first_output, ggtk_error *err);

/* Call `observer` (with `user`) after the nodes `filter` accepts (NULL: every node) of every
 * graph the following decodes compute, as inf_backend_compute_filtered() does; a NULL observer
 * removes it. An observer that returns false stops that graph's compute, and the decode then
 * returns as if it had finished: an observer that can fail keeps its error for the caller
 * (inf_imatrix_observe() does). */
GGTK_API void inf_session_set_observer(inf_session *session, inf_node_filter filter,
                                       inf_node_observer observer, void *user);

/* Logits of the last decode: *n_rows (may be NULL) rows of n_vocab floats, row r for
 * tokens[first_output + r]. Owned by the session, valid until the next decode. A session on a
 * device downloads them on the first call after a decode (NULL when host memory runs out). */
GGTK_API const float *inf_session_logits(const inf_session *session, int32_t *n_rows);

/* The session's parameters as resolved (n_threads as used; device INF_DEVICE_CPU or
 * INF_DEVICE_CUDA; n_gpu_layers 0 on the CPU, else the blocks on the device, n_layer + 1 when the
 * output layer is there too). */
GGTK_API inf_session_params inf_session_get_params(const inf_session *session);
/* The model the session runs. */
GGTK_API const inf_model *inf_session_model(const inf_session *session);
/* Bytes of the KV cache, of the compute buffer (which also holds the logits of a decode done in
 * one graph), and of the buffer logits are gathered in when a decode needs several graphs (0
 * until one does). */
GGTK_API size_t inf_session_kv_bytes(const inf_session *session);
GGTK_API size_t inf_session_compute_bytes(const inf_session *session);
GGTK_API size_t inf_session_logits_bytes(const inf_session *session);
/* Device memory a session holds (all 0 on the CPU). The counts above add the host's part of a
 * session split between a device and the CPU. */
typedef struct inf_session_device_memory {
    size_t weights; /* the weights copied to the device (the CPU uses the model's in place) */
    size_t kv;      /* the device's blocks' KV cache */
    size_t compute; /* the device's compute buffer (and the attention scratch when it is there) */
    size_t logits;  /* the rows of a decode of several graphs */
} inf_session_device_memory;

GGTK_API inf_session_device_memory inf_session_device_bytes(const inf_session *session);
/* One line naming the device the session computes on: "CPU (N threads)", or
 * "CUDA0: NVIDIA H100 80GB HBM3, 79.1 GiB (N of M layers and the output layer)". Owned by the
 * session. */
GGTK_API const char *inf_session_device_description(const inf_session *session);

#ifdef __cplusplus
}
#endif

#endif /* INF_MODEL_H */
