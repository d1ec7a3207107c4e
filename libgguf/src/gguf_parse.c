/* gguf_parse.c - parsing of the GGUF header: magic, version, counts, the key/value pairs and the
 * tensor-info table. Every field is read through the bounds-checked cursor and checked as soon
 * as it is read, so each error names the field and the byte offset where it starts. */
#include "gguf_reader.h"

#include <stdarg.h>
#include <string.h>

/* The fewest bytes the syntax allows for a key/value pair (key length, type, a 1-byte value)
 * and a tensor info (name length, n_dims, type, offset), so that a count too large for the
 * bytes left fails before anything is allocated for it, while an empty key or n_dims of 0 still
 * get their own, more precise message. */
enum { MIN_KV_BYTES = 8 + 4 + 1, MIN_TENSOR_INFO_BYTES = 8 + 4 + 4 + 8 };
/* Longest part of a hostile name quoted in a message, escaped, before "...". */
enum { CONTEXT_NAME_MAX = 64 };

ggtk_status ggtk_parser_fail(ggtk_parser *p, ggtk_status status, uint64_t offset,
                             const char *fmt, ...)
{
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (p->context[0])
        return ggtk_fail(p->err, status, p->file->path, offset, "%s: %s", p->context, what);
    return ggtk_fail(p->err, status, p->file->path, offset, "%s", what);
}

void ggtk_describe(char *out, size_t capacity, const char *what, int64_t index, const char *name)
{
    char shown[CONTEXT_NAME_MAX + 4];
    if (name)
        snprintf(out, capacity, "%s %lld '%s'", what, (long long)index,
                 ggtk_escape_cut(shown, sizeof shown, name));
    else
        snprintf(out, capacity, "%s %lld", what, (long long)index);
}

void ggtk_parser_set_context(ggtk_parser *p, const char *what, int64_t index, const char *name)
{
    ggtk_describe(p->context, sizeof p->context, what, index, name);
}

ggtk_status ggtk_parser_take(ggtk_parser *p, uint64_t n, uint64_t field_offset, const char *field,
                             const unsigned char **out)
{
    uint64_t start = p->cursor.pos;
    ggtk_status status = ggtk_cursor_take(&p->cursor, n, out);
    switch (status) {
    case GGTK_OK:
        return GGTK_OK;
    case GGTK_ERR_TRUNCATED:
        return ggtk_parser_fail(p, status, field_offset,
                                "%s needs %llu bytes from byte %llu but the file ends at byte %llu",
                                field, (unsigned long long)n, (unsigned long long)start,
                                (unsigned long long)p->cursor.end);
    case GGTK_ERR_IO:
        return ggtk_parser_fail(p, status, field_offset, "reading %s failed: %s", field,
                                strerror(p->cursor.io_errno));
    default:
        return ggtk_parser_fail(p, status, field_offset, "out of memory reading %s (%llu bytes)",
                                field, (unsigned long long)n);
    }
}

/* A little-endian field of `size` bytes at the cursor (the host is little-endian too). */
static ggtk_status read_field(ggtk_parser *p, const char *field, void *out, size_t size)
{
    const unsigned char *bytes;
    ggtk_status status = ggtk_parser_take(p, size, p->cursor.pos, field, &bytes);
    if (status == GGTK_OK)
        memcpy(out, bytes, size);
    return status;
}

ggtk_status ggtk_read_u32(ggtk_parser *p, const char *field, uint32_t *out)
{
    return read_field(p, field, out, sizeof *out);
}

ggtk_status ggtk_read_u64(ggtk_parser *p, const char *field, uint64_t *out)
{
    return read_field(p, field, out, sizeof *out);
}

ggtk_status ggtk_parser_check_count(ggtk_parser *p, uint64_t count, uint64_t min_bytes,
                                    uint64_t field_offset, const char *field)
{
    uint64_t remaining = ggtk_cursor_remaining(&p->cursor);
    if (remaining == GGTK_SIZE_UNKNOWN || count <= remaining / min_bytes)
        return GGTK_OK;
    return ggtk_parser_fail(p, GGTK_ERR_TRUNCATED, field_offset,
                            "%s is %llu but the %llu bytes left in the file hold at most %llu",
                            field, (unsigned long long)count, (unsigned long long)remaining,
                            (unsigned long long)(remaining / min_bytes));
}

