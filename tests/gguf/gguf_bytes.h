/* gguf_bytes.h - a test-only builder of GGUF bytes, field by field, so tests can craft valid
 * and malformed files without the library's writer. Every call appends little-endian bytes;
 * gb_pos() gives the offset the next field will have (to check error offsets). */
#ifndef GGTK_BYTES_H
#define GGTK_BYTES_H

#include <ggtk/gguf.h>

typedef struct ggtk_bytes {
    unsigned char *data;
    size_t len, cap;
} ggtk_bytes;

/* An empty builder; gb_free() releases it. Allocation failure aborts (tests only). */
void gb_init(ggtk_bytes *b);
void gb_free(ggtk_bytes *b);
size_t gb_pos(const ggtk_bytes *b);

void gb_raw(ggtk_bytes *b, const void *bytes, size_t n);
void gb_u8(ggtk_bytes *b, uint8_t v);
void gb_u32(ggtk_bytes *b, uint32_t v);
void gb_u64(ggtk_bytes *b, uint64_t v);
void gb_zeros(ggtk_bytes *b, size_t n);
/* A GGUF string: uint64 length then the bytes of `s` (without its NUL). */
void gb_str(ggtk_bytes *b, const char *s);
/* Magic "GGUF", version and the two counts. */
void gb_header(ggtk_bytes *b, uint32_t version, uint64_t n_tensors, uint64_t n_kv);
/* Key string and value type code; the caller appends the value. */
void gb_key(ggtk_bytes *b, const char *key, uint32_t type);
void gb_kv_u32(ggtk_bytes *b, const char *key, uint32_t v);
void gb_kv_str(ggtk_bytes *b, const char *key, const char *v);
/* A tensor info with `n_dims` dimensions from `ne`. */
void gb_tensor(ggtk_bytes *b, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type,
               uint64_t offset);
/* Zero padding up to the next multiple of `alignment`. */
void gb_align(ggtk_bytes *b, size_t alignment);

/* Write the bytes to `path`; false on failure. */
bool gb_write(const ggtk_bytes *b, const char *path);

/* A minimal valid file: no kvs, one F32 tensor "t" of 8 elements at offset 0, aligned data. */
void gb_minimal(ggtk_bytes *b);

#endif
