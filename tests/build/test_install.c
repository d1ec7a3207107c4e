/* test_install.c - `make install` into a staged tree (DESTDIR), then a user's program
 * (tests/build/programs/installed_api.c) built from that tree alone with pkg-config, linked
 * against the shared libraries and, with --static, against the archives, and run on the model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ggtk/export.h>
#include "build_support.h"
#include "test.h"

/* What installed_api prints on the real model. */
static const char *const expected_output[] = {
    "architecture llama\n", "contents ok\n", "next token ' Paris'\n",
    "version " GGTK_VERSION_STRING " matches the headers\n",
};

/* The staged prefix with pkg-config and the model at hand; skips the test otherwise. */
static const char *install_for_program(const char *stage)
{
    require_tool("pkg-config", "pkg-config");
    if (!test_model_path())
        SKIP("the model is missing (make models)");
    return install_staged(stage);
}

/* pkg-config, reading the staged tree's .pc files; the sysroot puts DESTDIR before their paths. */
#define PKG_CONFIG "PKG_CONFIG_SYSROOT_DIR='%s' PKG_CONFIG_LIBDIR='%s/usr/local/lib/pkgconfig' pkg-config"

/* Compile installed_api.c into `program` with `extra` flags and pkg-config's `pkg_args`. */
static bool build_program(const char *destdir, const char *program, const char *extra,
                          const char *pkg_args)
{
    char *output = NULL;
    int rc = test_run(&output, "%s -std=c11 -Wall -Wextra -pedantic -Werror %s -o '%s' "
                               "tests/build/programs/installed_api.c $(" PKG_CONFIG " %s) %s",
                      TEST_CC, extra, program, destdir, destdir, pkg_args, TEST_LINK_FLAGS);
    if (rc != 0)
        test_fail(__FILE__, __LINE__, "building against the installed tree failed (%d):\n%s", rc,
                  output);
    free(output);
    return rc == 0;
}

/* Run `program` on the model with the staged libraries first on the loader's path. */
static bool run_program(const char *program, const char *libdir)
{
    char *output = NULL;
    int rc = test_run(&output, "LD_LIBRARY_PATH='%s' '%s' '%s'", libdir, program, test_model_path());
    bool ok = rc == 0;
    for (size_t i = 0; ok && i < sizeof expected_output / sizeof *expected_output; i++)
        ok = strstr(output, expected_output[i]) != NULL;
    if (!ok)
        test_fail(__FILE__, __LINE__, "%s exited %d, output:\n%s", program, rc, output);
    free(output);
    return ok;
}

/* The libraries `program` needs (readelf -d), malloc'd. */
static char *needed_libraries(const char *program)
{
    char *output = NULL;
    test_run(&output, "readelf -d '%s' | grep NEEDED || true", program);
    return output;
}

static bool is_link_to(const char *path, const char *target)
{
    char buf[256];
    ssize_t len = readlink(path, buf, sizeof buf - 1);
    if (len < 0)
        return false;
    buf[len] = '\0';
    return strcmp(buf, target) == 0;
}

TEST(test_install_puts_headers_under_ggtk_and_links_libraries_by_soname)
{
    const char *prefix = install_staged("stage-layout");
    CHECK(prefix);
    char path[1024], target[64];
    snprintf(path, sizeof path, "%s/include/ggtk/gguf.h", prefix);
    CHECK_MSG(access(path, R_OK) == 0, "%s missing", path);
    snprintf(path, sizeof path, "%s/include/gguf.h", prefix);
    CHECK_MSG(access(path, F_OK) != 0, "%s would clash with ggml's gguf.h", path);
    const char *libs[] = {"libgguf", "libinfer"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/lib/%s.so", prefix, libs[i]);
        snprintf(target, sizeof target, "%s.so.%d", libs[i], GGTK_VERSION_MAJOR);
        CHECK_MSG(is_link_to(path, target), "%s is not a link to %s", path, target);
        snprintf(path, sizeof path, "%s/lib/%s", prefix, target);
        snprintf(target, sizeof target, "%s.so.%s", libs[i], GGTK_VERSION_STRING);
        CHECK_MSG(is_link_to(path, target), "%s is not a link to %s", path, target);
        snprintf(path, sizeof path, "%s/lib/pkgconfig/%s.pc", prefix, libs[i]);
        CHECK_MSG(access(path, R_OK) == 0, "%s missing", path);
    }
}

TEST(test_uninstall_removes_everything_install_put_there)
{
    const char *prefix = install_staged("stage-uninstall");
    CHECK(prefix);
    const char *destdir = test_tmpfile("stage-uninstall");
    char *output = NULL;
    int rc = test_run(&output, "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s uninstall "
                               "DESTDIR='%s' PREFIX=/usr/local %s && find '%s' ! -type d",
                      destdir, TEST_MAKE_VARS, destdir);
    bool empty = rc == 0 && output[0] == '\0';
    if (!empty)
        test_fail(__FILE__, __LINE__, "uninstall (%d) left:\n%s", rc, output);
    free(output);
}

TEST(test_program_built_with_pkg_config_runs_on_the_installed_shared_libraries)
{
    const char *prefix = install_for_program("stage-shared");
    CHECK(prefix);
    const char *destdir = test_tmpfile("stage-shared");
    char program[600], libdir[700];
    snprintf(program, sizeof program, "%s/installed_api", destdir);
    snprintf(libdir, sizeof libdir, "%s/lib", prefix);
    CHECK(build_program(destdir, program, "", "--cflags --libs libinfer"));
    char *needed = needed_libraries(program);
    bool both = strstr(needed, "[libgguf.so.0]") && strstr(needed, "[libinfer.so.0]");
    if (!both)
        test_fail(__FILE__, __LINE__, "expected libgguf.so.0 and libinfer.so.0 in:\n%s", needed);
    free(needed);
    CHECK(both);
    CHECK(run_program(program, libdir));
}

TEST(test_program_built_with_pkg_config_static_runs_without_our_shared_libraries)
{
    if (TEST_LINK_FLAGS[0])
        SKIP("the sanitizers cannot link a -static program");
    if (TEST_CUDA_RUNTIME)
        SKIP("a CUDA=1 build cannot link a -static program: the CUDA driver is loaded at run time");
    const char *prefix = install_for_program("stage-static");
    CHECK(prefix);
    const char *destdir = test_tmpfile("stage-static");
    char program[600];
    snprintf(program, sizeof program, "%s/installed_api", destdir);
    /* -static: every library the archives need must come from the .pc files' Libs.private. */
    CHECK(build_program(destdir, program, "-static", "--static --cflags --libs libinfer"));
    char *needed = needed_libraries(program);
    bool none = needed[0] == '\0';
    if (!none)
        test_fail(__FILE__, __LINE__, "a static program needs:\n%s", needed);
    free(needed);
    CHECK(none);
    CHECK(run_program(program, "/nonexistent"));
}