static ggtk_status parse_magic_and_version(ggtk_parser *p)
{
    const unsigned char *magic;
    ggtk_status status = ggtk_parser_take(p, 4, 0, "magic", &magic);
    if (status != GGTK_OK)
        return status;
    if (memcmp(magic, "GGUF", 4) != 0)
        return ggtk_parser_fail(p, GGTK_ERR_MAGIC, 0,
                                "magic is %02x %02x %02x %02x, expected \"GGUF\" (47 47 55 46)",
                                magic[0], magic[1], magic[2], magic[3]);
    uint32_t version;
    status = ggtk_read_u32(p, "version", &version);
    if (status != GGTK_OK)
        return status;
    p->file->version = version;
    if (version == 2 || version == 3)
        return GGTK_OK;
    if (version == 1)
        return ggtk_parser_fail(p, GGTK_ERR_VERSION, 4,
                                "unsupported version 1, expected 2 or 3 (GGUF v1 is obsolete)");
    uint32_t swapped = __builtin_bswap32(version);
    if (swapped >= 1 && swapped <= 3)
        return ggtk_parser_fail(p, GGTK_ERR_VERSION, 4,
                                "big-endian GGUF is not supported (version field reads %u "
                                "byte-swapped)", swapped);
    return ggtk_parser_fail(p, GGTK_ERR_VERSION, 4, "unsupported version %u, expected 2 or 3",
                            version);
}

/* The name that starts a kv or tensor info (`what` `index`, its `field` "key" or "name"), checked
 * and then made the prefix of every later message about that entry. */
static ggtk_status parse_entry_name(ggtk_parser *p, const char *what, int64_t index,
                                    const char *field, const char **name)
{
    uint64_t offset = p->cursor.pos;
    ggtk_parser_set_context(p, what, index, NULL);
    ggtk_string string;
    ggtk_status status = ggtk_parse_string(p, field, &string);
    if (status == GGTK_OK)
        status = ggtk_check_name(p, field, &string, offset);
    if (status != GGTK_OK)
        return status;
    *name = string.data;
    ggtk_parser_set_context(p, what, index, string.data);
    return GGTK_OK;
}

static ggtk_status parse_kv(ggtk_parser *p, int64_t index, ggtk_kv *kv)
{
    kv->offset = p->cursor.pos;
    ggtk_status status = parse_entry_name(p, "kv", index, "key", &kv->key);
    if (status != GGTK_OK)
        return status;
    uint64_t type_offset = p->cursor.pos;
    uint32_t type;
    status = ggtk_read_u32(p, "value type", &type);
    if (status != GGTK_OK)
        return status;
    if (type >= GGTK_VALUE_TYPE_COUNT)
        return ggtk_parser_fail(p, GGTK_ERR_INVALID, type_offset,
                                "value type is %u, expected 0..%d", type,
                                GGTK_VALUE_TYPE_COUNT - 1);
    return ggtk_parse_value(p, (ggtk_value_type)type, &kv->value, 0);
}

uint64_t ggtk_parser_reserve(const ggtk_parser *p, uint64_t count)
{
    if (ggtk_cursor_remaining(&p->cursor) != GGTK_SIZE_UNKNOWN)
        return count;
    return count < 1024 ? count : 1024;
}

static ggtk_status parse_kvs(ggtk_parser *p, uint64_t n_kv, uint64_t count_offset)
{
    ggtk_status status = ggtk_parser_check_count(p, n_kv, MIN_KV_BYTES, count_offset, "kv count");
    if (status != GGTK_OK)
        return status;
    ggtk_vec kvs;
    if (!ggtk_vec_init(&kvs, sizeof(ggtk_kv), ggtk_parser_reserve(p, n_kv)))
        return ggtk_parser_fail(p, GGTK_ERR_NOMEM, count_offset, "out of memory for %llu kvs",
                                (unsigned long long)n_kv);
    p->file->kvs = (ggtk_kv *)kvs.items; /* owned by the file from here on, even on failure */
    for (uint64_t i = 0; i < n_kv; i++) {
        ggtk_kv *kv = ggtk_vec_push(&kvs);
        p->file->kvs = (ggtk_kv *)kvs.items;
        if (!kv)
            return ggtk_parser_fail(p, GGTK_ERR_NOMEM, count_offset, "out of memory for kvs");
        status = parse_kv(p, (int64_t)i, kv);
        if (status != GGTK_OK)
            return status;
        p->file->n_kv = (int64_t)kvs.count;
    }
    p->context[0] = '\0';
    return GGTK_OK;
}

