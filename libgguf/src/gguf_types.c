/* gguf_types.c - the table of tensor types and of metadata value types.
 * Block geometry is defined here and nowhere else; every other module asks this table. */
#include <ggtk/gguf.h>

#include <strings.h>

#define ROW(id, nm, blk, bytes, q) [GGTK_TENSOR_##id] = {GGTK_TENSOR_##id, nm, blk, bytes, q}

/* Indexed by on-disk code; retired codes stay zeroed (name == NULL). */
static const ggtk_tensor_type_info tensor_types[GGTK_TENSOR_TYPE_COUNT] = {
    ROW(F32, "f32", 1, 4, false),          ROW(F16, "f16", 1, 2, false),
    ROW(Q4_0, "q4_0", 32, 18, true),       ROW(Q4_1, "q4_1", 32, 20, true),
    ROW(Q5_0, "q5_0", 32, 22, true),       ROW(Q5_1, "q5_1", 32, 24, true),
    ROW(Q8_0, "q8_0", 32, 34, true),       ROW(Q8_1, "q8_1", 32, 36, true),
    ROW(Q2_K, "q2_K", 256, 84, true),      ROW(Q3_K, "q3_K", 256, 110, true),
    ROW(Q4_K, "q4_K", 256, 144, true),     ROW(Q5_K, "q5_K", 256, 176, true),
    ROW(Q6_K, "q6_K", 256, 210, true),     ROW(Q8_K, "q8_K", 256, 292, true),
    ROW(IQ2_XXS, "iq2_xxs", 256, 66, true), ROW(IQ2_XS, "iq2_xs", 256, 74, true),
    ROW(IQ3_XXS, "iq3_xxs", 256, 98, true), ROW(IQ1_S, "iq1_s", 256, 50, true),
    ROW(IQ4_NL, "iq4_nl", 32, 18, true),   ROW(IQ3_S, "iq3_s", 256, 110, true),
    ROW(IQ2_S, "iq2_s", 256, 82, true),    ROW(IQ4_XS, "iq4_xs", 256, 136, true),
    ROW(I8, "i8", 1, 1, false),            ROW(I16, "i16", 1, 2, false),
    ROW(I32, "i32", 1, 4, false),          ROW(I64, "i64", 1, 8, false),
    ROW(F64, "f64", 1, 8, false),          ROW(IQ1_M, "iq1_m", 256, 56, true),
    ROW(BF16, "bf16", 1, 2, false),        ROW(TQ1_0, "tq1_0", 256, 54, true),
    ROW(TQ2_0, "tq2_0", 256, 66, true),    ROW(MXFP4, "mxfp4", 32, 17, true),
    ROW(NVFP4, "nvfp4", 64, 36, true),     ROW(Q1_0, "q1_0", 128, 18, true),
    ROW(Q2_0, "q2_0", 64, 18, true),
};

const ggtk_tensor_type_info *ggtk_tensor_type_info_get(ggtk_tensor_type type)
{
    if ((unsigned)type >= GGTK_TENSOR_TYPE_COUNT || tensor_types[type].name == NULL)
        return NULL;
    return &tensor_types[type];
}

const char *ggtk_tensor_type_name(ggtk_tensor_type type)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    return info ? info->name : "unknown";
}

int ggtk_tensor_type_from_name(const char *name)
{
    for (int t = 0; t < GGTK_TENSOR_TYPE_COUNT; t++)
        if (tensor_types[t].name && strcasecmp(tensor_types[t].name, name) == 0)
            return t;
    return -1;
}

bool ggtk_tensor_type_bytes(ggtk_tensor_type type, uint64_t n_elements, uint64_t *bytes)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    if (!info || n_elements % info->block_size != 0)
        return false;
    uint64_t blocks = n_elements / info->block_size;
    uint64_t total;
    if (__builtin_mul_overflow(blocks, (uint64_t)info->block_bytes, &total))
        return false;
    *bytes = total;
    return true;
}

/* Name and on-disk element size of each metadata value type. */
static const struct {
    const char *name;
    size_t size;
} value_types[GGTK_VALUE_TYPE_COUNT] = {
    [GGTK_VALUE_UINT8] = {"uint8", 1},     [GGTK_VALUE_INT8] = {"int8", 1},
    [GGTK_VALUE_UINT16] = {"uint16", 2},   [GGTK_VALUE_INT16] = {"int16", 2},
    [GGTK_VALUE_UINT32] = {"uint32", 4},   [GGTK_VALUE_INT32] = {"int32", 4},
    [GGTK_VALUE_FLOAT32] = {"float32", 4}, [GGTK_VALUE_BOOL] = {"bool", 1},
    [GGTK_VALUE_STRING] = {"string", 0},   [GGTK_VALUE_ARRAY] = {"array", 0},
    [GGTK_VALUE_UINT64] = {"uint64", 8},   [GGTK_VALUE_INT64] = {"int64", 8},
    [GGTK_VALUE_FLOAT64] = {"float64", 8},
};

const char *ggtk_value_type_name(ggtk_value_type type)
{
    return (unsigned)type < GGTK_VALUE_TYPE_COUNT ? value_types[type].name : "unknown";
}

size_t ggtk_value_type_size(ggtk_value_type type)
{
    return (unsigned)type < GGTK_VALUE_TYPE_COUNT ? value_types[type].size : 0;
}

const char *ggtk_strerror(ggtk_status status)
{
    static const char *const names[] = {
        [GGTK_OK] = "success",
        [GGTK_ERR_IO] = "I/O error",
        [GGTK_ERR_NOMEM] = "out of memory",
        [GGTK_ERR_MAGIC] = "not a GGUF file",
        [GGTK_ERR_VERSION] = "unsupported GGUF version",
        [GGTK_ERR_TRUNCATED] = "truncated file",
        [GGTK_ERR_OVERFLOW] = "size overflow",
        [GGTK_ERR_INVALID] = "invalid field",
        [GGTK_ERR_DUPLICATE] = "duplicate name",
        [GGTK_ERR_LAYOUT] = "bad tensor data layout",
        [GGTK_ERR_NOT_FOUND] = "not found",
        [GGTK_ERR_TYPE] = "wrong value type",
        [GGTK_ERR_USAGE] = "invalid use or options",
        [GGTK_ERR_UNSUPPORTED] = "unsupported",
        [GGTK_ERR_NONFINITE] = "non-finite value",
        [GGTK_ERR_PATH] = "output path refused",
        [GGTK_ERR_REQUANTIZE] = "already quantized",
    };
    if ((unsigned)status < sizeof names / sizeof names[0] && names[status])
        return names[status];
    return "unknown error";
}
