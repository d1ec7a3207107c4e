/* Tests of the one error value both libraries report through (ggtk/error.h). */
#include <ggtk/error.h>
#include "test.h"

#include <string.h>

TEST(test_error_set_fills_status_offset_and_message_and_returns_the_status)
{
    ggtk_error err = {0};
    CHECK(ggtk_error_set(&err, GGTK_ERR_INVALID, 42, "%s: field %s", "f.gguf", "n_dims") ==
          GGTK_ERR_INVALID);
    CHECK(err.status == GGTK_ERR_INVALID && err.offset == 42);
    CHECK(strcmp(err.message, "f.gguf: field n_dims") == 0);
    CHECK(ggtk_error_set(NULL, GGTK_ERR_IO, GGTK_NO_OFFSET, "ignored") == GGTK_ERR_IO);
}

TEST(test_error_message_never_carries_a_control_byte)
{
    ggtk_error err;
    ggtk_error_set(&err, GGTK_ERR_PATH, GGTK_NO_OFFSET, "%s: refused", "a\nb\x1b[31m\tc\x7f");
    CHECK(strcmp(err.message, "a?b?[31m?c?: refused") == 0);
}

TEST(test_error_long_message_is_cut_to_the_buffer)
{
    ggtk_error err;
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ggtk_error_set(&err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s", big);
    CHECK(strlen(err.message) == sizeof err.message - 1);
}

TEST(test_strerror_names_every_status_and_refuses_others)
{
    for (int s = 0; s < GGTK_STATUS_COUNT; s++)
        CHECK_MSG(strcmp(ggtk_strerror((ggtk_status)s), "unknown error") != 0, "status %d", s);
    CHECK(strcmp(ggtk_strerror(GGTK_STATUS_COUNT), "unknown error") == 0);
    CHECK(strcmp(ggtk_strerror((ggtk_status)-1), "unknown error") == 0);
}
