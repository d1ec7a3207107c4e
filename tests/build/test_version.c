/* test_version.c - the version macros, the run-time version query and the sonames agree. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/export.h>
#include "build_support.h"
#include "test.h"

TEST(test_version_query_matches_the_version_macros)
{
    char expected[64];
    snprintf(expected, sizeof expected, "%d.%d.%d", GGTK_VERSION_MAJOR, GGTK_VERSION_MINOR,
             GGTK_VERSION_PATCH);
    CHECK(strcmp(GGTK_VERSION_STRING, expected) == 0);
    CHECK(strcmp(ggtk_version_string(), expected) == 0);
    CHECK(ggtk_version_number() == GGTK_VERSION_NUMBER);
    CHECK(GGTK_VERSION_NUMBER == GGTK_VERSION_MAJOR * 10000 + GGTK_VERSION_MINOR * 100 + GGTK_VERSION_PATCH);
}

/* The SONAME recorded in `file` (readelf -d), malloc'd, or NULL. */
static char *soname(const char *file)
{
    char *text = NULL;
    int rc = test_run(&text, "readelf -d '%s'", file);
    const char *at = rc == 0 ? strstr(text, "(SONAME)") : NULL;
    char *name = NULL;
    if (at && (at = strchr(at, '[')))
        name = strndup(at + 1, strcspn(at + 1, "]"));
    free(text);
    return name;
}

static void check_soname(const char *lib)
{
    char file[128], expected[128];
    snprintf(file, sizeof file, "%s.so.%s", lib, GGTK_VERSION_STRING);
    snprintf(expected, sizeof expected, "%s.so.%d", lib, GGTK_VERSION_MAJOR);
    char *name = soname(build_lib(file));
    bool same = name && strcmp(name, expected) == 0;
    if (!same)
        test_fail(__FILE__, __LINE__, "%s: soname %s, expected %s", build_lib(file),
                  name ? name : "(none)", expected);
    free(name);
}

TEST(test_shared_library_sonames_carry_the_major_version)
{
    require_tool("readelf", "binutils");
    check_soname("libgguf");
    check_soname("libinfer");
}

/* The version the shared library reports, reached through its soname link as the loader does. */
TEST(test_shared_libgguf_reports_the_headers_version)
{
    char file[64];
    snprintf(file, sizeof file, "libgguf.so.%d", GGTK_VERSION_MAJOR);
    void *lib = dlopen(build_lib(file), RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(lib, "dlopen %s: %s", build_lib(file), dlerror());
    int (*version_number)(void);
    *(void **)&version_number = dlsym(lib, "ggtk_version_number");
    CHECK_MSG(version_number, "libgguf.so has no ggtk_version_number");
    int version = version_number();
    dlclose(lib);
    CHECK_MSG(version == GGTK_VERSION_NUMBER, "libgguf.so says %d, the headers %d", version,
              GGTK_VERSION_NUMBER);
}
