/* gguf.h - read and write GGUF model files (versions 2 and 3).
 *
 * The reader maps a file (or reads it from a stream) and validates every count, length, offset
 * and size it contains before trusting it; tensor data is reached through pointers into the map.
 * The writer builds a header in memory and streams tensor data to a temporary file that is
 * renamed into place only when everything was written.
 *
 * Lifecycle verbs, the same for every kind of object: a file you read is ggtk_open*() and
 * ggtk_close(); an object you build is *_new*() and *_free() (ggtk_writer_new(),
 * ggtk_writer_new_from_file(), ggtk_writer_free()); results a call fills into a caller's struct
 * are released with *_free() (ggtk_diff_free()). Every release function accepts NULL.
 *
 * Errors: see <ggtk/error.h>. Reader failures carry the byte offset of the field at fault and a
 * message naming the file and the field (docs/gguf.md lists every rule); writer failures name the
 * path. Typed getters and writer setters return the status alone.
 *
 * Thread-safety: a ggtk_file is immutable after ggtk_open*() returns and may be read from many
 * threads at once. A ggtk_writer must be used from one thread at a time.
 */
#ifndef GGTK_GGUF_H
#define GGTK_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <ggtk/atomic_file.h>
#include <ggtk/error.h>
#include <ggtk/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "GGUF" read as a little-endian uint32. */
#define GGTK_MAGIC 0x46554747u
/* Alignment of the data section and of each tensor when general.alignment is absent. */
#define GGTK_DEFAULT_ALIGNMENT 32u
/* Largest number of dimensions a tensor may have. */
#define GGTK_MAX_DIMS 4

/* ---------------------------------------------------------------------------------------------
 * Value types of metadata and the table of tensor types
 * ------------------------------------------------------------------------------------------- */

/* Metadata value types; the numbers are the on-disk codes. */
typedef enum ggtk_value_type {
    GGTK_VALUE_UINT8 = 0,
    GGTK_VALUE_INT8 = 1,
    GGTK_VALUE_UINT16 = 2,
    GGTK_VALUE_INT16 = 3,
    GGTK_VALUE_UINT32 = 4,
    GGTK_VALUE_INT32 = 5,
    GGTK_VALUE_FLOAT32 = 6,
    GGTK_VALUE_BOOL = 7,
    GGTK_VALUE_STRING = 8,
    GGTK_VALUE_ARRAY = 9,
    GGTK_VALUE_UINT64 = 10,
    GGTK_VALUE_INT64 = 11,
    GGTK_VALUE_FLOAT64 = 12,
    GGTK_VALUE_TYPE_COUNT
} ggtk_value_type;

/* Lower-case name of a value type ("uint32", "string", ...); "unknown" for a bad code. */
GGTK_API const char *ggtk_value_type_name(ggtk_value_type type);

/* Bytes one element of a fixed-size value type takes on disk; 0 for STRING, ARRAY and bad codes. */
GGTK_API size_t ggtk_value_type_size(ggtk_value_type type);

/* Tensor element types; the numbers are the on-disk codes shared with ggml. Gaps are codes that
 * ggml has retired; ggtk_tensor_type_info() returns NULL for them. */
