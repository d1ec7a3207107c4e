/* fuzz_imatrix.c - libFuzzer harness of the importance matrix reader (libinfer/src/imatrix/,
 * both formats), fed through a memory file (memfd) named by its /proc path. A refused input must
 * carry one line naming it; an accepted one must hold entries whose sizes fit the input, whose
 * values are finite and not negative, whose counts are not negative, and whose quantizer weights
 * are finite (so that no weighted quantization can start from a NaN). Any other outcome aborts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_imatrix.h>

#include "fuzz_input.h"

static void check_entries(const inf_imatrix *m, size_t size)
{
    if (inf_imatrix_n_entries(m) < 1)
        abort();
    for (int64_t i = 0; i < inf_imatrix_n_entries(m); i++) {
        const inf_imatrix_entry *e = inf_imatrix_entry_at(m, i);
        if (!e || !e->name[0] || e->n_mat < 1 || e->n_per_row < 1 ||
            (uint64_t)e->n_mat * (uint64_t)e->n_per_row > size / 4 ||
            inf_imatrix_find(m, e->name) != e)
            abort();
        float *w = malloc((size_t)(e->n_mat * e->n_per_row) * sizeof *w);
        if (!w)
            abort();
        inf_imatrix_weights(m, e, w);
        for (int64_t j = 0; j < e->n_mat * e->n_per_row; j++)
            if (!isfinite(e->values[j]) || e->values[j] < 0 || !isfinite(w[j]))
                abort();
        for (int64_t k = 0; k < e->n_mat; k++)
            if (e->counts[k] < 0)
                abort();
        free(w);
        double coverage = inf_imatrix_coverage(e);
        if (!(coverage >= 0 && coverage <= 1))
            abort();
    }
}

static bool read_input(const char *path, size_t size, ggtk_error *err)
{
    inf_imatrix *m = inf_imatrix_read(path, err);
    if (m)
        check_entries(m, size);
    inf_imatrix_free(m);
    return m != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_path_input(data, size, read_input);
    return 0;
}
