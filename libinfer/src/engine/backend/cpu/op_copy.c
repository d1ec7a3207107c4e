/* op_copy.c - moving rows between tensors with type conversion: cont and cpy (any layout, same
 * element count), set_rows (a KV-cache write) and get_rows (an embedding lookup, dequantizing). */
#include "cpu_internal.h"
#include <ggtk/inf_quant.h>
#include "engine/quant_kernels/quant_internal.h"
#include "engine/tensor/tensor_internal.h"

static bool is_float_type(ggtk_tensor_type type)
{
    return type == GGTK_TENSOR_F32 || type == GGTK_TENSOR_F16 || type == GGTK_TENSOR_BF16;
}

static void store_float(ggtk_tensor_type type, char *at, float v)
{
    if (type == GGTK_TENSOR_F32) {
        memcpy(at, &v, sizeof v);
        return;
    }
    uint16_t h = type == GGTK_TENSOR_F16 ? inf_fp32_to_fp16(v) : inf_fp32_to_bf16(v);
    memcpy(at, &h, sizeof h);
}

/* Convert one contiguous row of n elements from F32 (to any float type) or into F32. */
static bool convert_row_fast(ggtk_tensor_type from, const void *src, ggtk_tensor_type to, void *dst,
                             int64_t n)
{
    if (from == to) {
        memcpy(dst, src, (size_t)n * inf_type_block_bytes(to));
    } else if (from == GGTK_TENSOR_F32 && to == GGTK_TENSOR_F16) {
        inf_fp32_to_fp16_row(src, dst, n);
    } else if (from == GGTK_TENSOR_F32 && to == GGTK_TENSOR_BF16) {
        inf_fp32_to_bf16_row(src, dst, n);
    } else if (from == GGTK_TENSOR_F16 && to == GGTK_TENSOR_F32) {
        inf_fp16_to_fp32_row(src, dst, n);
    } else if (from == GGTK_TENSOR_BF16 && to == GGTK_TENSOR_F32) {
        inf_bf16_to_fp32_row(src, dst, n);
    } else {
        return false;
    }
    return true;
}

bool cpu_copy_supports(const inf_tensor *node)
{
    return is_float_type(node->src[0]->type) && is_float_type(node->type);
}

/* Convert n F32 values `stride` bytes apart into a contiguous row of `to` (a KV cache's
 * transposed V write), gathering them in stack-sized pieces for the row converters. */
static bool convert_strided_f32(const char *src, size_t stride, ggtk_tensor_type to, char *dst, int64_t n)
{
    float piece[256];
    const size_t esize = inf_type_block_bytes(to);
    for (int64_t i0 = 0; i0 < n; i0 += 256) {
        const int64_t len = n - i0 < 256 ? n - i0 : 256;
        for (int64_t i = 0; i < len; i++)
            memcpy(&piece[i], src + (size_t)(i0 + i) * stride, sizeof(float));
        if (!convert_row_fast(GGTK_TENSOR_F32, piece, to, dst + (size_t)i0 * esize, len))
            return false;
    }
    return true;
}

/* The coordinates d[0..3] of element k of t in row-major order. */
static void linear_coords(const inf_tensor *t, int64_t k, int64_t d[4])
{
    for (int i = 0; i < 4; i++) {
        d[i] = k % t->ne[i];
        k /= t->ne[i];
    }
}

/* Element by element, for the layouts the row converters do not take: the source row starting
 * at `from` goes to the destination elements from linear index k on. */
static void copy_row_elements(const inf_tensor *src, const char *from, inf_tensor *node, int64_t k)
{
    int64_t d[4];
    linear_coords(node, k, d);
    for (int64_t i = 0; i < src->ne[0]; i++) {
        float v = quant_load_float(src->type, from + i * src->nb[0]);
        store_float(node->type, inf_tensor_element(node, d[0], d[1], d[2], d[3]), v);
        for (int c = 0; ++d[c] == node->ne[c] && c < 3; c++) /* carry into the next dimension */
            d[c] = 0;
    }
}

