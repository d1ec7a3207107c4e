/* hash.c - --hash writes a manifest of tensor data hashes, --verify checks a file against one.
 * Manifest: one line "XXH64  NAME" per tensor in file order (16 lower-case hex digits, two
 * spaces), then "XXH64  all", the ggtk_hash_combine() of all tensor hashes; the last line is the
 * total even if a tensor happens to be called "all". With --tensors the total is left out. */
#include "inspect.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char total_name[] = "all";

bool inspect_hash_selected(const inspect_options *opt, const ggtk_file *file, uint64_t *hashes)
{
    int64_t n = ggtk_tensor_count(file), n_selected = 0;
    int64_t *indices = malloc((size_t)(n ? n : 1) * sizeof *indices);
    uint64_t *selected_hashes = malloc((size_t)(n ? n : 1) * sizeof *selected_hashes);
    ggtk_error err;
    bool ok = indices && selected_hashes;
    if (!ok)
        snprintf(err.message, sizeof err.message, "%s: out of memory", ggtk_path(file));
    for (int64_t i = 0; ok && i < n; i++)
        if (inspect_tensor_selected(opt, ggtk_tensor(file, i)->name))
            indices[n_selected++] = i;
    if (ok && ggtk_hash_tensors(file, indices, n_selected, selected_hashes, &err) != GGTK_OK)
        ok = false;
    for (int64_t k = 0; ok && k < n_selected; k++)
        hashes[indices[k]] = selected_hashes[k];
    if (!ok)
        inspect_error("%s", err.message);
    free(indices);
    free(selected_hashes);
    return ok;
}

/* The file mapped and the hashes of its selected tensors, by file index. */
typedef struct hashed_file {
    ggtk_file *file;
    uint64_t *hashes;
} hashed_file;

static bool open_hashed(const inspect_options *opt, hashed_file *h)
{
    h->hashes = NULL;
    h->file = inspect_open(opt->files[0], GGTK_OPEN_MMAP);
    if (!h->file)
        return false;
    int64_t n = ggtk_tensor_count(h->file);
    h->hashes = calloc((size_t)(n ? n : 1), sizeof *h->hashes);
    if (!h->hashes)
        inspect_error("%s: out of memory", opt->files[0]);
    return h->hashes && inspect_hash_selected(opt, h->file, h->hashes);
}

static void close_hashed(hashed_file *h)
{
    free(h->hashes);
    ggtk_close(h->file);
}

int inspect_hash(const inspect_options *opt)
{
    hashed_file h;
    if (!open_hashed(opt, &h)) {
        close_hashed(&h);
        return EXIT_FAIL;
    }
    for (int64_t i = 0; i < ggtk_tensor_count(h.file); i++)
        if (inspect_tensor_selected(opt, ggtk_tensor(h.file, i)->name))
            printf("%016" PRIx64 "  %s\n", h.hashes[i], ggtk_tensor(h.file, i)->name);
    if (!opt->tensor_glob)
        printf("%016" PRIx64 "  %s\n", ggtk_hash_combine(h.hashes, ggtk_tensor_count(h.file)),
               total_name);
    close_hashed(&h);
    return EXIT_OK;
}

typedef struct manifest_entry {
    uint64_t hash;
    char *name;
} manifest_entry;

typedef struct manifest {
    manifest_entry *entries;
    int64_t count;
    bool has_total;
    uint64_t total;
} manifest;

static void manifest_free(manifest *m)
{
    for (int64_t i = 0; i < m->count; i++)
        free(m->entries[i].name);
    free(m->entries);
}

/* Parse "HEX16<spaces>NAME" (line without its newline) into *entry; false when malformed. */
static bool parse_line(char *line, manifest_entry *entry)
{
    size_t hex = strspn(line, "0123456789abcdefABCDEF");
    size_t gap = strspn(line + hex, " \t");
    if (hex != 16 || gap == 0 || line[hex + gap] == '\0')
        return false;
    entry->hash = strtoull(line, NULL, 16);
    entry->name = strdup(line + hex + gap);
    return entry->name != NULL;
}

static bool manifest_add(manifest *m, int64_t *capacity, manifest_entry entry)
{
    if (m->count == *capacity) {
        *capacity = *capacity ? *capacity * 2 : 256;
        manifest_entry *grown = realloc(m->entries, (size_t)*capacity * sizeof *grown);
        if (!grown)
            return false;
        m->entries = grown;
    }
    m->entries[m->count++] = entry;
    return true;
}

