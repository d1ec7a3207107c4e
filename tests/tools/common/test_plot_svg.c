/* test_plot.c - the SVG chart is well-formed XML (checked by Python's parser), has one line per
 * series, escapes its title, and is not written for an empty run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plot_svg.h"
#include "test.h"

/* Count the <polyline> elements with Python's XML parser; -1 when the file is not valid XML. */
static int count_polylines(const char *path, char **title)
{
    char *out = NULL;
    int rc = test_run(&out, "python3 -c \"import sys, xml.etree.ElementTree as E\n"
                            "r = E.parse(sys.argv[1]).getroot()\n"
                            "ns = '{http://www.w3.org/2000/svg}'\n"
                            "print(len(r.findall(ns + 'polyline')))\n"
                            "print(r.findall(ns + 'text')[0].text)\" '%s'", path);
    int n = rc == 0 && out ? atoi(out) : -1;
    if (title && out && strchr(out, '\n'))
        *title = strdup(strchr(out, '\n') + 1);
    free(out);
    return n;
}

TEST(test_plot_writes_valid_svg_with_one_line_per_series)
{
    double chunk[5] = {16.5, 19.3, 13.6, 24.9, 18.5}, running[5] = {16.5, 17.9, 16.4, 18.3, 18.4};
    double kld[5] = {0.004, 0.005, NAN, 0.004, 0.0042};
    char path[512];
    ggtk_error err = {0};
    snprintf(path, sizeof path, "%s", test_tmpfile("ppl.svg"));
    CHECK(plot_svg_write(path, "a <model> & \"b\"", chunk, running, NULL, 5, &err) ==
          GGTK_OK);
    char *title = NULL;
    CHECK(count_polylines(path, &title) == 2);
    CHECK_MSG(title && strcmp(title, "a <model> & \"b\"\n") == 0, "title '%s'", title);
    free(title);
    CHECK(plot_svg_write(path, NULL, chunk, running, kld, 5, &err) == GGTK_OK);
    CHECK(count_polylines(path, NULL) == 3);
    CHECK(plot_svg_write(path, NULL, chunk, running, kld, 1, &err) == GGTK_OK);
    CHECK(count_polylines(path, NULL) == 3);
}

TEST(test_plot_refuses_empty_runs_and_unwritable_paths)
{
    double v = 1.0;
    char path[512];
    ggtk_error err = {0};
    snprintf(path, sizeof path, "%s", test_tmpfile("empty.svg"));
    CHECK(plot_svg_write(path, NULL, &v, &v, NULL, 0, &err) == GGTK_ERR_INVALID);
    CHECK(access(path, F_OK) != 0);
    CHECK(plot_svg_write("/nonexistent-dir/x.svg", NULL, &v, &v, NULL, 1, &err) ==
          GGTK_ERR_IO);
    CHECK(strstr(err.message, "/nonexistent-dir/x.svg") != NULL);
}
