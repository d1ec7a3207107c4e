/* bench_list.h - the comma-separated lists the matrix-product benchmarks take (--types, --shapes,
 * --levels, --rows): walking a list and reading its items, with one error line on a bad item. */
#ifndef GGTK_BENCH_LIST_H
#define GGTK_BENCH_LIST_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <ggtk/gguf.h>

/* Copy the next item of *list into buf and step past it; false at the end of the list. */
static inline bool bench_next_item(const char **list, char *buf, size_t size)
{
    if (!**list)
        return false;
    size_t n = strcspn(*list, ",");
    snprintf(buf, size, "%.*s", (int)n, *list);
    *list += n + ((*list)[n] == ',');
    return true;
}

/* The type named `name`, or -1 after printing "<program>: unknown type NAME". */
static inline int bench_type(const char *program, const char *name)
{
    const int type = ggtk_tensor_type_from_name(name);
    if (type < 0)
        fprintf(stderr, "%s: unknown type %s\n", program, name);
    return type;
}

/* A shape "KxM" into *K and *M; false after printing "<program>: bad shape ...". */
static inline bool bench_shape(const char *program, const char *shape, long long *K, long long *M)
{
    if (sscanf(shape, "%lldx%lld", K, M) == 2)
        return true;
    fprintf(stderr, "%s: bad shape %s (expected KxM)\n", program, shape);
    return false;
}

#endif
