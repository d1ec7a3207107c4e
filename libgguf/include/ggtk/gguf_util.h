/* gguf_util.h - questions asked about an opened GGUF file: what model it holds (parameter count,
 * bits per weight, llama.cpp file type), content hashes of its tensors, how two files differ,
 * and whether its contents are sound beyond the structure ggtk_open() validates.
 *
 * Everything here reads a ggtk_file (see gguf.h) and never changes it. Functions that read tensor
 * data need a file opened with GGTK_OPEN_MMAP or GGTK_OPEN_READ and return GGTK_ERR_USAGE for one
 * opened with GGTK_OPEN_METADATA. All functions are safe to call from several threads at once on
 * the same file; the hashing functions use OpenMP threads internally.
 *
 * Errors: see <ggtk/error.h>; a failure names the file and the tensor or key concerned.
 */
#ifndef GGTK_GGUF_UTIL_H
#define GGTK_GGUF_UTIL_H

#include <ggtk/gguf.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * llama.cpp file types (general.file_type)
 * ------------------------------------------------------------------------------------------- */

/* The file types as llama.cpp's enum llama_ftype numbers them (the value of general.file_type);
 * the names drop llama.cpp's LLAMA_FTYPE_MOSTLY_ / LLAMA_FTYPE_ALL_ prefixes. Retired numbers
 * (4, 5, 6, 33, 34, 35) are left out. */
typedef enum ggtk_file_type {
    GGTK_FILE_TYPE_F32 = 0,
    GGTK_FILE_TYPE_F16 = 1,
    GGTK_FILE_TYPE_Q4_0 = 2,
    GGTK_FILE_TYPE_Q4_1 = 3,
    GGTK_FILE_TYPE_Q8_0 = 7,
    GGTK_FILE_TYPE_Q5_0 = 8,
    GGTK_FILE_TYPE_Q5_1 = 9,
    GGTK_FILE_TYPE_Q2_K = 10,
    GGTK_FILE_TYPE_Q3_K_S = 11,
    GGTK_FILE_TYPE_Q3_K_M = 12,
    GGTK_FILE_TYPE_Q3_K_L = 13,
    GGTK_FILE_TYPE_Q4_K_S = 14,
    GGTK_FILE_TYPE_Q4_K_M = 15,
    GGTK_FILE_TYPE_Q5_K_S = 16,
    GGTK_FILE_TYPE_Q5_K_M = 17,
    GGTK_FILE_TYPE_Q6_K = 18,
    GGTK_FILE_TYPE_IQ2_XXS = 19,
    GGTK_FILE_TYPE_IQ2_XS = 20,
    GGTK_FILE_TYPE_Q2_K_S = 21,
    GGTK_FILE_TYPE_IQ3_XS = 22,
    GGTK_FILE_TYPE_IQ3_XXS = 23,
    GGTK_FILE_TYPE_IQ1_S = 24,
    GGTK_FILE_TYPE_IQ4_NL = 25,
    GGTK_FILE_TYPE_IQ3_S = 26,
    GGTK_FILE_TYPE_IQ3_M = 27,
    GGTK_FILE_TYPE_IQ2_S = 28,
    GGTK_FILE_TYPE_IQ2_M = 29,
    GGTK_FILE_TYPE_IQ4_XS = 30,
    GGTK_FILE_TYPE_IQ1_M = 31,
    GGTK_FILE_TYPE_BF16 = 32,
    GGTK_FILE_TYPE_TQ1_0 = 36,
    GGTK_FILE_TYPE_TQ2_0 = 37,
    GGTK_FILE_TYPE_MXFP4_MOE = 38,
    GGTK_FILE_TYPE_NVFP4 = 39,
    GGTK_FILE_TYPE_Q1_0 = 40,
    GGTK_FILE_TYPE_Q2_0 = 41,
    GGTK_FILE_TYPE_COUNT = 42, /* one past the highest code */
} ggtk_file_type;

/* One llama.cpp file type: the value general.file_type holds, as numbered by llama.cpp's
 * enum llama_ftype. */
