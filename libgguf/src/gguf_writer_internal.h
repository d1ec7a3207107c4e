/* gguf_writer_internal.h - the writer's state and the interfaces between its modules:
 * value copies and serialization, the metadata store, the tensor table and its layout, buffered
 * file output, and the temporary-file lifecycle. Private to libgguf. */
#ifndef GGTK_WRITER_INTERNAL_H
#define GGTK_WRITER_INTERNAL_H

#include <ggtk/atomic_file.h>
#include <ggtk/gguf.h>

/* Longest tensor name, in bytes, that ggml-based readers accept (their name buffer holds 64 bytes
 * including the NUL). */
#define GGTK_WRITER_MAX_TENSOR_NAME 63
/* Bytes of the fixed header: magic, version, tensor count, key/value count. */
#define GGTK_WRITER_FIXED_HEADER_BYTES 24u

/* One metadata pair, owned by the writer. */
typedef struct writer_kv {
    char *key;      /* NUL-terminated */
    ggtk_value value; /* deep copy; see writer_value_copy() */
    uint64_t bytes; /* serialized size: key string + type code + value payload */
} writer_kv;

/* Buffered little-endian output to a file descriptor. After the first failed write every later
 * call is a no-op and `error` keeps that failure's errno, so serializers need not check each
 * field and the caller checks once. */
typedef struct writer_output {
    int fd;
    unsigned char *buffer;
    size_t used;
    size_t capacity;
    uint64_t written; /* bytes accepted so far, buffered or not */
    int error;        /* errno of the first failure, 0 while all is well */
} writer_output;

/* A write in progress (between ggtk_writer_begin and finish/abort). */
typedef struct writer_stream {
    bool active;
    ggtk_atomic_file *file; /* the temporary file beside the target */
    writer_output out;      /* buffered output to its descriptor */
    int64_t tensor;         /* index of the tensor whose data comes next */
    uint64_t tensor_done;   /* bytes of that tensor already written */
    uint64_t data_left;     /* bytes of tensor data (without padding) still expected */
} writer_stream;

struct ggtk_writer {
    uint32_t version;
    uint32_t alignment; /* general.alignment, or the default */

    writer_kv *kvs;
    int64_t n_kvs;
    int64_t kv_capacity;
    uint64_t kv_bytes; /* sum of kvs[].bytes */

    ggtk_tensor_info *tensors; /* names owned; data always NULL */
    int64_t n_tensors;
    int64_t tensor_capacity;
    uint64_t data_offset; /* where the data section starts in the file */
    uint64_t data_bytes;  /* size of the data section including every tensor's padding */

    writer_stream stream;
};

/* ---- values (gguf_writer_value.c) ---- */

/* Check `value` (type codes, nested element types, bool bytes, sizes) and deep-copy it into
 * *copy. On failure nothing is allocated and *copy is zeroed. */
ggtk_status writer_value_copy(ggtk_value *copy, const ggtk_value *value);
/* Free what writer_value_copy() allocated for `value` (not `value` itself). */
void writer_value_free(ggtk_value *value);
/* On-disk size of the value's payload (without its type code); false on overflow. */
bool writer_value_payload_bytes(const ggtk_value *value, uint64_t *bytes);
/* Append the value's type code and payload to `out`. */
void writer_value_serialize(writer_output *out, const ggtk_value *value);
/* Append a GGUF string (uint64 length, then the bytes). */
void writer_string_serialize(writer_output *out, const char *data, uint64_t len);

/* ---- tensor table (gguf_writer_tensors.c) ---- */

/* Recompute info offsets and data offsets of tensors [first, n_tensors), the data section's
 * start and size. Returns GGTK_ERR_OVERFLOW (changing nothing) when a size does not fit. */
ggtk_status writer_layout(ggtk_writer *writer, int64_t first);
/* Index of tensor `name` or -1. */
int64_t writer_find_tensor(const ggtk_writer *writer, const char *name);
/* Free the tensor names and the table. */
void writer_tensors_free(ggtk_writer *writer);

/* ---- metadata (gguf_writer_metadata.c) ---- */

/* Free every pair and the table. */
void writer_kvs_free(ggtk_writer *writer);

/* ---- buffered output (gguf_writer_output.c) ---- */

/* Start buffered output to `fd` (which stays owned by the caller). False when out of memory. */
bool writer_output_open(writer_output *out, int fd);
void writer_output_bytes(writer_output *out, const void *data, size_t size);
void writer_output_zeros(writer_output *out, uint64_t count);
/* The `size` (1 to 8) low bytes of `bits`, least significant first. */
void writer_output_le(writer_output *out, uint64_t bits, size_t size);
void writer_output_u32(writer_output *out, uint32_t value);
void writer_output_u64(writer_output *out, uint64_t value);
/* Write out the buffer; false (with out->error set) when any write failed. */
bool writer_output_flush(writer_output *out);
/* Free the buffer. */
void writer_output_close(writer_output *out);

/* ---- header (gguf_writer_header.c) ---- */

/* Append the whole header: fixed fields, pairs, tensor infos and the padding up to the data
 * section. */
void writer_header_serialize(const ggtk_writer *writer, writer_output *out);

/* Bytes of padding that bring `offset` up to a multiple of `alignment` (a power of two). */
static inline uint64_t writer_padding(uint64_t offset, uint32_t alignment)
{
    return (alignment - offset % alignment) % alignment;
}

#endif
