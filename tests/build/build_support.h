/* build_support.h - what the build tests share: lists of symbol names (from a library's dynamic
 * symbol table or from the GGTK_API declarations of public headers), this build's paths, and a
 * staged `make install` of it. */
#ifndef BUILD_SUPPORT_H
#define BUILD_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>

#ifndef TEST_BUILD_DIR
#define TEST_BUILD_DIR "build"
#endif
/* Variables that make the nested `make install` use this very build (BUILD, SAN). */
#ifndef TEST_MAKE_VARS
#define TEST_MAKE_VARS ""
#endif
#ifndef TEST_CC
#define TEST_CC "cc"
#endif
/* 1 in a make CUDA=1 build: programs need the CUDA runtime's shared libraries. */
#ifndef TEST_CUDA_RUNTIME
#define TEST_CUDA_RUNTIME 0
#endif
/* Link flags every program linked with this build's libraries needs (the sanitizers'). */
#ifndef TEST_LINK_FLAGS
#define TEST_LINK_FLAGS ""
#endif

/* A growable list of malloc'd names. */
typedef struct name_list {
    char **names;
    size_t count;
    size_t cap;
} name_list;

void names_add(name_list *list, const char *name, size_t len);
bool names_contain(const name_list *list, const char *name);
void names_free(name_list *list);

/* Append the names of the dynamic symbols `library` defines (nm -D --defined-only). Returns
 * false, after test_fail, when nm fails. */
bool names_exported(const char *library, name_list *out);

/* Append the name of every GGTK_API declaration in the headers matching `header_glob`. Returns
 * false, after test_fail, when a declaration cannot be parsed or no header matches. */
bool names_declared(const char *header_glob, name_list *out);

/* "<build>/lib/<file>" in a static buffer that the next call overwrites. */
const char *build_lib(const char *file);

/* `make install DESTDIR=<tmpdir>/<stage> PREFIX=/usr/local` of this build; returns the staged
 * prefix ("<tmpdir>/<stage>/usr/local", static buffer) or NULL after test_fail. */
const char *install_staged(const char *stage);

/* Skip the calling test when `tool` is not on PATH, naming the package that has it. */
void require_tool(const char *tool, const char *package);

#endif