typedef enum ggtk_tensor_type {
    GGTK_TENSOR_F32 = 0,
    GGTK_TENSOR_F16 = 1,
    GGTK_TENSOR_Q4_0 = 2,
    GGTK_TENSOR_Q4_1 = 3,
    GGTK_TENSOR_Q5_0 = 6,
    GGTK_TENSOR_Q5_1 = 7,
    GGTK_TENSOR_Q8_0 = 8,
    GGTK_TENSOR_Q8_1 = 9,
    GGTK_TENSOR_Q2_K = 10,
    GGTK_TENSOR_Q3_K = 11,
    GGTK_TENSOR_Q4_K = 12,
    GGTK_TENSOR_Q5_K = 13,
    GGTK_TENSOR_Q6_K = 14,
    GGTK_TENSOR_Q8_K = 15,
    GGTK_TENSOR_IQ2_XXS = 16,
    GGTK_TENSOR_IQ2_XS = 17,
    GGTK_TENSOR_IQ3_XXS = 18,
    GGTK_TENSOR_IQ1_S = 19,
    GGTK_TENSOR_IQ4_NL = 20,
    GGTK_TENSOR_IQ3_S = 21,
    GGTK_TENSOR_IQ2_S = 22,
    GGTK_TENSOR_IQ4_XS = 23,
    GGTK_TENSOR_I8 = 24,
    GGTK_TENSOR_I16 = 25,
    GGTK_TENSOR_I32 = 26,
    GGTK_TENSOR_I64 = 27,
    GGTK_TENSOR_F64 = 28,
    GGTK_TENSOR_IQ1_M = 29,
    GGTK_TENSOR_BF16 = 30,
    GGTK_TENSOR_TQ1_0 = 34,
    GGTK_TENSOR_TQ2_0 = 35,
    GGTK_TENSOR_MXFP4 = 39,
    GGTK_TENSOR_NVFP4 = 40,
    GGTK_TENSOR_Q1_0 = 41,
    GGTK_TENSOR_Q2_0 = 42,
    GGTK_TENSOR_TYPE_COUNT = 43 /* one past the largest code; not a type */
} ggtk_tensor_type;

/* One row of the tensor type table: the only place block geometry is defined. */
typedef struct ggtk_tensor_type_info {
    ggtk_tensor_type type;
    const char *name;     /* canonical lower-case name as ggml prints it: "q4_0", "q6_K", "bf16" */
    uint32_t block_size;  /* elements per block (1 for plain types) */
    uint32_t block_bytes; /* bytes per block */
    bool quantized;       /* true for block-quantized types */
} ggtk_tensor_type_info;

/* The row for `type`, or NULL when the code is unknown or retired. Static storage. */
GGTK_API const ggtk_tensor_type_info *ggtk_tensor_type_info_get(ggtk_tensor_type type);

/* The canonical name of `type` ("q4_0"), or "unknown" for a code that is unknown or retired.
 * Static storage, never NULL. */
GGTK_API const char *ggtk_tensor_type_name(ggtk_tensor_type type);

/* The type whose name equals `name` ignoring case ("Q8_0", "q8_0"), or -1 when none does. */
GGTK_API int ggtk_tensor_type_from_name(const char *name);

/* Bytes needed by `n_elements` elements of `type`. Returns false (and leaves *bytes alone) when
 * the type is unknown, n_elements is not a multiple of the block size, or the size overflows. */
GGTK_API bool ggtk_tensor_type_bytes(ggtk_tensor_type type, uint64_t n_elements, uint64_t *bytes);

/* ---------------------------------------------------------------------------------------------
 * Metadata values
 * ------------------------------------------------------------------------------------------- */

/* A string as stored in the file: `len` bytes, plus a terminating NUL that libgguf adds so that
 * `data` can be used as a C string (the bytes themselves may contain NULs). */
typedef struct ggtk_string {
    uint64_t len;
    const char *data;
} ggtk_string;

/* An array value. `data` points to `count` elements laid out by element type:
 *  - fixed-size types: a packed little-endian array (bool as one byte 0/1),
 *  - GGTK_VALUE_STRING: an array of ggtk_string,
 *  - GGTK_VALUE_ARRAY: an array of ggtk_value, each itself of type ARRAY (nested arrays). */
typedef struct ggtk_array {
    ggtk_value_type elem_type;
    uint64_t count;
    const void *data;
} ggtk_array;

/* A metadata value of any type. Which union member is valid follows `type`. */
typedef struct ggtk_value {
    ggtk_value_type type;
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
        ggtk_string str;
        ggtk_array arr;
    } v;
} ggtk_value;

