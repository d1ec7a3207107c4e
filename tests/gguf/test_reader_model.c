/* Tests of the GGUF reader on the real model (SmolLM2-135M Q4_1): its header equals gguf-py's
 * reading of it, every way of opening agrees, and cutting it anywhere fails cleanly. */
#include <ggtk/gguf.h>
#include "gguf_bytes.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

static void print_bytes_summary(FILE *out, const ggtk_string *strings, uint64_t count)
{
    uint64_t total = 0;
    uint32_t checksum = 0;
    for (uint64_t i = 0; i < count; i++) {
        total += strings[i].len;
        for (uint64_t k = 0; k < strings[i].len; k++)
            checksum += (unsigned char)strings[i].data[k];
    }
    fprintf(out, "len=%llu sum=%u", (unsigned long long)total, checksum);
}

/* The integer sum of an integer array (the element types the model uses). */
static long long array_int_sum(const ggtk_array *arr)
{
    long long sum = 0;
    for (uint64_t i = 0; i < arr->count; i++) {
        switch (arr->elem_type) {
        case GGTK_VALUE_INT32: sum += ((const int32_t *)arr->data)[i]; break;
        case GGTK_VALUE_UINT32: sum += ((const uint32_t *)arr->data)[i]; break;
        case GGTK_VALUE_INT8: sum += ((const int8_t *)arr->data)[i]; break;
        case GGTK_VALUE_UINT8: sum += ((const uint8_t *)arr->data)[i]; break;
        default: break;
        }
    }
    return sum;
}

static void print_kv(FILE *out, const char *key, const ggtk_value *v)
{
    fprintf(out, "kv %s %s", key, ggtk_value_type_name(v->type));
    switch (v->type) {
    case GGTK_VALUE_STRING:
        fputc(' ', out);
        print_bytes_summary(out, &v->v.str, 1);
        break;
    case GGTK_VALUE_ARRAY:
        fprintf(out, ":%s count=%llu", ggtk_value_type_name(v->v.arr.elem_type),
                (unsigned long long)v->v.arr.count);
        if (v->v.arr.elem_type == GGTK_VALUE_STRING) {
            fputc(' ', out);
            print_bytes_summary(out, v->v.arr.data, v->v.arr.count);
        } else if (v->v.arr.elem_type != GGTK_VALUE_FLOAT32 &&
                   v->v.arr.elem_type != GGTK_VALUE_FLOAT64) {
            fprintf(out, " sum=%lld", array_int_sum(&v->v.arr));
        }
        break;
    case GGTK_VALUE_FLOAT32: fprintf(out, " %.9g", v->v.f32); break;
    case GGTK_VALUE_FLOAT64: fprintf(out, " %.9g", v->v.f64); break;
    case GGTK_VALUE_BOOL: fprintf(out, " %d", v->v.b); break;
    case GGTK_VALUE_UINT8: fprintf(out, " %u", v->v.u8); break;
    case GGTK_VALUE_INT8: fprintf(out, " %d", v->v.i8); break;
    case GGTK_VALUE_UINT16: fprintf(out, " %u", v->v.u16); break;
    case GGTK_VALUE_INT16: fprintf(out, " %d", v->v.i16); break;
    case GGTK_VALUE_UINT32: fprintf(out, " %u", v->v.u32); break;
    case GGTK_VALUE_INT32: fprintf(out, " %d", v->v.i32); break;
    case GGTK_VALUE_UINT64: fprintf(out, " %llu", (unsigned long long)v->v.u64); break;
    case GGTK_VALUE_INT64: fprintf(out, " %lld", (long long)v->v.i64); break;
    default: break;
    }
    fputc('\n', out);
}

