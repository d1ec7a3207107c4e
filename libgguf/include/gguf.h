/* gguf.h - read and write GGUF model files (versions 2 and 3).
 *
 * The reader maps a file (or reads it from a stream) and validates every count, length, offset
 * and size it contains before trusting it; tensor data is reached through pointers into the map.
 * The writer builds a header in memory and streams tensor data to a temporary file that is
 * renamed into place only when everything was written.
 *
 * Thread-safety: a gguf_file is immutable after gguf_open*() returns and may be read from many
 * threads at once. A gguf_writer must be used from one thread at a time.
 */
#ifndef GGUF_H
#define GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "GGUF" read as a little-endian uint32. */
#define GGUF_MAGIC 0x46554747u
/* Alignment of the data section and of each tensor when general.alignment is absent. */
#define GGUF_DEFAULT_ALIGNMENT 32u
/* Largest number of dimensions a tensor may have. */
#define GGUF_MAX_DIMS 4

/* ---------------------------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------------------------- */

/* Result of every fallible libgguf call. GGUF_OK is 0; every other value is a failure. */
typedef enum gguf_status {
    GGUF_OK = 0,
    GGUF_ERR_IO,          /* open/read/write/mmap/fsync/rename failed (errno in the message) */
    GGUF_ERR_NOMEM,       /* allocation failed */
    GGUF_ERR_MAGIC,       /* the file does not start with "GGUF" */
    GGUF_ERR_VERSION,     /* unsupported version (v1, or newer than 3), or a big-endian file */
    GGUF_ERR_TRUNCATED,   /* the file ends before a field it announces */
    GGUF_ERR_OVERFLOW,    /* a count, length or size does not fit the arithmetic or the file */
    GGUF_ERR_INVALID,     /* a field holds a value the format forbids (type, n_dims, ne, alignment) */
    GGUF_ERR_DUPLICATE,   /* two keys or two tensors share a name */
    GGUF_ERR_LAYOUT,      /* tensor data misaligned, out of bounds or overlapping */
    GGUF_ERR_NOT_FOUND,   /* a key or tensor asked for does not exist */
    GGUF_ERR_TYPE,        /* a key exists but holds another value type than asked for */
    GGUF_ERR_USAGE,       /* the API was called out of order or with bad arguments */
} gguf_status;

/* A failure's details. `offset` is the byte offset in the file of the field at fault, or
 * UINT64_MAX where no offset applies. `message` is one line naming the file, the field and what
 * was expected, ready to print. */
typedef struct gguf_error {
    gguf_status status;
    uint64_t offset;
    char message[512];
} gguf_error;

/* Static, human-readable name of a status ("truncated file", ...). Never NULL. */
const char *gguf_strerror(gguf_status status);

/* ---------------------------------------------------------------------------------------------
 * Value types of metadata and the table of tensor types
 * ------------------------------------------------------------------------------------------- */

/* Metadata value types; the numbers are the on-disk codes. */
typedef enum gguf_value_type {
    GGUF_VALUE_UINT8 = 0,
    GGUF_VALUE_INT8 = 1,
    GGUF_VALUE_UINT16 = 2,
    GGUF_VALUE_INT16 = 3,
    GGUF_VALUE_UINT32 = 4,
    GGUF_VALUE_INT32 = 5,
    GGUF_VALUE_FLOAT32 = 6,
    GGUF_VALUE_BOOL = 7,
    GGUF_VALUE_STRING = 8,
    GGUF_VALUE_ARRAY = 9,
    GGUF_VALUE_UINT64 = 10,
    GGUF_VALUE_INT64 = 11,
    GGUF_VALUE_FLOAT64 = 12,
    GGUF_VALUE_TYPE_COUNT
} gguf_value_type;

/* Lower-case name of a value type ("uint32", "string", ...); "unknown" for a bad code. */
const char *gguf_value_type_name(gguf_value_type type);

/* Bytes one element of a fixed-size value type takes on disk; 0 for STRING, ARRAY and bad codes. */
size_t gguf_value_type_size(gguf_value_type type);

/* Tensor element types; the numbers are the on-disk codes shared with ggml. Gaps are codes that
 * ggml has retired; gguf_tensor_type_info() returns NULL for them. */
