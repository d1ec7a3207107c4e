/* kld_file.h - what the base-file code (kld_file.c) shares inside libinfer/src/eval: the span of
 * log-probabilities a row stores, and the reader's stream entry point, through which the fuzzer
 * (tests/fuzz/fuzz_kld_base.c) feeds it from memory. */
#ifndef KLD_FILE_H
#define KLD_FILE_H

#include <stdio.h>

#include <ggtk/inf_eval.h>

/* Log-probabilities further than this below the most likely token are not stored exactly. */
#define LOGPROB_RANGE 16.0f

/* inf_kld_base_open() on an open stream (a file, or an fmemopen() buffer: its size is found by
 * seeking to its end); `path` names it in messages. The reader owns `file` from then on, and
 * closes it on failure too. */
inf_kld_base *kld_base_open_stream(FILE *file, const char *path, ggtk_error *err);

#endif
