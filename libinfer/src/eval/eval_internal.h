/* eval_internal.h - helpers shared by the files of libinfer/src/eval. */
#ifndef EVAL_INTERNAL_H
#define EVAL_INTERNAL_H

#include <stddef.h>

/* printf into the caller's message buffer `err` of `err_size` bytes (nothing when 0). */
void inf_eval_set_error(char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
