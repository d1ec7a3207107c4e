/* gguf_validate.c - the rules a GGUF header must obey beyond its syntax: names, tensor shapes
 * and types, alignment, unique names, and the layout of tensor data in the data section.
 * Each rule fails with one message naming the field and its byte offset (see docs/gguf.md). */
#include "gguf_reader.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Index of the first byte that is not part of valid UTF-8, or `len` when all of it is valid. */
static uint64_t utf8_invalid_at(const unsigned char *s, uint64_t len)
{
    uint64_t i = 0;
    for (size_t seq; i < len; i += seq)
        if ((seq = ggtk_utf8_sequence(s + i, (size_t)(len - i))) == 0)
            return i;
    return len;
}

ggtk_status ggtk_check_name(ggtk_parser *p, const char *field, const ggtk_string *name,
                            uint64_t offset)
{
    if (name->len == 0)
        return ggtk_parser_fail(p, GGTK_ERR_INVALID, offset, "%s is empty, expected 1+ bytes",
                                field);
    uint64_t text = offset + 8;
    const unsigned char *bytes = (const unsigned char *)name->data;
    const unsigned char *nul = memchr(bytes, 0, name->len);
    if (nul)
        return ggtk_parser_fail(p, GGTK_ERR_INVALID, text + (uint64_t)(nul - bytes),
                                "%s contains a NUL byte, expected text", field);
    uint64_t bad = utf8_invalid_at(bytes, name->len);
    if (bad < name->len)
        return ggtk_parser_fail(p, GGTK_ERR_INVALID, text + bad,
                                "%s is not valid UTF-8 (byte 0x%02x), expected UTF-8", field,
                                bytes[bad]);
    return GGTK_OK;
}

ggtk_status ggtk_check_n_dims(ggtk_parser *p, uint32_t n_dims, uint64_t offset)
{
    if (n_dims >= 1 && n_dims <= GGTK_MAX_DIMS)
        return GGTK_OK;
    return ggtk_parser_fail(p, GGTK_ERR_INVALID, offset, "n_dims is %u, expected 1..%d", n_dims,
                            GGTK_MAX_DIMS);
}

ggtk_status ggtk_check_tensor_shape(ggtk_parser *p, ggtk_tensor_info *t, uint64_t ne_offset,
                                    uint64_t type_offset)
{
    for (uint32_t d = 0; d < t->n_dims; d++)
        if (t->ne[d] == 0)
            return ggtk_parser_fail(p, GGTK_ERR_INVALID, ne_offset + 8 * d,
                                    "ne[%u] is 0, expected > 0", d);
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(t->type);
    if (!info)
        return ggtk_parser_fail(p, GGTK_ERR_INVALID, type_offset,
                                "type is %u, expected a known tensor type code", (unsigned)t->type);
    if (t->ne[0] % info->block_size != 0)
        return ggtk_parser_fail(p, GGTK_ERR_INVALID, ne_offset,
                                "ne[0] is %llu, expected a multiple of the %s block size %u",
                                (unsigned long long)t->ne[0], info->name, info->block_size);
    /* Element counts are signed 64-bit in every consumer (ggml's int64_t ne). */
    uint64_t elements = 1;
    for (uint32_t d = 0; d < t->n_dims; d++)
        if (__builtin_mul_overflow(elements, t->ne[d], &elements) || elements > (uint64_t)INT64_MAX)
            return ggtk_parser_fail(p, GGTK_ERR_OVERFLOW, ne_offset + 8 * d,
                                    "element count overflows at ne[%u] = %llu, expected a product "
                                    "below 2^63", d, (unsigned long long)t->ne[d]);
    if (!ggtk_tensor_type_bytes(t->type, elements, &t->size) || t->size > (uint64_t)INT64_MAX)
        return ggtk_parser_fail(p, GGTK_ERR_OVERFLOW, type_offset,
                                "byte size of %llu %s elements overflows, expected below 2^63",
                                (unsigned long long)elements, info->name);
    return GGTK_OK;
}

