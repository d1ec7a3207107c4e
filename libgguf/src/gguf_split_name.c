/* gguf_split_name.c - how the parts of a split model are named: "<prefix>-00002-of-00003.gguf",
 * the naming of llama.cpp's llama-gguf-split, by which any part leads to all the others. */
#include <ggtk/gguf.h>

#include <stdio.h>
#include <string.h>

/* Part numbers are shown from 1, five digits wide (wider when the number needs it). */
#define SPLIT_SUFFIX_FORMAT "-%05d-of-%05d.gguf"

size_t ggtk_split_part_path(char *buf, size_t size, const char *prefix, int part, int count)
{
    int n = snprintf(buf, size, "%s" SPLIT_SUFFIX_FORMAT, prefix ? prefix : "", part + 1, count);
    return n < 0 ? 0 : (size_t)n;
}

size_t ggtk_split_prefix_length(const char *path, int part, int count)
{
    char suffix[64];
    int n = snprintf(suffix, sizeof suffix, SPLIT_SUFFIX_FORMAT, part + 1, count);
    if (!path || n < 0 || (size_t)n >= sizeof suffix)
        return 0;
    size_t length = strlen(path), suffix_length = (size_t)n;
    if (length <= suffix_length || strcmp(path + length - suffix_length, suffix) != 0)
        return 0;
    return length - suffix_length;
}
