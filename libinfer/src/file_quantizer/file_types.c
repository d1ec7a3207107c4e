/* file_types.c - the file types gguf-quantize writes, named as llama-quantize names them. The
 * numbers, names and main tensor types are libgguf's file-type table (gguf_util.h); this file only
 * adds llama-quantize's spelling, its aliases, and which file types our rules cover. */
#include "rules.h"

#include <ggtk/gguf_util.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* llama-quantize's short names for the medium K mixes. */
static const struct {
    const char *name;
    ggtk_file_type file_type;
} aliases[] = {
    {"Q3_K", GGTK_FILE_TYPE_Q3_K_M},
    {"Q4_K", GGTK_FILE_TYPE_Q4_K_M},
    {"Q5_K", GGTK_FILE_TYPE_Q5_K_M},
};

/* The file types whose per-tensor rules rules.c and rules_mix.c implement. The IQ mixes, Q2_K_S
 * and MXFP4_MOE have rules of their own (and need an importance matrix or MoE handling) that are
 * not ported. */
static const ggtk_file_type planned[] = {
    GGTK_FILE_TYPE_F32,    GGTK_FILE_TYPE_F16,    GGTK_FILE_TYPE_BF16,   GGTK_FILE_TYPE_Q4_0,
    GGTK_FILE_TYPE_Q4_1,   GGTK_FILE_TYPE_Q5_0,   GGTK_FILE_TYPE_Q5_1,   GGTK_FILE_TYPE_Q8_0,
    GGTK_FILE_TYPE_Q2_K,   GGTK_FILE_TYPE_Q3_K_S, GGTK_FILE_TYPE_Q3_K_M, GGTK_FILE_TYPE_Q3_K_L,
    GGTK_FILE_TYPE_Q4_K_S, GGTK_FILE_TYPE_Q4_K_M, GGTK_FILE_TYPE_Q5_K_S, GGTK_FILE_TYPE_Q5_K_M,
    GGTK_FILE_TYPE_Q6_K,   GGTK_FILE_TYPE_TQ1_0,  GGTK_FILE_TYPE_TQ2_0,  GGTK_FILE_TYPE_Q1_0,
    GGTK_FILE_TYPE_Q2_0,
};

bool inf_quantize_file_type_supported(uint32_t file_type)
{
    for (size_t i = 0; i < sizeof planned / sizeof planned[0]; i++)
        if ((uint32_t)planned[i] == file_type)
            return true;
    return false;
}

const char *inf_quantize_file_type_name(uint32_t file_type)
{
    const ggtk_file_type_info *info = ggtk_file_type_info_get(file_type);
    if (!info || info->tensor_type < 0) /* llama-quantize cannot write it: no name there */
        return NULL;
    const char *name = info->name;
    if (strncmp(name, "MOSTLY_", 7) == 0)
        return name + 7;
    if (strncmp(name, "ALL_", 4) == 0)
        return name + 4;
    return name;
}

/* A decimal number of at most 9 digits, or -1. */
static int parse_code(const char *text)
{
    size_t n = strlen(text);
    if (n == 0 || n > 9)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)text[i]))
            return -1;
    return atoi(text);
}

int inf_quantize_file_type_from_name(const char *name)
{
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcasecmp(name, aliases[i].name) == 0)
            return (int)aliases[i].file_type;
    int code = parse_code(name);
    if (code >= 0)
        return inf_quantize_file_type_name((uint32_t)code) ? code : -1;
    for (uint32_t c = 0; c < GGTK_FILE_TYPE_COUNT; c++) {
        const char *known = inf_quantize_file_type_name(c);
        if (known && strcasecmp(name, known) == 0)
            return (int)c;
    }
    return -1;
}

ggtk_tensor_type quantize_file_type_tensor_type(uint32_t file_type)
{
    return (ggtk_tensor_type)ggtk_file_type_info_get(file_type)->tensor_type;
}