static ggtk_status parse_tensor_info(ggtk_parser *p, int64_t index, ggtk_tensor_info *t)
{
    t->info_offset = p->cursor.pos;
    ggtk_status status = parse_entry_name(p, "tensor", index, "name", &t->name);
    if (status != GGTK_OK)
        return status;
    uint64_t n_dims_offset = p->cursor.pos;
    status = ggtk_read_u32(p, "n_dims", &t->n_dims);
    if (status == GGTK_OK)
        status = ggtk_check_n_dims(p, t->n_dims, n_dims_offset);
    uint64_t ne_offset = p->cursor.pos;
    for (uint32_t d = 0; d < GGTK_MAX_DIMS; d++)
        t->ne[d] = 1;
    for (uint32_t d = 0; d < t->n_dims && status == GGTK_OK; d++)
        status = ggtk_read_u64(p, "ne", &t->ne[d]);
    uint64_t type_offset = p->cursor.pos;
    uint32_t type = 0;
    if (status == GGTK_OK)
        status = ggtk_read_u32(p, "type", &type);
    t->type = (ggtk_tensor_type)type;
    if (status == GGTK_OK)
        status = ggtk_check_tensor_shape(p, t, ne_offset, type_offset);
    uint64_t offset_field = p->cursor.pos;
    if (status == GGTK_OK)
        status = ggtk_read_u64(p, "offset", &t->offset);
    if (status == GGTK_OK)
        status = ggtk_check_tensor_offset(p, t, offset_field);
    return status;
}

static ggtk_status parse_tensor_infos(ggtk_parser *p, uint64_t n_tensors, uint64_t count_offset)
{
    ggtk_status status = ggtk_parser_check_count(p, n_tensors, MIN_TENSOR_INFO_BYTES,
                                                 count_offset, "tensor count");
    if (status != GGTK_OK)
        return status;
    ggtk_vec tensors;
    if (!ggtk_vec_init(&tensors, sizeof(ggtk_tensor_info), ggtk_parser_reserve(p, n_tensors)))
        return ggtk_parser_fail(p, GGTK_ERR_NOMEM, count_offset,
                                "out of memory for %llu tensor infos",
                                (unsigned long long)n_tensors);
    p->file->tensors = (ggtk_tensor_info *)tensors.items;
    for (uint64_t i = 0; i < n_tensors; i++) {
        ggtk_tensor_info *t = ggtk_vec_push(&tensors);
        p->file->tensors = (ggtk_tensor_info *)tensors.items;
        if (!t)
            return ggtk_parser_fail(p, GGTK_ERR_NOMEM, count_offset, "out of memory for tensors");
        status = parse_tensor_info(p, (int64_t)i, t);
        if (status != GGTK_OK)
            return status;
        p->file->n_tensors = (int64_t)tensors.count;
    }
    p->context[0] = '\0';
    return GGTK_OK;
}

/* Counts are stored as uint64 but exposed as int64_t; larger ones could never fit a file. */
static ggtk_status read_count(ggtk_parser *p, const char *field, uint64_t *out, uint64_t *offset)
{
    *offset = p->cursor.pos;
    ggtk_status status = ggtk_read_u64(p, field, out);
    if (status == GGTK_OK && *out > (uint64_t)INT64_MAX)
        return ggtk_parser_fail(p, GGTK_ERR_OVERFLOW, *offset, "%s is %llu, expected at most %lld",
                                field, (unsigned long long)*out, (long long)INT64_MAX);
    return status;
}

ggtk_status ggtk_parse_header(ggtk_parser *p)
{
    ggtk_file *file = p->file;
    file->alignment = GGTK_DEFAULT_ALIGNMENT;
    p->context[0] = '\0';
    uint64_t n_tensors, n_kv, tensor_count_offset, kv_count_offset;
    ggtk_status status = parse_magic_and_version(p);
    if (status == GGTK_OK)
        status = read_count(p, "tensor count", &n_tensors, &tensor_count_offset);
    if (status == GGTK_OK)
        status = read_count(p, "kv count", &n_kv, &kv_count_offset);
    if (status == GGTK_OK)
        status = parse_kvs(p, n_kv, kv_count_offset);
    if (status == GGTK_OK)
        status = ggtk_index_keys(p);
    if (status == GGTK_OK)
        status = ggtk_check_alignment_key(p);
    if (status == GGTK_OK)
        status = parse_tensor_infos(p, n_tensors, tensor_count_offset);
    if (status == GGTK_OK)
        status = ggtk_index_tensors(p);
    if (status != GGTK_OK)
        return status;
    uint64_t end = p->cursor.pos;
    uint64_t mask = file->alignment - 1;
    if (__builtin_add_overflow(end, mask, &file->data_offset))
        return ggtk_parser_fail(p, GGTK_ERR_OVERFLOW, end, "data section offset overflows");
    file->data_offset &= ~mask;
    return GGTK_OK;
}