/* The header in the line format of tests/gguf/py/gguf_dump.py; malloc'd. */
static char *dump_header(const ggtk_file *f)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    fprintf(out, "version %u\nkv_count %lld\ntensor_count %lld\ndata_offset %llu\n",
            ggtk_version(f), (long long)ggtk_kv_count(f), (long long)ggtk_tensor_count(f),
            (unsigned long long)ggtk_data_offset(f));
    for (int64_t i = 0; i < ggtk_kv_count(f); i++)
        print_kv(out, ggtk_kv_key(f, i), ggtk_kv_value(f, i));
    for (int64_t i = 0; i < ggtk_tensor_count(f); i++) {
        const ggtk_tensor_info *t = ggtk_tensor(f, i);
        fprintf(out, "tensor %s %d", t->name, (int)t->type);
        for (uint32_t d = 0; d < t->n_dims; d++)
            fprintf(out, " %llu", (unsigned long long)t->ne[d]);
        fprintf(out, " %llu\n", (unsigned long long)t->offset);
    }
    fclose(out);
    return text;
}

static uint64_t data_checksum(const ggtk_file *f)
{
    uint64_t hash = 1469598103934665603ull;
    for (int64_t i = 0; i < ggtk_tensor_count(f); i++) {
        const ggtk_tensor_info *t = ggtk_tensor(f, i);
        const unsigned char *bytes = t->data;
        for (uint64_t k = 0; k < t->size; k += 4093)
            hash = (hash ^ bytes[k]) * 1099511628211ull;
        hash = (hash ^ bytes[t->size - 1]) * 1099511628211ull;
    }
    return hash;
}

TEST(test_reader_model_header_equals_gguf_py)
{
    const char *model = test_model_path();
    if (!model)
        SKIP("model not downloaded");
    char *expected = NULL;
    int rc = test_run(&expected, "python3 tests/gguf/py/gguf_dump.py %s", model);
    CHECK_MSG(rc == 0, "gguf_dump.py failed: %s", expected ? expected : "");
    ggtk_error err;
    ggtk_file *f = ggtk_open(model, GGTK_OPEN_MMAP, &err);
    CHECK_MSG(f, "%s", err.message);
    CHECK(ggtk_version(f) == 3 && ggtk_kv_count(f) == 33 && ggtk_tensor_count(f) == 272);
    const ggtk_tensor_info *first = ggtk_tensor(f, 0);
    CHECK(strcmp(first->name, "token_embd.weight") == 0 && first->type == GGTK_TENSOR_Q8_0);
    CHECK(first->n_dims == 2 && first->ne[0] == 576 && first->ne[1] == 49152);
    char *actual = dump_header(f);
    CHECK_MSG(strcmp(actual, expected) == 0,
              "libgguf and gguf-py disagree:\n%.2000s\n----\n%.2000s", actual, expected);
    CHECK(ggtk_file_size(f) == ggtk_data_offset(f) + ggtk_data_size(f));
    free(actual);
    free(expected);
    ggtk_close(f);
}

TEST(test_reader_model_opens_alike_in_every_mode)
{
    const char *model = test_model_path();
    if (!model)
        SKIP("model not downloaded");
    ggtk_error err;
    ggtk_file *mapped = ggtk_open(model, GGTK_OPEN_MMAP, &err);
    CHECK_MSG(mapped, "%s", err.message);
    char *expected = dump_header(mapped);
    uint64_t expected_sum = data_checksum(mapped);
    char command[512];
    snprintf(command, sizeof command, "cat %s", model);
    for (int variant = 0; variant < 4; variant++) {
        FILE *pipe = NULL;
        ggtk_file *f;
        if (variant < 2) {
            f = ggtk_open(model, variant == 0 ? GGTK_OPEN_READ : GGTK_OPEN_METADATA, &err);
        } else {
            pipe = popen(command, "r");
            CHECK(pipe);
            f = ggtk_open_stream(pipe, "pipe", variant == 2 ? GGTK_OPEN_READ : GGTK_OPEN_METADATA,
                                 &err);
        }
        CHECK_MSG(f, "variant %d: %s", variant, err.message);
        char *actual = dump_header(f);
        CHECK_MSG(strcmp(actual, expected) == 0, "variant %d differs", variant);
        free(actual);
        bool with_data = variant == 0 || variant == 2;
        CHECK_MSG(with_data ? data_checksum(f) == expected_sum : ggtk_tensor(f, 0)->data == NULL,
                  "variant %d", variant);
        if (with_data)
            CHECK(ggtk_data_size(f) == ggtk_data_size(mapped));
        ggtk_close(f);
        if (pipe)
            pclose(pipe);
    }
    free(expected);
    ggtk_close(mapped);
}

