/* gguf_writer_header.c - the GGUF header as the writer emits it: magic, version, counts, the
 * key/value pairs in order, the tensor infos in order, then zeros up to the aligned start of the
 * data section (always, even without tensors, as llama.cpp and gguf-py do). */
#include "gguf_writer_internal.h"

#include <string.h>

static void tensor_info_serialize(writer_output *out, const ggtk_tensor_info *tensor)
{
    writer_string_serialize(out, tensor->name, strlen(tensor->name));
    writer_output_u32(out, tensor->n_dims);
    for (uint32_t d = 0; d < tensor->n_dims; d++)
        writer_output_u64(out, tensor->ne[d]);
    writer_output_u32(out, (uint32_t)tensor->type);
    writer_output_u64(out, tensor->offset);
}

void writer_header_serialize(const ggtk_writer *writer, writer_output *out)
{
    writer_output_u32(out, GGTK_MAGIC);
    writer_output_u32(out, writer->version);
    writer_output_u64(out, (uint64_t)writer->n_tensors);
    writer_output_u64(out, (uint64_t)writer->n_kvs);
    for (int64_t i = 0; i < writer->n_kvs; i++) {
        const writer_kv *kv = &writer->kvs[i];
        writer_string_serialize(out, kv->key, strlen(kv->key));
        writer_value_serialize(out, &kv->value);
    }
    for (int64_t i = 0; i < writer->n_tensors; i++)
        tensor_info_serialize(out, &writer->tensors[i]);
    writer_output_zeros(out, writer->data_offset - out->written);
}
