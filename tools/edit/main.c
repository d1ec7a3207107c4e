/* main.c - gguf-edit: edit a GGUF file's metadata (see --help). The writing is libgguf's
 * copy-with-edits writer (ggtk_writer_new_from_file, tensor data streamed from the mapped
 * source); this file sequences it: arguments, path checks, edits, diff, atomic write. */
#include "edit_tool.h"
#include "output_file.h"
#include "output_path.h"
#include "signals.h"
#include "tool_stdout.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int fail(const ggtk_error *err)
{
    fprintf(stderr, EDIT_ERROR_PREFIX "%s\n", err->message);
    return EXIT_FAILED;
}

/* Where the result goes: OUT, or IN itself with --in-place. In place, a symbolic link is followed
 * so that the rename replaces the file it names and the link stays a link. */
static int resolve_target(const edit_args *args, char *target)
{
    ggtk_error err;
    if (!args->in_place) {
        snprintf(target, PATH_MAX, "%s", args->output ? args->output : "");
        return 0;
    }
    if (!realpath(args->input, target)) {
        ggtk_error_set(&err, GGTK_ERR_IO, GGTK_NO_OFFSET, "IN %s: %s", args->input,
                       strerror(errno));
        return fail(&err);
    }
    return 0;
}

/* Before anything is loaded: IN a regular file (it is mapped); OUT not IN, not a device or FIFO,
 * and creatable (output_path.h); in place, a file can be created beside IN. */
static int check_paths(const edit_args *args, const char *target, struct stat *in_stat)
{
    ggtk_error err;
    if (stat(args->input, in_stat) != 0)
        return 0; /* ggtk_open says why */
    if (!S_ISREG(in_stat->st_mode)) {
        ggtk_error_set(&err, GGTK_ERR_PATH, GGTK_NO_OFFSET,
                       "IN %s: not a regular file (the input is mapped into memory)", args->input);
        return fail(&err);
    }
    if (args->dry_run)
        return 0;
    if (!args->in_place) {
        if (output_paths_check(&(tool_path){"IN", args->input}, 1,
                               &(tool_path){"OUT", args->output}, 1, &err) != GGTK_OK) {
            fprintf(stderr, EDIT_ERROR_PREFIX "%s%s\n", err.message,
                    strstr(err.message, "is the input") ? " (use --in-place to rewrite IN)" : "");
            return EXIT_FAILED;
        }
        return 0;
    }
    int code = output_file_probe(target);
    if (code == 0)
        return 0;
    ggtk_error_set(&err, GGTK_ERR_PATH, GGTK_NO_OFFSET,
                   "IN %s: cannot create the temporary file beside it: %s", args->input,
                   strerror(code));
    return fail(&err);
}

/* Write the edited file to `target` through its temporary file, tracked for the signal handler
 * from its creation; in place the result keeps IN's permission bits. */
static int write_result(edit_session *session, const char *target, bool keep_mode,
                        mode_t mode)
{
    ggtk_error err;
    tool_signals_hold();
    ggtk_status status = ggtk_writer_begin(session->writer, target, &err);
    int slot = status == GGTK_OK ? tool_signals_track(ggtk_writer_temp_path(session->writer)) : -1;
    tool_signals_release();
    if (status == GGTK_OK && keep_mode && chmod(ggtk_writer_temp_path(session->writer), mode) != 0) {
        ggtk_error_set(&err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: cannot keep its permissions: %s",
                       target, strerror(errno));
        ggtk_writer_abort(session->writer);
        status = GGTK_ERR_IO;
    }
    if (status == GGTK_OK)
        status = ggtk_writer_write_data_from(session->writer, session->source, &err);
    if (status == GGTK_OK)
        status = ggtk_writer_finish(session->writer, &err);
    tool_signals_untrack(slot); /* renamed into place, or removed */
    return status == GGTK_OK ? 0 : fail(&err);
}

static int run(const edit_args *args)
{
    char target[PATH_MAX];
    struct stat in_stat = {.st_mode = 0644};
    int rc = resolve_target(args, target);
    if (rc == 0)
        rc = check_paths(args, target, &in_stat);
    if (rc != 0)
        return rc;
    ggtk_error err;
    /* A dry run needs no tensor data. */
    ggtk_file *source =
        ggtk_open(args->input, args->dry_run ? GGTK_OPEN_METADATA : GGTK_OPEN_MMAP, &err);
    if (!source)
        return fail(&err);
    edit_session session = {.source = source, .writer = ggtk_writer_new_from_file(source),
                            .quiet = args->quiet};
    if (!session.writer)
        rc = fail(&(ggtk_error){.message = "out of memory"});
    for (size_t i = 0; rc == 0 && i < args->n_edits; i++)
        rc = edit_apply(&session, &args->edits[i]);
    size_t changed = rc == 0 ? edit_report_diff(&session, !args->quiet) : 0;
    const char *shown = args->in_place ? args->input : args->output;
    if (rc == 0 && args->dry_run) {
        if (!args->quiet)
            printf("dry run: %zu keys would change; nothing written\n", changed);
    } else if (rc == 0 && args->in_place && changed == 0) {
        if (!args->quiet)
            printf("no key changes; %s left as it was\n", shown);
    } else if (rc == 0) {
        rc = write_result(&session, target, args->in_place, in_stat.st_mode & 07777);
        if (rc == 0 && !args->quiet)
            printf("%zu keys changed; %s %s (%llu bytes)\n", changed,
                   args->in_place ? "rewrote" : "wrote", shown,
                   (unsigned long long)ggtk_writer_file_size(session.writer));
    }
    edit_session_free(&session);
    ggtk_close(source);
    return rc;
}

int main(int argc, char **argv)
{
    tool_signals_install();
    edit_args args;
    bool exit_now = false;
    int rc = edit_args_parse(&args, argc, argv, &exit_now);
    if (rc == 0 && !exit_now)
        rc = run(&args);
    edit_args_free(&args);
    return tool_stdout_close(EDIT_ERROR_PREFIX) ? rc : EXIT_FAILED;
}