typedef enum gguf_tensor_type {
    GGUF_TENSOR_F32 = 0,
    GGUF_TENSOR_F16 = 1,
    GGUF_TENSOR_Q4_0 = 2,
    GGUF_TENSOR_Q4_1 = 3,
    GGUF_TENSOR_Q5_0 = 6,
    GGUF_TENSOR_Q5_1 = 7,
    GGUF_TENSOR_Q8_0 = 8,
    GGUF_TENSOR_Q8_1 = 9,
    GGUF_TENSOR_Q2_K = 10,
    GGUF_TENSOR_Q3_K = 11,
    GGUF_TENSOR_Q4_K = 12,
    GGUF_TENSOR_Q5_K = 13,
    GGUF_TENSOR_Q6_K = 14,
    GGUF_TENSOR_Q8_K = 15,
    GGUF_TENSOR_IQ2_XXS = 16,
    GGUF_TENSOR_IQ2_XS = 17,
    GGUF_TENSOR_IQ3_XXS = 18,
    GGUF_TENSOR_IQ1_S = 19,
    GGUF_TENSOR_IQ4_NL = 20,
    GGUF_TENSOR_IQ3_S = 21,
    GGUF_TENSOR_IQ2_S = 22,
    GGUF_TENSOR_IQ4_XS = 23,
    GGUF_TENSOR_I8 = 24,
    GGUF_TENSOR_I16 = 25,
    GGUF_TENSOR_I32 = 26,
    GGUF_TENSOR_I64 = 27,
    GGUF_TENSOR_F64 = 28,
    GGUF_TENSOR_IQ1_M = 29,
    GGUF_TENSOR_BF16 = 30,
    GGUF_TENSOR_TQ1_0 = 34,
    GGUF_TENSOR_TQ2_0 = 35,
    GGUF_TENSOR_MXFP4 = 39,
    GGUF_TENSOR_NVFP4 = 40,
    GGUF_TENSOR_Q1_0 = 41,
    GGUF_TENSOR_Q2_0 = 42,
    GGUF_TENSOR_TYPE_COUNT = 43 /* one past the largest code; not a type */
} gguf_tensor_type;

/* One row of the tensor type table: the only place block geometry is defined. */
typedef struct gguf_tensor_type_info {
    gguf_tensor_type type;
    const char *name;     /* canonical lower-case name as ggml prints it: "q4_0", "q6_K", "bf16" */
    uint32_t block_size;  /* elements per block (1 for plain types) */
    uint32_t block_bytes; /* bytes per block */
    bool quantized;       /* true for block-quantized types */
} gguf_tensor_type_info;

/* The row for `type`, or NULL when the code is unknown or retired. Static storage. */
const gguf_tensor_type_info *gguf_tensor_type_info_get(gguf_tensor_type type);

/* The type whose name equals `name` ignoring case ("Q8_0", "q8_0"), or -1 when none does. */
int gguf_tensor_type_from_name(const char *name);

/* Bytes needed by `n_elements` elements of `type`. Returns false (and leaves *bytes alone) when
 * the type is unknown, n_elements is not a multiple of the block size, or the size overflows. */
bool gguf_tensor_type_bytes(gguf_tensor_type type, uint64_t n_elements, uint64_t *bytes);

/* ---------------------------------------------------------------------------------------------
 * Metadata values
 * ------------------------------------------------------------------------------------------- */

/* A string as stored in the file: `len` bytes, plus a terminating NUL that libgguf adds so that
 * `data` can be used as a C string (the bytes themselves may contain NULs). */
typedef struct gguf_string {
    uint64_t len;
    const char *data;
} gguf_string;

/* An array value. `data` points to `count` elements laid out by element type:
 *  - fixed-size types: a packed little-endian array (bool as one byte 0/1),
 *  - GGUF_VALUE_STRING: an array of gguf_string,
 *  - GGUF_VALUE_ARRAY: an array of gguf_value, each itself of type ARRAY (nested arrays). */
typedef struct gguf_array {
    gguf_value_type elem_type;
    uint64_t count;
    const void *data;
} gguf_array;

