/* atomic_file.h - writing a file so that its target is always either the old file or the whole
 * new one: the contents go to a temporary file beside the target, which is fsynced and renamed
 * into place only when the caller commits; a crash, a signal or a failure leaves the target as it
 * was. libgguf's GGUF writer, libinfer's base log-probability writer and the tools all write
 * through it.
 *
 * Usage: f = ggtk_atomic_file_open(path, err); write through ggtk_atomic_file_fd(f) or
 * ggtk_atomic_file_stream(f) (one of them: the stream buffers); ggtk_atomic_file_commit(f, err);
 * ggtk_atomic_file_close(f). Closing without a commit abandons the write.
 * Errors follow error.h; every message starts with the target's path. A ggtk_atomic_file is used
 * by one thread at a time; different files may be written from different threads.
 */
#ifndef GGTK_ATOMIC_FILE_H
#define GGTK_ATOMIC_FILE_H

#include <stdio.h>

#include <ggtk/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A write in progress to one target path. */
typedef struct ggtk_atomic_file ggtk_atomic_file;

/* Start writing `path` (copied). Creates the empty temporary file ".<name>.XXXXXX.tmp" in the
 * target's directory (the X are letters and digits) with O_EXCL and mode 0666, so the umask and
 * the directory's default ACLs apply as to any new file; the target itself is not touched.
 * Returns the new object, or NULL with *err (may be NULL) set and nothing created:
 * GGTK_ERR_USAGE when `path` is NULL, empty or ends in '/'; GGTK_ERR_PATH when `path` exists and
 * is not a regular file (the rename would replace a FIFO, a device node or a directory), checked
 * before anything is created; GGTK_ERR_IO, naming the directory, when the temporary file cannot be
 * created there; GGTK_ERR_NOMEM. On every failure errno says why as well (for the checks: EINVAL
 * for no path, EISDIR for a directory, EEXIST for another non-regular file), for callers that
 * word their own message. */
GGTK_API ggtk_atomic_file *ggtk_atomic_file_open(const char *path, ggtk_error *err);

/* The temporary file's descriptor (write-only, close-on-exec), for write(2)-style output. Owned by
 * `f`: do not close it. -1 after a commit. */
GGTK_API int ggtk_atomic_file_fd(const ggtk_atomic_file *f);

/* A stdio stream on the temporary file, for fprintf/fwrite-style output. Owned by `f`: do not
 * fclose it. Write errors need not be checked call by call: the commit flushes the stream and
 * fails when any write did. NULL after a commit. */
GGTK_API FILE *ggtk_atomic_file_stream(const ggtk_atomic_file *f);

/* The target path given to ggtk_atomic_file_open() (owned by `f`, valid until the close). */
GGTK_API const char *ggtk_atomic_file_path(const ggtk_atomic_file *f);

/* The temporary file's path, for a signal handler to unlink: owned by `f`, valid until the
 * close. NULL once the temporary file is gone (after a commit, successful or not). */
GGTK_API const char *ggtk_atomic_file_temp_path(const ggtk_atomic_file *f);

/* Finish the write: flush the stream, fsync and close the temporary file, rename it onto the
 * target and fsync the directory (a file system that cannot sync a directory, EINVAL, is fine).
 * GGTK_OK, or GGTK_ERR_IO naming the path and the errno text; on a failure before the rename the
 * temporary file is removed and the target untouched, on a failed directory sync the new file is
 * in place but may not survive a crash. GGTK_ERR_USAGE for a second commit. Either way `f` is
 * then only good for ggtk_atomic_file_close() and the path getters. */
GGTK_API ggtk_status ggtk_atomic_file_commit(ggtk_atomic_file *f, ggtk_error *err);

/* Free `f`. Without a commit, the write is abandoned: the temporary file is closed and removed,
 * and the target keeps its old content (or stays absent). NULL is allowed. */
GGTK_API void ggtk_atomic_file_close(ggtk_atomic_file *f);

#ifdef __cplusplus
}
#endif

#endif /* GGTK_ATOMIC_FILE_H */
