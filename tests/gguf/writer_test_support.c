/* writer_test_support.c - helpers shared by the writer tests (see writer_test_support.h). */
#include "writer_test_support.h"
#include "test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *support_make_dir(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile(name));
    if (mkdir(path, 0755) != 0) {
        perror(path);
        abort();
    }
    return path;
}

int support_dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int count = 0;
    const struct dirent *entry;
    while ((entry = readdir(d)))
        count += strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0;
    closedir(d);
    return count;
}

unsigned char *support_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *data = NULL;
    long length = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (length = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0)
        data = malloc(length ? (size_t)length : 1);
    if (data && fread(data, 1, (size_t)length, f) != (size_t)length) {
        free(data);
        data = NULL;
    }
    fclose(f);
    if (data)
        *size = (size_t)length;
    return data;
}

bool support_same_bytes(const char *path_a, const char *path_b)
{
    size_t size_a = 0, size_b = 0;
    unsigned char *a = support_read_file(path_a, &size_a);
    unsigned char *b = support_read_file(path_b, &size_b);
    bool same = a && b && size_a == size_b && memcmp(a, b, size_a) == 0;
    free(a);
    free(b);
    return same;
}

void support_fill(unsigned char *data, size_t size, unsigned seed)
{
    uint32_t state = seed * 2654435761u + 1;
    for (size_t i = 0; i < size; i++) {
        state = state * 1103515245u + 12345u;
        data[i] = (unsigned char)(state >> 16);
    }
}

/* Hand `size` bytes to the writer in pieces of at most `piece` bytes. */
static ggtk_status write_in_pieces(ggtk_writer *writer, const unsigned char *data, size_t size,
                                   size_t piece, ggtk_error *err)
{
    ggtk_status status = GGTK_OK;
    for (size_t done = 0; done < size && status == GGTK_OK; done += piece)
        status = ggtk_writer_write_data(writer, data + done,
                                        size - done < piece ? size - done : piece, err);
    return status;
}

ggtk_status support_stream_tensors(ggtk_writer *writer, unsigned seed, size_t piece,
                                   ggtk_error *err)
{
    for (int64_t i = 0; i < ggtk_writer_tensor_count(writer); i++) {
        size_t size = (size_t)ggtk_writer_tensor(writer, i)->size;
        unsigned char *data = malloc(size);
        if (!data)
            return GGTK_ERR_NOMEM;
        support_fill(data, size, seed + (unsigned)i);
        ggtk_status status = write_in_pieces(writer, data, size, piece, err);
        free(data);
        if (status != GGTK_OK)
            return status;
    }
    return GGTK_OK;
}

static bool strings_equal(const ggtk_string *a, const ggtk_string *b)
{
    return a->len == b->len && memcmp(a->data, b->data, (size_t)a->len) == 0 &&
           a->data[a->len] == '\0' && b->data[b->len] == '\0';
}

static bool arrays_equal(const ggtk_array *a, const ggtk_array *b)
{
    if (a->elem_type != b->elem_type || a->count != b->count)
        return false;
    size_t size = ggtk_value_type_size(a->elem_type);
    if (size != 0)
        return a->count == 0 || memcmp(a->data, b->data, (size_t)a->count * size) == 0;
    for (uint64_t i = 0; i < a->count; i++) {
        bool same = a->elem_type == GGTK_VALUE_ARRAY
                        ? support_values_equal((const ggtk_value *)a->data + i,
                                               (const ggtk_value *)b->data + i)
                        : strings_equal((const ggtk_string *)a->data + i,
                                        (const ggtk_string *)b->data + i);
        if (!same)
            return false;
    }
    return true;
}

bool support_values_equal(const ggtk_value *a, const ggtk_value *b)
{
    if (a->type != b->type)
        return false;
    if (a->type == GGTK_VALUE_STRING)
        return strings_equal(&a->v.str, &b->v.str);
    if (a->type == GGTK_VALUE_ARRAY)
        return arrays_equal(&a->v.arr, &b->v.arr);
    return memcmp(&a->v, &b->v, ggtk_value_type_size(a->type)) == 0;
}