/* A metadata value of any type. Which union member is valid follows `type`. */
typedef struct gguf_value {
    gguf_value_type type;
    union {
        uint8_t u8;
        int8_t i8;
        uint16_t u16;
        int16_t i16;
        uint32_t u32;
        int32_t i32;
        float f32;
        bool b;
        uint64_t u64;
        int64_t i64;
        double f64;
        gguf_string str;
        gguf_array arr;
    } v;
} gguf_value;

/* ---------------------------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------------------------- */

/* An opened, fully validated GGUF file. Opaque; owns its map or buffers. */
typedef struct gguf_file gguf_file;

/* How gguf_open() reaches tensor data. */
typedef enum gguf_open_mode {
    GGUF_OPEN_MMAP = 0,     /* map the file read-only; tensor data points into the map (default) */
    GGUF_OPEN_READ = 1,     /* read the whole data section into one heap buffer (no mmap) */
    GGUF_OPEN_METADATA = 2, /* parse the header only; tensor `data` pointers are NULL */
} gguf_open_mode;

/* Open and validate the GGUF file at `path`. Metadata parsing reads only the header, so its cost
 * does not depend on the size of the data section. Returns NULL on failure and fills *err (which
 * may be NULL when the caller does not want details). Close with gguf_close(). */
gguf_file *gguf_open(const char *path, gguf_open_mode mode, gguf_error *err);

/* Like gguf_open() but reads sequentially from `stream` (a pipe works), which the caller keeps
 * owning. `name` is used in error messages. `mode` must be GGUF_OPEN_READ (the data section is read
 * into memory) or GGUF_OPEN_METADATA (the stream is left just past the header padding, i.e. at the
 * first byte of the data section, so the caller may stream tensor data itself). The file size
 * checks use the stream's size when it is seekable; for a pipe in METADATA mode they are skipped. */
gguf_file *gguf_open_stream(FILE *stream, const char *name, gguf_open_mode mode, gguf_error *err);

/* Parse and validate a GGUF image held in memory (`size` bytes at `data`) without copying it:
 * tensor `data` pointers point into the caller's buffer, which must stay unchanged and alive
 * until gguf_close(). Metadata strings and arrays are copied. `name` is used in error messages
 * (NULL: "(memory)"). Returns NULL on failure and fills *err (may be NULL). */
gguf_file *gguf_open_memory(const void *data, size_t size, const char *name, gguf_error *err);

/* Release everything the file owns, including the map. NULL is allowed. */
void gguf_close(gguf_file *file);

/* The path or name the file was opened with. */
const char *gguf_path(const gguf_file *file);
/* Format version (2 or 3). */
uint32_t gguf_version(const gguf_file *file);
/* general.alignment, or GGUF_DEFAULT_ALIGNMENT when absent. */
uint32_t gguf_alignment(const gguf_file *file);
/* Byte offset of the data section from the start of the file. */
uint64_t gguf_data_offset(const gguf_file *file);
/* Bytes in the data section as the file holds it (file size minus data offset). */
uint64_t gguf_data_size(const gguf_file *file);
/* Total file size in bytes (0 for an unseekable stream opened in METADATA mode). */
uint64_t gguf_file_size(const gguf_file *file);
/* Start of the data section in memory, or NULL in METADATA mode. */
const void *gguf_data(const gguf_file *file);

/* Number of metadata key/value pairs. */
int64_t gguf_kv_count(const gguf_file *file);
/* Index of `key`, or -1 when absent. */
int64_t gguf_find_key(const gguf_file *file, const char *key);
/* Key of pair `index` (0 <= index < gguf_kv_count()), NUL-terminated, owned by the file. */
const char *gguf_kv_key(const gguf_file *file, int64_t index);
/* Value of pair `index`, owned by the file. */
const gguf_value *gguf_kv_value(const gguf_file *file, int64_t index);
/* Byte offset in the file where pair `index` starts (its key length field). */
uint64_t gguf_kv_offset(const gguf_file *file, int64_t index);
/* Value of `key`, or NULL when absent. */
const gguf_value *gguf_get(const gguf_file *file, const char *key);

