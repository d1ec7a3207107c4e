/* output_set.c - files renamed into place together (see output_set.h). */
#include "output_set.h"

#include <stdlib.h>
#include <unistd.h>

FILE *output_set_open(output_set *set, const char *dir, const char *name, ggtk_error *err)
{
    char *path = NULL;
    if (asprintf(&path, "%s/%s", dir, name) < 0) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
        return NULL;
    }
    ggtk_atomic_file **grown = realloc(set->files, (set->n_files + 1) * sizeof *grown);
    if (grown && set->before_temp_file)
        set->before_temp_file(set->user);
    ggtk_atomic_file *file = grown ? ggtk_atomic_file_open(path, err) : NULL;
    if (!file && grown && set->on_temp_file)
        set->on_temp_file(NULL, set->user); /* nothing to track: lets the caller release */
    if (!grown)
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    free(path);
    if (grown)
        set->files = grown;
    if (!file)
        return NULL;
    set->files[set->n_files++] = file;
    if (set->on_temp_file)
        set->on_temp_file(ggtk_atomic_file_temp_path(file), set->user);
    return ggtk_atomic_file_stream(file);
}

ggtk_status output_set_commit(output_set *set, ggtk_error *err)
{
    ggtk_status status = GGTK_OK;
    int done = 0;
    for (; done < set->n_files && status == GGTK_OK; done++)
        status = ggtk_atomic_file_commit(set->files[done], err);
    if (status != GGTK_OK)
        for (int i = 0; i < done - 1; i++)
            unlink(ggtk_atomic_file_path(set->files[i]));
    output_set_free(set);
    return status;
}

void output_set_free(output_set *set)
{
    for (int i = 0; i < set->n_files; i++)
        ggtk_atomic_file_close(set->files[i]);
    free(set->files);
    set->files = NULL;
    set->n_files = 0;
}
