/* gemma_test_support.h - tiny Gemma 2 / Gemma 3 models written by the numpy oracle's generator
 * (tests/model/py/tiny_gemma.py), for the model and eval tests. */
#ifndef GEMMA_TEST_SUPPORT_H
#define GEMMA_TEST_SUPPORT_H

/* Path of the tiny model `variant` ("gemma2", "gemma2_defaults", "gemma2_27b", "gemma3",
 * "gemma3_pattern", "gemma3_global"; see the script), made on first use in the test's scratch folder; NULL when
 * Python fails. Static buffer per call. */
const char *gemma_model(const char *variant);

/* Path of a copy of gemma_model(variant) with its matrices (all but the tied embedding) stored
 * as `type` ("F16", "Q8_0"), made on first use; NULL on failure. Static buffer per call. */
const char *gemma_model_as(const char *variant, const char *type);

#endif