/* Typed getters. Each returns GGUF_OK and stores the value, GGUF_ERR_NOT_FOUND when the key is
 * absent, or GGUF_ERR_TYPE when the value cannot be represented exactly in the requested type
 * (any integer type converts to another if the value fits; float getters accept FLOAT32/FLOAT64
 * and integers). On failure *out is left unchanged, so it may hold a default beforehand. The
 * string getter returns a pointer owned by the file. */
gguf_status gguf_get_uint(const gguf_file *file, const char *key, uint64_t *out);
gguf_status gguf_get_int(const gguf_file *file, const char *key, int64_t *out);
gguf_status gguf_get_float(const gguf_file *file, const char *key, double *out);
gguf_status gguf_get_bool(const gguf_file *file, const char *key, bool *out);
gguf_status gguf_get_string(const gguf_file *file, const char *key, const char **out);
/* The array under `key`; GGUF_ERR_TYPE when the value is not an array. */
gguf_status gguf_get_array(const gguf_file *file, const char *key, const gguf_array **out);

/* One entry of the tensor-info table. All fields are validated by gguf_open(). */
typedef struct gguf_tensor_info {
    const char *name;              /* NUL-terminated, owned by the file */
    uint32_t n_dims;               /* 1..GGUF_MAX_DIMS */
    uint64_t ne[GGUF_MAX_DIMS];    /* elements per dimension, ne[0] fastest; unused dims are 1 */
    gguf_tensor_type type;
    uint64_t offset;               /* offset of the data from the start of the data section */
    uint64_t size;                 /* bytes of data */
    uint64_t info_offset;          /* byte offset of this entry in the file */
    const void *data;              /* the data in memory, NULL in METADATA mode */
} gguf_tensor_info;

/* Number of tensors. */
int64_t gguf_tensor_count(const gguf_file *file);
/* Tensor `index` in file order (0 <= index < gguf_tensor_count()), owned by the file. */
const gguf_tensor_info *gguf_tensor(const gguf_file *file, int64_t index);
/* Index of the tensor called `name`, or -1 when absent. */
int64_t gguf_find_tensor(const gguf_file *file, const char *name);
/* Product of a tensor's dimensions. */
uint64_t gguf_tensor_elements(const gguf_tensor_info *tensor);

/* ---------------------------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------------------------- */

/* A file being built: metadata and tensor infos in memory, tensor data streamed. Opaque. */
typedef struct gguf_writer gguf_writer;

/* A new, empty writer (version 3, default alignment). NULL only when out of memory. */
gguf_writer *gguf_writer_create(void);

/* A writer holding a deep copy of `source`'s version, metadata (in order) and tensor infos (in
 * order, same types and shapes), ready to edit. With gguf_writer_write_from() this is the
 * copy-with-edits API. NULL only when out of memory. */
gguf_writer *gguf_writer_from_file(const gguf_file *source);

/* Free a writer; if a file was begun and not finished, the temporary file is removed. NULL ok. */
void gguf_writer_free(gguf_writer *writer);

/* Set a metadata value, replacing any value of the same key in place (else appending). The value,
 * including strings and nested arrays, is deep-copied. Setting general.alignment also sets the
 * alignment used for the data section (must be a non-zero power of two, stored as UINT32). */
gguf_status gguf_writer_set(gguf_writer *writer, const char *key, const gguf_value *value);
/* Convenience setters built on gguf_writer_set(). */
gguf_status gguf_writer_set_u32(gguf_writer *writer, const char *key, uint32_t value);
gguf_status gguf_writer_set_i32(gguf_writer *writer, const char *key, int32_t value);
gguf_status gguf_writer_set_u64(gguf_writer *writer, const char *key, uint64_t value);
gguf_status gguf_writer_set_f32(gguf_writer *writer, const char *key, float value);
gguf_status gguf_writer_set_bool(gguf_writer *writer, const char *key, bool value);
gguf_status gguf_writer_set_string(gguf_writer *writer, const char *key, const char *value);
/* An array of `count` fixed-size elements copied from the packed array `data`. */
gguf_status gguf_writer_set_array(gguf_writer *writer, const char *key, gguf_value_type elem_type,
                                  uint64_t count, const void *data);
