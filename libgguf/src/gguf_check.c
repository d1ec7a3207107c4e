/* gguf_check.c - content checks beyond the structure the reader validates: the well-known keys
 * llama.cpp relies on, and finite values in floating-point tensors. */
#include "gguf_internal.h"
#include <ggtk/gguf_util.h>

#include <stdlib.h>
#include <string.h>

/* Names quoted in messages are cut to this many bytes once escaped. */
enum { NAME_SHOWN = 128 };

static ggtk_status fail_key(const ggtk_file *file, const char *key, ggtk_error *err,
                            const char *expected)
{
    char shown[NAME_SHOWN];
    return ggtk_fail(err, GGTK_ERR_INVALID, ggtk_path(file),
                     ggtk_kv_offset(file, ggtk_find_key(file, key)), "%s: expected %s",
                     ggtk_escape_cut(shown, sizeof shown, key), expected);
}

static ggtk_status check_general_keys(const ggtk_file *file, ggtk_error *err)
{
    const ggtk_value *arch = ggtk_get(file, "general.architecture");
    if (arch && arch->type != GGTK_VALUE_STRING)
        return fail_key(file, "general.architecture", err, "a string");
    uint64_t file_type;
    ggtk_status status = ggtk_get_uint(file, "general.file_type", &file_type);
    if (status == GGTK_ERR_NOT_FOUND)
        return GGTK_OK;
    if (status != GGTK_OK || file_type > UINT32_MAX ||
        !ggtk_file_type_info_get((uint32_t)file_type))
        return fail_key(file, "general.file_type", err, "a llama.cpp file type (0..41)");
    return GGTK_OK;
}

/* An array key, when present, must hold `elem_type` elements, and `count` of them when *count
 * is not UINT64_MAX; otherwise its length becomes *count. */
static ggtk_status check_array(const ggtk_file *file, const char *key, ggtk_value_type elem_type,
                               uint64_t *count, ggtk_error *err)
{
    const ggtk_value *value = ggtk_get(file, key);
    if (!value)
        return GGTK_OK;
    if (value->type != GGTK_VALUE_ARRAY || value->v.arr.elem_type != elem_type) {
        char expected[64];
        snprintf(expected, sizeof expected, "an array of %s", ggtk_value_type_name(elem_type));
        return fail_key(file, key, err, expected);
    }
    if (*count == UINT64_MAX) {
        *count = value->v.arr.count;
    } else if (value->v.arr.count != *count) {
        char expected[80];
        snprintf(expected, sizeof expected, "%llu elements like tokenizer.ggml.tokens, not %llu",
                 (unsigned long long)*count, (unsigned long long)value->v.arr.count);
        return fail_key(file, key, err, expected);
    }
    return GGTK_OK;
}

static bool is_token_id_key(const char *key)
{
    static const char prefix[] = "tokenizer.ggml.", suffix[] = "_token_id";
    size_t len = strlen(key);
    return strncmp(key, prefix, sizeof prefix - 1) == 0 && len > sizeof suffix - 1 &&
           strcmp(key + len - (sizeof suffix - 1), suffix) == 0;
}

static ggtk_status check_tokenizer_keys(const ggtk_file *file, ggtk_error *err)
{
    uint64_t n_tokens = UINT64_MAX, any = UINT64_MAX;
    ggtk_status status =
        check_array(file, "tokenizer.ggml.tokens", GGTK_VALUE_STRING, &n_tokens, err);
    if (status == GGTK_OK)
        status = check_array(file, "tokenizer.ggml.scores", GGTK_VALUE_FLOAT32, &n_tokens, err);
    if (status == GGTK_OK)
        status = check_array(file, "tokenizer.ggml.token_type", GGTK_VALUE_INT32, &n_tokens, err);
    if (status == GGTK_OK)
        status = check_array(file, "tokenizer.ggml.merges", GGTK_VALUE_STRING, &any, err);
    for (int64_t i = 0; status == GGTK_OK && i < ggtk_kv_count(file); i++) {
        const char *key = ggtk_kv_key(file, i);
        uint64_t id;
        if (!is_token_id_key(key))
            continue;
        if (ggtk_get_uint(file, key, &id) != GGTK_OK)
            return fail_key(file, key, err, "a non-negative integer");
        if (n_tokens != UINT64_MAX && id >= n_tokens) {
            char expected[64];
            snprintf(expected, sizeof expected, "a token id below %llu, not %llu",
                     (unsigned long long)n_tokens, (unsigned long long)id);
            return fail_key(file, key, err, expected);
        }
    }
    return status;
}

/* Elements tested before the loop looks for an early exit: a branch-free pass the compiler
 * vectorizes. */
enum { SCAN_GROUP = 1024 };
/* Bytes checked between releases of the pages read, so that resident memory stays bounded on a
 * model larger than RAM. */
enum { CHECK_WINDOW_BYTES = 16 << 20 };

