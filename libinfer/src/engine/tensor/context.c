/* context.c - the arena that holds tensor and graph metadata (and, outside no-data mode, tensor
 * data) in one block sized at creation, plus the context's first-error slot. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tensor_internal.h"

/* Tensors are kept in creation order so inf_context_next_tensor() can walk them; the tensor is
 * the first member so a tensor pointer is also its record's pointer. */
typedef struct tensor_record {
    inf_tensor tensor;
    struct tensor_record *next;
} tensor_record;

struct inf_context {
    char *block;
    size_t size;
    size_t used;
    bool no_data;
    tensor_record *first;
    tensor_record *last;
    ggtk_error error;
    bool failed;
};

size_t inf_tensor_overhead(void)
{
    /* Records are 16-byte aligned; the worst-case padding is counted once per tensor. */
    return sizeof(tensor_record) + 16;
}

inf_context *inf_context_new(size_t mem_size, bool no_data)
{
    inf_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return NULL;
    ctx->size = mem_size;
    ctx->no_data = no_data;
    if (mem_size > 0) {
        ctx->block = aligned_alloc(INF_DATA_ALIGNMENT,
                                   (mem_size + INF_DATA_ALIGNMENT - 1) / INF_DATA_ALIGNMENT *
                                       INF_DATA_ALIGNMENT);
        if (!ctx->block) {
            free(ctx);
            return NULL;
        }
    }
    return ctx;
}

void inf_context_free(inf_context *ctx)
{
    if (!ctx)
        return;
    free(ctx->block);
    free(ctx);
}

size_t inf_context_used(const inf_context *ctx)
{
    return ctx->used;
}

bool inf_context_no_data(const inf_context *ctx)
{
    return ctx->no_data;
}

const ggtk_error *inf_context_error(const inf_context *ctx)
{
    return ctx->failed ? &ctx->error : NULL;
}

static void context_failv(inf_context *ctx, ggtk_status status, const char *fmt, va_list ap)
{
    if (ctx->failed)
        return;
    ctx->failed = true;
    ctx->error.status = status;
    ctx->error.offset = GGTK_NO_OFFSET;
    vsnprintf(ctx->error.message, sizeof ctx->error.message, fmt, ap);
}

void inf_context_fail(inf_context *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    context_failv(ctx, GGTK_ERR_INVALID, fmt, ap);
    va_end(ap);
}

/* A full context is the one constructor failure that is about memory. */
static void context_full(inf_context *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    context_failv(ctx, GGTK_ERR_NOMEM, fmt, ap);
    va_end(ap);
}

void *inf_context_alloc(inf_context *ctx, size_t size, size_t alignment, const char *what)
{
    uintptr_t base = (uintptr_t)ctx->block;
    size_t start = (size_t)(((base + ctx->used + alignment - 1) & ~(uintptr_t)(alignment - 1)) - base);
    if (start > ctx->size || size > ctx->size - start) {
        context_full(ctx, "context full: %zu bytes for %s do not fit (%zu of %zu used)", size,
                         what, ctx->used, ctx->size);
        return NULL;
    }
    ctx->used = start + size;
    return ctx->block + start;
}

inf_tensor *inf_context_new_record(inf_context *ctx)
{
    tensor_record *rec = inf_context_alloc(ctx, sizeof *rec, 16, "tensor metadata");
    if (!rec)
        return NULL;
    memset(rec, 0, sizeof *rec);
    if (ctx->last)
        ctx->last->next = rec;
    else
        ctx->first = rec;
    ctx->last = rec;
    return &rec->tensor;
}

inf_tensor *inf_context_next_tensor(const inf_context *ctx, const inf_tensor *prev)
{
    if (!prev)
        return ctx->first ? &ctx->first->tensor : NULL;
    const tensor_record *rec = (const tensor_record *)prev;
    return rec->next ? &rec->next->tensor : NULL;
}
