/* openmp_waits.h - run a tool with libgomp's idle threads waiting passively (openmp_waits.c).
 * Shared by the tools that quantize or convert tensor by tensor (gguf-quantize, gguf-convert). */
#ifndef TOOLS_OPENMP_WAITS_H
#define TOOLS_OPENMP_WAITS_H

/* Call first in main(). libgomp reads OMP_WAIT_POLICY once, when it loads, before main(); its
 * default lets idle threads spin for milliseconds. Between the tools' parallel regions (one per
 * batch or tensor) the main thread writes the output, and on a busy machine the spinning threads
 * take its CPU: 2 threads ran 2-3x slower than 1. Passive waits cost a few microseconds per
 * region. So, unless the user chose a policy, this sets OMP_WAIT_POLICY=passive and runs the
 * program again (/proc/self/exe with `argv`; it does not return then). When the variable is set
 * already, or setting it or the exec fails, it returns and the tool carries on as it is. */
void openmp_waits_make_passive(char **argv);

#endif
