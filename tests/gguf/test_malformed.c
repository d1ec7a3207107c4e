/* Tests that every validation rule of the reader rejects a file crafted to break it, with the
 * documented status, the byte offset of the field at fault and a message naming that field,
 * whether the bytes are opened from memory, from a path, or from a stream of unknown size. */
#include <ggtk/gguf.h>
#include "gguf_bytes.h"
#include "test.h"

#include <stdio.h>
#include <string.h>

/* Check that `b` is rejected alike by every way of opening. Reports through test_fail. */
static bool rejected(const ggtk_bytes *b, ggtk_status status, uint64_t offset, const char *needle)
{
    ggtk_error err;
    ggtk_file *f = ggtk_open_memory(b->data, b->len, "crafted.gguf", &err);
    if (f) {
        ggtk_close(f);
        test_fail(__FILE__, __LINE__, "accepted; expected %s", ggtk_strerror(status));
        return false;
    }
    if (err.status != status || err.offset != offset || !strstr(err.message, needle) ||
        strncmp(err.message, "crafted.gguf: ", 14) != 0) {
        test_fail(__FILE__, __LINE__, "got %s at %llu: \"%s\"; expected %s at %llu naming \"%s\"",
                  ggtk_strerror(err.status), (unsigned long long)err.offset, err.message,
                  ggtk_strerror(status), (unsigned long long)offset, needle);
        return false;
    }
    const char *path = test_tmpfile("crafted.gguf");
    gb_write(b, path);
    for (int mode = GGTK_OPEN_MMAP; mode <= GGTK_OPEN_METADATA; mode++) {
        f = ggtk_open(path, (ggtk_open_mode)mode, &err);
        ggtk_close(f);
        if (f || err.status != status || err.offset != offset) {
            test_fail(__FILE__, __LINE__, "path open in mode %d: %s", mode,
                      f ? "accepted" : err.message);
            return false;
        }
    }
    /* A stream of unknown size cannot check counts against the bytes left up front, so the
     * offset may differ; the verdict may not. */
    FILE *stream = fmemopen(b->data, b->len, "rb");
    f = ggtk_open_stream(stream, "stream", GGTK_OPEN_READ, &err);
    fclose(stream);
    ggtk_close(f);
    if (f || err.status != status) {
        test_fail(__FILE__, __LINE__, "stream open: %s", f ? "accepted" : err.message);
        return false;
    }
    return true;
}

static bool accepted(const ggtk_bytes *b)
{
    ggtk_error err;
    ggtk_file *f = ggtk_open_memory(b->data, b->len, "crafted.gguf", &err);
    if (!f)
        test_fail(__FILE__, __LINE__, "rejected: %s", err.message);
    ggtk_close(f);
    return f != NULL;
}

/* A version 3 header announcing `n_tensors` tensor infos and `n_kv` kvs; the caller appends them. */
static void new_file(ggtk_bytes *b, uint64_t n_tensors, uint64_t n_kv)
{
    gb_init(b);
    gb_header(b, 3, n_tensors, n_kv);
}

/* Padding up to the data section (alignment 32), then `bytes` zero bytes of data. */
static void data_section(ggtk_bytes *b, size_t bytes)
{
    gb_align(b, 32);
    gb_zeros(b, bytes);
}

/* One tensor `name` with the given fields after a header with no kvs; 64 data bytes follow.
 * Returns the offset of its tensor info. */
static size_t named_tensor(ggtk_bytes *b, const char *name, uint32_t n_dims, const uint64_t *ne,
                           uint32_t type, uint64_t offset)
{
    new_file(b, 1, 0);
    size_t info = gb_pos(b);
    gb_tensor(b, name, n_dims, ne, type, offset);
    data_section(b, 64);
    return info;
}

/* named_tensor() for a tensor called "w". */
static size_t one_tensor(ggtk_bytes *b, uint32_t n_dims, const uint64_t *ne, uint32_t type,
                         uint64_t offset)
{
    return named_tensor(b, "w", n_dims, ne, type, offset);
}