ggtk_status ggtk_check_tensor_offset(ggtk_parser *p, const ggtk_tensor_info *t,
                                     uint64_t offset_field)
{
    uint32_t alignment = p->file->alignment;
    if (t->offset % alignment == 0)
        return GGTK_OK;
    return ggtk_parser_fail(p, GGTK_ERR_LAYOUT, offset_field,
                            "offset %llu is not a multiple of the alignment %u",
                            (unsigned long long)t->offset, alignment);
}

static int compare_names(const void *a, const void *b)
{
    const ggtk_name_index *x = a, *y = b;
    int order = strcmp(x->name, y->name);
    if (order)
        return order;
    return (x->index > y->index) - (x->index < y->index);
}

/* Build the sorted index of `count` names; *duplicate gets the later index of the first
 * repeated name found, or -1, and *first the earlier one. */
static ggtk_name_index *build_index(const void *items, size_t stride, size_t name_offset,
                                    int64_t count, int64_t *duplicate, int64_t *first)
{
    *duplicate = -1;
    ggtk_name_index *index = malloc((count ? (size_t)count : 1) * sizeof *index);
    if (!index)
        return NULL;
    for (int64_t i = 0; i < count; i++) {
        const char *item = (const char *)items + (size_t)i * stride;
        memcpy(&index[i].name, item + name_offset, sizeof(const char *));
        index[i].index = i;
    }
    qsort(index, (size_t)count, sizeof *index, compare_names);
    for (int64_t i = 1; i < count; i++) {
        if (strcmp(index[i - 1].name, index[i].name) == 0 &&
            (*duplicate < 0 || index[i].index < *duplicate)) {
            *duplicate = index[i].index;
            *first = index[i - 1].index;
        }
    }
    return index;
}

ggtk_status ggtk_index_keys(ggtk_parser *p)
{
    ggtk_file *f = p->file;
    int64_t duplicate, first;
    f->kv_index = build_index(f->kvs, sizeof(ggtk_kv), offsetof(ggtk_kv, key), f->n_kv,
                              &duplicate, &first);
    if (!f->kv_index)
        return ggtk_parser_fail(p, GGTK_ERR_NOMEM, UINT64_MAX, "out of memory indexing keys");
    if (duplicate < 0)
        return GGTK_OK;
    ggtk_parser_set_context(p, "kv", duplicate, f->kvs[duplicate].key);
    return ggtk_parser_fail(p, GGTK_ERR_DUPLICATE, f->kvs[duplicate].offset,
                            "duplicate key, expected unique keys (first at kv %lld, byte %llu)",
                            (long long)first, (unsigned long long)f->kvs[first].offset);
}

ggtk_status ggtk_index_tensors(ggtk_parser *p)
{
    ggtk_file *f = p->file;
    int64_t duplicate, first;
    f->tensor_index = build_index(f->tensors, sizeof(ggtk_tensor_info),
                                  offsetof(ggtk_tensor_info, name), f->n_tensors, &duplicate,
                                  &first);
    if (!f->tensor_index)
        return ggtk_parser_fail(p, GGTK_ERR_NOMEM, UINT64_MAX, "out of memory indexing tensors");
    if (duplicate < 0)
        return GGTK_OK;
    ggtk_parser_set_context(p, "tensor", duplicate, f->tensors[duplicate].name);
    return ggtk_parser_fail(p, GGTK_ERR_DUPLICATE, f->tensors[duplicate].info_offset,
                            "duplicate tensor name, expected unique names (first at tensor %lld, "
                            "byte %llu)",
                            (long long)first, (unsigned long long)f->tensors[first].info_offset);
}

