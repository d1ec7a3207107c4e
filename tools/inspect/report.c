/* report.c - the commands that look at one file: the report (text or JSON) and --check. */
#include "inspect.h"

#include <stdlib.h>

static bool summarize(const ggtk_file *file, ggtk_summary *summary)
{
    ggtk_error err;
    if (ggtk_summarize(file, summary, &err) != GGTK_OK) {
        inspect_error("%s", err.message);
        return false;
    }
    return true;
}

/* The report needs only the header, unless --hash asks for data hashes in the JSON report. */
int inspect_report(const inspect_options *opt)
{
    ggtk_file *file = inspect_open(opt->files[0], opt->hash ? GGTK_OPEN_MMAP : GGTK_OPEN_METADATA);
    if (!file)
        return EXIT_FAIL;
    ggtk_summary summary;
    int status = EXIT_FAIL;
    uint64_t *hashes = NULL, all_hash = 0;
    if (!summarize(file, &summary))
        goto done;
    if (opt->hash) {
        int64_t n = ggtk_tensor_count(file);
        hashes = calloc((size_t)(n ? n : 1), sizeof *hashes);
        if (!hashes) {
            inspect_error("%s: out of memory", opt->files[0]);
            goto done;
        }
        if (!inspect_hash_selected(opt, file, hashes))
            goto done;
        all_hash = ggtk_hash_combine(hashes, n);
    }
    status = opt->json ? inspect_print_json(opt, file, &summary, hashes, all_hash)
                       : inspect_print_text(opt, file, &summary);
done:
    free(hashes);
    ggtk_close(file);
    return status;
}

int inspect_check(const inspect_options *opt)
{
    ggtk_file *file = inspect_open(opt->files[0], GGTK_OPEN_MMAP);
    if (!file)
        return EXIT_FAIL;
    ggtk_summary summary;
    ggtk_error err;
    int status = EXIT_FAIL;
    if (!summarize(file, &summary))
        goto done;
    if (ggtk_check_contents(file, &err) != GGTK_OK) {
        inspect_error("%s", err.message);
        goto done;
    }
    if (!inspect_check_blocks(opt->files[0], file))
        goto done;
    printf("%s: OK (version %u, %lld keys, %lld tensors)\n", opt->files[0], ggtk_version(file),
           (long long)ggtk_kv_count(file), (long long)ggtk_tensor_count(file));
    status = EXIT_OK;
done:
    ggtk_close(file);
    return status;
}
