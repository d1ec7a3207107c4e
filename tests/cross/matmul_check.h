/* matmul_check.h - the NEON matrix-product check of neon_check (matmul_check.c). */
#ifndef MATMUL_CHECK_H
#define MATMUL_CHECK_H

/* Compares the NEON matmul kernels with the scalar ones, printing one line per type; returns
 * nonzero when any product differs (or the kernel table does not pick NEON). */
int matmul_check(void);

#endif
