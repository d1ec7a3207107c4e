/* test_exports.c - each shared library exports exactly the functions its public headers declare
 * with GGTK_API: nothing internal leaks out (where it could bind to another library's function
 * of the same name) and nothing declared is missing (a declaration without an implementation). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_support.h"
#include "test.h"

/* Fail on the first name of `a` that `b` lacks; `what` says what that means. */
static bool all_in(const name_list *a, const name_list *b, const char *what)
{
    for (size_t i = 0; i < a->count; i++)
        if (!names_contain(b, a->names[i])) {
            test_fail(__FILE__, __LINE__, "%s: %s", what, a->names[i]);
            return false;
        }
    return true;
}

static void check_exports(const char *library, const char *header_glob)
{
    require_tool("nm", "binutils");
    name_list exported = {0}, declared = {0};
    if (names_exported(build_lib(library), &exported) && names_declared(header_glob, &declared) &&
        all_in(&exported, &declared, "exported but not declared GGTK_API in a public header"))
        all_in(&declared, &exported, "declared GGTK_API but not exported");
    names_free(&exported);
    names_free(&declared);
}

TEST(test_libgguf_so_exports_exactly_its_public_declarations)
{
    check_exports("libgguf.so", "libgguf/include/ggtk/*.h");
}

TEST(test_libinfer_so_exports_exactly_its_public_declarations)
{
    check_exports("libinfer.so", "libinfer/include/ggtk/*.h");
}

/* The parser behind the two tests above finds what a reader of the headers finds. */
TEST(test_public_declarations_are_read_from_the_headers)
{
    name_list declared = {0};
    bool ok = names_declared("libgguf/include/ggtk/*.h", &declared);
    size_t count = declared.count;
    bool found = names_contain(&declared, "ggtk_open") && names_contain(&declared, "ggtk_version_number") &&
                 names_contain(&declared, "ggtk_writer_set_string_array");
    names_free(&declared);
    CHECK(ok);
    CHECK_MSG(found, "ggtk_open, ggtk_version_number or ggtk_writer_set_string_array not found");
    CHECK_MSG(count > 60, "only %zu declarations found", count);
}
