/* fuzz_reader.c - libFuzzer harness of the GGUF reader. Each input is opened from memory and
 * from a stream of unknown size (the pipe path); both must agree on accepting it, an accepted
 * file is walked completely (every value, every string's terminator, every tensor's first and
 * last data byte), and a rejected one must carry a message. Any disagreement aborts. */
#include "gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t sink;

static void walk_array(const gguf_array *arr, int depth)
{
    if (depth > 64)
        abort();
    for (uint64_t i = 0; i < arr->count; i++) {
        if (arr->elem_type == GGUF_VALUE_STRING) {
            const gguf_string *s = &((const gguf_string *)arr->data)[i];
            if (s->data[s->len] != '\0')
                abort();
            sink += s->len;
        } else if (arr->elem_type == GGUF_VALUE_ARRAY) {
            const gguf_value *v = &((const gguf_value *)arr->data)[i];
            if (v->type != GGUF_VALUE_ARRAY)
                abort();
            walk_array(&v->v.arr, depth + 1);
        } else {
            sink += ((const unsigned char *)arr->data)[i * gguf_value_type_size(arr->elem_type)];
        }
    }
}

static void walk_file(const gguf_file *f)
{
    for (int64_t i = 0; i < gguf_kv_count(f); i++) {
        const char *key = gguf_kv_key(f, i);
        const gguf_value *v = gguf_kv_value(f, i);
        if (!key[0] || gguf_find_key(f, key) != i)
            abort();
        uint64_t u;
        int64_t s;
        double d;
        sink += gguf_get_uint(f, key, &u) + gguf_get_int(f, key, &s) + gguf_get_float(f, key, &d);
        if (v->type == GGUF_VALUE_STRING && v->v.str.data[v->v.str.len] != '\0')
            abort();
        if (v->type == GGUF_VALUE_ARRAY)
            walk_array(&v->v.arr, 0);
    }
    for (int64_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor_info *t = gguf_tensor(f, i);
        if (gguf_find_tensor(f, t->name) != i || t->n_dims < 1 || t->n_dims > GGUF_MAX_DIMS)
            abort();
        if (t->offset % gguf_alignment(f) || t->offset + t->size > gguf_data_size(f))
            abort();
        const unsigned char *bytes = t->data;
        sink += bytes[0] + bytes[t->size - 1] + gguf_tensor_elements(t);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gguf_error err;
    gguf_file *from_memory = gguf_open_memory(data, size, "fuzz", &err);
    if (from_memory)
        walk_file(from_memory);
    else if (err.status == GGUF_OK || strncmp(err.message, "fuzz: ", 6) != 0)
        abort();
    if (size > 0) {
        FILE *stream = fmemopen((void *)data, size, "rb");
        gguf_file *from_stream = gguf_open_stream(stream, "fuzz", GGUF_OPEN_READ, &err);
        fclose(stream);
        if (!from_memory != !from_stream)
            abort();
        if (from_stream) {
            walk_file(from_stream);
            if (gguf_kv_count(from_stream) != gguf_kv_count(from_memory) ||
                gguf_tensor_count(from_stream) != gguf_tensor_count(from_memory) ||
                gguf_data_offset(from_stream) != gguf_data_offset(from_memory) ||
                gguf_data_size(from_stream) != gguf_data_size(from_memory))
                abort();
        }
        gguf_close(from_stream);
    }
    gguf_close(from_memory);
    return 0;
}