typedef struct ggtk_file_type_info {
    uint32_t code;      /* value of general.file_type (a ggtk_file_type) */
    const char *name;   /* the enum name without its LLAMA_FTYPE_ prefix: "MOSTLY_Q4_1" */
    const char *label;  /* what llama.cpp prints as "file type": "Q4_1", "Q4_K - Medium" */
    /* The tensor type from which llama.cpp guesses this file type when general.file_type is
     * absent and that type is the most common one; -1 when it never guesses this file type. */
    int guessed_from;
    /* The tensor type llama-quantize gives weight matrices in a file of this type before its
     * per-tensor mixture rules ("Q4_K_M" -> Q4_K, "IQ2_S" -> IQ2_XS); -1 when llama-quantize
     * cannot write this file type. */
    int tensor_type;
} ggtk_file_type_info;

/* The row for file type `code`, or NULL when llama.cpp does not define (or has retired) it.
 * Static storage. */
GGTK_API const ggtk_file_type_info *ggtk_file_type_info_get(uint32_t code);

/* The file type llama.cpp assumes for a file without general.file_type whose most common tensor
 * type is `type`: the row whose guessed_from is `type`, else ALL_F32 (0), as llama.cpp does. */
GGTK_API uint32_t ggtk_file_type_guess(ggtk_tensor_type type);

/* ---------------------------------------------------------------------------------------------
 * Model summary
 * ------------------------------------------------------------------------------------------- */

/* Tensors of one type within a file. */
typedef struct ggtk_type_usage {
    ggtk_tensor_type type;
    int64_t tensors;   /* number of tensors of this type */
    uint64_t elements; /* their elements */
    uint64_t bytes;    /* their data bytes */
} ggtk_type_usage;

/* What a file holds, computed from its header alone (works in every open mode). */
typedef struct ggtk_summary {
    const char *architecture; /* general.architecture (owned by the file), NULL when absent */
    uint64_t parameters;      /* elements of all tensors, as llama.cpp's "model params" */
    uint64_t tensor_bytes;    /* data bytes of all tensors, without alignment padding */
    double bits_per_weight;   /* tensor_bytes * 8 / parameters, llama.cpp's "BPW"; 0 if none */
    /* general.file_type when it holds an unsigned 32-bit value; otherwise (absent, or of another
     * type: ggtk_check_contents() reports that) the type llama.cpp guesses from the most common
     * tensor type, and file_type_guessed is true. */
    uint32_t file_type;
    bool file_type_guessed;
    /* Row of file_type, NULL when the file names a code llama.cpp does not define. */
    const ggtk_file_type_info *file_type_info;
    int n_types;                                   /* used entries of `types` */
    ggtk_type_usage types[GGTK_TENSOR_TYPE_COUNT]; /* tensor types present, by ascending code */
} ggtk_summary;

/* Fill *out with the summary of `file`. Returns GGTK_ERR_OVERFLOW (message in *err, which may be
 * NULL) when the element or byte totals do not fit in 64 bits, or GGTK_ERR_NOMEM. */