/* ---------------------------------------------------------------------------------------------
 * Text from a file, made safe to print
 *
 * Keys, tensor names and strings come from the file and may hold any bytes. Both functions below
 * write printable UTF-8 only: a backslash becomes \\, newline, carriage return and tab become
 * \n, \r and \t, and every other C0 control, DEL, a C1 control (U+0080..U+009F) and each byte
 * that is not part of valid UTF-8 become \xNN (two lower-case hex digits); valid printable UTF-8
 * passes through unchanged. The escaping is one-to-one, so escaped names compare like the names.
 * Both follow snprintf(): they write at most `size` bytes including a NUL (nothing when size is
 * 0, buf may then be NULL) and return the length the whole text has, so a result >= size means
 * the text was cut; a cut falls between escapes and characters, never inside one.
 * ------------------------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence starting at `s` (at most `n` > 0 bytes), or 0 when it is
 * invalid (overlong forms, surrogates and code points past U+10FFFF included): the test the
 * escaping applies, for programs that must pass valid UTF-8 on (JSON). */
GGTK_API size_t ggtk_utf8_sequence(const unsigned char *s, size_t n);

/* `len` bytes at `text` escaped as above into `buf`. */
GGTK_API size_t ggtk_escape(const char *text, size_t len, char *buf, size_t size);

/* ggtk_value_format() shows this many array elements and string bytes in a short preview. */
#define GGTK_FORMAT_PREVIEW_ELEMENTS 6
#define GGTK_FORMAT_PREVIEW_BYTES 60
/* A limit that shows everything. */
#define GGTK_FORMAT_ALL UINT64_MAX

/* `value` as one line of text into `buf`: integers in decimal, floats in the fewest digits that
 * read back to the same value ("nan", "inf", "-inf" for non-finite ones), bools as true/false,
 * strings between double quotes with '"' escaped too, arrays as "[a, b, ...]". An array shows its
 * first `max_elements` elements, then "... (N elements)"; a string shows its first
 * `max_string_bytes` bytes (cut before a character), then "... (N bytes)" after the quote. Both
 * limits apply at every level of nested arrays; GGTK_FORMAT_ALL shows everything. */
GGTK_API size_t ggtk_value_format(const ggtk_value *value, char *buf, size_t size,
                                  uint64_t max_elements, uint64_t max_string_bytes);

/* ---------------------------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------------------------- */

/* An opened, fully validated GGUF file. Opaque; owns its map or buffers. */
typedef struct ggtk_file ggtk_file;

/* How ggtk_open() reaches tensor data. */
typedef enum ggtk_open_mode {
    GGTK_OPEN_MMAP = 0,     /* map the file read-only; tensor data points into the map (default) */
    GGTK_OPEN_READ = 1,     /* read the whole data section into one heap buffer (no mmap) */
    GGTK_OPEN_METADATA = 2, /* parse the header only; tensor `data` pointers are NULL */
} ggtk_open_mode;

/* Open and validate the GGUF file at `path`. Metadata parsing reads only the header, so its cost
 * does not depend on the size of the data section. Returns NULL on failure and fills *err (which
 * may be NULL when the caller does not want details). Close with ggtk_close(). */
GGTK_API ggtk_file *ggtk_open(const char *path, ggtk_open_mode mode, ggtk_error *err);

/* Like ggtk_open() but reads sequentially from `stream` (a pipe works), which the caller keeps
 * owning. `name` is used in error messages. `mode` must be GGTK_OPEN_READ (the data section is read
 * into memory) or GGTK_OPEN_METADATA (the stream is left just past the header padding, i.e. at the
 * first byte of the data section, so the caller may stream tensor data itself). The file size
 * checks use the stream's size when it is seekable; for a pipe in METADATA mode they are skipped. */
GGTK_API ggtk_file *ggtk_open_stream(FILE *stream, const char *name, ggtk_open_mode mode, ggtk_error *err);

/* Parse and validate a GGUF image held in memory (`size` bytes at `data`) without copying it:
 * tensor `data` pointers point into the caller's buffer, which must stay unchanged and alive
 * until ggtk_close(). Metadata strings and arrays are copied. `name` is used in error messages
 * (NULL: "(memory)"). Returns NULL on failure and fills *err (may be NULL). */
GGTK_API ggtk_file *ggtk_open_memory(const void *data, size_t size, const char *name, ggtk_error *err);

/* Release everything the file owns, including the map. NULL is allowed. */
GGTK_API void ggtk_close(ggtk_file *file);

