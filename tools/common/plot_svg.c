/* plot_svg.c - a small self-contained SVG chart of an evaluation: per-chunk and running perplexity,
 * and per-chunk KL-divergence in a second panel when a base was compared. No dependencies: the
 * axes, ticks and polylines are written directly. */
#include <stdbool.h>
#include <math.h>
#include <stdio.h>

#include "output_file.h"
#include "plot_svg.h"

enum { WIDTH = 860, PANEL_HEIGHT = 300, MARGIN_LEFT = 70, MARGIN_RIGHT = 20, MARGIN_TOP = 40,
       PANEL_GAP = 60, MARGIN_BOTTOM = 50, N_TICKS = 5 };

/* One chart panel: its box in the picture and the data range it shows. */
typedef struct panel {
    double x0, y0, width, height;
    double x_min, x_max, y_min, y_max;
} panel;

static double panel_x(const panel *p, double x)
{
    return p->x0 + (x - p->x_min) / (p->x_max - p->x_min) * p->width;
}

static double panel_y(const panel *p, double y)
{
    return p->y0 + p->height - (y - p->y_min) / (p->y_max - p->y_min) * p->height;
}

/* Range of the finite values of one or two series, widened a little so lines stay inside. */
static void value_range(const double *a, const double *b, int32_t n, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int32_t i = 0; i < n; i++) {
        for (int s = 0; s < 2; s++) {
            const double *v = s == 0 ? a : b;
            if (!v || !isfinite(v[i]))
                continue;
            *lo = v[i] < *lo ? v[i] : *lo;
            *hi = v[i] > *hi ? v[i] : *hi;
        }
    }
    if (!isfinite(*lo)) {
        *lo = 0;
        *hi = 1;
    }
    double pad = (*hi - *lo) * 0.05;
    if (pad <= 0)
        pad = fabs(*hi) > 0 ? fabs(*hi) * 0.05 : 0.5;
    *lo -= pad;
    *hi += pad;
}

static void write_escaped(FILE *f, const char *text)
{
    for (; *text; text++) {
        switch (*text) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*text, f);
        }
    }
}

/* Frame, grid lines with tick labels, and the axis titles of a panel. */
static void write_axes(FILE *f, const panel *p, const char *y_label, int32_t n)
{
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
               "stroke=\"#444\"/>\n", p->x0, p->y0, p->width, p->height);
    for (int i = 0; i <= N_TICKS; i++) {
        double v = p->y_min + (p->y_max - p->y_min) * i / N_TICKS;
        double y = panel_y(p, v);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                p->x0, y, p->x0 + p->width, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.4g</text>\n",
                p->x0 - 6, y + 4, v);
    }
    int step = n <= 10 ? 1 : (int)ceil(n / 10.0);
    for (int32_t c = 1; c <= n; c += step) {
        double x = panel_x(p, c);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%d</text>\n",
                x, p->y0 + p->height + 16, c);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">chunk</text>\n",
            p->x0 + p->width / 2, p->y0 + p->height + 34);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" "
               "transform=\"rotate(-90 %.1f %.1f)\">%s</text>\n",
            p->x0 - 52, p->y0 + p->height / 2, p->x0 - 52, p->y0 + p->height / 2, y_label);
}

/* One series as a polyline (non-finite values break nothing: they are skipped). */
static void write_series(FILE *f, const panel *p, const double *v, int32_t n, const char *color,
                         double stroke_width)
{
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\" points=\"", color,
            stroke_width);
    for (int32_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            fprintf(f, "%.1f,%.1f ", panel_x(p, i + 1), panel_y(p, v[i]));
    fputs("\"/>\n", f);
}

static void write_legend(FILE *f, double x, double y, const char *color, const char *label)
{
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
               "stroke-width=\"2\"/>\n", x, y, x + 20, y, color);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">%s</text>\n", x + 26, y + 4, label);
}

static void write_chart(FILE *f, const char *title, const double *chunk_ppl,
                        const double *running_ppl, const double *chunk_kld, int32_t n)
{
    int panels = chunk_kld ? 2 : 1;
    int height = MARGIN_TOP + panels * PANEL_HEIGHT + (panels - 1) * PANEL_GAP + MARGIN_BOTTOM;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            WIDTH, height, WIDTH, height);
    fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">", WIDTH / 2);
    write_escaped(f, title ? title : "perplexity");
    fputs("</text>\n", f);

    panel ppl = {MARGIN_LEFT, MARGIN_TOP, WIDTH - MARGIN_LEFT - MARGIN_RIGHT, PANEL_HEIGHT,
                 n > 1 ? 1 : 0.5, n > 1 ? n : 1.5, 0, 0};
    value_range(chunk_ppl, running_ppl, n, &ppl.y_min, &ppl.y_max);
    write_axes(f, &ppl, "perplexity", n);
    write_series(f, &ppl, chunk_ppl, n, "#9ab", 1.2);
    write_series(f, &ppl, running_ppl, n, "#c22", 2.2);
    write_legend(f, ppl.x0 + 12, ppl.y0 + 16, "#9ab", "PPL of the chunk");
    write_legend(f, ppl.x0 + 12, ppl.y0 + 34, "#c22", "running estimate");

    if (chunk_kld) {
        panel kld = ppl;
        kld.y0 = MARGIN_TOP + PANEL_HEIGHT + PANEL_GAP;
        value_range(chunk_kld, NULL, n, &kld.y_min, &kld.y_max);
        if (kld.y_min < 0)
            kld.y_min = 0;
        write_axes(f, &kld, "mean KL-divergence", n);
        write_series(f, &kld, chunk_kld, n, "#26a", 2.0);
        write_legend(f, kld.x0 + 12, kld.y0 + 16, "#26a", "KLD of the chunk vs base");
    }
    fputs("</svg>\n", f);
}

ggtk_status plot_svg_write(const char *path, const char *title, const double *chunk_ppl,
                           const double *running_ppl, const double *chunk_kld, int32_t n,
                           ggtk_error *err)
{
    if (n < 1)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "%s: nothing to plot", path);
    output_file file;
    ggtk_status status = output_file_open(&file, path, err);
    if (status != GGTK_OK)
        return status;
    write_chart(file.stream, title, chunk_ppl, running_ppl, chunk_kld, n);
    return output_file_commit(&file, err);
}
