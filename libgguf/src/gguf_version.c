/* gguf_version.c - the version of the library linked at run time. */
#include <ggtk/export.h>

int ggtk_version_number(void)
{
    return GGTK_VERSION_NUMBER;
}

const char *ggtk_version_string(void)
{
    return GGTK_VERSION_STRING;
}