/* The path or name the file was opened with. */
GGTK_API const char *ggtk_path(const ggtk_file *file);
/* Format version (2 or 3). */
GGTK_API uint32_t ggtk_version(const ggtk_file *file);
/* general.alignment, or GGTK_DEFAULT_ALIGNMENT when absent. */
GGTK_API uint32_t ggtk_alignment(const ggtk_file *file);
/* Byte offset of the data section from the start of the file. */
GGTK_API uint64_t ggtk_data_offset(const ggtk_file *file);
/* Bytes in the data section as the file holds it (file size minus data offset). */
GGTK_API uint64_t ggtk_data_size(const ggtk_file *file);
/* Total file size in bytes (0 for an unseekable stream opened in METADATA mode). */
GGTK_API uint64_t ggtk_file_size(const ggtk_file *file);
/* Start of the data section in memory, or NULL in METADATA mode. */
GGTK_API const void *ggtk_data(const ggtk_file *file);
/* Tell the system that the bytes [data, data + size) of a mapped file (GGTK_OPEN_MMAP) will not
 * be read again soon: the whole pages inside the range leave the process's resident memory
 * (MADV_DONTNEED; the map is private and never written, so a page touched again is read back
 * from the file with the same bytes). A reader streaming through tensor data calls it after each
 * window so that its memory stays bounded on a model larger than RAM. A range outside the map, or
 * a file not mapped, is left alone. */
GGTK_API void ggtk_release_data(const ggtk_file *file, const void *data, uint64_t size);

/* Number of metadata key/value pairs. */
GGTK_API int64_t ggtk_kv_count(const ggtk_file *file);
/* Index of `key`, or -1 when absent. */
GGTK_API int64_t ggtk_find_key(const ggtk_file *file, const char *key);
/* Key of pair `index` (0 <= index < ggtk_kv_count()), NUL-terminated, owned by the file. */
GGTK_API const char *ggtk_kv_key(const ggtk_file *file, int64_t index);
/* Value of pair `index`, owned by the file. */
GGTK_API const ggtk_value *ggtk_kv_value(const ggtk_file *file, int64_t index);
/* Byte offset in the file where pair `index` starts (its key length field). */
GGTK_API uint64_t ggtk_kv_offset(const ggtk_file *file, int64_t index);
/* Value of `key`, or NULL when absent. */
GGTK_API const ggtk_value *ggtk_get(const ggtk_file *file, const char *key);

/* Typed getters. Each returns GGTK_OK and stores the value, GGTK_ERR_NOT_FOUND when the key is
 * absent, or GGTK_ERR_TYPE when the value cannot be represented exactly in the requested type
 * (any integer type converts to another if the value fits; float getters accept FLOAT32/FLOAT64
 * and integers). On failure *out is left unchanged, so it may hold a default beforehand. The
 * string getter returns a pointer owned by the file. */
GGTK_API ggtk_status ggtk_get_uint(const ggtk_file *file, const char *key, uint64_t *out);
GGTK_API ggtk_status ggtk_get_int(const ggtk_file *file, const char *key, int64_t *out);
GGTK_API ggtk_status ggtk_get_float(const ggtk_file *file, const char *key, double *out);
GGTK_API ggtk_status ggtk_get_bool(const ggtk_file *file, const char *key, bool *out);
GGTK_API ggtk_status ggtk_get_string(const ggtk_file *file, const char *key, const char **out);
/* The array under `key`; GGTK_ERR_TYPE when the value is not an array. */
GGTK_API ggtk_status ggtk_get_array(const ggtk_file *file, const char *key, const ggtk_array **out);

/* One entry of the tensor-info table. All fields are validated by ggtk_open(). */
typedef struct ggtk_tensor_info {
    const char *name;              /* NUL-terminated, owned by the file */
    uint32_t n_dims;               /* 1..GGTK_MAX_DIMS */
    uint64_t ne[GGTK_MAX_DIMS];    /* elements per dimension, ne[0] fastest; unused dims are 1 */
    ggtk_tensor_type type;
    uint64_t offset;               /* offset of the data from the start of the data section */
    uint64_t size;                 /* bytes of data */
    uint64_t info_offset;          /* byte offset of this entry in the file */
    const void *data;              /* the data in memory, NULL in METADATA mode */
} ggtk_tensor_info;

