/* openmp_waits.c - re-run the tool with OMP_WAIT_POLICY=passive (see openmp_waits.h). */
#include "openmp_waits.h"

#include <stdlib.h>
#include <unistd.h>

void openmp_waits_make_passive(char **argv)
{
    if (getenv("OMP_WAIT_POLICY"))
        return;
    if (setenv("OMP_WAIT_POLICY", "passive", 1) == 0)
        execv("/proc/self/exe", argv);
}
