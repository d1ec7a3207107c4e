/* output_set.h - several files written through temporary files and renamed into place together,
 * so that a converter's output folder holds all of its files or none (output_set.c); not public. */
#ifndef INF_CONVERT_OUTPUT_SET_H
#define INF_CONVERT_OUTPUT_SET_H

#include <ggtk/atomic_file.h>
#include <ggtk/error.h>

#include <stdio.h>

typedef struct output_set {
    ggtk_atomic_file **files;
    int n_files;
    /* Hooks around each temporary file's creation (both may be NULL): a tool holds its signals
     * before, and tracks the file for its signal handler after. */
    void (*before_temp_file)(void *user);
    void (*on_temp_file)(const char *path, void *user);
    void *user;
} output_set;

/* Start file `dir`/`name` in the set; its stream, or NULL with *err set. */
FILE *output_set_open(output_set *set, const char *dir, const char *name, ggtk_error *err);

/* Rename every file into place; when one fails, the ones already renamed are removed. The set is
 * then empty. */
ggtk_status output_set_commit(output_set *set, ggtk_error *err);

/* Abandon the files not yet committed (temporary files removed) and free the set. */
void output_set_free(output_set *set);

#endif
