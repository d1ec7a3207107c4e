/* gguf_bytes.c - the test-only GGUF byte builder (see gguf_bytes.h). */
#include "gguf_bytes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gb_init(ggtk_bytes *b) { *b = (ggtk_bytes){0}; }

void gb_free(ggtk_bytes *b)
{
    free(b->data);
    *b = (ggtk_bytes){0};
}

size_t gb_pos(const ggtk_bytes *b) { return b->len; }

void gb_raw(ggtk_bytes *b, const void *bytes, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->data = realloc(b->data, cap);
        if (!b->data)
            abort();
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, bytes, n);
    b->len += n;
}

void gb_u8(ggtk_bytes *b, uint8_t v) { gb_raw(b, &v, 1); }

void gb_u32(ggtk_bytes *b, uint32_t v)
{
    unsigned char le[4];
    for (int i = 0; i < 4; i++)
        le[i] = (unsigned char)(v >> (8 * i));
    gb_raw(b, le, 4);
}

void gb_u64(ggtk_bytes *b, uint64_t v)
{
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(v >> (8 * i));
    gb_raw(b, le, 8);
}

void gb_zeros(ggtk_bytes *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gb_u8(b, 0);
}

void gb_str(ggtk_bytes *b, const char *s)
{
    gb_u64(b, strlen(s));
    gb_raw(b, s, strlen(s));
}

void gb_header(ggtk_bytes *b, uint32_t version, uint64_t n_tensors, uint64_t n_kv)
{
    gb_raw(b, "GGUF", 4);
    gb_u32(b, version);
    gb_u64(b, n_tensors);
    gb_u64(b, n_kv);
}

void gb_key(ggtk_bytes *b, const char *key, uint32_t type)
{
    gb_str(b, key);
    gb_u32(b, type);
}

void gb_kv_u32(ggtk_bytes *b, const char *key, uint32_t v)
{
    gb_key(b, key, GGTK_VALUE_UINT32);
    gb_u32(b, v);
}

void gb_kv_str(ggtk_bytes *b, const char *key, const char *v)
{
    gb_key(b, key, GGTK_VALUE_STRING);
    gb_str(b, v);
}

void gb_tensor(ggtk_bytes *b, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type,
               uint64_t offset)
{
    gb_str(b, name);
    gb_u32(b, n_dims);
    for (uint32_t d = 0; d < n_dims; d++)
        gb_u64(b, ne[d]);
    gb_u32(b, type);
    gb_u64(b, offset);
}

void gb_align(ggtk_bytes *b, size_t alignment)
{
    while (b->len % alignment)
        gb_u8(b, 0);
}

bool gb_write(const ggtk_bytes *b, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(b->data, 1, b->len, f) == b->len;
    return fclose(f) == 0 && ok;
}

void gb_minimal(ggtk_bytes *b)
{
    gb_header(b, 3, 1, 0);
    uint64_t ne[1] = {8};
    gb_tensor(b, "t", 1, ne, GGTK_TENSOR_F32, 0);
    gb_align(b, GGTK_DEFAULT_ALIGNMENT);
    gb_zeros(b, 8 * 4);
}
