/* fuzz_text_file.c - libFuzzer harness of the evaluation-text reader (tools/common/text_file.c)
 * through its from-memory entry point: plain text, gzip (several members) and zip (stored or
 * deflated, data descriptors, directory entries). An accepted input must give a non-empty,
 * NUL-terminated text, a plain one its exact bytes; a refused one no text and one line that
 * names the input. Any other outcome aborts. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "text_file.h"

static size_t sink;

static bool is_compressed(const uint8_t *data, size_t size)
{
    return (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) ||
           (size >= 4 && memcmp(data, "PK\3\4", 4) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = (char *)1, member[8]; /* a short member buffer: names must be cut, not overrun */
    size_t len = 1;
    ggtk_error err = {.status = GGTK_OK};
    ggtk_status status = text_file_decode(data, size, "fuzz", &text, &len, member, sizeof member,
                                          &err);
    if (status != GGTK_OK) {
        if (text || len || err.status != status || strncmp(err.message, "fuzz: ", 6) != 0 ||
            strchr(err.message, '\n'))
            abort();
        return 0;
    }
    if (!text || len == 0 || text[len] != '\0' || memchr(member, '\0', sizeof member) == NULL)
        abort();
    if (!is_compressed(data, size) && (len != size || memcmp(text, data, size) != 0))
        abort();
    sink += (unsigned char)text[0] + (unsigned char)text[len - 1];
    free(text);
    return 0;
}
