/* imatrix_fixture.c - see imatrix_fixture.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imatrix_fixture.h"

void bytes_put(bytes *b, const void *data, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->data = realloc(b->data, cap);
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, n);
    b->len += n;
}

void bytes_u32(bytes *b, uint32_t v) { bytes_put(b, &v, sizeof v); }
void bytes_i32(bytes *b, int32_t v) { bytes_put(b, &v, sizeof v); }
void bytes_u64(bytes *b, uint64_t v) { bytes_put(b, &v, sizeof v); }
void bytes_f32(bytes *b, float v) { bytes_put(b, &v, sizeof v); }

void bytes_gguf_string(bytes *b, const char *s)
{
    bytes_u64(b, strlen(s));
    bytes_put(b, s, strlen(s));
}

void bytes_pad(bytes *b, size_t align)
{
    static const unsigned char zero[64];
    while (b->len % align)
        bytes_put(b, zero, 1);
}

void bytes_free(bytes *b)
{
    free(b->data);
    *b = (bytes){0};
}

bool fixture_write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

unsigned char *fixture_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(size > 0 ? (size_t)size : 1);
    if (data && fread(data, 1, (size_t)size, f) != (size_t)size) {
        free(data);
        data = NULL;
    }
    fclose(f);
    *n = (size_t)size;
    return data;
}

bool fixture_same_file(const char *a, const char *b)
{
    size_t na, nb;
    unsigned char *da = fixture_read_file(a, &na), *db = fixture_read_file(b, &nb);
    bool same = da && db && na == nb && memcmp(da, db, na) == 0;
    free(da);
    free(db);
    return same;
}

inf_imatrix *fixture_small_imatrix(void)
{
    inf_imatrix *m = inf_imatrix_new(4, "data.txt", NULL);
    if (!m)
        return NULL;
    const float dense[2][3] = {{1, 2, 3}, {0.5f, 0, -1}};
    const float expert[2] = {2, -3};
    bool ok = true;
    for (int r = 0; r < 8 && ok; r++)
        ok = inf_imatrix_accumulate(m, "blk.0.attn_q.weight", 1, 0, dense[r / 4], 3, 1, 3,
                                    NULL) == GGTK_OK;
    for (int r = 0; r < 5 && ok; r++)
        ok = inf_imatrix_accumulate(m, "blk.1.ffn_up_exps.weight", 2, 0, expert, 2, 1, 2,
                                    NULL) == GGTK_OK;
    if (!ok) {
        inf_imatrix_free(m);
        return NULL;
    }
    return m;
}