/* The model's bytes, mapped read-only. */
typedef struct mapped_model {
    const unsigned char *bytes;
    size_t size;
} mapped_model;

static bool map_model(mapped_model *m)
{
    const char *model = test_model_path();
    int fd = model ? open(model, O_RDONLY) : -1;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return false;
    m->size = (size_t)st.st_size;
    m->bytes = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    return m->bytes != MAP_FAILED;
}

/* Open the first `len` bytes; it must fail with `status`. Returns false (test failed) if not. */
static bool cut_fails(const unsigned char *bytes, size_t len, ggtk_status status)
{
    ggtk_error err;
    ggtk_file *f = ggtk_open_memory(bytes, len, "cut.gguf", &err);
    if (f) {
        ggtk_close(f);
        test_fail(__FILE__, __LINE__, "cut at %zu opened", len);
        return false;
    }
    if (err.status != status || !strstr(err.message, "cut.gguf: ")) {
        test_fail(__FILE__, __LINE__, "cut at %zu: %s", len, err.message);
        return false;
    }
    return true;
}

TEST(test_reader_model_cut_in_header_start_fails_at_every_offset)
{
    mapped_model m;
    if (!map_model(&m))
        SKIP("model not downloaded");
    /* Magic, counts, all scalar kvs and the first few thousand tokens. */
    for (size_t len = 0; len < 65536; len++)
        if (!cut_fails(m.bytes, len, GGTK_ERR_TRUNCATED))
            break;
    munmap((void *)m.bytes, m.size);
}

TEST(test_reader_model_cut_across_header_and_data_fails)
{
    mapped_model m;
    if (!map_model(&m))
        SKIP("model not downloaded");
    ggtk_file *f = ggtk_open_memory(m.bytes, m.size, "model", NULL);
    CHECK(f);
    size_t data_offset = (size_t)ggtk_data_offset(f);
    ggtk_close(f);
    /* A prime stride samples every region of the 1.7 MB header (token, merge and type arrays,
     * late kvs, tensor infos; each cut costs a parse of everything before it, and the tensor
     * infos are cut at every offset by the next test); the last header bytes are all tried. */
    for (size_t len = 65536; len < data_offset; len += 16411)
        CHECK(cut_fails(m.bytes, len, GGTK_ERR_TRUNCATED));
    for (size_t len = data_offset - 64; len < data_offset; len++)
        CHECK(cut_fails(m.bytes, len, GGTK_ERR_TRUNCATED));
    for (size_t len = data_offset; len < m.size; len += (m.size - data_offset) / 17)
        CHECK(cut_fails(m.bytes, len, GGTK_ERR_TRUNCATED));
    CHECK(cut_fails(m.bytes, m.size - 1, GGTK_ERR_TRUNCATED));
    munmap((void *)m.bytes, m.size);
}

/* Re-encode an array kv keeping only its first `keep` elements. */
static void put_short_array(ggtk_bytes *b, const char *key, const ggtk_array *arr, uint64_t keep)
{
    gb_key(b, key, GGTK_VALUE_ARRAY);
    gb_u32(b, arr->elem_type);
    gb_u64(b, keep);
    if (arr->elem_type == GGTK_VALUE_STRING) {
        const ggtk_string *s = arr->data;
        for (uint64_t i = 0; i < keep; i++) {
            gb_u64(b, s[i].len);
            gb_raw(b, s[i].data, s[i].len);
        }
    } else {
        gb_raw(b, arr->data, keep * ggtk_value_type_size(arr->elem_type));
    }
}