/* Number of tensors. */
GGTK_API int64_t ggtk_tensor_count(const ggtk_file *file);
/* Tensor `index` in file order (0 <= index < ggtk_tensor_count()), owned by the file. */
GGTK_API const ggtk_tensor_info *ggtk_tensor(const ggtk_file *file, int64_t index);
/* Index of the tensor called `name`, or -1 when absent. */
GGTK_API int64_t ggtk_find_tensor(const ggtk_file *file, const char *name);
/* Product of a tensor's dimensions. */
GGTK_API uint64_t ggtk_tensor_elements(const ggtk_tensor_info *tensor);

/* ---------------------------------------------------------------------------------------------
 * Split models
 *
 * A model too big for one file is published as parts "PREFIX-00001-of-00003.gguf", ... (the
 * naming and keys of llama.cpp's llama-gguf-split). Every part is a complete GGUF file holding
 * some of the tensors and three keys: split.no (uint16, the part's index from 0), split.count
 * (uint16, the number of parts) and split.tensors.count (int32, the tensors of all parts). The
 * first part holds the model's metadata; llama-gguf-split gives the others the split keys only.
 * ------------------------------------------------------------------------------------------- */

#define GGTK_SPLIT_KEY_NO "split.no"
#define GGTK_SPLIT_KEY_COUNT "split.count"
#define GGTK_SPLIT_KEY_TENSORS_COUNT "split.tensors.count"
/* True when `key` is one of the three split keys above. */
GGTK_API bool ggtk_split_is_key(const char *key);
/* Most parts a set can have (split.count is a uint16). */
#define GGTK_SPLIT_MAX_PARTS 65535

/* A model opened from one file or from all parts of a split set, each part mapped (or read)
 * separately. Opaque; owns its parts. Immutable once opened: safe to read from many threads. */
typedef struct ggtk_split ggtk_split;

/* Open the model that `path` belongs to. A file without split.count, or with split.count 0 (what
 * llama-gguf-split --merge writes) or 1, is a model of one part. Otherwise `path` may be any part:
 * its name must end in "-NNNNN-of-CCCCC.gguf" as its split.no and split.count say, and the other
 * parts are found beside it by that naming. Each part is opened with ggtk_open(path, mode) and
 * every part is checked: split.no and split.count are uint16, split.tensors.count an int32 (when
 * present in a part, the same as in the first), split.no matches the part's place, split.count
 * is the same in every part, a part that has general.architecture has the first part's, no tensor
 * name appears twice in the set and the tensors of all parts add up to split.tensors.count.
 * Returns NULL on failure with *err (may be NULL) holding one line that names the file and the
 * field at fault (a missing part: that part's path and "part 2 of 3"); the offset is the byte of
 * the field within that file. Close with ggtk_split_close(). */
GGTK_API ggtk_split *ggtk_split_open(const char *path, ggtk_open_mode mode, ggtk_error *err);

/* Close every part and free the set. NULL is allowed. */
GGTK_API void ggtk_split_close(ggtk_split *split);

/* Number of parts (1 for a file that is not split). */
GGTK_API int ggtk_split_part_count(const ggtk_split *split);

/* Part `part` (0 <= part < ggtk_split_part_count()), owned by the set. Part 0 is the model's
 * metadata: read keys through ggtk_split_part(split, 0). */
GGTK_API const ggtk_file *ggtk_split_part(const ggtk_split *split, int part);

/* Number of tensors of all parts. */
GGTK_API int64_t ggtk_split_tensor_count(const ggtk_split *split);

/* Tensor `index` across the parts (0 <= index < ggtk_split_tensor_count()), in part order then
 * file order, which is the order of the merged file. Its `data` points into its own part's map
 * and `offset`/`info_offset` are relative to that part. When `part` is not NULL it receives the
 * index of the part holding the tensor. NULL for an index out of range. */
GGTK_API const ggtk_tensor_info *ggtk_split_tensor(const ggtk_split *split, int64_t index, int *part);

