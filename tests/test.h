/* test.h - the project's test harness: tests register themselves with TEST() and run in a
 * forked child each, so a crash fails one test instead of the whole run. */
#ifndef TEST_H
#define TEST_H

#include <stdbool.h>
#include <stddef.h>

typedef void (*test_fn)(void);

/* Record a test; called by TEST() before main(). */
void test_register(const char *name, const char *file, test_fn fn);
/* Mark the running test failed with a message (printf format); the test goes on. */
void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Mark the running test skipped with a reason and end it. */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Path of the real test model (SmolLM2 Q4_1) or NULL when `make models` has not fetched it. */
const char *test_model_path(void);
/* A directory private to this test run, removed at exit. */
const char *test_tmpdir(void);
/* Path "<tmpdir>/<name>" in a static buffer that the next call overwrites. */
const char *test_tmpfile(const char *name);
/* Path of a built tool ("gguf-inspect") in the build's bin directory, static buffer. */
const char *test_tool(const char *tool);
/* Path of the shared test data folder (../shared/testdata) or NULL when absent. */
const char *test_shared_data(void);
/* Run a shell command, capturing stdout+stderr into a malloc'd string (*output, may be NULL).
 * Returns the exit status (128+signal when killed). */
int test_run(char **output, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define TEST(name)                                                                     \
    static void name(void);                                                            \
    __attribute__((constructor)) static void test_register_##name(void)                \
    {                                                                                  \
        test_register(#name, __FILE__, name);                                          \
    }                                                                                  \
    static void name(void)

/* Fail and end the test when `cond` is false. */
#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            test_fail(__FILE__, __LINE__, "%s", #cond);                                \
            return;                                                                    \
        }                                                                              \
    } while (0)

/* Like CHECK with a printf-style explanation. */
#define CHECK_MSG(cond, ...)                                                           \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            test_fail(__FILE__, __LINE__, __VA_ARGS__);                                \
            return;                                                                    \
        }                                                                              \
    } while (0)

#define SKIP(...) test_skip(__VA_ARGS__)

#endif