/* Offsets of the fields of tensor "w" written at `info` with `n_dims` dims. */
static size_t n_dims_at(size_t info) { return info + 8 + 1; }
static size_t ne_at(size_t info) { return info + 8 + 1 + 4; }
static size_t type_at(size_t info, uint32_t n_dims) { return ne_at(info) + 8 * n_dims; }
static size_t offset_at(size_t info, uint32_t n_dims) { return type_at(info, n_dims) + 4; }

TEST(test_malformed_controls_are_accepted)
{
    ggtk_bytes b;
    gb_init(&b);
    gb_minimal(&b);
    CHECK(accepted(&b));
    gb_free(&b);
    uint64_t ne[2] = {32, 1};
    one_tensor(&b, 2, ne, GGTK_TENSOR_Q8_0, 0);
    CHECK(accepted(&b));
    gb_free(&b);
}

TEST(test_malformed_magic_is_rejected)
{
    ggtk_bytes b;
    gb_init(&b);
    gb_raw(&b, "GGUX", 4);
    gb_u32(&b, 3);
    CHECK(rejected(&b, GGTK_ERR_MAGIC, 0, "magic"));
    gb_free(&b);
}

TEST(test_malformed_versions_are_rejected)
{
    ggtk_bytes b;
    new_file(&b, 0, 0);
    memcpy(b.data + 4, "\1\0\0\0", 4);
    CHECK(rejected(&b, GGTK_ERR_VERSION, 4, "unsupported version 1"));
    memcpy(b.data + 4, "\4\0\0\0", 4);
    CHECK(rejected(&b, GGTK_ERR_VERSION, 4, "unsupported version 4"));
    memcpy(b.data + 4, "\0\0\0\3", 4);
    CHECK(rejected(&b, GGTK_ERR_VERSION, 4, "big-endian GGUF is not supported"));
    memcpy(b.data + 4, "\0\0\0\2", 4);
    CHECK(rejected(&b, GGTK_ERR_VERSION, 4, "big-endian GGUF is not supported"));
    gb_free(&b);
}

TEST(test_malformed_counts_are_checked_before_allocating)
{
    ggtk_bytes b;
    new_file(&b, (1ull << 63) + 1, 0);
    CHECK(rejected(&b, GGTK_ERR_OVERFLOW, 8, "tensor count"));
    gb_free(&b);
    new_file(&b, 0, 1ull << 62);
    CHECK(rejected(&b, GGTK_ERR_TRUNCATED, 16, "kv count"));
    gb_free(&b);
    new_file(&b, 1ull << 40, 0);
    uint64_t ne[1] = {8};
    gb_tensor(&b, "a", 1, ne, GGTK_TENSOR_F32, 0);
    gb_tensor(&b, "b", 1, ne, GGTK_TENSOR_F32, 32);
    CHECK(rejected(&b, GGTK_ERR_TRUNCATED, 8, "tensor count is 1099511627776"));
    gb_free(&b);
}

TEST(test_malformed_key_length_past_the_end_is_rejected)
{
    ggtk_bytes b;
    new_file(&b, 0, 1);
    gb_u64(&b, UINT64_MAX - 3);
    gb_raw(&b, "key", 3);
    gb_zeros(&b, 16);
    CHECK(rejected(&b, GGTK_ERR_TRUNCATED, 24, "key needs"));
    gb_free(&b);
}