/* Index (for ggtk_split_tensor()) of the tensor called `name`, or -1 when absent. */
GGTK_API int64_t ggtk_split_find_tensor(const ggtk_split *split, const char *name);

/* The path of part `part` (from 0) of `count` parts: "<prefix>-%05d-of-%05d.gguf" with part + 1,
 * as llama-gguf-split names them. snprintf() semantics: writes at most `size` bytes including the
 * NUL and returns the length of the whole path. */
GGTK_API size_t ggtk_split_part_path(char *buf, size_t size, const char *prefix, int part, int count);

/* Length of the prefix of `path` when `path` is named as part `part` of `count` (ends in
 * "-%05d-of-%05d.gguf" with part + 1, after at least one byte of prefix), else 0. */
GGTK_API size_t ggtk_split_prefix_length(const char *path, int part, int count);

/* ---------------------------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------------------------- */

/* A file being built: metadata and tensor infos in memory, tensor data streamed. Opaque. */
typedef struct ggtk_writer ggtk_writer;

/* A new, empty writer (version 3, default alignment). NULL only when out of memory. */
GGTK_API ggtk_writer *ggtk_writer_new(void);

/* A writer holding a deep copy of `source`'s version, metadata (in order) and tensor infos (in
 * order, same types and shapes), ready to edit. With ggtk_writer_write_from() this is the
 * copy-with-edits API. NULL only when out of memory. */
GGTK_API ggtk_writer *ggtk_writer_new_from_file(const ggtk_file *source);

/* Free a writer; if a file was begun and not finished, the temporary file is removed. NULL ok. */
GGTK_API void ggtk_writer_free(ggtk_writer *writer);

/* Set a metadata value, replacing any value of the same key in place (else appending). The value,
 * including strings and nested arrays, is deep-copied. Setting general.alignment also sets the
 * alignment used for the data section (must be a non-zero power of two, stored as UINT32). */
GGTK_API ggtk_status ggtk_writer_set(ggtk_writer *writer, const char *key, const ggtk_value *value);
/* Typed setters built on ggtk_writer_set(), one per value type; same results. */
GGTK_API ggtk_status ggtk_writer_set_u8(ggtk_writer *writer, const char *key, uint8_t value);
GGTK_API ggtk_status ggtk_writer_set_i8(ggtk_writer *writer, const char *key, int8_t value);
GGTK_API ggtk_status ggtk_writer_set_u16(ggtk_writer *writer, const char *key, uint16_t value);
GGTK_API ggtk_status ggtk_writer_set_i16(ggtk_writer *writer, const char *key, int16_t value);
GGTK_API ggtk_status ggtk_writer_set_u32(ggtk_writer *writer, const char *key, uint32_t value);
GGTK_API ggtk_status ggtk_writer_set_i32(ggtk_writer *writer, const char *key, int32_t value);
GGTK_API ggtk_status ggtk_writer_set_u64(ggtk_writer *writer, const char *key, uint64_t value);
GGTK_API ggtk_status ggtk_writer_set_i64(ggtk_writer *writer, const char *key, int64_t value);
GGTK_API ggtk_status ggtk_writer_set_f32(ggtk_writer *writer, const char *key, float value);
GGTK_API ggtk_status ggtk_writer_set_f64(ggtk_writer *writer, const char *key, double value);
GGTK_API ggtk_status ggtk_writer_set_bool(ggtk_writer *writer, const char *key, bool value);
/* A string value: the bytes of `value` up to its NUL. */
GGTK_API ggtk_status ggtk_writer_set_string(ggtk_writer *writer, const char *key, const char *value);
/* An array of `count` fixed-size elements (any type but STRING and ARRAY: GGTK_ERR_USAGE) copied
 * from the packed array `data` (bool as one byte 0/1). Nested arrays go through ggtk_writer_set(). */
GGTK_API ggtk_status ggtk_writer_set_array(ggtk_writer *writer, const char *key, ggtk_value_type elem_type,
                                  uint64_t count, const void *data);
/* An array of `count` NUL-terminated strings. */
GGTK_API ggtk_status ggtk_writer_set_string_array(ggtk_writer *writer, const char *key,
                                         const char *const *strings, uint64_t count);
