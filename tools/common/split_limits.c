/* split_limits.c - see split_limits.h. */
#include "split_limits.h"

#include <string.h>

/* The first `length` bytes of `text` as a decimal number from 1 to INT32_MAX; false for anything
 * else (signs, spaces, other characters). */
static bool parse_positive(const char *text, size_t length, int32_t *out)
{
    int64_t n = 0;
    if (length == 0)
        return false;
    for (size_t i = 0; i < length; i++) {
        if (text[i] < '0' || text[i] > '9')
            return false;
        n = n * 10 + (text[i] - '0');
        if (n > INT32_MAX)
            return false;
    }
    if (n < 1)
        return false;
    *out = (int32_t)n;
    return true;
}

bool split_limit_parse_tensors(const char *text, int *tensors)
{
    int32_t n;
    if (!parse_positive(text, strlen(text), &n))
        return false;
    *tensors = n;
    return true;
}

bool split_limit_parse_size(const char *text, uint64_t *bytes)
{
    size_t length = strlen(text);
    char unit = length ? text[length - 1] : '\0';
    int32_t n;
    if ((unit != 'M' && unit != 'G') || !parse_positive(text, length - 1, &n))
        return false;
    *bytes = (uint64_t)n * (unit == 'M' ? 1000000u : 1000000000u);
    return true;
}
