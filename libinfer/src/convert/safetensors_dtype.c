/* safetensors_dtype.c - the one table of safetensors dtypes: name, bytes per element and the GGUF
 * tensor type of the same layout, shared by the reader and the writer. */
#include "safetensors_internal.h"

#include <string.h>

static const safetensors_dtype dtypes[] = {
    {"F64", 8, GGTK_TENSOR_F64},  {"F32", 4, GGTK_TENSOR_F32},   {"F16", 2, GGTK_TENSOR_F16},
    {"BF16", 2, GGTK_TENSOR_BF16}, {"I64", 8, GGTK_TENSOR_I64},  {"I32", 4, GGTK_TENSOR_I32},
    {"I16", 2, GGTK_TENSOR_I16},  {"I8", 1, GGTK_TENSOR_I8},     {"U64", 8, -1},
    {"U32", 4, -1},               {"U16", 2, -1},                {"U8", 1, -1},
    {"BOOL", 1, -1},              {"F8_E4M3", 1, -1},            {"F8_E5M2", 1, -1},
};

const safetensors_dtype *safetensors_dtype_find(const char *name)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strcmp(dtypes[i].name, name) == 0)
            return &dtypes[i];
    return NULL;
}

const safetensors_dtype *safetensors_dtype_of_type(ggtk_tensor_type type)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].type == (int)type)
            return &dtypes[i];
    return NULL;
}
