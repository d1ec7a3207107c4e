/* bench_tokenize.c - tokenizer speed on a text file: load time of the vocabulary and the best of
 * N runs of tokenizing the whole file (as perplexity does), optionally writing the ids.
 * Usage: bench_tokenize MODEL.gguf TEXT [--runs N] [--ids OUT] [--parse-special] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ggtk/gguf.h>
#include <ggtk/inf_vocab.h>

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = (size_t)len;
    return buf;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODEL.gguf TEXT [--runs N] [--ids OUT] [--parse-special]\n", argv[0]);
        return 2;
    }
    int runs = 5;
    const char *ids_path = NULL;
    unsigned flags = 0;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--ids") == 0 && i + 1 < argc) {
            ids_path = argv[++i];
        } else if (strcmp(argv[i], "--parse-special") == 0) {
            flags |= INF_TOKENIZE_PARSE_SPECIAL;
        } else {
            fprintf(stderr, "%s: unknown argument '%s'\n", argv[0], argv[i]);
            return 2;
        }
    }
    double t0 = seconds_now();
    ggtk_error gerr;
    ggtk_file *file = ggtk_open(argv[1], GGTK_OPEN_METADATA, &gerr);
    if (!file) {
        fprintf(stderr, "%s\n", gerr.message);
        return 1;
    }
    ggtk_error err;
    inf_vocab *vocab = inf_vocab_new(file, &err);
    ggtk_close(file);
    if (!vocab) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    double load = seconds_now() - t0;
    size_t size;
    char *text = read_all(argv[2], &size);
    if (!text) {
        fprintf(stderr, "%s: cannot read\n", argv[2]);
        return 1;
    }
    double best = 1e30;
    inf_token *ids = NULL;
    size_t n = 0;
    for (int r = 0; r < (runs > 0 ? runs : 1); r++) {
        free(ids);
        double start = seconds_now();
        if (inf_vocab_tokenize(vocab, text, size, flags, &ids, &n, NULL) != GGTK_OK) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        double elapsed = seconds_now() - start;
        best = elapsed < best ? elapsed : best;
    }
    printf("vocabulary load %.1f ms; tokenize %zu bytes -> %zu tokens: best of %d %.1f ms = %.1f MB/s\n",
           load * 1e3, size, n, runs, best * 1e3, size / best / 1e6);
    if (ids_path) {
        FILE *out = fopen(ids_path, "w");
        for (size_t i = 0; out && i < n; i++) {
            fprintf(out, "%d\n", (int)ids[i]);
        }
        if (!out || fclose(out) != 0) {
            fprintf(stderr, "%s: cannot write\n", ids_path);
            return 1;
        }
    }
    free(ids);
    free(text);
    inf_vocab_free(vocab);
    return 0;
}
