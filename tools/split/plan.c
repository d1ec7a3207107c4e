/* plan.c - the files gguf-split writes. Both operations start from the whole model as one file
 * (the first part's metadata and the tensors of every part, in order); a split cuts it into parts
 * with ggtk_writer_split(), llama-gguf-split's layout; a merge writes it as one file, version 3,
 * keeping the split keys with split.count moved to the end and set to 0 as llama-gguf-split does
 * (--strip-split-keys leaves them out, which gives back the file that was split). */
#include "split_tool.h"

#include <stdlib.h>
#include <string.h>

static ggtk_status fail_nomem(ggtk_error *err)
{
    return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory planning the files");
}

static ggtk_status name_files(split_plan *plan, const char *output, ggtk_error *err)
{
    plan->paths = calloc((size_t)plan->n_files, sizeof *plan->paths);
    if (!plan->paths)
        return fail_nomem(err);
    bool as_parts = plan->n_files > 1 || plan->split;
    for (int p = 0; p < plan->n_files; p++) {
        size_t length = as_parts ? ggtk_split_part_path(NULL, 0, output, p, plan->n_files)
                                 : strlen(output);
        plan->paths[p] = malloc(length + 1);
        if (!plan->paths[p])
            return fail_nomem(err);
        if (as_parts)
            ggtk_split_part_path(plan->paths[p], length + 1, output, p, plan->n_files);
        else
            memcpy(plan->paths[p], output, length + 1);
    }
    return GGTK_OK;
}

ggtk_status split_plan_parts(split_plan *plan, const ggtk_split *input, const split_args *args,
                             ggtk_error *err)
{
    memset(plan, 0, sizeof *plan);
    plan->split = true;
    ggtk_writer *whole = ggtk_writer_new_from_split(input, ggtk_split_is_key, err);
    if (!whole)
        return err ? err->status : GGTK_ERR_NOMEM;
    ggtk_split_options options = {args->max_tensors, args->max_bytes,
                                  args->no_tensor_first_split};
    ggtk_status status = ggtk_writer_split(whole, &options, &plan->writers, &plan->n_files, err);
    ggtk_writer_free(whole);
    if (status == GGTK_OK && plan->n_files > SPLIT_MAX_FILES)
        status = ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                                "%d parts, more than the %d one run writes; allow more tensors "
                                "or bytes per part", plan->n_files, SPLIT_MAX_FILES);
    return status == GGTK_OK ? name_files(plan, args->output, err) : status;
}

static bool is_split_count(const char *key) { return strcmp(key, GGTK_SPLIT_KEY_COUNT) == 0; }

ggtk_status split_plan_merge(split_plan *plan, const ggtk_split *input, const split_args *args,
                             ggtk_error *err)
{
    memset(plan, 0, sizeof *plan);
    const ggtk_file *first = ggtk_split_part(input, 0);
    uint64_t count = 0;
    if (ggtk_find_key(first, GGTK_SPLIT_KEY_COUNT) < 0)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "%s: not a split model (no split.count)", ggtk_path(first));
    if (ggtk_get_uint(first, GGTK_SPLIT_KEY_COUNT, &count) == GGTK_OK && count == 0)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "%s: split.count is 0: a merged file, not a part",
                              ggtk_path(first));
    plan->writers = calloc(1, sizeof *plan->writers);
    if (!plan->writers)
        return fail_nomem(err);
    plan->writers[0] = ggtk_writer_new_from_split(
        input, args->strip_split_keys ? ggtk_split_is_key : is_split_count, err);
    if (!plan->writers[0])
        return err ? err->status : GGTK_ERR_NOMEM;
    plan->n_files = 1;
    ggtk_status status;
    /* llama-gguf-split sets split.count to 0 in the merged file, which re-adds it at the end, so
     * that the file is not taken for a part. */
    if (!args->strip_split_keys &&
        (status = ggtk_writer_set_u16(plan->writers[0], GGTK_SPLIT_KEY_COUNT, 0)) != GGTK_OK)
        return fail_nomem(err);
    return name_files(plan, args->output, err);
}

void split_plan_free(split_plan *plan)
{
    for (int p = 0; plan->paths && p < plan->n_files; p++)
        free(plan->paths[p]);
    free(plan->paths);
    ggtk_writer_split_free(plan->writers, plan->n_files);
    memset(plan, 0, sizeof *plan);
}