/* The model's header with its three long arrays cut to 8 elements, every other kv and the whole
 * tensor-info table byte for byte: a compact header on which every offset can be cut. */
static bool build_compact_header(const mapped_model *m, ggtk_bytes *b)
{
    ggtk_file *f = ggtk_open_memory(m->bytes, m->size, "model", NULL);
    if (!f)
        return false;
    int64_t n_kv = ggtk_kv_count(f), n_tensors = ggtk_tensor_count(f);
    gb_raw(b, m->bytes, 24); /* magic, version and both counts */
    for (int64_t i = 0; i < n_kv; i++) {
        const ggtk_value *v = ggtk_kv_value(f, i);
        uint64_t begin = ggtk_kv_offset(f, i);
        uint64_t end = i + 1 < n_kv ? ggtk_kv_offset(f, i + 1) : ggtk_tensor(f, 0)->info_offset;
        if (v->type == GGTK_VALUE_ARRAY && v->v.arr.count > 8)
            put_short_array(b, ggtk_kv_key(f, i), &v->v.arr, 8);
        else
            gb_raw(b, m->bytes + begin, end - begin);
    }
    const ggtk_tensor_info *last = ggtk_tensor(f, n_tensors - 1);
    uint64_t infos_end = last->info_offset + 8 + strlen(last->name) + 4 + 8 * last->n_dims + 12;
    uint64_t infos_begin = ggtk_tensor(f, 0)->info_offset;
    gb_raw(b, m->bytes + infos_begin, infos_end - infos_begin);
    gb_align(b, ggtk_alignment(f));
    ggtk_close(f);
    return true;
}

TEST(test_reader_model_tensor_infos_cut_at_every_offset_fail)
{
    mapped_model m;
    if (!map_model(&m))
        SKIP("model not downloaded");
    ggtk_bytes b;
    gb_init(&b);
    CHECK(build_compact_header(&m, &b));
    /* The compact header is valid: metadata-only from a stream of unknown size accepts it. */
    FILE *stream = fmemopen(b.data, b.len, "rb");
    ggtk_error err;
    ggtk_file *f = ggtk_open_stream(stream, "compact", GGTK_OPEN_METADATA, &err);
    CHECK_MSG(f, "%s", err.message);
    CHECK(ggtk_tensor_count(f) == 272 && ggtk_data_offset(f) == b.len);
    ggtk_close(f);
    fclose(stream);
    for (size_t len = 0; len < b.len; len++)
        if (!cut_fails(b.data, len, GGTK_ERR_TRUNCATED))
            break;
    gb_free(&b);
    munmap((void *)m.bytes, m.size);
}

TEST(test_reader_model_metadata_mode_reads_only_the_header)
{
    const char *model = test_model_path();
    if (!model)
        SKIP("model not downloaded");
    /* Serve the header and then stop: a metadata open of a pipe must not wait for the data. */
    ggtk_error err;
    ggtk_file *f = ggtk_open(model, GGTK_OPEN_METADATA, &err);
    CHECK_MSG(f, "%s", err.message);
    uint64_t header = ggtk_data_offset(f);
    ggtk_close(f);
    char command[512];
    snprintf(command, sizeof command, "head -c %llu %s", (unsigned long long)header, model);
    FILE *pipe = popen(command, "r");
    CHECK(pipe);
    f = ggtk_open_stream(pipe, "head", GGTK_OPEN_METADATA, &err);
    CHECK_MSG(f, "%s", err.message);
    CHECK(ggtk_tensor_count(f) == 272 && ggtk_data(f) == NULL && fgetc(pipe) == EOF);
    ggtk_close(f);
    pclose(pipe);
}
