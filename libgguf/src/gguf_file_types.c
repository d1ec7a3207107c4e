/* gguf_file_types.c - the table of llama.cpp file types (general.file_type): their numbers, enum
 * names, the labels llama.cpp prints, the tensor type it guesses them from and the one
 * llama-quantize writes for them, so that our files and output can be compared with llama.cpp's. */
#include <ggtk/gguf_util.h>

#include <stddef.h>

#define ROW(c, nm, lbl, guess, tensor) [c] = {c, nm, lbl, guess, tensor}

/* Indexed by code; codes llama.cpp retired (4, 5, 6, 33, 34, 35) stay zeroed. */
static const ggtk_file_type_info file_types[] = {
    ROW(0, "ALL_F32", "all F32", GGTK_TENSOR_F32, GGTK_TENSOR_F32),
    ROW(1, "MOSTLY_F16", "F16", GGTK_TENSOR_F16, GGTK_TENSOR_F16),
    ROW(2, "MOSTLY_Q4_0", "Q4_0", GGTK_TENSOR_Q4_0, GGTK_TENSOR_Q4_0),
    ROW(3, "MOSTLY_Q4_1", "Q4_1", GGTK_TENSOR_Q4_1, GGTK_TENSOR_Q4_1),
    ROW(7, "MOSTLY_Q8_0", "Q8_0", GGTK_TENSOR_Q8_0, GGTK_TENSOR_Q8_0),
    ROW(8, "MOSTLY_Q5_0", "Q5_0", GGTK_TENSOR_Q5_0, GGTK_TENSOR_Q5_0),
    ROW(9, "MOSTLY_Q5_1", "Q5_1", GGTK_TENSOR_Q5_1, GGTK_TENSOR_Q5_1),
    ROW(10, "MOSTLY_Q2_K", "Q2_K - Medium", GGTK_TENSOR_Q2_K, GGTK_TENSOR_Q2_K),
    ROW(11, "MOSTLY_Q3_K_S", "Q3_K - Small", -1, GGTK_TENSOR_Q3_K),
    ROW(12, "MOSTLY_Q3_K_M", "Q3_K - Medium", GGTK_TENSOR_Q3_K, GGTK_TENSOR_Q3_K),
    ROW(13, "MOSTLY_Q3_K_L", "Q3_K - Large", -1, GGTK_TENSOR_Q3_K),
    ROW(14, "MOSTLY_Q4_K_S", "Q4_K - Small", -1, GGTK_TENSOR_Q4_K),
    ROW(15, "MOSTLY_Q4_K_M", "Q4_K - Medium", GGTK_TENSOR_Q4_K, GGTK_TENSOR_Q4_K),
    ROW(16, "MOSTLY_Q5_K_S", "Q5_K - Small", -1, GGTK_TENSOR_Q5_K),
    ROW(17, "MOSTLY_Q5_K_M", "Q5_K - Medium", GGTK_TENSOR_Q5_K, GGTK_TENSOR_Q5_K),
    ROW(18, "MOSTLY_Q6_K", "Q6_K", GGTK_TENSOR_Q6_K, GGTK_TENSOR_Q6_K),
    ROW(19, "MOSTLY_IQ2_XXS", "IQ2_XXS - 2.0625 bpw", GGTK_TENSOR_IQ2_XXS, GGTK_TENSOR_IQ2_XXS),
    ROW(20, "MOSTLY_IQ2_XS", "IQ2_XS - 2.3125 bpw", GGTK_TENSOR_IQ2_XS, GGTK_TENSOR_IQ2_XS),
    ROW(21, "MOSTLY_Q2_K_S", "Q2_K - Small", -1, GGTK_TENSOR_Q2_K),
    ROW(22, "MOSTLY_IQ3_XS", "IQ3_XS - 3.3 bpw", -1, GGTK_TENSOR_IQ3_S),
    ROW(23, "MOSTLY_IQ3_XXS", "IQ3_XXS - 3.0625 bpw", GGTK_TENSOR_IQ3_XXS, GGTK_TENSOR_IQ3_XXS),
    ROW(24, "MOSTLY_IQ1_S", "IQ1_S - 1.5625 bpw", GGTK_TENSOR_IQ1_S, GGTK_TENSOR_IQ1_S),
    ROW(25, "MOSTLY_IQ4_NL", "IQ4_NL - 4.5 bpw", GGTK_TENSOR_IQ4_NL, GGTK_TENSOR_IQ4_NL),
    ROW(26, "MOSTLY_IQ3_S", "IQ3_S - 3.4375 bpw", GGTK_TENSOR_IQ3_S, GGTK_TENSOR_IQ3_S),
    ROW(27, "MOSTLY_IQ3_M", "IQ3_S mix - 3.66 bpw", -1, GGTK_TENSOR_IQ3_S),
    ROW(28, "MOSTLY_IQ2_S", "IQ2_S - 2.5 bpw", GGTK_TENSOR_IQ2_S, GGTK_TENSOR_IQ2_XS),
    ROW(29, "MOSTLY_IQ2_M", "IQ2_M - 2.7 bpw", -1, GGTK_TENSOR_IQ2_S),
    ROW(30, "MOSTLY_IQ4_XS", "IQ4_XS - 4.25 bpw", GGTK_TENSOR_IQ4_XS, GGTK_TENSOR_IQ4_XS),
    ROW(31, "MOSTLY_IQ1_M", "IQ1_M - 1.75 bpw", GGTK_TENSOR_IQ1_M, GGTK_TENSOR_IQ1_M),
    ROW(32, "MOSTLY_BF16", "BF16", GGTK_TENSOR_BF16, GGTK_TENSOR_BF16),
    ROW(36, "MOSTLY_TQ1_0", "TQ1_0 - 1.69 bpw ternary", GGTK_TENSOR_TQ1_0, GGTK_TENSOR_TQ1_0),
    ROW(37, "MOSTLY_TQ2_0", "TQ2_0 - 2.06 bpw ternary", GGTK_TENSOR_TQ2_0, GGTK_TENSOR_TQ2_0),
    ROW(38, "MOSTLY_MXFP4_MOE", "MXFP4 MoE", -1, GGTK_TENSOR_MXFP4),
    ROW(39, "MOSTLY_NVFP4", "NVFP4", GGTK_TENSOR_NVFP4, -1),
    ROW(40, "MOSTLY_Q1_0", "Q1_0", GGTK_TENSOR_Q1_0, GGTK_TENSOR_Q1_0),
    ROW(41, "MOSTLY_Q2_0", "Q2_0", GGTK_TENSOR_Q2_0, GGTK_TENSOR_Q2_0),
};

const ggtk_file_type_info *ggtk_file_type_info_get(uint32_t code)
{
    if (code >= sizeof file_types / sizeof file_types[0] || file_types[code].name == NULL)
        return NULL;
    return &file_types[code];
}

uint32_t ggtk_file_type_guess(ggtk_tensor_type type)
{
    for (size_t code = 0; code < sizeof file_types / sizeof file_types[0]; code++)
        if (file_types[code].name && file_types[code].guessed_from == (int)type)
            return (uint32_t)code;
    return 0;
}
