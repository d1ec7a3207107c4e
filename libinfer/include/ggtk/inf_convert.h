/* inf_convert.h - Hugging Face models to GGUF and back: the safetensors reader and writer, and the
 * two converters (config.json and tensor names, layouts and values as llama.cpp's
 * convert_hf_to_gguf.py writes them; see docs/convert.md).
 *
 * safetensors: an 8-byte little-endian header length N, N bytes of JSON (an object mapping each
 * tensor name to {"dtype", "shape", "data_offsets": [begin, end]}, plus an optional
 * "__metadata__" object of strings), then the data section. The reader checks everything before
 * trusting it: N against the file and a 100 MB cap, the JSON (no duplicate names), every dtype
 * and shape, that end - begin is the element count times the dtype size, and that the tensors
 * tile the data section exactly (sorted by offset, no gap, no overlap, nothing left over), as the
 * reference implementation requires. A sharded model (model.safetensors.index.json) has every
 * shard checked the same way, and its weight map must list exactly the tensors of its shards.
 *
 * Errors: see <ggtk/error.h>. Every failure is one line naming the file, the tensor or key and
 * what was expected; nothing is written on failure (outputs go through temporary files renamed
 * into place only when everything was written).
 * Thread-safety: an opened inf_safetensors is immutable and may be read from many threads; a
 * writer is used by one thread. The converters parallelise themselves with OpenMP.
 */
#ifndef INF_CONVERT_H
#define INF_CONVERT_H

#include <ggtk/error.h>
#include <ggtk/export.h>
#include <ggtk/gguf.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most dimensions a safetensors tensor may have here (the format has no limit; GGUF has 4). */
#define INF_SAFETENSORS_MAX_DIMS 8
/* Largest header the reader accepts, as the reference implementation (100 MB). */
#define INF_SAFETENSORS_MAX_HEADER 100000000u

/* ---------------------------------------------------------------------------------------------
 * Reading safetensors
 * ------------------------------------------------------------------------------------------- */

/* One tensor of an opened model. All fields are validated; pointers are owned by the model. */
typedef struct inf_safetensors_tensor {
    const char *name;
    const char *dtype;         /* as the header says: "F32", "BF16", "I64", ... */
    int type;                  /* the GGUF type of the same layout (GGTK_TENSOR_F32, _F16, _BF16,
                                * _F64, _I8, _I16, _I32, _I64), or -1 for dtypes GGUF lacks */
    uint32_t n_dims;           /* 0 (a scalar) .. INF_SAFETENSORS_MAX_DIMS */
    uint64_t shape[INF_SAFETENSORS_MAX_DIMS]; /* slowest dimension first, as in the header */
    uint64_t n_elements;
    uint64_t size;             /* bytes of data */
    const void *data;          /* in the shard's read-only map */
    int shard;                 /* index of the file holding it (0 for one file) */
} inf_safetensors_tensor;

/* An opened model: one .safetensors file or every shard of an index. Opaque. */
typedef struct inf_safetensors inf_safetensors;

/* Open `path`: a .safetensors file, a model.safetensors.index.json, or a folder holding
 * model.safetensors or model.safetensors.index.json. Every file is mapped read-only and checked
 * as described above. Tensors are listed shard by shard (shards in file-name order), sorted by
 * name within a shard: the order convert_hf_to_gguf.py visits them in. NULL on failure with *err
 * set: GGTK_ERR_IO (missing file or shard, named), GGTK_ERR_TRUNCATED, GGTK_ERR_OVERFLOW,
 * GGTK_ERR_INVALID (bad JSON, dtype, shape, sizes), GGTK_ERR_LAYOUT (offsets out of bounds,
 * overlapping or leaving gaps), GGTK_ERR_DUPLICATE, GGTK_ERR_NOMEM. */
GGTK_API inf_safetensors *inf_safetensors_open(const char *path, ggtk_error *err);

/* Unmap and free everything. NULL is allowed. */
GGTK_API void inf_safetensors_close(inf_safetensors *model);

/* Number of tensors, and tensor `index` (0 <= index < count) in the order described above. */
GGTK_API int64_t inf_safetensors_count(const inf_safetensors *model);
GGTK_API const inf_safetensors_tensor *inf_safetensors_tensor_at(const inf_safetensors *model,
                                                                 int64_t index);

/* Index of the tensor called `name`, or -1. */
GGTK_API int64_t inf_safetensors_find(const inf_safetensors *model, const char *name);

/* Hand the pages of `tensor`'s data back to the system (they are read again from the file if
 * touched), so that streaming through a model keeps about one tensor resident. */
GGTK_API void inf_safetensors_release(const inf_safetensors *model,
                                      const inf_safetensors_tensor *tensor);

/* ---------------------------------------------------------------------------------------------
 * Writing safetensors
 * ------------------------------------------------------------------------------------------- */

/* A model being written: tensors are declared first, then their data streams in that order.
 * Opaque. */
typedef struct inf_safetensors_writer inf_safetensors_writer;

/* A new writer. `shard_bytes` > 0 starts a new shard before a tensor that would take the current
 * one past that many bytes of data (a larger tensor gets a shard of its own); the files are then
 * model-00001-of-0000N.safetensors and model.safetensors.index.json, else model.safetensors.
 * NULL when out of memory. */
GGTK_API inf_safetensors_writer *inf_safetensors_writer_new(uint64_t shard_bytes);

/* Free a writer; a write in progress is abandoned and its temporary files removed. NULL ok. */
GGTK_API void inf_safetensors_writer_free(inf_safetensors_writer *writer);