/* ---- the oracle's JSON description ---------------------------------------------------------- */

int oracle_write(const char *ggtk_path, const char *json_path, char **output)
{
    return test_run(output, "python3 %s write '%s' '%s'", ORACLE_SCRIPT, ggtk_path, json_path);
}

json_t *oracle_load(const char *json_path)
{
    json_error_t error;
    json_t *doc = json_load_file(json_path, JSON_ALLOW_NUL, &error);
    if (!doc)
        fprintf(stderr, "    %s:%d: %s\n", json_path, error.line, error.text);
    return doc;
}

static int value_type_from_name(const char *name)
{
    for (int t = 0; t < GGTK_VALUE_TYPE_COUNT; t++)
        if (strcmp(ggtk_value_type_name((ggtk_value_type)t), name) == 0)
            return t;
    return -1;
}

/* A fixed-size or string value from its description; strings point into the JSON document. */
static bool scalar_from_json(ggtk_value *value, ggtk_value_type type, json_t *described)
{
    memset(value, 0, sizeof *value);
    value->type = type;
    const char *digits = json_string_value(described);
    switch (type) {
    case GGTK_VALUE_UINT8: value->v.u8 = (uint8_t)strtoul(digits, NULL, 10); break;
    case GGTK_VALUE_INT8: value->v.i8 = (int8_t)strtol(digits, NULL, 10); break;
    case GGTK_VALUE_UINT16: value->v.u16 = (uint16_t)strtoul(digits, NULL, 10); break;
    case GGTK_VALUE_INT16: value->v.i16 = (int16_t)strtol(digits, NULL, 10); break;
    case GGTK_VALUE_UINT32: value->v.u32 = (uint32_t)strtoul(digits, NULL, 10); break;
    case GGTK_VALUE_INT32: value->v.i32 = (int32_t)strtol(digits, NULL, 10); break;
    case GGTK_VALUE_UINT64: value->v.u64 = strtoull(digits, NULL, 10); break;
    case GGTK_VALUE_INT64: value->v.i64 = strtoll(digits, NULL, 10); break;
    case GGTK_VALUE_FLOAT32: value->v.f32 = (float)json_number_value(described); break;
    case GGTK_VALUE_FLOAT64: value->v.f64 = json_number_value(described); break;
    case GGTK_VALUE_BOOL: value->v.b = json_is_true(described); break;
    case GGTK_VALUE_STRING:
        value->v.str.len = json_string_length(described);
        value->v.str.data = json_string_value(described);
        break;
    default: return false;
    }
    return type == GGTK_VALUE_BOOL || type == GGTK_VALUE_FLOAT32 || type == GGTK_VALUE_FLOAT64 ||
           json_is_string(described);
}

static void array_tree_free(ggtk_array *array)
{
    if (array->elem_type == GGTK_VALUE_ARRAY)
        for (uint64_t i = 0; i < array->count; i++)
            array_tree_free(&((ggtk_value *)array->data)[i].v.arr);
    free((void *)array->data);
}

