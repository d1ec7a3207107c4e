/* gguf_writer_metadata.c - the writer's ordered key/value store: setting (replacing in place or
 * appending), removing, the typed convenience setters, and general.alignment, which also decides
 * the layout of the data section. */
#include "gguf_writer_internal.h"

#include <stdlib.h>
#include <string.h>

static const char alignment_key[] = "general.alignment";

static int64_t find_key(const ggtk_writer *writer, const char *key)
{
    for (int64_t i = 0; i < writer->n_kvs; i++)
        if (strcmp(writer->kvs[i].key, key) == 0)
            return i;
    return -1;
}

static bool reserve_kv(ggtk_writer *writer)
{
    if (writer->n_kvs < writer->kv_capacity)
        return true;
    int64_t capacity = writer->kv_capacity ? 2 * writer->kv_capacity : 32;
    writer_kv *grown = realloc(writer->kvs, (size_t)capacity * sizeof *grown);
    if (!grown)
        return false;
    writer->kvs = grown;
    writer->kv_capacity = capacity;
    return true;
}

void writer_kvs_free(ggtk_writer *writer)
{
    for (int64_t i = 0; i < writer->n_kvs; i++) {
        free(writer->kvs[i].key);
        writer_value_free(&writer->kvs[i].value);
    }
    free(writer->kvs);
    writer->kvs = NULL;
    writer->n_kvs = writer->kv_capacity = 0;
}

/* The alignment `value` would set for the data section, or 0 when it is not a valid one. */
static uint32_t alignment_from(const ggtk_value *value)
{
    if (value->type != GGTK_VALUE_UINT32)
        return 0;
    uint32_t alignment = value->v.u32;
    return alignment != 0 && (alignment & (alignment - 1)) == 0 ? alignment : 0;
}

/* Size of the pair on disk: key string, type code, payload. */
static ggtk_status pair_bytes(const char *key, const ggtk_value *value, uint64_t *bytes)
{
    uint64_t payload;
    if (!writer_value_payload_bytes(value, &payload) ||
        __builtin_add_overflow(payload, 8 + strlen(key) + 4, bytes))
        return GGTK_ERR_OVERFLOW;
    return GGTK_OK;
}

/* Switch to the new header size and alignment if the layout still fits; else change nothing. */
static ggtk_status relayout(ggtk_writer *writer, uint64_t kv_bytes, uint32_t alignment)
{
    uint64_t old_kv_bytes = writer->kv_bytes;
    uint32_t old_alignment = writer->alignment;
    writer->kv_bytes = kv_bytes;
    writer->alignment = alignment;
    ggtk_status status = writer_layout(writer, 0);
    if (status != GGTK_OK) {
        writer->kv_bytes = old_kv_bytes;
        writer->alignment = old_alignment;
    }
    return status;
}

/* Puts `pair` at `index` (== n_kvs to append), freeing the pair it replaces. */
static ggtk_status store_pair(ggtk_writer *writer, int64_t index, writer_kv pair,
                              uint32_t alignment)
{
    bool append = index == writer->n_kvs;
    uint64_t kv_bytes = writer->kv_bytes - (append ? 0 : writer->kvs[index].bytes);
    if (__builtin_add_overflow(kv_bytes, pair.bytes, &kv_bytes))
        return GGTK_ERR_OVERFLOW;
    ggtk_status status = relayout(writer, kv_bytes, alignment);
    if (status != GGTK_OK)
        return status;
    if (append) {
        writer->n_kvs++;
    } else {
        free(writer->kvs[index].key);
        writer_value_free(&writer->kvs[index].value);
    }
    writer->kvs[index] = pair;
    return GGTK_OK;
}

ggtk_status ggtk_writer_set(ggtk_writer *writer, const char *key, const ggtk_value *value)
{
    if (!writer || !key || !*key || !value || writer->stream.active)
        return GGTK_ERR_USAGE;
    uint32_t alignment = writer->alignment;
    if (strcmp(key, alignment_key) == 0 && (alignment = alignment_from(value)) == 0)
        return GGTK_ERR_INVALID;
    int64_t index = find_key(writer, key);
    if (index < 0 && !reserve_kv(writer))
        return GGTK_ERR_NOMEM;
    writer_kv pair = {0};
    ggtk_status status = writer_value_copy(&pair.value, value);
    if (status == GGTK_OK)
        status = pair_bytes(key, &pair.value, &pair.bytes);
    if (status == GGTK_OK && !(pair.key = strdup(key)))
        status = GGTK_ERR_NOMEM;
    if (status == GGTK_OK)
        status = store_pair(writer, index < 0 ? writer->n_kvs : index, pair, alignment);
    if (status != GGTK_OK) {
        free(pair.key);
        writer_value_free(&pair.value);
    }
    return status;
}

