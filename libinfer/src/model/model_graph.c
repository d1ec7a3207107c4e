/* model_graph.c - the forward pass of one batch as an engine graph: token embedding, the family's
 * blocks (its row's build_layer), final RMS-norm and output projection, with the row's hooks. */
#include <stdio.h>

#include "model_arch.h"

/* Upper bound of graph nodes per layer and for the rest: about 40 per layer plus 12 per
 * attention block of at most 8 (graph_blocks.c), with room for a family's extra norms. */
enum { NODES_PER_LAYER = 64 + 12 * 8, NODES_EXTRA = 64 };

size_t model_graph_context_size(const inf_model *model)
{
    size_t max_nodes = (size_t)model->hparams.n_layer * NODES_PER_LAYER + NODES_EXTRA;
    return 2 * max_nodes * inf_tensor_overhead() + inf_graph_overhead(max_nodes);
}

/* The rope frequency factors of every layer: rope_freqs.weight when the file has it, else
 * LongRoPE's long factors when the context exceeds the original one, else its short factors.
 * llama.cpp compares its per-sequence context, which it rounds up to a multiple of 256. */
static inf_tensor *rope_factors(const inf_model *model, int32_t n_ctx)
{
    if (model->rope_freqs)
        return model->rope_freqs;
    const uint32_t n_ctx_seq = ((uint32_t)n_ctx + 255u) / 256u * 256u;
    return n_ctx_seq > model->hparams.n_ctx_orig ? model->rope_long : model->rope_short;
}

/* The tokens and positions inputs. */
static bool make_inputs(inf_context *ctx, int32_t n_tokens, model_graph *out)
{
    out->tokens = inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, n_tokens);
    out->positions = inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, n_tokens);
    if (!out->tokens || !out->positions)
        return false;
    inf_tensor_set_input(inf_tensor_set_name(out->tokens, "tokens"));
    inf_tensor_set_input(inf_tensor_set_name(out->positions, "positions"));
    return true;
}

/* Final norm, output projection (and bias), the row's logits hook; marks the logits output. */
static inf_tensor *output_head(graph_builder *b, inf_tensor *x)
{
    const inf_model *m = b->model;
    inf_tensor *logits = block_linear(b, m->output, m->output_b,
                                      block_rms_norm(b, x, m->output_norm));
    if (logits && m->arch->finish_logits)
        logits = m->arch->finish_logits(b, logits);
    if (logits) {
        inf_tensor_set_output(inf_tensor_set_name(logits, "logits"));
        b->ok = inf_graph_expand(b->graph, logits, NULL) == GGTK_OK;
    }
    return logits;
}

bool model_build_graph(const inf_model *model, inf_context *ctx, const model_cache *cache,
                       model_batch_shape shape, model_graph *out, ggtk_error *err)
{
    const inf_model_hparams *hp = &model->hparams;
    const model_arch *arch = model->arch;
    size_t max_nodes = (size_t)hp->n_layer * NODES_PER_LAYER + NODES_EXTRA;
    graph_builder b = {.model = model, .hp = hp, .ctx = ctx,
                       .graph = inf_graph_new(ctx, max_nodes), .cache = cache, .shape = shape,
                       .rope_factors = rope_factors(model, cache->n_ctx), .ok = true};
    out->logits = NULL;
    b.ok = make_inputs(ctx, shape.n_tokens, out);
    b.positions = out->positions;
    inf_tensor *x = inf_get_rows(ctx, model->tok_embd, out->tokens);
    if (arch->finish_embedding)
        x = arch->finish_embedding(&b, x);
    for (uint32_t il = 0; il < hp->n_layer && b.ok && b.graph; il++) {
        b.il = (int)il;
        x = arch->build_layer(&b, (int)il, x);
    }
    if (shape.n_out > 0 && b.ok && b.graph)
        out->logits = output_head(&b, x);
    const ggtk_error *cerr = inf_context_error(ctx);
    if (!b.graph || !b.ok || cerr || (shape.n_out > 0 && !out->logits)) {
        ggtk_error_set(err, cerr ? cerr->status : GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                       "building the forward graph failed: %s",
                       cerr ? cerr->message : b.failure ? b.failure : "graph too large");
        return false;
    }
    out->graph = b.graph;
    return true;
}