/* Remove `key`; GGTK_ERR_NOT_FOUND when absent. */
GGTK_API ggtk_status ggtk_writer_remove(ggtk_writer *writer, const char *key);

/* Append a tensor info. Its data offset follows the previous tensor, aligned. Returns
 * GGTK_ERR_DUPLICATE for a name already added, GGTK_ERR_INVALID for a bad type or shape
 * (n_dims 1..4, 0 < ne <= INT64_MAX, ne[0] a multiple of the block size) or a name that is empty
 * or longer than 63 bytes (ggml's limit), GGTK_ERR_OVERFLOW when the element count exceeds
 * INT64_MAX or the file size would not fit 64 bits. `ne` has `n_dims` entries. */
GGTK_API ggtk_status ggtk_writer_add_tensor(ggtk_writer *writer, const char *name, ggtk_tensor_type type,
                                   uint32_t n_dims, const uint64_t *ne);
/* Change the type of tensor `name` (offsets of later tensors are recomputed). */
GGTK_API ggtk_status ggtk_writer_set_tensor_type(ggtk_writer *writer, const char *name,
                                        ggtk_tensor_type type);
/* Remove tensor `name`. */
GGTK_API ggtk_status ggtk_writer_remove_tensor(ggtk_writer *writer, const char *name);
/* Number of tensors and the info of tensor `index` (data is NULL; offsets as they will be written). */
GGTK_API int64_t ggtk_writer_tensor_count(const ggtk_writer *writer);
GGTK_API const ggtk_tensor_info *ggtk_writer_tensor(const ggtk_writer *writer, int64_t index);
/* Total bytes the file will have once written. */
GGTK_API uint64_t ggtk_writer_file_size(const ggtk_writer *writer);

/* Start writing to `path`: creates a temporary file ".<name>.XXXXXX.tmp" in the same directory
 * (given the permissions a new file gets under the umask; see atomic_file.h) and writes the
 * header. Until the write finishes or is abandoned, metadata and tensor infos are frozen (edits
 * return GGTK_ERR_USAGE); afterwards the writer may be edited and written again. Layout: header,
 * pairs, tensor infos, zeros up to the alignment, then each tensor's data followed by zeros up to
 * the alignment (the last one too), the same bytes llama.cpp and gguf-py write. GGTK_ERR_PATH when
 * `path` exists and is not a regular file (the final rename would replace a FIFO or a device
 * node). */
GGTK_API ggtk_status ggtk_writer_begin(ggtk_writer *writer, const char *path, ggtk_error *err);
/* Path of the temporary file while a write is in progress (for a signal handler to unlink), else
 * NULL. The string stays valid until ggtk_writer_finish/free. */
GGTK_API const char *ggtk_writer_temp_path(const ggtk_writer *writer);
/* Stream the next `size` bytes of tensor data. Data must arrive in tensor order; a tensor may be
 * given in several calls. Alignment padding is inserted automatically between tensors. Returns
 * GGTK_ERR_USAGE when more bytes arrive than the tensors hold (nothing of them is written), or
 * GGTK_ERR_IO; any failure abandons the write as ggtk_writer_abort() does. */
GGTK_API ggtk_status ggtk_writer_write_data(ggtk_writer *writer, const void *data, size_t size,
                                   ggtk_error *err);
/* Check every tensor's data was written, fsync, and rename the temporary file onto `path`.
 * On any failure the temporary file is removed and `path` is untouched. */
GGTK_API ggtk_status ggtk_writer_finish(ggtk_writer *writer, ggtk_error *err);
/* ggtk_writer_finish() without the rename: checks every tensor's data was written, flushes, and
 * hands the temporary file over to the caller, who renames it onto the path given to
 * ggtk_writer_begin() with ggtk_atomic_file_commit() or removes it with ggtk_atomic_file_close().
 * This lets several files be written first and renamed only once all were (the parts of a split
 * model). The writer is then free for another write. NULL on failure, with the temporary file
 * removed and *err (may be NULL) set. */