/* Index of the first of `n` elements of `width` bytes at `bytes` whose exponent bits (`mask`) are
 * all ones (NaN or infinity), or -1. Works on the bit patterns, so it is exact for every float
 * width including f16 and bf16. */
#define DEFINE_SCAN(name, type)                                                          \
    static int64_t name(const unsigned char *bytes, uint64_t n, type mask)              \
    {                                                                                    \
        for (uint64_t first = 0; first < n; first += SCAN_GROUP) {                       \
            uint64_t count = n - first < SCAN_GROUP ? n - first : SCAN_GROUP;            \
            const unsigned char *group = bytes + first * sizeof(type);                   \
            unsigned any = 0;                                                            \
            for (uint64_t i = 0; i < count; i++) {                                       \
                type bits;                                                               \
                memcpy(&bits, group + i * sizeof(type), sizeof(type)); /* little-endian */ \
                any |= (bits & mask) == mask;                                            \
            }                                                                            \
            for (uint64_t i = 0; any && i < count; i++) {                                \
                type bits;                                                               \
                memcpy(&bits, group + i * sizeof(type), sizeof(type));                   \
                if ((bits & mask) == mask)                                               \
                    return (int64_t)(first + i);                                         \
            }                                                                            \
        }                                                                                \
        return -1;                                                                       \
    }
DEFINE_SCAN(scan_16, uint16_t)
DEFINE_SCAN(scan_32, uint32_t)
DEFINE_SCAN(scan_64, uint64_t)

static int64_t scan_window(const ggtk_tensor_info *t, const unsigned char *bytes, uint64_t n)
{
    switch (t->type) {
    case GGTK_TENSOR_F16: return scan_16(bytes, n, 0x7C00u);
    case GGTK_TENSOR_BF16: return scan_16(bytes, n, 0x7F80u);
    case GGTK_TENSOR_F32: return scan_32(bytes, n, 0x7F800000u);
    case GGTK_TENSOR_F64: return scan_64(bytes, n, 0x7FF0000000000000u);
    default: return -1;
    }
}

/* Index of the first NaN or infinite element of a float tensor, or -1 (other types: -1). The
 * data is read in windows whose pages are handed back once checked. */
static int64_t first_non_finite(const ggtk_file *file, const ggtk_tensor_info *t)
{
    if (t->type != GGTK_TENSOR_F16 && t->type != GGTK_TENSOR_BF16 && t->type != GGTK_TENSOR_F32 &&
        t->type != GGTK_TENSOR_F64)
        return -1;
    uint64_t width = ggtk_tensor_type_info_get(t->type)->block_bytes;
    uint64_t n = t->size / width, window = CHECK_WINDOW_BYTES / width;
    const unsigned char *bytes = t->data;
    for (uint64_t first = 0; first < n; first += window) {
        uint64_t count = n - first < window ? n - first : window;
        int64_t bad = scan_window(t, bytes + first * width, count);
        ggtk_release_data(file, bytes + first * width, count * width);
        if (bad >= 0)
            return (int64_t)first + bad;
    }
    return -1;
}

static ggtk_status check_tensor_values(const ggtk_file *file, ggtk_error *err)
{
    int64_t n = ggtk_tensor_count(file);
    if (n > 0 && ggtk_tensor(file, 0)->data == NULL)
        return ggtk_fail(err, GGTK_ERR_USAGE, ggtk_path(file), UINT64_MAX,
                         "tensor data is not in memory (file opened with GGUF_OPEN_METADATA)");
    int64_t *bad = malloc((size_t)(n ? n : 1) * sizeof *bad);
    if (!bad)
        return ggtk_fail(err, GGTK_ERR_NOMEM, ggtk_path(file), UINT64_MAX,
                         "out of memory checking %lld tensors", (long long)n);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t i = 0; i < n; i++)
        bad[i] = first_non_finite(file, ggtk_tensor(file, i));
    ggtk_status status = GGTK_OK;
    for (int64_t i = 0; i < n && status == GGTK_OK; i++) {
        if (bad[i] < 0)
            continue;
        const ggtk_tensor_info *t = ggtk_tensor(file, i);
        uint64_t width = ggtk_tensor_type_info_get(t->type)->block_bytes;
        char shown[NAME_SHOWN];
        status = ggtk_fail(err, GGTK_ERR_INVALID, ggtk_path(file),
                           ggtk_data_offset(file) + t->offset + (uint64_t)bad[i] * width,
                           "tensor '%s': element %lld is NaN or infinite",
                           ggtk_escape_cut(shown, sizeof shown, t->name), (long long)bad[i]);
    }
    free(bad);
    return status;
}

ggtk_status ggtk_check_contents(const ggtk_file *file, ggtk_error *err)
{
    ggtk_status status = check_general_keys(file, err);
    if (status == GGTK_OK)
        status = check_tokenizer_keys(file, err);
    if (status == GGTK_OK)
        status = check_tensor_values(file, err);
    return status;
}