/* {"elem_type": T, "value": [...]} as a ggtk_array; free with array_tree_free(). */
static bool array_from_json(ggtk_array *array, json_t *described)
{
    int elem = value_type_from_name(json_string_value(json_object_get(described, "elem_type")));
    json_t *elements = json_object_get(described, "value");
    if (elem < 0 || !json_is_array(elements))
        return false;
    size_t count = json_array_size(elements);
    size_t size = ggtk_value_type_size(elem);
    size_t element_bytes = elem == GGTK_VALUE_STRING  ? sizeof(ggtk_string)
                           : elem == GGTK_VALUE_ARRAY ? sizeof(ggtk_value)
                                                      : size;
    unsigned char *data = calloc(count ? count : 1, element_bytes);
    *array = (ggtk_array){(ggtk_value_type)elem, 0, data};
    for (size_t i = 0; data && i < count; i++) {
        json_t *element = json_array_get(elements, i);
        ggtk_value scalar;
        bool ok;
        if (elem == GGTK_VALUE_ARRAY) {
            ggtk_value *nested = (ggtk_value *)data + i;
            nested->type = GGTK_VALUE_ARRAY;
            ok = array_from_json(&nested->v.arr, element);
        } else if ((ok = scalar_from_json(&scalar, (ggtk_value_type)elem, element))) {
            if (elem == GGTK_VALUE_STRING)
                ((ggtk_string *)data)[i] = scalar.v.str;
            else /* the union's members all start at its first byte; the host is little-endian */
                memcpy(data + i * size, &scalar.v, size);
        }
        array->count = i + 1;
        if (!ok) {
            array_tree_free(array);
            return false;
        }
    }
    return data != NULL;
}

static ggtk_status set_described(ggtk_writer *writer, json_t *entry)
{
    const char *key = json_string_value(json_object_get(entry, "key"));
    int type = value_type_from_name(json_string_value(json_object_get(entry, "type")));
    json_t *described = json_object_get(entry, "value");
    ggtk_value value = {.type = GGTK_VALUE_ARRAY};
    if (type == GGTK_VALUE_ARRAY) {
        if (!array_from_json(&value.v.arr, described))
            return GGTK_ERR_INVALID;
        ggtk_status status = ggtk_writer_set(writer, key, &value);
        array_tree_free(&value.v.arr);
        return status;
    }
    if (type < 0 || !scalar_from_json(&value, (ggtk_value_type)type, described))
        return GGTK_ERR_INVALID;
    return ggtk_writer_set(writer, key, &value);
}

unsigned char *oracle_tensor_data(json_t *tensor, size_t *size)
{
    const char *hex = json_string_value(json_object_get(tensor, "data_hex"));
    size_t length = hex ? strlen(hex) / 2 : 0;
    unsigned char *data = malloc(length ? length : 1);
    for (size_t i = 0; data && i < length; i++) {
        unsigned byte;
        sscanf(hex + 2 * i, "%2x", &byte);
        data[i] = (unsigned char)byte;
    }
    *size = length;
    return data;
}

static ggtk_status add_described_tensor(ggtk_writer *writer, json_t *tensor)
{
    json_t *shape = json_object_get(tensor, "ne");
    uint64_t ne[GGTK_MAX_DIMS] = {0};
    size_t n_dims = json_array_size(shape);
    for (size_t d = 0; d < n_dims && d < GGTK_MAX_DIMS; d++)
        ne[d] = (uint64_t)json_integer_value(json_array_get(shape, d));
    int type = ggtk_tensor_type_from_name(json_string_value(json_object_get(tensor, "type")));
    return ggtk_writer_add_tensor(writer, json_string_value(json_object_get(tensor, "name")),
                                  (ggtk_tensor_type)type, (uint32_t)n_dims, ne);
}

static ggtk_status stream_described_tensors(ggtk_writer *writer, json_t *tensors, size_t piece,
                                            ggtk_error *err)
{
    ggtk_status status = GGTK_OK;
    for (size_t i = 0; i < json_array_size(tensors) && status == GGTK_OK; i++) {
        size_t size;
        unsigned char *data = oracle_tensor_data(json_array_get(tensors, i), &size);
        status = data ? write_in_pieces(writer, data, size, piece, err) : GGTK_ERR_NOMEM;
        free(data);
    }
    return status;
}