GGTK_API ggtk_atomic_file *ggtk_writer_finish_uncommitted(ggtk_writer *writer, ggtk_error *err);
/* How ggtk_writer_split() cuts a file into parts: llama-gguf-split's options. */
typedef struct ggtk_split_options {
    int max_tensors;           /* at most this many tensors per part (used when max_bytes is 0) */
    uint64_t max_bytes;        /* at most this many bytes of tensor data, each tensor padded to
                                * the alignment, per part; 0 to cut by max_tensors */
    bool no_tensor_first_part; /* the first part holds the metadata only */
} ggtk_split_options;

/* The parts llama-gguf-split writes for the file `whole` describes (its metadata and tensor infos;
 * no write in progress): each part a new writer, version 3; the first with `whole`'s metadata in
 * order (less any split.* key), every part ending with split.no, split.tensors.count and
 * split.count; the tensors in `whole`'s order with ggml's dimension count (trailing dimensions of
 * 1 dropped), a part starting at every max_tensors-th tensor, or where the next tensor would take
 * the part past max_bytes. Name part p with ggtk_split_part_path(); write the tensor data in
 * `whole`'s order across the parts. On success *parts holds *n_parts writers (release them with
 * ggtk_writer_split_free()). GGTK_ERR_USAGE, with a message, for a part that would hold no tensor
 * (a tensor larger than max_bytes), bad options or more than GGTK_SPLIT_MAX_PARTS parts;
 * GGTK_ERR_OVERFLOW, GGTK_ERR_NOMEM. */
GGTK_API ggtk_status ggtk_writer_split(const ggtk_writer *whole, const ggtk_split_options *options,
                                       ggtk_writer ***parts, int *n_parts, ggtk_error *err);
/* A new writer describing the model of `set` as one file: the first part's metadata in order,
 * less the keys for which `skip_key` (NULL: none) returns true, and every tensor of every part in
 * the merged order with ggml's dimension count (trailing dimensions of 1 dropped). Pass
 * ggtk_split_is_key to leave out all split keys. NULL with *err set when memory runs out
 * (GGTK_ERR_NOMEM) or a key or tensor cannot be added (the writer's status). */
GGTK_API ggtk_writer *ggtk_writer_new_from_split(const ggtk_split *set,
                                                 bool (*skip_key)(const char *key),
                                                 ggtk_error *err);
/* Free the writers and the array ggtk_writer_split() made. NULL is allowed. */
GGTK_API void ggtk_writer_split_free(ggtk_writer **parts, int n_parts);

/* Abandon a write in progress: remove the temporary file. */
GGTK_API void ggtk_writer_abort(ggtk_writer *writer);

/* Write the whole file to `path` in one call, taking each tensor's data from the tensor of the
 * same name in `source` (which must have the same type and shape, and data in memory). This is how
 * a metadata-only edit of a file is saved without holding the model in memory (a mapped source's
 * pages are handed back every 16 MB, see ggtk_release_data()); `path` may be the
 * source's own path. Every tensor is checked before anything is created: GGTK_ERR_NOT_FOUND for a
 * tensor missing from `source`, GGTK_ERR_INVALID for another type or shape, GGTK_ERR_USAGE when
 * `source` was opened in METADATA mode. */
GGTK_API ggtk_status ggtk_writer_write_from(ggtk_writer *writer, const char *path, const ggtk_file *source,
                                   ggtk_error *err);

/* The data part of ggtk_writer_write_from() for a caller that begins and finishes the write
 * itself (a tool that must know the temporary file's path before any data is written, to remove
 * it on a signal): after ggtk_writer_begin() and before any ggtk_writer_write_data(), stream every
 * tensor's data from the tensor of the same name in `source`, checked as ggtk_writer_write_from()
 * checks them before a byte is written. Then call ggtk_writer_finish(). On any failure the write
 * is abandoned as ggtk_writer_abort() does (GGTK_ERR_USAGE also when no write was begun or data
 * was already written). */
GGTK_API ggtk_status ggtk_writer_write_data_from(ggtk_writer *writer, const ggtk_file *source,
                                                 ggtk_error *err);

#ifdef __cplusplus
}
#endif

#endif /* GGTK_GGUF_H */