/* Declare the next tensor: `type` GGTK_TENSOR_F32, _F16 or _BF16, `shape` slowest first.
 * GGTK_ERR_USAGE after begin or for another type, GGTK_ERR_DUPLICATE, GGTK_ERR_INVALID (empty
 * name, bad shape), GGTK_ERR_OVERFLOW, GGTK_ERR_NOMEM. */
GGTK_API ggtk_status inf_safetensors_writer_add(inf_safetensors_writer *writer, const char *name,
                                                ggtk_tensor_type type, uint32_t n_dims,
                                                const uint64_t *shape, ggtk_error *err);

/* Create the files in folder `dir` (which must exist) as temporary files and write the headers.
 * `on_temp_file` (may be NULL) is called with each temporary path as it is created. */
GGTK_API ggtk_status inf_safetensors_writer_begin(inf_safetensors_writer *writer, const char *dir,
                                                  void (*on_temp_file)(const char *path, void *user),
                                                  void *user, ggtk_error *err);

/* Stream the next `size` bytes of tensor data, in declaration order (a tensor may come in several
 * calls). GGTK_ERR_USAGE for more bytes than declared. */
GGTK_API ggtk_status inf_safetensors_writer_write(inf_safetensors_writer *writer, const void *data,
                                                  size_t size, ggtk_error *err);

/* Check every byte was written, write the index (sharded), flush, and rename every file into
 * place; a failure removes them all. */
GGTK_API ggtk_status inf_safetensors_writer_finish(inf_safetensors_writer *writer, ggtk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Converting
 * ------------------------------------------------------------------------------------------- */

/* Options of inf_convert_hf_to_gguf(). */
typedef struct inf_convert_options {
    /* llama.cpp's file type of the output (ggtk_file_type numbers, gguf_util.h). F32, F16, BF16
     * and Q8_0 follow convert_hf_to_gguf.py's --outtype rules (1-D tensors and norms F32, other
     * tensors the type; Q8_0 falls back to F16 for rows not a multiple of 32). Every other type
     * inf_quantize_file_type_supported() accepts (Q4_K_M, ...) gives the tensors
     * llama-quantize would give the F32 conversion, quantized in the same pass. */
    uint32_t file_type;
    /* A JSON file of general.* keys and values (llama.cpp's --metadata override; what --to-hf
     * writes as gguf_metadata.json), or NULL: general.name is then the folder's name and
     * general.size_label counts the parameters. */
    const char *metadata_path;
    int n_threads; /* threads for quantizing; <= 0: OpenMP's default */
    /* Called before the temporary output file is created (a tool holds its signals) and with its
     * path right after (the tool tracks it for its signal handler), or NULL when the creation
     * failed. Both may be NULL. */
    void (*before_temp_file)(void *user);
    void (*on_temp_file)(const char *path, void *user);
    void *user;
} inf_convert_options;

/* Defaults: F16 output (what convert_hf_to_gguf.py's "auto" gives F16/F32 models), no metadata
 * file, default threads, no callbacks. */
GGTK_API inf_convert_options inf_convert_options_default(void);

/* Convert the Hugging Face model in folder `hf_dir` (config.json, safetensors, tokenizer files)
 * to the GGUF file `out_path`. The architecture (config.json "architectures"[0]) must be one of
 * LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Gemma2ForCausalLM,
 * Gemma3ForCausalLM, Phi3ForCausalLM. Tensors stream one at a time from the mapped shards to the
 * output (peak memory about one tensor as F32 plus its converted bytes).
 * Errors (one line each, nothing written): GGTK_ERR_IO, GGTK_ERR_INVALID (config.json or
 * safetensors not as expected, a value that does not fit its GGUF type, a tensor of unexpected
 * shape), GGTK_ERR_UNSUPPORTED (architecture, dtype, rope scaling type, tensor name), the
 * safetensors reader's and the GGUF writer's errors, GGTK_ERR_USAGE (bad options). */
GGTK_API ggtk_status inf_convert_hf_to_gguf(const char *hf_dir, const char *out_path,
                                            const inf_convert_options *options, ggtk_error *err);

/* Options of inf_convert_gguf_to_hf(). */
typedef struct inf_convert_hf_options {
    ggtk_tensor_type dtype; /* GGTK_TENSOR_F32 (default), _F16 or _BF16 */
    uint64_t shard_bytes;   /* > 0: shard the safetensors above this many bytes per file */
    int n_threads;          /* threads for dequantizing; <= 0: OpenMP's default */
    /* Called before each temporary file is created (a tool holds its signals) and after, with
     * its path (the tool tracks it for its signal handler), or NULL when the creation failed.
     * Either may be NULL. */
    void (*before_temp_file)(void *user);
    void (*on_temp_file)(const char *path, void *user);
    void *user;
} inf_convert_hf_options;

/* Defaults: F32, one file, default threads, no callback. */
GGTK_API inf_convert_hf_options inf_convert_hf_options_default(void);

/* Write the model of GGUF file `gguf_path` (one of the architectures above) as a Hugging Face
 * folder `out_dir` (created when missing; it must not already hold files of the same names):
 * safetensors (every tensor dequantized and every transformation of inf_convert_hf_to_gguf()
 * inverted), config.json, generation_config.json, gguf_metadata.json (the general.* keys, for
 * inf_convert_options.metadata_path) and the tokenizer files. All files appear only when all
 * were written. Errors: as inf_convert_hf_to_gguf(); GGTK_ERR_PATH when a file would be
 * replaced. */
GGTK_API ggtk_status inf_convert_gguf_to_hf(const char *gguf_path, const char *out_dir,
                                            const inf_convert_hf_options *options,
                                            ggtk_error *err);

#ifdef __cplusplus
}
#endif

#endif /* INF_CONVERT_H */