TEST(test_malformed_keys_must_be_nonempty_utf8_without_nul)
{
    static const struct {
        const char *key;
        size_t len, bad;
        const char *needle;
    } cases[] = {
        {"", 0, 0, "key is empty"},
        {"ab\xff", 3, 2, "not valid UTF-8"},
        {"\xc0\xaf", 2, 0, "not valid UTF-8"},         /* overlong '/' */
        {"x\xed\xa0\x80", 4, 1, "not valid UTF-8"},    /* UTF-16 surrogate */
        {"\xf4\x90\x80\x80", 4, 0, "not valid UTF-8"}, /* past U+10FFFF */
        {"a\xe2\x82", 3, 1, "not valid UTF-8"},        /* cut sequence */
        {"a\0b", 3, 1, "contains a NUL byte"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ggtk_bytes b;
        new_file(&b, 0, 1);
        gb_u64(&b, cases[i].len);
        gb_raw(&b, cases[i].key, cases[i].len);
        gb_u32(&b, GGTK_VALUE_UINT8);
        gb_u8(&b, 1);
        uint64_t at = cases[i].len ? 32 + cases[i].bad : 24;
        CHECK_MSG(rejected(&b, GGTK_ERR_INVALID, at, cases[i].needle), "case %zu", i);
        gb_free(&b);
    }
    ggtk_bytes b;
    new_file(&b, 0, 1);
    gb_kv_str(&b, "caf\xc3\xa9.\xe2\x82\xac.\xf0\x9f\x98\x80", "utf-8 keys are fine");
    CHECK(accepted(&b));
    gb_free(&b);
}

TEST(test_malformed_value_types_must_be_known)
{
    ggtk_bytes b;
    new_file(&b, 0, 1);
    gb_str(&b, "k");
    size_t at = gb_pos(&b);
    gb_u32(&b, 13);
    gb_u32(&b, 0);
    CHECK(rejected(&b, GGTK_ERR_INVALID, at, "kv 0 'k': value type is 13, expected 0..12"));
    gb_free(&b);
    new_file(&b, 0, 1);
    gb_key(&b, "k", GGTK_VALUE_ARRAY);
    at = gb_pos(&b);
    gb_u32(&b, 0xFFFFFFFFu);
    gb_u64(&b, 0);
    CHECK(rejected(&b, GGTK_ERR_INVALID, at, "array element type is 4294967295"));
    gb_free(&b);
}

TEST(test_malformed_bools_must_be_0_or_1)
{
    ggtk_bytes b;
    new_file(&b, 0, 1);
    gb_key(&b, "flag", GGTK_VALUE_BOOL);
    size_t at = gb_pos(&b);
    gb_u8(&b, 2);
    CHECK(rejected(&b, GGTK_ERR_INVALID, at, "bool value is 2"));
    gb_free(&b);
    new_file(&b, 0, 1);
    gb_key(&b, "flags", GGTK_VALUE_ARRAY);
    gb_u32(&b, GGTK_VALUE_BOOL);
    gb_u64(&b, 3);
    at = gb_pos(&b);
    gb_raw(&b, "\1\0\7", 3);
    CHECK(rejected(&b, GGTK_ERR_INVALID, at + 2, "bool value is 7"));
    gb_free(&b);
}

TEST(test_malformed_string_value_past_the_end_is_rejected)
{
    ggtk_bytes b;
    new_file(&b, 0, 1);
    gb_key(&b, "s", GGTK_VALUE_STRING);
    size_t at = gb_pos(&b);
    gb_u64(&b, 1ull << 63);
    gb_raw(&b, "abc", 3);
    CHECK(rejected(&b, GGTK_ERR_TRUNCATED, at, "string value needs"));
    gb_free(&b);
}

TEST(test_malformed_array_counts_are_checked)
{
    static const char zeros[24];
    /* An array kv announcing `count` elements of `elem_type`, then `tail` (what really follows). */
    static const struct {
        uint32_t elem_type;
        uint64_t count;
        const char *tail;
        size_t tail_len;
        ggtk_status status;
        const char *needle;
    } cases[] = {
        {GGTK_VALUE_UINT64, 1ull << 62, "", 0, GGTK_ERR_OVERFLOW, "array count"},
        {GGTK_VALUE_UINT32, 1000, "\0\0\0\0\0\0\0\0", 8, GGTK_ERR_TRUNCATED,
         "array data needs 4000 bytes"},
        {GGTK_VALUE_STRING, UINT64_MAX, "\x08\0\0\0\0\0\0\0only one", 16, GGTK_ERR_TRUNCATED,
         "array count is 18446744073709551615"},
        {GGTK_VALUE_ARRAY, 1ull << 40, zeros, 24, GGTK_ERR_TRUNCATED, "array count"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ggtk_bytes b;
        new_file(&b, 0, 1);
        gb_key(&b, "a", GGTK_VALUE_ARRAY);
        gb_u32(&b, cases[i].elem_type);
        size_t at = gb_pos(&b);
        gb_u64(&b, cases[i].count);
        gb_raw(&b, cases[i].tail, cases[i].tail_len);
        CHECK_MSG(rejected(&b, cases[i].status, at, cases[i].needle), "case %zu", i);
        gb_free(&b);
    }
}

/* An array nested `depth` levels deep (depth 1: a plain empty array). */
static void nested_array(ggtk_bytes *b, int depth)
{
    new_file(b, 0, 1);
    gb_key(b, "deep", GGTK_VALUE_ARRAY);
    for (int level = 1; level < depth; level++) {
        gb_u32(b, GGTK_VALUE_ARRAY);
        gb_u64(b, 1);
    }
    gb_u32(b, GGTK_VALUE_UINT8);
    gb_u64(b, 0);
}

TEST(test_malformed_array_nesting_is_bounded)
{
    ggtk_bytes b;
    nested_array(&b, 64);
    CHECK(accepted(&b));
    gb_free(&b);
    nested_array(&b, 65);
    /* The 64th array's element type announces a 65th level. */
    size_t at = 24 + 8 + 4 + 4 + 63 * 12;
    CHECK(rejected(&b, GGTK_ERR_INVALID, at, "arrays nested deeper than 64 levels"));
    gb_free(&b);
    nested_array(&b, 100000);
    CHECK(rejected(&b, GGTK_ERR_INVALID, at, "nested deeper"));
    gb_free(&b);
}

TEST(test_malformed_duplicate_key_is_rejected)
{
    ggtk_bytes b;
    new_file(&b, 0, 3);
    gb_kv_u32(&b, "a", 1);
    gb_kv_u32(&b, "b", 2);
    size_t at = gb_pos(&b);
    gb_kv_str(&b, "a", "again");
    CHECK(rejected(&b, GGTK_ERR_DUPLICATE, at, "kv 2 'a': duplicate key"));
    gb_free(&b);
}

TEST(test_malformed_alignment_must_be_uint32_power_of_two)
{
    ggtk_bytes b;
    new_file(&b, 0, 1);
    gb_str(&b, "general.alignment");
    size_t type_at = gb_pos(&b);
    gb_u32(&b, GGTK_VALUE_UINT64);
    gb_u64(&b, 32);
    CHECK(rejected(&b, GGTK_ERR_INVALID, type_at, "type is uint64, expected uint32"));
    gb_free(&b);
    static const uint32_t bad[] = {0, 48, 3, 0x80000001u};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        new_file(&b, 0, 1);
        gb_kv_u32(&b, "general.alignment", bad[i]);
        CHECK_MSG(rejected(&b, GGTK_ERR_INVALID, type_at + 4, "expected a non-zero power of two"),
                  "alignment %u", bad[i]);
        gb_free(&b);
    }
    new_file(&b, 0, 1);
    gb_kv_u32(&b, "general.alignment", 1);
    CHECK(accepted(&b));
    gb_free(&b);
}

TEST(test_malformed_tensor_names_must_be_nonempty_utf8)
{
    ggtk_bytes b;
    uint64_t ne[1] = {8};
    named_tensor(&b, "", 1, ne, GGTK_TENSOR_F32, 0);
    CHECK(rejected(&b, GGTK_ERR_INVALID, 24, "tensor 0: name is empty"));
    gb_free(&b);
    named_tensor(&b, "w\x80", 1, ne, GGTK_TENSOR_F32, 0);
    CHECK(rejected(&b, GGTK_ERR_INVALID, 24 + 8 + 1, "name is not valid UTF-8"));
    gb_free(&b);
}

TEST(test_malformed_n_dims_must_be_1_to_4)
{
    uint64_t ne[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    ggtk_bytes b;
    size_t info = one_tensor(&b, 7, ne, GGTK_TENSOR_F32, 0);
    CHECK(rejected(&b, GGTK_ERR_INVALID, n_dims_at(info), "n_dims is 7, expected 1..4"));
    ggtk_error err;
    CHECK(!ggtk_open_memory(b.data, b.len, "model.gguf", &err));
    CHECK_MSG(strcmp(err.message, "model.gguf: tensor 0 'w': n_dims is 7, expected 1..4 "
                                  "(at byte 33)") == 0,
              "%s", err.message);
    gb_free(&b);
    info = one_tensor(&b, 0, ne, GGTK_TENSOR_F32, 0);
    CHECK(rejected(&b, GGTK_ERR_INVALID, n_dims_at(info), "n_dims is 0"));
    gb_free(&b);
}

TEST(test_malformed_dimensions_must_be_positive)
{
    uint64_t ne[3] = {4, 0, 2};
    ggtk_bytes b;
    size_t info = one_tensor(&b, 3, ne, GGTK_TENSOR_F32, 0);
    CHECK(rejected(&b, GGTK_ERR_INVALID, ne_at(info) + 8, "ne[1] is 0, expected > 0"));
    gb_free(&b);
}

TEST(test_malformed_tensor_types_must_be_known)
{
    static const uint32_t bad[] = {4, 5, 31, 36, GGTK_TENSOR_TYPE_COUNT, 0xFFFFFFFFu};
    uint64_t ne[1] = {256};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ggtk_bytes b;
        size_t info = one_tensor(&b, 1, ne, bad[i], 0);
        char needle[64];
        snprintf(needle, sizeof needle, "type is %u, expected a known", bad[i]);
        CHECK(rejected(&b, GGTK_ERR_INVALID, type_at(info, 1), needle));
        gb_free(&b);
    }
}

TEST(test_malformed_row_must_hold_whole_blocks)
{
    uint64_t ne[2] = {33, 2};
    ggtk_bytes b;
    size_t info = one_tensor(&b, 2, ne, GGTK_TENSOR_Q4_0, 0);
    CHECK(rejected(&b, GGTK_ERR_INVALID, ne_at(info), "ne[0] is 33, expected a multiple of the "
                                                      "q4_0 block size 32"));
    gb_free(&b);
}

TEST(test_malformed_element_count_and_size_must_fit)
{
    uint64_t ne[3] = {1ull << 32, 1ull << 32, 2};
    ggtk_bytes b;
    size_t info = one_tensor(&b, 3, ne, GGTK_TENSOR_F32, 0);
    CHECK(rejected(&b, GGTK_ERR_OVERFLOW, ne_at(info) + 8, "element count overflows at ne[1]"));
    gb_free(&b);
    uint64_t big[2] = {1ull << 60, 4};
    info = one_tensor(&b, 2, big, GGTK_TENSOR_F64, 0);
    CHECK(rejected(&b, GGTK_ERR_OVERFLOW, type_at(info, 2), "byte size"));
    gb_free(&b);
    info = one_tensor(&b, 2, big, GGTK_TENSOR_F16, 0);
    CHECK(rejected(&b, GGTK_ERR_OVERFLOW, type_at(info, 2), "byte size"));
    gb_free(&b);
}

TEST(test_malformed_offsets_must_be_aligned)
{
    uint64_t ne[1] = {4};
    ggtk_bytes b;
    size_t info = one_tensor(&b, 1, ne, GGTK_TENSOR_F32, 16);
    CHECK(rejected(&b, GGTK_ERR_LAYOUT, offset_at(info, 1),
                   "offset 16 is not a multiple of the alignment 32"));
    gb_free(&b);
}

TEST(test_malformed_tensor_data_must_lie_in_the_file)
{
    uint64_t ne[1] = {8};
    ggtk_bytes b;
    size_t info = one_tensor(&b, 1, ne, GGTK_TENSOR_F32, 64);
    CHECK(rejected(&b, GGTK_ERR_TRUNCATED, offset_at(info, 1), "ends past the 64-byte data"));
    gb_free(&b);
    info = one_tensor(&b, 1, ne, GGTK_TENSOR_F32, UINT64_MAX - 31);
    CHECK(rejected(&b, GGTK_ERR_OVERFLOW, offset_at(info, 1), "overflows"));
    gb_free(&b);
}

TEST(test_malformed_missing_padding_before_data_is_rejected)
{
    ggtk_bytes b;
    new_file(&b, 1, 0);
    uint64_t ne[1] = {8};
    gb_tensor(&b, "w", 1, ne, GGTK_TENSOR_F32, 0);
    CHECK(rejected(&b, GGTK_ERR_TRUNCATED, offset_at(24, 1), "tensor 0 'w': data [0, 32) ends"));
    gb_free(&b);
}

TEST(test_malformed_tensor_names_must_be_unique)
{
    ggtk_bytes b;
    new_file(&b, 2, 0);
    uint64_t ne[1] = {8};
    gb_tensor(&b, "w", 1, ne, GGTK_TENSOR_F32, 0);
    size_t at = gb_pos(&b);
    gb_tensor(&b, "w", 1, ne, GGTK_TENSOR_F32, 32);
    data_section(&b, 64);
    CHECK(rejected(&b, GGTK_ERR_DUPLICATE, at, "tensor 1 'w': duplicate tensor name"));
    gb_free(&b);
}

TEST(test_malformed_tensor_data_must_not_overlap)
{
    ggtk_bytes b;
    new_file(&b, 3, 0);
    uint64_t ne[1] = {16};
    gb_tensor(&b, "a", 1, ne, GGTK_TENSOR_F32, 128);
    size_t at = gb_pos(&b);
    gb_tensor(&b, "b", 1, ne, GGTK_TENSOR_F32, 160);
    gb_tensor(&b, "c", 1, ne, GGTK_TENSOR_F32, 0);
    data_section(&b, 256);
    CHECK(rejected(&b, GGTK_ERR_LAYOUT, offset_at(at, 1), "tensor 1 'b': data [160, 224) overlaps "
                                                          "tensor 0 'a' [128, 192)"));
    gb_free(&b);
}

TEST(test_malformed_messages_stay_one_readable_line)
{
    char name[300];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    name[3] = '\n';
    name[4] = '\t';
    uint64_t ne[1] = {8};
    ggtk_bytes b;
    new_file(&b, 1, 0);
    gb_tensor(&b, name, 1, ne, GGTK_TENSOR_F32, 0);
    ggtk_error err;
    CHECK(!ggtk_open_memory(b.data, b.len, "x.gguf", &err) && err.status == GGTK_ERR_TRUNCATED);
    CHECK_MSG(!strchr(err.message, '\n') && !strchr(err.message, '\t'), "%s", err.message);
    CHECK_MSG(strstr(err.message, "tensor 0 'nnn\\n\\tnnn") && strstr(err.message, "...': data"),
              "%s", err.message);
    gb_free(&b);
}

/* A key that holds a terminal escape is quoted escaped: the message holds no raw control byte. */
TEST(test_malformed_messages_escape_control_bytes_in_keys)
{
    ggtk_bytes b;
    new_file(&b, 0, 2);
    gb_kv_u32(&b, "\x1b[31mred\x7f", 1);
    size_t at = gb_pos(&b);
    gb_kv_u32(&b, "\x1b[31mred\x7f", 2);
    CHECK(rejected(&b, GGTK_ERR_DUPLICATE, at, "kv 1 '\\x1b[31mred\\x7f': duplicate key"));
    gb_free(&b);
}