/* cont and cpy: element k of the source in row-major order goes to element k of the result.
 * When the destination's rows are contiguous and a whole number of source rows long, each
 * source row lands in one stretch of one destination row (the KV cache writes, the merge of
 * attention heads) and is converted as a row. */
void cpu_copy_compute(const cpu_params *p, inf_tensor *node)
{
    const inf_tensor *src = node->src[0];
    const int64_t ne0 = src->ne[0];
    const size_t src_esize = inf_type_block_bytes(src->type), dst_esize = inf_type_block_bytes(node->type);
    const bool dst_stretch = node->nb[0] == dst_esize && ne0 > 0 && node->ne[0] % ne0 == 0;
    int64_t begin, end;
    cpu_split(inf_tensor_nrows(src), p, &begin, &end);
    for (int64_t r = begin; r < end; r++) {
        const int64_t k = r * ne0;
        int64_t s[4], d[4];
        linear_coords(src, k, s);
        const char *from = (const char *)inf_tensor_element(src, 0, s[1], s[2], s[3]);
        if (dst_stretch) {
            linear_coords(node, k, d);
            char *to = inf_tensor_element(node, d[0], d[1], d[2], d[3]);
            if (src->nb[0] == src_esize ? convert_row_fast(src->type, from, node->type, to, ne0)
                : src->type == GGTK_TENSOR_F32 && convert_strided_f32(from, src->nb[0], node->type, to, ne0))
                continue;
        }
        copy_row_elements(src, from, node, k);
    }
}

bool cpu_set_rows_supports(const inf_tensor *node)
{
    return is_float_type(node->type) && node->src[1]->type == GGTK_TENSOR_F32 &&
           node->nb[0] == inf_type_block_bytes(node->type);
}

/* node is a view of src[0] (the cache); rows of src[1] go to rows src[2][i]. */
void cpu_set_rows_compute(const cpu_params *p, inf_tensor *node)
{
    const inf_tensor *rows = node->src[1], *ids = node->src[2];
    const int64_t n = rows->ne[1], n_slices = rows->ne[2] * rows->ne[3], ne0 = rows->ne[0];
    int64_t begin, end;
    cpu_split(n * n_slices, p, &begin, &end);
    for (int64_t r = begin; r < end; r++) {
        const int64_t i = r % n, i2 = r / n % rows->ne[2], i3 = r / (n * rows->ne[2]);
        int32_t id;
        memcpy(&id, (const char *)ids->data + i * ids->nb[0], sizeof id);
        if (id < 0 || id >= node->ne[1]) {
            cpu_fail(p, "row index %d outside [0, %lld)", id, (long long)node->ne[1]);
            return;
        }
        const char *from = (const char *)inf_tensor_element(rows, 0, i, i2, i3);
        char *to = inf_tensor_element(node, 0, id, i2, i3);
        if (rows->nb[0] == sizeof(float) && convert_row_fast(GGTK_TENSOR_F32, from, node->type, to, ne0))
            continue;
        for (int64_t k = 0; k < ne0; k++)
            store_float(node->type, to + k * node->nb[0], quant_load_float(GGTK_TENSOR_F32, from + k * rows->nb[0]));
    }
}

bool cpu_get_rows_supports(const inf_tensor *node)
{
    return inf_type_can_dequantize(node->src[0]->type) && inf_tensor_is_contiguous(node);
}

void cpu_get_rows_compute(const cpu_params *p, inf_tensor *node)
{
    const inf_tensor *table = node->src[0], *ids = node->src[1];
    int64_t begin, end;
    cpu_split(ids->ne[0], p, &begin, &end);
    for (int64_t i = begin; i < end; i++) {
        int32_t id;
        memcpy(&id, (const char *)ids->data + i * ids->nb[0], sizeof id);
        if (id < 0 || id >= table->ne[1]) {
            cpu_fail(p, "row index %d outside [0, %lld)", id, (long long)table->ne[1]);
            return;
        }
        inf_dequantize_row(table->type, (const char *)table->data + id * table->nb[1],
                           inf_tensor_element(node, 0, i, 0, 0), table->ne[0]);
    }
}
