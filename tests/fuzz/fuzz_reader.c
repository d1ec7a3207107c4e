/* fuzz_reader.c - libFuzzer harness of the GGUF reader. Each input is opened from memory and
 * from a stream of unknown size (the pipe path); both must agree on accepting it, an accepted
 * file is walked completely (every value, every string's terminator, every tensor's first and
 * last data byte, every key and value formatted and hashed, which must print no control byte),
 * and a rejected one must carry a message. Any disagreement aborts. */
#include <ggtk/gguf.h>
#include <ggtk/gguf_util.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t sink;

static void walk_array(const ggtk_array *arr, int depth)
{
    if (depth > 64)
        abort();
    for (uint64_t i = 0; i < arr->count; i++) {
        if (arr->elem_type == GGTK_VALUE_STRING) {
            const ggtk_string *s = &((const ggtk_string *)arr->data)[i];
            if (s->data[s->len] != '\0')
                abort();
            sink += s->len;
        } else if (arr->elem_type == GGTK_VALUE_ARRAY) {
            const ggtk_value *v = &((const ggtk_value *)arr->data)[i];
            if (v->type != GGTK_VALUE_ARRAY)
                abort();
            walk_array(&v->v.arr, depth + 1);
        } else {
            sink += ((const unsigned char *)arr->data)[i * ggtk_value_type_size(arr->elem_type)];
        }
    }
}

/* Abort when `text` holds a byte that a terminal could obey. */
static void check_printable(const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if (*p < 0x20 || *p == 0x7F)
            abort();
}

/* Pair `i` escaped, formatted (a short preview) and hashed. */
static void render_pair(const ggtk_file *f, int64_t i)
{
    char text[256];
    const char *key = ggtk_kv_key(f, i);
    sink += ggtk_escape(key, strlen(key), text, sizeof text);
    check_printable(text);
    sink += ggtk_value_format(ggtk_kv_value(f, i), text, sizeof text, 4, 32);
    check_printable(text);
    uint64_t hash;
    if (ggtk_hash_kv(f, i, &hash, NULL) != GGTK_OK)
        abort();
    sink += hash;
}

static void walk_file(const ggtk_file *f)
{
    for (int64_t i = 0; i < ggtk_kv_count(f); i++) {
        const char *key = ggtk_kv_key(f, i);
        const ggtk_value *v = ggtk_kv_value(f, i);
        if (!key[0] || ggtk_find_key(f, key) != i)
            abort();
        uint64_t u;
        int64_t s;
        double d;
        sink += ggtk_get_uint(f, key, &u) + ggtk_get_int(f, key, &s) + ggtk_get_float(f, key, &d);
        if (v->type == GGTK_VALUE_STRING && v->v.str.data[v->v.str.len] != '\0')
            abort();
        if (v->type == GGTK_VALUE_ARRAY)
            walk_array(&v->v.arr, 0);
        render_pair(f, i);
    }
    for (int64_t i = 0; i < ggtk_tensor_count(f); i++) {
        const ggtk_tensor_info *t = ggtk_tensor(f, i);
        if (ggtk_find_tensor(f, t->name) != i || t->n_dims < 1 || t->n_dims > GGTK_MAX_DIMS)
            abort();
        if (t->offset % ggtk_alignment(f) || t->offset + t->size > ggtk_data_size(f))
            abort();
        const unsigned char *bytes = t->data;
        sink += bytes[0] + bytes[t->size - 1] + ggtk_tensor_elements(t);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ggtk_error err;
    ggtk_file *from_memory = ggtk_open_memory(data, size, "fuzz", &err);
    if (from_memory)
        walk_file(from_memory);
    else if (err.status == GGTK_OK || strncmp(err.message, "fuzz: ", 6) != 0)
        abort();
    if (size > 0) {
        FILE *stream = fmemopen((void *)data, size, "rb");
        ggtk_file *from_stream = ggtk_open_stream(stream, "fuzz", GGTK_OPEN_READ, &err);
        fclose(stream);
        if (!from_memory != !from_stream)
            abort();
        if (from_stream) {
            walk_file(from_stream);
            if (ggtk_kv_count(from_stream) != ggtk_kv_count(from_memory) ||
                ggtk_tensor_count(from_stream) != ggtk_tensor_count(from_memory) ||
                ggtk_data_offset(from_stream) != ggtk_data_offset(from_memory) ||
                ggtk_data_size(from_stream) != ggtk_data_size(from_memory))
                abort();
        }
        ggtk_close(from_stream);
    }
    ggtk_close(from_memory);
    return 0;
}