int64_t ggtk_index_find(const ggtk_name_index *index, int64_t count, const char *name)
{
    int64_t lo = 0, hi = count;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int order = strcmp(index[mid].name, name);
        if (order == 0)
            return index[mid].index;
        if (order < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

ggtk_status ggtk_check_alignment_key(ggtk_parser *p)
{
    ggtk_file *f = p->file;
    int64_t i = ggtk_index_find(f->kv_index, f->n_kv, "general.alignment");
    if (i < 0)
        return GGTK_OK;
    const ggtk_kv *kv = &f->kvs[i];
    /* The value follows the key length, the key and the type code. */
    uint64_t value_offset = kv->offset + 8 + strlen(kv->key) + 4;
    ggtk_parser_set_context(p, "kv", i, kv->key);
    if (kv->value.type != GGTK_VALUE_UINT32)
        return ggtk_parser_fail(p, GGTK_ERR_INVALID, value_offset - 4,
                                "type is %s, expected uint32",
                                ggtk_value_type_name(kv->value.type));
    uint32_t alignment = kv->value.v.u32;
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        return ggtk_parser_fail(p, GGTK_ERR_INVALID, value_offset,
                                "alignment is %u, expected a non-zero power of two", alignment);
    f->alignment = alignment;
    p->context[0] = '\0';
    return GGTK_OK;
}

/* Byte offset in the file of a tensor info's `offset` field: it follows the name, n_dims, the
 * dimensions and the type. */
static uint64_t offset_field_of(const ggtk_tensor_info *t)
{
    return t->info_offset + 8 + strlen(t->name) + 4 + 8 * (uint64_t)t->n_dims + 4;
}

typedef struct extent {
    uint64_t begin, end;
    int64_t index;
} extent;

static int compare_extents(const void *a, const void *b)
{
    const extent *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static ggtk_status check_bounds(const ggtk_file *f, int64_t i, bool size_known, uint64_t *end,
                                ggtk_error *err)
{
    const ggtk_tensor_info *t = &f->tensors[i];
    char tensor[128];
    ggtk_describe(tensor, sizeof tensor, "tensor", i, t->name);
    if (__builtin_add_overflow(t->offset, t->size, end))
        return ggtk_fail(err, GGTK_ERR_OVERFLOW, f->path, offset_field_of(t),
                         "%s: offset %llu + size %llu overflows", tensor,
                         (unsigned long long)t->offset, (unsigned long long)t->size);
    if (size_known && *end > f->data_size)
        return ggtk_fail(err, GGTK_ERR_TRUNCATED, f->path, offset_field_of(t),
                         "%s: data [%llu, %llu) ends past the %llu-byte data section, expected "
                         "it inside the file (truncated?)",
                         tensor, (unsigned long long)t->offset, (unsigned long long)*end,
                         (unsigned long long)f->data_size);
    return GGTK_OK;
}

static ggtk_status report_overlap(const ggtk_file *f, const extent *prev, const extent *cur,
                                  ggtk_error *err)
{
    char later[128], earlier[128];
    ggtk_describe(later, sizeof later, "tensor", cur->index, f->tensors[cur->index].name);
    ggtk_describe(earlier, sizeof earlier, "tensor", prev->index, f->tensors[prev->index].name);
    return ggtk_fail(err, GGTK_ERR_LAYOUT, f->path, offset_field_of(&f->tensors[cur->index]),
                     "%s: data [%llu, %llu) overlaps %s [%llu, %llu), expected disjoint data",
                     later, (unsigned long long)cur->begin, (unsigned long long)cur->end, earlier,
                     (unsigned long long)prev->begin, (unsigned long long)prev->end);
}

ggtk_status ggtk_check_layout(const ggtk_file *f, bool size_known, ggtk_error *err)
{
    if (f->n_tensors == 0)
        return GGTK_OK;
    extent *extents = malloc((size_t)f->n_tensors * sizeof *extents);
    if (!extents)
        return ggtk_fail(err, GGTK_ERR_NOMEM, f->path, UINT64_MAX, "out of memory checking layout");
    ggtk_status status = GGTK_OK;
    for (int64_t i = 0; i < f->n_tensors && status == GGTK_OK; i++) {
        extents[i] = (extent){.begin = f->tensors[i].offset, .index = i};
        status = check_bounds(f, i, size_known, &extents[i].end, err);
    }
    if (status == GGTK_OK)
        qsort(extents, (size_t)f->n_tensors, sizeof *extents, compare_extents);
    for (int64_t i = 1; i < f->n_tensors && status == GGTK_OK; i++)
        if (extents[i].begin < extents[i - 1].end)
            status = report_overlap(f, &extents[i - 1], &extents[i], err);
    free(extents);
    return status;
}