GGTK_API ggtk_status ggtk_summarize(const ggtk_file *file, ggtk_summary *out, ggtk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Content hashes
 * ------------------------------------------------------------------------------------------- */

/* XXH64 (seed 0) of the data of tensor `index`: exactly its ggtk_tensor_info.size bytes, not the
 * alignment padding after it. The file must have its data in memory. The hash functions read a
 * mapped file in windows of 16 MB and hand each window's pages back (ggtk_release_data()), so
 * memory stays bounded on a model larger than RAM. */
GGTK_API ggtk_status ggtk_hash_tensor(const ggtk_file *file, int64_t index, uint64_t *hash, ggtk_error *err);

/* Hash the tensors whose indices are listed in `indices` (n of them; NULL means every tensor in
 * file order, n ignored) in parallel OpenMP threads. hashes[i] receives the hash of the tensor
 * indices[i] (or of tensor i). Returns GGTK_ERR_USAGE when the file has no data in memory or an
 * index is out of range. */
GGTK_API ggtk_status ggtk_hash_tensors(const ggtk_file *file, const int64_t *indices, int64_t n,
                              uint64_t *hashes, ggtk_error *err);

/* XXH64 (seed 0) of metadata pair `index` in its on-disk form: the key as a GGUF string (uint64
 * length, bytes), the uint32 value type, then the value as GGUF encodes it (docs/gguf.md). GGUF
 * encodes every value one way only, so this is a canonical hash of the pair, equal for the same
 * key and value in any file (version 2 or 3, any position, any open mode). GGTK_ERR_USAGE when
 * the index is out of range. */
GGTK_API ggtk_status ggtk_hash_kv(const ggtk_file *file, int64_t index, uint64_t *hash,
                                  ggtk_error *err);

/* The hash of a whole model from its tensors' hashes: XXH64 (seed 0) of the concatenation of the
 * hashes in the given order, each as its 8-byte canonical (big-endian) form, i.e. of the bytes
 * that the 16-digit hex strings of a manifest spell. Changes when any tensor's data changes or
 * the tensors are reordered; padding between tensors does not take part. */
GGTK_API uint64_t ggtk_hash_combine(const uint64_t *hashes, int64_t n);

/* ---------------------------------------------------------------------------------------------
 * Differences between two files
 * ------------------------------------------------------------------------------------------- */

/* Exact equality of two metadata values: same type, same array element type and count, same
 * bytes. Floats compare by their bits, so NaN equals the same NaN and 0.0 differs from -0.0. */
GGTK_API bool ggtk_value_equal(const ggtk_value *a, const ggtk_value *b);

/* Kinds of difference, in the order ggtk_diff_files() reports them. */
typedef enum ggtk_diff_kind {
    GGTK_DIFF_VERSION,        /* the format versions differ (name is NULL) */
    GGTK_DIFF_KEY_REMOVED,    /* key only in a */
    GGTK_DIFF_KEY_ADDED,      /* key only in b */
    GGTK_DIFF_KEY_CHANGED,    /* key in both with another type or value */
    GGTK_DIFF_TENSOR_REMOVED, /* tensor only in a */
    GGTK_DIFF_TENSOR_ADDED,   /* tensor only in b */
    GGTK_DIFF_TENSOR_TYPE,    /* tensor in both with another element type */
    GGTK_DIFF_TENSOR_SHAPE,   /* tensor in both with another shape */
    GGTK_DIFF_TENSOR_DATA,    /* same type and shape, different data (by XXH64) */
} ggtk_diff_kind;

/* One difference. Indices are key indices for KEY_* kinds and tensor indices for TENSOR_* kinds;
 * -1 where the item is absent from that file. */
typedef struct ggtk_diff_entry {
    ggtk_diff_kind kind;
    const char *name;  /* the key or tensor name, owned by a or b; NULL for VERSION */
    int64_t index_a;
    int64_t index_b;
    uint64_t hash_a;   /* data hashes, set for TENSOR_DATA only */
    uint64_t hash_b;
} ggtk_diff_entry;

/* All differences between two files. */
typedef struct ggtk_diff {
    int64_t count;
    ggtk_diff_entry *entries;   /* `count` entries, sorted by kind, then by position in a or b */
    int64_t tensors_compared;   /* tensors whose data was hashed in both files */
} ggtk_diff;

/* Compare `a` with `b`. Keys and tensors are matched by name, so order does not matter. When
 * `compare_data` is true, the data of every tensor present in both with the same type and shape is
 * hashed (in parallel) and compared; both files must then have their data in memory. Fills *out,
 * which the caller releases with ggtk_diff_free(); the names in it point into a and b, which must
 * stay open while it is used. Returns GGTK_ERR_NOMEM or GGTK_ERR_USAGE with *out empty. */
GGTK_API ggtk_status ggtk_diff_files(const ggtk_file *a, const ggtk_file *b, bool compare_data,
                            ggtk_diff *out, ggtk_error *err);

/* Release the entries of a diff and reset it to empty. NULL is allowed. */
GGTK_API void ggtk_diff_free(ggtk_diff *diff);

/* ---------------------------------------------------------------------------------------------
 * Content checks
 * ------------------------------------------------------------------------------------------- */

/* Check what ggtk_open() does not: that the well-known keys have the types and ranges llama.cpp
 * expects (general.architecture a string, general.file_type a known file type, the tokenizer
 * arrays of equal length and the special token ids inside the vocabulary), and that every
 * tensor of a floating-point type (f32, f16, bf16, f64) holds only finite values. The file must
 * have its data in memory; a mapped file's pages are handed back as they are checked (see
 * ggtk_release_data()). Returns GGTK_OK, or the first problem found with a one-line message
 * naming the key or tensor (and element index) in *err. */
GGTK_API ggtk_status ggtk_check_contents(const ggtk_file *file, ggtk_error *err);

#ifdef __cplusplus
}
#endif

#endif /* GGTK_GGUF_UTIL_H */