ggtk_status ggtk_writer_remove(ggtk_writer *writer, const char *key)
{
    if (!writer || !key || writer->stream.active)
        return GGTK_ERR_USAGE;
    int64_t index = find_key(writer, key);
    if (index < 0)
        return GGTK_ERR_NOT_FOUND;
    writer_kv *pair = &writer->kvs[index];
    uint32_t alignment =
        strcmp(key, alignment_key) == 0 ? GGTK_DEFAULT_ALIGNMENT : writer->alignment;
    ggtk_status status = relayout(writer, writer->kv_bytes - pair->bytes, alignment);
    if (status != GGTK_OK)
        return status;
    free(pair->key);
    writer_value_free(&pair->value);
    memmove(pair, pair + 1, (size_t)(writer->n_kvs - index - 1) * sizeof *pair);
    writer->n_kvs--;
    return GGTK_OK;
}

/* The typed scalar setters: each wraps its argument in a ggtk_value for ggtk_writer_set(). */
#define SCALAR_SETTER(suffix, c_type, value_type, member)                                     \
    ggtk_status ggtk_writer_set_##suffix(ggtk_writer *writer, const char *key, c_type value)  \
    {                                                                                          \
        ggtk_value v = {.type = value_type, .v.member = value};                                \
        return ggtk_writer_set(writer, key, &v);                                               \
    }

SCALAR_SETTER(u8, uint8_t, GGTK_VALUE_UINT8, u8)
SCALAR_SETTER(i8, int8_t, GGTK_VALUE_INT8, i8)
SCALAR_SETTER(u16, uint16_t, GGTK_VALUE_UINT16, u16)
SCALAR_SETTER(i16, int16_t, GGTK_VALUE_INT16, i16)
SCALAR_SETTER(u32, uint32_t, GGTK_VALUE_UINT32, u32)
SCALAR_SETTER(i32, int32_t, GGTK_VALUE_INT32, i32)
SCALAR_SETTER(u64, uint64_t, GGTK_VALUE_UINT64, u64)
SCALAR_SETTER(i64, int64_t, GGTK_VALUE_INT64, i64)
SCALAR_SETTER(f32, float, GGTK_VALUE_FLOAT32, f32)
SCALAR_SETTER(f64, double, GGTK_VALUE_FLOAT64, f64)
SCALAR_SETTER(bool, bool, GGTK_VALUE_BOOL, b)

ggtk_status ggtk_writer_set_string(ggtk_writer *writer, const char *key, const char *value)
{
    if (!value)
        return GGTK_ERR_USAGE;
    ggtk_value v = {.type = GGTK_VALUE_STRING, .v.str = {strlen(value), value}};
    return ggtk_writer_set(writer, key, &v);
}

ggtk_status ggtk_writer_set_array(ggtk_writer *writer, const char *key, ggtk_value_type elem_type,
                                  uint64_t count, const void *data)
{
    if (elem_type == GGTK_VALUE_STRING || elem_type == GGTK_VALUE_ARRAY)
        return GGTK_ERR_USAGE;
    ggtk_value v = {.type = GGTK_VALUE_ARRAY, .v.arr = {elem_type, count, data}};
    return ggtk_writer_set(writer, key, &v);
}

ggtk_status ggtk_writer_set_string_array(ggtk_writer *writer, const char *key,
                                         const char *const *strings, uint64_t count)
{
    if (count > 0 && !strings)
        return GGTK_ERR_USAGE;
    if (count > SIZE_MAX / sizeof(ggtk_string))
        return GGTK_ERR_OVERFLOW;
    ggtk_string *views = malloc(count ? (size_t)count * sizeof *views : 1);
    if (!views)
        return GGTK_ERR_NOMEM;
    ggtk_status status = GGTK_OK;
    for (uint64_t i = 0; i < count && status == GGTK_OK; i++) {
        if (!strings[i])
            status = GGTK_ERR_USAGE;
        else
            views[i] = (ggtk_string){strlen(strings[i]), strings[i]};
    }
    ggtk_value v = {.type = GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_STRING, count, views}};
    if (status == GGTK_OK)
        status = ggtk_writer_set(writer, key, &v);
    free(views);
    return status;
}
