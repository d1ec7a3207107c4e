/* output_file.c - see output_file.h. The temporary file is created with O_EXCL under a name
 * chosen here (mkstemp would create it 0600, and a later chmod would ignore default ACLs). */
#include "output_file.h"
#include "signals.h"

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

/* Replace the six X of `template` by letters and digits that differ from call to call. */
static void fill_name(char *template, unsigned attempt)
{
    static const char ALPHABET[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t bits = ((uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ attempt) *
                    0x9E3779B97F4A7C15u;
    char *x = template + strlen(template) - 4 - 6;
    for (int i = 0; i < 6; i++, bits >>= 8)
        x[i] = ALPHABET[(bits >> 2) % (sizeof ALPHABET - 1)];
}

/* Create a new file under `template` (its X are replaced); the fd, or -1 with errno set. */
static int create_temp(char *template)
{
    for (unsigned attempt = 0; attempt < CREATE_TRIES; attempt++) {
        fill_name(template, attempt);
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

int output_file_probe(const char *path)
{
    char *temp = temp_template(path);
    if (!temp)
        return ENOMEM;
    /* Held: the probe exists for a moment only, and is never tracked. */
    tool_signals_hold();
    int fd = create_temp(temp);
    int code = fd < 0 ? errno : 0;
    if (fd >= 0) {
        close(fd);
        unlink(temp);
    }
    tool_signals_release();
    free(temp);
    return code;
}

static void release(output_file *file)
{
    tool_signals_untrack(file->slot);
    free(file->path);
    free(file->temp_path);
    *file = (output_file){.slot = -1};
}

ggtk_status output_file_open(output_file *file, const char *path, ggtk_error *err)
{
    *file = (output_file){.slot = -1};
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return ggtk_error_set(err, GGTK_ERR_PATH, GGTK_NO_OFFSET,
                              "%s: exists and is not a regular file", path);
    file->path = strdup(path);
    file->temp_path = temp_template(path);
    if (!file->path || !file->temp_path) {
        release(file);
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", path);
    }
    tool_signals_hold();
    int fd = create_temp(file->temp_path);
    int code = errno;
    if (fd >= 0) {
        file->slot = tool_signals_track(file->temp_path);
        file->stream = fdopen(fd, "w");
        code = errno;
    }
    tool_signals_release();
    if (!file->stream) {
        if (fd >= 0) {
            close(fd);
            unlink(file->temp_path);
        }
        release(file);
        return ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: cannot create: %s", path,
                              strerror(code));
    }
    return GGTK_OK;
}

void output_file_abort(output_file *file)
{
    if (file->stream)
        fclose(file->stream);
    if (file->temp_path)
        unlink(file->temp_path);
    release(file);
}

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

/* Everything up to the rename; 0 or the errno of the failure. The stream is closed either way. */
static int flush_and_close(output_file *file)
{
    FILE *stream = file->stream;
    file->stream = NULL;
    int code = fflush(stream) != 0 ? errno : ferror(stream) ? EIO : 0;
    if (code == 0 && fsync(fileno(stream)) != 0)
        code = errno;
    if (fclose(stream) != 0 && code == 0)
        code = errno;
    return code;
}

ggtk_status output_file_commit(output_file *file, ggtk_error *err)
{
    int code = flush_and_close(file);
    if (code == 0 && rename(file->temp_path, file->path) != 0)
        code = errno;
    if (code != 0) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: cannot write: %s", file->path,
                       strerror(code));
        output_file_abort(file);
        return GGTK_ERR_IO;
    }
    tool_signals_untrack(file->slot);
    file->slot = -1;
    code = sync_directory(file->path);
    if (code != 0)
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET,
                       "%s: written, but its directory could not be synced: %s", file->path,
                       strerror(code));
    release(file);
    return code == 0 ? GGTK_OK : GGTK_ERR_IO;
}
