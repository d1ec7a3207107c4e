/* error.h - the one error model of ggtk's libraries (libgguf and libinfer).
 *
 * Every fallible public function of both libraries reports failure the same way:
 *  - it returns a ggtk_status (GGTK_OK is 0) or, when it creates an object, the object or NULL;
 *  - it takes a `ggtk_error *err` as its last argument, which may be NULL when the caller wants
 *    no details; on failure *err receives the status, the byte offset in the file of the field at
 *    fault (GGTK_NO_OFFSET where none applies) and one line naming the file, the field and what
 *    was expected, ready to print (no trailing newline; text quoted from a file is escaped with
 *    ggtk_escape() and no control byte ever reaches the message);
 *  - on success *err is left unchanged.
 * Functions whose only failures are a missing key, a wrong type, a bad argument or running out of
 * memory (typed getters, writer setters, table lookups) return the ggtk_status alone: the status
 * says everything a message would.
 * Graph construction is the one builder-style exception: op constructors return NULL and keep the
 * first failure in their context, read back as a ggtk_error with inf_context_error().
 * ggtk_strerror() names a status. Errors never terminate the process.
 */
#ifndef GGTK_ERROR_H
#define GGTK_ERROR_H

#include <stdint.h>

#include <ggtk/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Result of every fallible call. GGTK_OK is 0; every other value is a failure. */
typedef enum ggtk_status {
    GGTK_OK = 0,
    GGTK_ERR_IO,          /* open/read/write/mmap/fsync/rename failed (errno in the message) */
    GGTK_ERR_NOMEM,       /* allocation failed or would not fit */
    GGTK_ERR_MAGIC,       /* the file does not start with "GGUF" */
    GGTK_ERR_VERSION,     /* unsupported version (v1, or newer than 3), or a big-endian file */
    GGTK_ERR_TRUNCATED,   /* the file ends before a field it announces */
    GGTK_ERR_OVERFLOW,    /* a count, length or size does not fit the arithmetic or the file */
    GGTK_ERR_INVALID,     /* a field or argument holds a value that is forbidden there */
    GGTK_ERR_DUPLICATE,   /* two keys or two tensors share a name */
    GGTK_ERR_LAYOUT,      /* tensor data misaligned, out of bounds or overlapping */
    GGTK_ERR_NOT_FOUND,   /* a key or tensor asked for does not exist */
    GGTK_ERR_TYPE,        /* a key exists but holds another value type than asked for */
    GGTK_ERR_USAGE,       /* the API was called out of order, or with bad arguments or options */
    GGTK_ERR_UNSUPPORTED, /* a valid request this build does not implement (type, architecture) */
    GGTK_ERR_NONFINITE,   /* a NaN or infinity in an input or a result */
    GGTK_ERR_PATH,        /* an output path names an input, or exists and is not a regular file */
    GGTK_ERR_REQUANTIZE,  /* a tensor is already quantized and requantizing was not allowed */
    GGTK_STATUS_COUNT     /* one past the last status; not a status */
} ggtk_status;

/* The offset of a ggtk_error that concerns no byte of a file. */
#define GGTK_NO_OFFSET UINT64_MAX

/* A failure's details (see the file comment). */
typedef struct ggtk_error {
    ggtk_status status;
    uint64_t offset;
    char message[640];
} ggtk_error;

/* Static, human-readable name of a status ("truncated file", ...); "unknown error" for a value
 * that is not a status. Never NULL. */
GGTK_API const char *ggtk_strerror(ggtk_status status);

/* Fill *err (nothing when err is NULL) with `status`, `offset` and the message printf-formats
 * from `fmt`, cut to fit, with any control byte replaced by '?'; returns `status`, so that a failing function can end with
 * `return ggtk_error_set(err, ...)`. For programs that report their own failures the same way. */
GGTK_API ggtk_status ggtk_error_set(ggtk_error *err, ggtk_status status, uint64_t offset,
                                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#ifdef __cplusplus
}
#endif

#endif /* GGTK_ERROR_H */
