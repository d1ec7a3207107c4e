/* output_path.c - see output_path.h. */
#include "output_path.h"
#include "output_file.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What makes two paths the same file: the inode when the file exists, else the resolved path. */
typedef struct identity {
    bool exists;
    dev_t dev;
    ino_t ino;
    mode_t mode;
    char resolved[PATH_MAX]; /* "" when it cannot be resolved */
} identity;

/* The canonical path of `path`: realpath() when it exists, else its directory's realpath plus its
 * last component (a file not written yet). */
static void resolve(const char *path, bool exists, char *out)
{
    out[0] = '\0';
    if (exists) {
        if (!realpath(path, out))
            out[0] = '\0';
        return;
    }
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX], real_dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (slash == path)
        snprintf(dir, sizeof dir, "/");
    if (realpath(dir, real_dir) &&
        (size_t)snprintf(out, PATH_MAX, "%s/%s", real_dir, slash ? slash + 1 : path) >= PATH_MAX)
        out[0] = '\0';
}

static void identify(const char *path, identity *id)
{
    struct stat st;
    id->exists = stat(path, &st) == 0;
    id->dev = id->exists ? st.st_dev : 0;
    id->ino = id->exists ? st.st_ino : 0;
    id->mode = id->exists ? st.st_mode : 0;
    resolve(path, id->exists, id->resolved);
}

static bool same_file(const identity *a, const identity *b)
{
    return (a->exists && b->exists && a->dev == b->dev && a->ino == b->ino) ||
           (a->resolved[0] && strcmp(a->resolved, b->resolved) == 0);
}

static const char *kind_of(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    return S_ISSOCK(mode) ? "a socket" : "not a regular file";
}

/* Output `out` (identity *id) against the inputs and the outputs before it. */
static ggtk_status check_one(const tool_path *out, const identity *id, const tool_path *inputs,
                             const identity *input_ids, size_t n_inputs, const tool_path *earlier,
                             const identity *earlier_ids, size_t n_earlier, ggtk_error *err)
{
    for (size_t j = 0; j < n_inputs; j++)
        if (same_file(id, &input_ids[j]))
            return ggtk_error_set(err, GGTK_ERR_PATH, GGTK_NO_OFFSET,
                                  "%s %s: is the input %s %s; it would be overwritten",
                                  out->option, out->path, inputs[j].option, inputs[j].path);
    if (id->exists && !S_ISREG(id->mode))
        return ggtk_error_set(err, GGTK_ERR_PATH, GGTK_NO_OFFSET,
                              "%s %s: is %s; an output must be a regular file", out->option,
                              out->path, kind_of(id->mode));
    for (size_t j = 0; j < n_earlier; j++)
        if (same_file(id, &earlier_ids[j]))
            return ggtk_error_set(err, GGTK_ERR_PATH, GGTK_NO_OFFSET,
                                  "%s %s: is also the output %s %s", out->option, out->path,
                                  earlier[j].option, earlier[j].path);
    int code = output_file_probe(out->path);
    if (code != 0)
        return ggtk_error_set(err, GGTK_ERR_PATH, GGTK_NO_OFFSET,
                              "%s %s: cannot create a file there: %s", out->option, out->path,
                              strerror(code));
    return GGTK_OK;
}

ggtk_status output_paths_check(const tool_path *inputs, size_t n_inputs, const tool_path *outputs,
                               size_t n_outputs, ggtk_error *err)
{
    identity *ids = malloc((n_inputs + n_outputs + 1) * sizeof *ids);
    if (!ids)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    identity *input_ids = ids, *output_ids = ids + n_inputs;
    for (size_t i = 0; i < n_inputs; i++)
        identify(inputs[i].path, &input_ids[i]);
    ggtk_status status = GGTK_OK;
    for (size_t i = 0; i < n_outputs && status == GGTK_OK; i++) {
        identify(outputs[i].path, &output_ids[i]);
        status = check_one(&outputs[i], &output_ids[i], inputs, input_ids, n_inputs, outputs,
                           output_ids, i, err);
    }
    free(ids);
    return status;
}