/* Parse the manifest at `path`; false (the error printed) when it cannot be read or a line is
 * malformed. */
static bool read_manifest(const char *path, manifest *m)
{
    memset(m, 0, sizeof *m);
    FILE *in = fopen(path, "r");
    if (!in) {
        inspect_error("%s: cannot open manifest: %s", path, strerror(errno));
        return false;
    }
    char *line = NULL;
    size_t line_cap = 0;
    int64_t capacity = 0, line_no = 0;
    ssize_t len;
    bool ok = true;
    while (ok && (len = getline(&line, &line_cap, in)) >= 0) {
        line_no++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len == 0 || line[0] == '#')
            continue;
        manifest_entry entry;
        if (!parse_line(line, &entry)) {
            inspect_error("%s: line %lld: expected '<16 hex digits>  <tensor name>'", path,
                          (long long)line_no);
            ok = false;
        } else if (!manifest_add(m, &capacity, entry)) {
            free(entry.name);
            inspect_error("%s: out of memory", path);
            ok = false;
        }
    }
    if (ok && ferror(in)) {
        inspect_error("%s: cannot read manifest: %s", path, strerror(errno));
        ok = false;
    }
    free(line);
    fclose(in);
    if (ok && m->count > 0 && strcmp(m->entries[m->count - 1].name, total_name) == 0) {
        m->has_total = true;
        m->total = m->entries[--m->count].hash;
        free(m->entries[m->count].name);
    }
    return ok;
}

/* Compare each manifest entry with the file; print one line per mismatch; count them. */
static int64_t compare_entries(const inspect_options *opt, const hashed_file *h,
                               const manifest *m, bool *seen)
{
    int64_t mismatches = 0;
    for (int64_t k = 0; k < m->count; k++) {
        const manifest_entry *e = &m->entries[k];
        if (!inspect_tensor_selected(opt, e->name))
            continue;
        int64_t i = ggtk_find_tensor(h->file, e->name);
        if (i < 0 || seen[i]) {
            printf("%s  %s (%s)\n", i < 0 ? "MISSING" : "TWICE  ", e->name,
                   i < 0 ? "in the manifest, not in the file" : "listed twice in the manifest");
            mismatches++;
            continue;
        }
        seen[i] = true;
        if (h->hashes[i] != e->hash) {
            printf("DIFFERS  %s (manifest %016" PRIx64 ", file %016" PRIx64 ")\n", e->name,
                   e->hash, h->hashes[i]);
            mismatches++;
        }
    }
    for (int64_t i = 0; i < ggtk_tensor_count(h->file); i++) {
        const char *name = ggtk_tensor(h->file, i)->name;
        if (!seen[i] && inspect_tensor_selected(opt, name)) {
            printf("EXTRA    %s (in the file, not in the manifest)\n", name);
            mismatches++;
        }
    }
    return mismatches;
}

int inspect_verify(const inspect_options *opt)
{
    manifest m;
    hashed_file h = {NULL, NULL};
    bool *seen = NULL;
    int status = EXIT_FAIL;
    if (!read_manifest(opt->manifest, &m))
        goto done;
    /* --hash always writes the total; only a filtered manifest may list nothing at all. */
    if (m.count == 0 && !m.has_total && !opt->tensor_glob) {
        inspect_error("%s: no manifest lines, expected '<16 hex digits>  <tensor name>' lines as "
                      "--hash writes them", opt->manifest);
        goto done;
    }
    if (!open_hashed(opt, &h))
        goto done;
    int64_t n = ggtk_tensor_count(h.file);
    seen = calloc((size_t)(n ? n : 1), sizeof *seen);
    if (!seen) {
        inspect_error("%s: out of memory", opt->files[0]);
        goto done;
    }
    int64_t mismatches = compare_entries(opt, &h, &m, seen);
    uint64_t total = ggtk_hash_combine(h.hashes, n);
    if (!opt->tensor_glob && m.has_total && total != m.total) {
        printf("DIFFERS  %s (manifest %016" PRIx64 ", file %016" PRIx64 ")\n", total_name,
               m.total, total);
        mismatches++;
    }
    if (mismatches > 0) {
        inspect_error("%s: %lld mismatches against %s", opt->files[0], (long long)mismatches,
                      opt->manifest);
    } else {
        printf("%s: OK, matches %s\n", opt->files[0], opt->manifest);
        status = EXIT_OK;
    }
done:
    free(seen);
    close_hashed(&h);
    manifest_free(&m);
    return status;
}
