/* Tests of the tensor type table and value type names. */
#include <ggtk/gguf.h>
#include "test.h"

#include <string.h>

TEST(test_type_table_matches_ggml_block_geometry)
{
    const ggtk_tensor_type_info *q4 = ggtk_tensor_type_info_get(GGTK_TENSOR_Q4_0);
    CHECK(q4 && q4->block_size == 32 && q4->block_bytes == 18 && q4->quantized);
    const ggtk_tensor_type_info *q6k = ggtk_tensor_type_info_get(GGTK_TENSOR_Q6_K);
    CHECK(q6k && q6k->block_size == 256 && q6k->block_bytes == 210);
    const ggtk_tensor_type_info *bf16 = ggtk_tensor_type_info_get(GGTK_TENSOR_BF16);
    CHECK(bf16 && bf16->block_size == 1 && bf16->block_bytes == 2 && !bf16->quantized);
}

TEST(test_type_table_rejects_retired_and_unknown_codes)
{
    CHECK(ggtk_tensor_type_info_get((ggtk_tensor_type)4) == NULL);
    CHECK(ggtk_tensor_type_info_get((ggtk_tensor_type)31) == NULL);
    CHECK(ggtk_tensor_type_info_get(GGTK_TENSOR_TYPE_COUNT) == NULL);
    CHECK(ggtk_tensor_type_info_get((ggtk_tensor_type)-1) == NULL);
}

TEST(test_type_from_name_ignores_case)
{
    CHECK(ggtk_tensor_type_from_name("Q8_0") == GGTK_TENSOR_Q8_0);
    CHECK(ggtk_tensor_type_from_name("q6_k") == GGTK_TENSOR_Q6_K);
    CHECK(ggtk_tensor_type_from_name("q4_3") == -1);
}

TEST(test_type_bytes_checks_blocks_and_overflow)
{
    uint64_t bytes = 0;
    CHECK(ggtk_tensor_type_bytes(GGTK_TENSOR_Q4_0, 64, &bytes) && bytes == 36);
    CHECK(!ggtk_tensor_type_bytes(GGTK_TENSOR_Q4_0, 33, &bytes));
    CHECK(!ggtk_tensor_type_bytes(GGTK_TENSOR_F64, UINT64_MAX / 2, &bytes));
}

TEST(test_tensor_type_name_is_the_table_name_or_unknown)
{
    CHECK(strcmp(ggtk_tensor_type_name(GGTK_TENSOR_Q6_K), "q6_K") == 0);
    CHECK(strcmp(ggtk_tensor_type_name(GGTK_TENSOR_BF16), "bf16") == 0);
    CHECK(strcmp(ggtk_tensor_type_name((ggtk_tensor_type)4), "unknown") == 0);
    CHECK(strcmp(ggtk_tensor_type_name(GGTK_TENSOR_TYPE_COUNT), "unknown") == 0);
    CHECK(strcmp(ggtk_tensor_type_name((ggtk_tensor_type)-1), "unknown") == 0);
}