ggtk_status oracle_write_with_libgguf(json_t *doc, bool include_all, const char *path,
                                      size_t piece, ggtk_error *err)
{
    ggtk_writer *writer = ggtk_writer_new();
    if (!writer)
        return GGTK_ERR_NOMEM;
    ggtk_status status = GGTK_OK;
    json_t *metadata = json_object_get(doc, "metadata");
    json_t *tensors = json_object_get(doc, "tensors");
    for (size_t i = 0; i < json_array_size(metadata) && status == GGTK_OK; i++) {
        json_t *entry = json_array_get(metadata, i);
        if (include_all || json_is_true(json_object_get(entry, "gguf_py_writes")))
            status = set_described(writer, entry);
    }
    for (size_t i = 0; i < json_array_size(tensors) && status == GGTK_OK; i++)
        status = add_described_tensor(writer, json_array_get(tensors, i));
    if (status == GGTK_OK)
        status = ggtk_writer_begin(writer, path, err);
    if (status == GGTK_OK)
        status = stream_described_tensors(writer, tensors, piece, err);
    if (status == GGTK_OK)
        status = ggtk_writer_finish(writer, err);
    ggtk_writer_free(writer);
    return status;
}

static bool array_matches(const ggtk_array *array, json_t *described, char *why, size_t why_size);

/* Compare one fixed-size or string value with its description, bit for bit. */
static bool scalar_matches(const void *got, ggtk_value_type type, json_t *described, char *why,
                           size_t why_size)
{
    ggtk_value want;
    if (!scalar_from_json(&want, type, described)) {
        snprintf(why, why_size, "bad description of a %s", ggtk_value_type_name(type));
        return false;
    }
    bool same;
    if (type == GGTK_VALUE_STRING) {
        const ggtk_string *string = got;
        same = string->len == want.v.str.len &&
               memcmp(string->data, want.v.str.data, (size_t)string->len) == 0 &&
               string->data[string->len] == '\0';
    } else {
        same = memcmp(got, &want.v, ggtk_value_type_size(type)) == 0;
    }
    if (!same)
        snprintf(why, why_size, "%s value differs from %s", ggtk_value_type_name(type),
                 json_is_string(described) ? json_string_value(described) : "the description");
    return same;
}

static bool array_matches(const ggtk_array *array, json_t *described, char *why, size_t why_size)
{
    const char *elem = json_string_value(json_object_get(described, "elem_type"));
    json_t *elements = json_object_get(described, "value");
    if (!elem || strcmp(ggtk_value_type_name(array->elem_type), elem) != 0 ||
        array->count != json_array_size(elements)) {
        snprintf(why, why_size, "array of %llu %s, described as %zu %s",
                 (unsigned long long)array->count, ggtk_value_type_name(array->elem_type),
                 json_array_size(elements), elem ? elem : "?");
        return false;
    }
    size_t size = ggtk_value_type_size(array->elem_type);
    for (uint64_t i = 0; i < array->count; i++) {
        json_t *element = json_array_get(elements, i);
        bool same;
        if (array->elem_type == GGTK_VALUE_ARRAY)
            same = array_matches(&((const ggtk_value *)array->data)[i].v.arr, element, why,
                                 why_size);
        else if (array->elem_type == GGTK_VALUE_STRING)
            same = scalar_matches((const ggtk_string *)array->data + i, GGTK_VALUE_STRING,
                                  element, why, why_size);
        else
            same = scalar_matches((const unsigned char *)array->data + i * size,
                                  array->elem_type, element, why, why_size);
        if (!same)
            return false;
    }
    return true;
}

bool oracle_value_matches(const ggtk_value *value, const char *type_name, json_t *described,
                          char *why, size_t why_size)
{
    if (strcmp(ggtk_value_type_name(value->type), type_name) != 0) {
        snprintf(why, why_size, "type %s, described as %s", ggtk_value_type_name(value->type),
                 type_name);
        return false;
    }
    if (value->type == GGTK_VALUE_ARRAY)
        return array_matches(&value->v.arr, described, why, why_size);
    return scalar_matches(value->type == GGTK_VALUE_STRING ? (const void *)&value->v.str
                                                           : (const void *)&value->v,
                          value->type, described, why, why_size);
}
