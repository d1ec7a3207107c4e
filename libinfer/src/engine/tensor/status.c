/* status.c - names of libinfer's result codes. */
#include <ggtk/inf_status.h>

const char *inf_strerror(inf_status status)
{
    switch (status) {
    case INF_OK: return "success";
    case INF_ERR_NOMEM: return "out of memory";
    case INF_ERR_INVALID: return "invalid argument";
    case INF_ERR_UNSUPPORTED: return "not supported";
    case INF_ERR_IO: return "input/output error";
    case INF_ERR_USAGE: return "API misuse";
    }
    return "unknown status";
}
