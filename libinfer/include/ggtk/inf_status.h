/* inf_status.h - the result codes every fallible libinfer call returns.
 *
 * Calls that return a pointer return NULL on failure instead; where a message is kept (a
 * context's, a backend's) the owner exposes it through its own *_error() accessor.
 */
#ifndef INF_STATUS_H
#define INF_STATUS_H

#include <ggtk/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* INF_OK is 0; every other value is a failure. */
typedef enum inf_status {
    INF_OK = 0,
    INF_ERR_NOMEM,       /* an allocation (heap, arena or buffer) failed or would not fit */
    INF_ERR_INVALID,     /* shapes, types or arguments that the operation forbids */
    INF_ERR_UNSUPPORTED, /* a valid request this build or backend does not implement */
    INF_ERR_IO,          /* open/mmap failed (errno in the message) */
    INF_ERR_USAGE,       /* the API was called out of order (e.g. computing an unallocated graph) */
} inf_status;

/* Static, human-readable name of a status ("out of memory", ...). Never NULL. */
GGTK_API const char *inf_strerror(inf_status status);

#ifdef __cplusplus
}
#endif

#endif /* INF_STATUS_H */
