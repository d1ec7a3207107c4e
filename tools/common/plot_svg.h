/* plot_svg.h - an SVG chart of a perplexity / KL-divergence run.
 * Shared by the tools (tools/common is linked into each tool, not installed). */
#ifndef TOOLS_PLOT_SVG_H
#define TOOLS_PLOT_SVG_H

#include <stddef.h>
#include <stdint.h>

#include <ggtk/error.h>

/* ---------------------------------------------------------------------------------------------
 * Plot
 * ------------------------------------------------------------------------------------------- */

/* Write an SVG chart of a run to `path`: the per-chunk PPL and the running estimate against the
 * chunk number, and below it the per-chunk mean KL-divergence when `chunk_kld` is not NULL.
 * `title` (may be NULL) is escaped for XML. Written as output_file.h writes (a temporary file,
 * fsynced and renamed into place). GGTK_ERR_INVALID for n < 1, else output_file_open/commit's
 * failures, with the message in `err`. */
ggtk_status plot_svg_write(const char *path, const char *title, const double *chunk_ppl,
                        const double *running_ppl, const double *chunk_kld, int32_t n, ggtk_error *err);


#endif
