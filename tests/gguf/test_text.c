/* Tests of the text helpers in gguf.h: ggtk_escape() keeps control bytes and invalid UTF-8 away
 * from a terminal, ggtk_value_format() renders values on one bounded line. */
#include <ggtk/gguf.h>
#include "test.h"

#include <math.h>
#include <string.h>

/* `value` formatted with the preview limits (or everything when `all`), in a static buffer. */
static const char *formatted(const ggtk_value *value, bool all)
{
    static char buf[4096];
    uint64_t elements = all ? GGTK_FORMAT_ALL : GGTK_FORMAT_PREVIEW_ELEMENTS;
    uint64_t bytes = all ? GGTK_FORMAT_ALL : GGTK_FORMAT_PREVIEW_BYTES;
    size_t needed = ggtk_value_format(value, buf, sizeof buf, elements, bytes);
    return needed < sizeof buf ? buf : "(cut)";
}

TEST(test_escape_turns_controls_and_invalid_utf8_into_escapes)
{
    static const char text[] = "a\nb\tc\r\x1b[31m\\ \x7f\xc2\x9b|\xc3\xa9|\xff|\xe2\x82";
    char buf[128];
    size_t n = ggtk_escape(text, sizeof text - 1, buf, sizeof buf);
    const char *expected = "a\\nb\\tc\\r\\x1b[31m\\\\ \\x7f\\xc2\\x9b|\xc3\xa9|\\xff|\\xe2\\x82";
    CHECK_MSG(strcmp(buf, expected) == 0, "%s", buf);
    CHECK(n == strlen(expected));
    for (const char *p = buf; *p; p++)
        CHECK((unsigned char)*p >= 0x20 && *p != 0x7F);
    /* A NUL inside the text is escaped too, and quotes are left alone outside a value. */
    CHECK(ggtk_escape("x\0\"", 3, buf, sizeof buf) == 6 && strcmp(buf, "x\\x00\"") == 0);
}

TEST(test_escape_cuts_between_escapes_and_returns_the_whole_length)
{
    char buf[6];
    CHECK(ggtk_escape("\x1b\x1b", 2, buf, sizeof buf) == 8);
    CHECK_MSG(strcmp(buf, "\\x1b") == 0, "%s", buf);
    CHECK(ggtk_escape("\xc3\xa9\xc3\xa9\xc3\xa9", 6, buf, sizeof buf) == 6);
    CHECK_MSG(strcmp(buf, "\xc3\xa9\xc3\xa9") == 0, "%s", buf); /* no half character */
    CHECK(ggtk_escape("abc", 3, NULL, 0) == 3);
}

TEST(test_value_format_writes_scalars_as_they_read_back)
{
    const struct {
        ggtk_value value;
        const char *text;
    } cases[] = {
        {{GGTK_VALUE_UINT8, .v.u8 = 200}, "200"},
        {{GGTK_VALUE_INT64, .v.i64 = INT64_MIN}, "-9223372036854775808"},
        {{GGTK_VALUE_UINT64, .v.u64 = UINT64_MAX}, "18446744073709551615"},
        {{GGTK_VALUE_FLOAT32, .v.f32 = 0.1f}, "0.1"},
        {{GGTK_VALUE_FLOAT32, .v.f32 = 100000.0f}, "100000"},
        {{GGTK_VALUE_FLOAT64, .v.f64 = 2.5e-300}, "2.5e-300"},
        {{GGTK_VALUE_FLOAT32, .v.f32 = NAN}, "nan"},
        {{GGTK_VALUE_FLOAT64, .v.f64 = -INFINITY}, "-inf"},
        {{GGTK_VALUE_BOOL, .v.b = true}, "true"},
        {{GGTK_VALUE_STRING, .v.str = {11, "say \"hi\"\n\x1b\\"}}, "\"say \\\"hi\\\"\\n\\x1b\\\\\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_MSG(strcmp(formatted(&cases[i].value, false), cases[i].text) == 0, "%s, not %s",
                  formatted(&cases[i].value, false), cases[i].text);
}

TEST(test_value_format_previews_long_arrays_and_strings)
{
    uint32_t numbers[100];
    for (uint32_t i = 0; i < 100; i++)
        numbers[i] = i;
    ggtk_value array = {GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_UINT32, 100, numbers}};
    CHECK(strcmp(formatted(&array, false), "[0, 1, 2, 3, 4, 5, ... (100 elements)]") == 0);
    CHECK(strncmp(formatted(&array, true), "[0, 1, 2", 8) == 0);
    CHECK(strstr(formatted(&array, true), ", 98, 99]"));
    /* 59 ASCII bytes then a 2-byte character across the 60-byte limit: cut before it. */
    char text[80];
    memset(text, 'x', 59);
    memcpy(text + 59, "\xc3\xa9zz", 5);
    ggtk_value string = {GGTK_VALUE_STRING, .v.str = {63, text}};
    const char *shown = formatted(&string, false);
    CHECK_MSG(strlen(shown) == 1 + 59 + 1 + strlen("... (63 bytes)") &&
                  strstr(shown, "x\"... (63 bytes)"),
              "%s", shown);
    ggtk_string words[] = {{2, "a\n"}, {1, "b"}};
    ggtk_value inner[] = {{GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_STRING, 2, words}},
                          {GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_UINT32, 0, NULL}}};
    ggtk_value nested = {GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_ARRAY, 2, inner}};
    CHECK_MSG(strcmp(formatted(&nested, false), "[[\"a\\n\", \"b\"], []]") == 0, "%s",
              formatted(&nested, false));
}

TEST(test_value_format_cut_output_is_a_prefix_and_reports_the_needed_size)
{
    uint32_t numbers[3] = {111, 222, 333};
    ggtk_value array = {GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_UINT32, 3, numbers}};
    char small[8], whole[64];
    size_t needed = ggtk_value_format(&array, small, sizeof small, GGTK_FORMAT_ALL, 0);
    CHECK(needed == strlen("[111, 222, 333]"));
    CHECK(ggtk_value_format(&array, whole, sizeof whole, GGTK_FORMAT_ALL, 0) == needed);
    CHECK_MSG(strcmp(small, "[111, ") == 0, "%s", small);
    CHECK(ggtk_value_format(&array, NULL, 0, GGTK_FORMAT_ALL, 0) == needed);
}

TEST(test_utf8_sequence_accepts_valid_and_refuses_overlong_surrogate_and_cut)
{
    CHECK(ggtk_utf8_sequence((const unsigned char *)"a", 1) == 1);
    CHECK(ggtk_utf8_sequence((const unsigned char *)"\xC3\xA9", 2) == 2);
    CHECK(ggtk_utf8_sequence((const unsigned char *)"\xF0\x9F\x98\x80", 4) == 4);
    CHECK(ggtk_utf8_sequence((const unsigned char *)"\xC0\xAF", 2) == 0);         /* overlong */
    CHECK(ggtk_utf8_sequence((const unsigned char *)"\xED\xA0\x80", 3) == 0);     /* surrogate */
    CHECK(ggtk_utf8_sequence((const unsigned char *)"\xF4\x90\x80\x80", 4) == 0); /* > U+10FFFF */
    CHECK(ggtk_utf8_sequence((const unsigned char *)"\xE2\x82", 2) == 0);         /* cut */
}
