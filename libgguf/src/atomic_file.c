/* atomic_file.c - see atomic_file.h. The temporary file is created with O_EXCL under a name chosen
 * here rather than by mkstemp, which creates files 0600: a later chmod would ignore the directory's
 * default ACLs. */
#include "gguf_internal.h"

#include <ggtk/atomic_file.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Tries before giving up on names that all exist already. */
enum { CREATE_TRIES = 100 };

struct ggtk_atomic_file {
    FILE *stream;    /* on the temporary file; NULL once committed */
    char *path;      /* the target */
    char *temp_path; /* NULL once the temporary file is renamed or removed */
};

/* "<dir>/.<name>.XXXXXX.tmp", malloc'd; NULL when out of memory. */
static char *temp_template(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    size_t size = strlen(path) + sizeof "..XXXXXX.tmp";
    char *template = malloc(size);
    if (template)
        snprintf(template, size, "%.*s.%s.XXXXXX.tmp", dir_len, path, name);
    return template;
}

/* Replace the six X of `template` by letters and digits that differ from call to call; `salt`
 * (the object's address) keeps two threads that start at the same nanosecond apart. */
static void fill_name(char *template, uintptr_t salt, unsigned attempt)
{
    static const char ALPHABET[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t bits = ((uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ salt ^ attempt) *
                    0x9E3779B97F4A7C15u;
    char *x = template + strlen(template) - 4 - 6;
    for (int i = 0; i < 6; i++, bits >>= 8)
        x[i] = ALPHABET[(bits >> 2) % (sizeof ALPHABET - 1)];
}

/* Create a new file under `template` (its X are replaced); the fd, or -1 with errno set. */
static int create_temp(char *template, uintptr_t salt)
{
    for (unsigned attempt = 0; attempt < CREATE_TRIES; attempt++) {
        fill_name(template, salt, attempt);
        int fd = open(template, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

/* Directory part of `path` ("." when it has none), malloc'd. */
static char *directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    return slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
}

/* Fill *err and set errno to `code`, for callers that word their own message. */
static void refuse(ggtk_error *err, ggtk_status status, int code, const char *path,
                   const char *what)
{
    ggtk_fail(err, status, path, UINT64_MAX, "%s", what);
    errno = code;
}

/* The checks made before anything is created. */
static bool target_acceptable(const char *path, ggtk_error *err)
{
    if (!path || !*path) {
        refuse(err, GGTK_ERR_USAGE, EINVAL, path, "no output path");
        return false;
    }
    if (path[strlen(path) - 1] == '/') {
        refuse(err, GGTK_ERR_USAGE, EISDIR, path, "output path names a directory");
        return false;
    }
    /* The rename would replace a FIFO or a device node (destroying the node, as root). */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        refuse(err, GGTK_ERR_PATH, S_ISDIR(st.st_mode) ? EISDIR : EEXIST, path,
               "exists and is not a regular file; refusing to replace it");
        return false;
    }
    return true;
}

/* Report the temporary file that could not be created, naming its directory; errno kept. */
static void fail_create(const char *path, int code, ggtk_error *err)
{
    char *directory = directory_of(path);
    ggtk_fail(err, GGTK_ERR_IO, path, UINT64_MAX, "cannot create a temporary file in %s: %s",
              directory ? directory : "?", strerror(code));
    free(directory);
    errno = code;
}

ggtk_atomic_file *ggtk_atomic_file_open(const char *path, ggtk_error *err)
{
    if (!target_acceptable(path, err))
        return NULL;
    ggtk_atomic_file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path)) || !(f->temp_path = temp_template(path))) {
        ggtk_atomic_file_close(f);
        refuse(err, GGTK_ERR_NOMEM, ENOMEM, path, "out of memory");
        return NULL;
    }
    int fd = create_temp(f->temp_path, (uintptr_t)f);
    if (fd < 0) {
        int code = errno;
        free(f->temp_path);
        f->temp_path = NULL;
        ggtk_atomic_file_close(f);
        fail_create(path, code, err);
        return NULL;
    }
    f->stream = fdopen(fd, "wb");
    if (!f->stream) {
        close(fd);
        ggtk_atomic_file_close(f);
        refuse(err, GGTK_ERR_NOMEM, ENOMEM, path, "out of memory");
        return NULL;
    }
    return f;
}

int ggtk_atomic_file_fd(const ggtk_atomic_file *f) { return f->stream ? fileno(f->stream) : -1; }
FILE *ggtk_atomic_file_stream(const ggtk_atomic_file *f) { return f->stream; }
const char *ggtk_atomic_file_path(const ggtk_atomic_file *f) { return f->path; }
const char *ggtk_atomic_file_temp_path(const ggtk_atomic_file *f) { return f->temp_path; }

/* Make the rename durable. Filesystems that cannot sync a directory say EINVAL; that is fine. */
static int sync_directory(const char *path)
{
    char *directory = directory_of(path);
    if (!directory)
        return ENOMEM;
    int fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(directory);
    if (fd < 0)
        return errno;
    int code = fsync(fd) == 0 || errno == EINVAL ? 0 : errno;
    close(fd);
    return code;
}

/* Flush, fsync and close the stream, then rename: NULL, or the step that failed with *code its
 * errno. The stream is closed either way. */
static const char *close_and_rename(ggtk_atomic_file *f, int *code)
{
    FILE *stream = f->stream;
    f->stream = NULL;
    /* A write that failed earlier leaves the error flag, and maybe nothing left to flush. */
    *code = fflush(stream) != 0 ? errno : ferror(stream) ? EIO : 0;
    const char *failed = *code ? "write" : NULL;
    if (!failed && fsync(fileno(stream)) != 0) {
        *code = errno;
        failed = "fsync";
    }
    if (fclose(stream) != 0 && !failed) {
        *code = errno;
        failed = "close";
    }
    if (!failed && rename(f->temp_path, f->path) != 0) {
        *code = errno;
        failed = "rename";
    }
    return failed;
}

ggtk_status ggtk_atomic_file_commit(ggtk_atomic_file *f, ggtk_error *err)
{
    if (!f || !f->stream)
        return ggtk_fail(err, GGTK_ERR_USAGE, f ? f->path : NULL, UINT64_MAX,
                         "no write in progress");
    int code = 0;
    const char *failed = close_and_rename(f, &code);
    if (failed) {
        ggtk_fail(err, GGTK_ERR_IO, f->path, UINT64_MAX, "cannot %s %s: %s", failed,
                  f->temp_path, strerror(code));
        unlink(f->temp_path);
    }
    free(f->temp_path);
    f->temp_path = NULL;
    if (failed)
        return GGTK_ERR_IO;
    code = sync_directory(f->path);
    if (code != 0)
        return ggtk_fail(err, GGTK_ERR_IO, f->path, UINT64_MAX,
                         "written, but its directory could not be synced: %s", strerror(code));
    return GGTK_OK;
}

void ggtk_atomic_file_close(ggtk_atomic_file *f)
{
    if (!f)
        return;
    if (f->stream)
        fclose(f->stream);
    if (f->temp_path)
        unlink(f->temp_path);
    free(f->temp_path);
    free(f->path);
    free(f);
}
