/* kld_fuzz_stubs.c - the base-file fuzzers link the file code of libinfer/src/eval without the
 * CPU kernels that choosing a compact row's entries runs on (kld_sparse.c). Only a writer
 * converting llama rows calls these, and no reader does: reaching one is a fault. */
#include <stdlib.h>

#include "eval/kld_sparse.h"

bool sparse_row_choose(const float *log_p, int32_t n_vocab, float log_p_token,
                       const inf_kld_compact_params *params, sparse_scratch *scratch,
                       sparse_row *row)
{
    (void)log_p, (void)n_vocab, (void)log_p_token, (void)params, (void)scratch, (void)row;
    abort();
}

bool sparse_scratch_init(sparse_scratch *s, int32_t n_vocab)
{
    (void)s, (void)n_vocab;
    abort();
}

void sparse_scratch_free(sparse_scratch *s) { (void)s; }