/* An array of `count` NUL-terminated strings. */
gguf_status gguf_writer_set_string_array(gguf_writer *writer, const char *key,
                                         const char *const *strings, uint64_t count);
/* Remove `key`; GGUF_ERR_NOT_FOUND when absent. */
gguf_status gguf_writer_remove(gguf_writer *writer, const char *key);

/* Append a tensor info. Its data offset follows the previous tensor, aligned. Returns
 * GGUF_ERR_DUPLICATE for a name already added, GGUF_ERR_INVALID for a bad type or shape
 * (n_dims 1..4, 0 < ne <= INT64_MAX, ne[0] a multiple of the block size) or a name that is empty
 * or longer than 63 bytes (ggml's limit), GGUF_ERR_OVERFLOW when the element count exceeds
 * INT64_MAX or the file size would not fit 64 bits. `ne` has `n_dims` entries. */
gguf_status gguf_writer_add_tensor(gguf_writer *writer, const char *name, gguf_tensor_type type,
                                   uint32_t n_dims, const uint64_t *ne);
/* Change the type of tensor `name` (offsets of later tensors are recomputed). */
gguf_status gguf_writer_set_tensor_type(gguf_writer *writer, const char *name,
                                        gguf_tensor_type type);
/* Remove tensor `name`. */
gguf_status gguf_writer_remove_tensor(gguf_writer *writer, const char *name);
/* Number of tensors and the info of tensor `index` (data is NULL; offsets as they will be written). */
int64_t gguf_writer_tensor_count(const gguf_writer *writer);
const gguf_tensor_info *gguf_writer_tensor(const gguf_writer *writer, int64_t index);
/* Total bytes the file will have once written. */
uint64_t gguf_writer_file_size(const gguf_writer *writer);

/* Start writing to `path`: creates a temporary file ".<name>.XXXXXX.tmp" in the same directory
 * (given the permissions a new file gets under the umask) and writes the header. Until the write
 * finishes or is abandoned, metadata and tensor infos are frozen (edits return GGUF_ERR_USAGE);
 * afterwards the writer may be edited and written again. Layout: header, pairs, tensor infos,
 * zeros up to the alignment, then each tensor's data followed by zeros up to the alignment (the
 * last one too), the same bytes llama.cpp and gguf-py write. */
gguf_status gguf_writer_begin(gguf_writer *writer, const char *path, gguf_error *err);
/* Path of the temporary file while a write is in progress (for a signal handler to unlink), else
 * NULL. The string stays valid until gguf_writer_finish/free. */
const char *gguf_writer_temp_path(const gguf_writer *writer);
/* Stream the next `size` bytes of tensor data. Data must arrive in tensor order; a tensor may be
 * given in several calls. Alignment padding is inserted automatically between tensors. Returns
 * GGUF_ERR_USAGE when more bytes arrive than the tensors hold (nothing of them is written), or
 * GGUF_ERR_IO; any failure abandons the write as gguf_writer_abort() does. */
gguf_status gguf_writer_write_data(gguf_writer *writer, const void *data, size_t size,
                                   gguf_error *err);
/* Check every tensor's data was written, fsync, and rename the temporary file onto `path`.
 * On any failure the temporary file is removed and `path` is untouched. */
gguf_status gguf_writer_finish(gguf_writer *writer, gguf_error *err);
/* Abandon a write in progress: remove the temporary file. */
void gguf_writer_abort(gguf_writer *writer);

/* Write the whole file to `path` in one call, taking each tensor's data from the tensor of the
 * same name in `source` (which must have the same type and shape, and data in memory). This is how
 * a metadata-only edit of a file is saved without holding the model in memory; `path` may be the
 * source's own path. Every tensor is checked before anything is created: GGUF_ERR_NOT_FOUND for a
 * tensor missing from `source`, GGUF_ERR_INVALID for another type or shape, GGUF_ERR_USAGE when
 * `source` was opened in METADATA mode. */
gguf_status gguf_writer_write_from(gguf_writer *writer, const char *path, const gguf_file *source,
                                   gguf_error *err);

#ifdef __cplusplus
}
#endif

#endif /* GGUF_H */
