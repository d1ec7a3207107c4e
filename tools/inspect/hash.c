/* hash.c - --hash writes a manifest of metadata and tensor data hashes, --verify checks a file
 * against one. The manifest format (docs/gguf.md, "gguf-inspect manifests"):
 *   key XXH64  KEY     one per metadata pair in file order: ggtk_hash_kv() (not with --tensors)
 *   XXH64  NAME        one per tensor in file order: ggtk_hash_tensor()
 *   XXH64  all         ggtk_hash_combine() of the tensor hashes, always last (not with --tensors)
 * XXH64 is 16 lower-case hex digits followed by exactly two spaces; KEY and NAME are escaped by
 * ggtk_escape(), so a newline or tab in a name can neither split nor forge a line. */
#include "inspect.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char total_name[] = "all";
static const char key_prefix[] = "key ";
/* Bounds of what --verify reads: a line (a name escaped is at most 4 times the name) and the
 * whole manifest (a model with 100k tensors and keys needs under 10 MiB). */
enum { MAX_LINE = 64 * 1024 };
#define MAX_MANIFEST_BYTES (256ull << 20)

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

/* --hash refuses a name whose line --verify would refuse as too long. */
static bool name_fits_a_line(const ggtk_file *file, const char *what, const char *name)
{
    if (ggtk_escape(name, strlen(name), NULL, 0) + 32 < MAX_LINE)
        return true;
    char shown[80];
    ggtk_escape(name, strlen(name), shown, sizeof shown);
    inspect_error("%s: %s '%s...' is too long for a manifest line (%d bytes at most)",
                  ggtk_path(file), what, shown, MAX_LINE);
    return false;
}

static bool print_key_lines(const ggtk_file *file)
{
    for (int64_t i = 0; i < ggtk_kv_count(file); i++) {
        uint64_t hash;
        ggtk_error err;
        if (!name_fits_a_line(file, "key", ggtk_kv_key(file, i)))
            return false;
        if (ggtk_hash_kv(file, i, &hash, &err) != GGTK_OK) {
            inspect_error("%s", err.message);
            return false;
        }
        printf("%s%016" PRIx64 "  ", key_prefix, hash);
        inspect_print_escaped(stdout, ggtk_kv_key(file, i), 0);
        putchar('\n');
    }
    return true;
}

int inspect_hash(const inspect_options *opt)
{
    hashed_file h;
    bool ok = open_hashed(opt, &h);
    if (ok && !opt->tensor_glob)
        ok = print_key_lines(h.file);
    for (int64_t i = 0; ok && i < ggtk_tensor_count(h.file); i++) {
        const char *name = ggtk_tensor(h.file, i)->name;
        if (!inspect_tensor_selected(opt, name))
            continue;
        if (!(ok = name_fits_a_line(h.file, "tensor", name)))
            break;
        printf("%016" PRIx64 "  ", h.hashes[i]);
        inspect_print_escaped(stdout, name, 0);
        putchar('\n');
    }
    if (ok && !opt->tensor_glob)
        printf("%016" PRIx64 "  %s\n", ggtk_hash_combine(h.hashes, ggtk_tensor_count(h.file)),
               total_name);
    close_hashed(&h);
    return ok ? EXIT_OK : EXIT_FAIL;
}

/* One manifest line: the hash, the name as the manifest spells it (escaped, safe to print) and
 * the name it stands for. */
typedef struct manifest_entry {
    uint64_t hash;
    char *text;
    char *name;
} manifest_entry;

typedef struct entry_list {
    manifest_entry *items;
    int64_t count, capacity;
} entry_list;

typedef struct manifest {
    entry_list tensors;
    entry_list keys;
    bool has_total;
    uint64_t total;
} manifest;

static void entry_free(manifest_entry *e)
{
    free(e->text);
    free(e->name);
}

static void list_free(entry_list *list)
{
    for (int64_t i = 0; i < list->count; i++)
        entry_free(&list->items[i]);
    free(list->items);
}

static void manifest_free(manifest *m)
{
    list_free(&m->tensors);
    list_free(&m->keys);
}

static bool list_add(entry_list *list, manifest_entry entry)
{
    if (list->count == list->capacity) {
        int64_t capacity = list->capacity ? list->capacity * 2 : 256;
        manifest_entry *grown = realloc(list->items, (size_t)capacity * sizeof *grown);
        if (!grown)
            return false;
        list->items = grown;
        list->capacity = capacity;
    }
    list->items[list->count++] = entry;
    return true;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The inverse of ggtk_escape() into `name` (room for strlen(text) + 1 bytes); its length, or -1
 * at an escape ggtk_escape() never writes. */
static long unescape(const char *text, char *name)
{
    static const char plain[] = "\\\\n\nr\rt\t"; /* pairs: escape letter, byte */
    char *out = name;
    for (const char *p = text; *p;) {
        if (*p != '\\') {
            *out++ = *p++;
            continue;
        }
        const char *pair = p[1] ? strchr(plain, p[1]) : NULL;
        if (pair && (pair - plain) % 2 == 0) {
            *out++ = pair[1];
            p += 2;
        } else if (p[1] == 'x' && hex_digit(p[2]) >= 0 && hex_digit(p[3]) >= 0) {
            *out++ = (char)(hex_digit(p[2]) << 4 | hex_digit(p[3]));
            p += 4;
        } else {
            return -1;
        }
    }
    *out = '\0';
    return (long)(out - name);
}

typedef enum line_status { LINE_OK, LINE_MALFORMED, LINE_UNSAFE, LINE_NOMEM } line_status;

/* Unescape `text` into `name` and check that ggtk_escape() gives `text` back (into `again`), so
 * that the manifest's text has no raw control byte or invalid UTF-8 and can be printed as is. */
static line_status check_name(const char *text, char *name, char *again)
{
    if (!name || !again)
        return LINE_NOMEM;
    long len = unescape(text, name);
    if (len < 0)
        return LINE_MALFORMED;
    size_t size = strlen(text) + 1;
    if (ggtk_escape(name, (size_t)len, again, size) >= size || strcmp(again, text) != 0)
        return LINE_UNSAFE;
    return LINE_OK;
}

/* Parse "HEX16  NAME" (exactly two spaces) into *entry. */
static line_status parse_entry(const char *line, manifest_entry *entry)
{
    size_t hex = strspn(line, "0123456789abcdefABCDEF");
    if (hex != 16 || strncmp(line + hex, "  ", 2) != 0 || line[hex + 2] == '\0')
        return LINE_MALFORMED;
    const char *text = line + hex + 2;
    size_t size = strlen(text) + 1;
    *entry = (manifest_entry){strtoull(line, NULL, 16), strdup(text), malloc(size)};
    char *again = malloc(size);
    line_status status = entry->text ? check_name(text, entry->name, again) : LINE_NOMEM;
    free(again);
    if (status != LINE_OK)
        entry_free(entry);
    return status;
}

/* Read one line without its end into buf (MAX_LINE bytes). Returns its length, -1 at the end of
 * the file, -2 when it is longer than the buffer, -3 when it holds a NUL byte. Reads at most
 * MAX_LINE bytes of a line, so memory stays bounded whatever the input. */
static long read_line(FILE *in, char *buf)
{
    long len = 0;
    int c;
    while ((c = getc(in)) != EOF && c != '\n') {
        if (len + 1 >= MAX_LINE)
            return -2;
        if (c == '\0')
            return -3;
        buf[len++] = (char)c;
    }
    if (c == EOF && len == 0)
        return -1;
    if (len > 0 && buf[len - 1] == '\r')
        len--;
    buf[len] = '\0';
    return len;
}

/* Add one non-empty, non-comment line to *m; false (error printed) when it is refused. */
static bool add_line(const char *path, long long line_no, const char *line, manifest *m)
{
    bool is_key = strncmp(line, key_prefix, sizeof key_prefix - 1) == 0;
    manifest_entry entry;
    switch (parse_entry(is_key ? line + sizeof key_prefix - 1 : line, &entry)) {
    case LINE_OK: break;
    case LINE_MALFORMED:
        inspect_error("%s: line %lld: expected '<16 hex digits>  <tensor name>' or 'key <16 hex "
                      "digits>  <key>' (two spaces, names escaped as --hash writes them)",
                      path, line_no);
        return false;
    case LINE_UNSAFE:
        inspect_error("%s: line %lld: the name holds a control character, invalid UTF-8 or an "
                      "escape --hash never writes, expected it escaped as --hash writes it",
                      path, line_no);
        return false;
    case LINE_NOMEM: inspect_error("%s: out of memory", path); return false;
    }
    if (list_add(is_key ? &m->keys : &m->tensors, entry))
        return true;
    entry_free(&entry);
    inspect_error("%s: out of memory", path);
    return false;
}

static bool read_lines(const char *path, FILE *in, char *line, manifest *m)
{
    long long line_no = 0;
    unsigned long long total = 0;
    long len;
    while ((len = read_line(in, line)) != -1) {
        line_no++;
        if (len == -3) {
            inspect_error("%s: line %lld: holds a NUL byte, expected text", path, line_no);
            return false;
        }
        total += len < 0 ? 0 : (unsigned long long)len + 1;
        if (len == -2 || total > MAX_MANIFEST_BYTES) {
            inspect_error("%s: line %lld: %s, expected a manifest written by --hash", path,
                          line_no, len == -2 ? "longer than 65536 bytes"
                                             : "the manifest exceeds 256 MiB");
            return false;
        }
        if (len > 0 && line[0] != '#' && !add_line(path, line_no, line, m))
            return false;
    }
    if (ferror(in)) {
        inspect_error("%s: cannot read manifest: %s", path, strerror(errno));
        return false;
    }
    return true;
}

/* Parse the manifest at `path`; false (the error printed) when it cannot be read or a line is
 * refused. */
static bool read_manifest(const char *path, manifest *m)
{
    memset(m, 0, sizeof *m);
    FILE *in = fopen(path, "r");
    if (!in) {
        inspect_error("%s: cannot open manifest: %s", path, strerror(errno));
        return false;
    }
    char *line = malloc(MAX_LINE);
    bool ok = line && read_lines(path, in, line, m);
    if (!line)
        inspect_error("%s: out of memory", path);
    free(line);
    fclose(in);
    entry_list *t = &m->tensors;
    if (ok && t->count > 0 && strcmp(t->items[t->count - 1].text, total_name) == 0) {
        m->has_total = true;
        m->total = t->items[--t->count].hash;
        entry_free(&t->items[t->count]);
    }
    return ok;
}

/* What verifying compares, tensors or keys: how to count, find and name them in the file. */
typedef struct item_kind {
    const char *label; /* "" for tensors, "key " for keys, before the name in mismatch lines */
    bool filtered;     /* whether --tensors selects among them */
    int64_t (*count)(const ggtk_file *file);
    int64_t (*find)(const ggtk_file *file, const char *name);
    const char *(*name)(const ggtk_file *file, int64_t index);
} item_kind;

static const char *tensor_name(const ggtk_file *file, int64_t index)
{
    return ggtk_tensor(file, index)->name;
}

static const item_kind tensor_kind = {"", true, ggtk_tensor_count, ggtk_find_tensor, tensor_name};
static const item_kind key_kind = {"key ", false, ggtk_kv_count, ggtk_find_key, ggtk_kv_key};

static bool item_selected(const item_kind *kind, const inspect_options *opt, const char *name)
{
    return !kind->filtered || inspect_tensor_selected(opt, name);
}

static void print_mismatch(const char *word, const char *label, const char *text)
{
    printf("%-8s %s%s", word, label, text);
}

/* Compare each entry with the file's item of the same name (hashes[i] for item i); print one
 * line per mismatch; count them. `seen` has one false flag per item. */
static int64_t compare_items(const inspect_options *opt, const item_kind *kind,
                             const ggtk_file *file, const uint64_t *hashes,
                             const entry_list *entries, bool *seen)
{
    int64_t mismatches = 0;
    for (int64_t k = 0; k < entries->count; k++) {
        const manifest_entry *e = &entries->items[k];
        if (!item_selected(kind, opt, e->name))
            continue;
        int64_t i = kind->find(file, e->name);
        if (i < 0 || seen[i]) {
            print_mismatch(i < 0 ? "MISSING" : "TWICE", kind->label, e->text);
            printf(" (%s)\n", i < 0 ? "in the manifest, not in the file"
                                    : "listed twice in the manifest");
            mismatches++;
            continue;
        }
        seen[i] = true;
        if (hashes[i] != e->hash) {
            print_mismatch("DIFFERS", kind->label, e->text);
            printf(" (manifest %016" PRIx64 ", file %016" PRIx64 ")\n", e->hash, hashes[i]);
            mismatches++;
        }
    }
    for (int64_t i = 0; i < kind->count(file); i++) {
        const char *name = kind->name(file, i);
        if (!seen[i] && item_selected(kind, opt, name)) {
            printf("%-8s %s", "EXTRA", kind->label);
            inspect_print_escaped(stdout, name, 0);
            printf(" (in the file, not in the manifest)\n");
            mismatches++;
        }
    }
    return mismatches;
}

/* Metadata mismatches; keys take part unless --tensors narrows the check to tensors. */
static int64_t compare_keys(const inspect_options *opt, const hashed_file *h, const manifest *m,
                            bool *ok)
{
    int64_t n = ggtk_kv_count(h->file);
    if (opt->tensor_glob)
        return 0;
    if (m->keys.count == 0) {
        inspect_error("note: %s has no 'key' lines (written before --hash covered metadata); "
                      "metadata not verified", opt->manifest);
        return 0;
    }
    uint64_t *hashes = calloc((size_t)(n ? n : 1), sizeof *hashes);
    bool *seen = calloc((size_t)(n ? n : 1), sizeof *seen);
    *ok = hashes && seen;
    if (!*ok)
        inspect_error("%s: out of memory", opt->files[0]);
    ggtk_error err;
    for (int64_t i = 0; *ok && i < n; i++)
        if (ggtk_hash_kv(h->file, i, &hashes[i], &err) != GGTK_OK) {
            inspect_error("%s", err.message);
            *ok = false;
        }
    int64_t mismatches =
        *ok ? compare_items(opt, &key_kind, h->file, hashes, &m->keys, seen) : 0;
    free(hashes);
    free(seen);
    return mismatches;
}

static int64_t compare_tensors(const inspect_options *opt, const hashed_file *h,
                               const manifest *m, bool *ok)
{
    int64_t n = ggtk_tensor_count(h->file);
    bool *seen = calloc((size_t)(n ? n : 1), sizeof *seen);
    if (!(*ok = seen != NULL)) {
        inspect_error("%s: out of memory", opt->files[0]);
        return 0;
    }
    int64_t mismatches = compare_items(opt, &tensor_kind, h->file, h->hashes, &m->tensors, seen);
    free(seen);
    uint64_t total = ggtk_hash_combine(h->hashes, n);
    if (!opt->tensor_glob && m->has_total && total != m->total) {
        print_mismatch("DIFFERS", "", total_name);
        printf(" (manifest %016" PRIx64 ", file %016" PRIx64 ")\n", m->total, total);
        mismatches++;
    }
    return mismatches;
}

int inspect_verify(const inspect_options *opt)
{
    manifest m;
    hashed_file h = {NULL, NULL};
    int status = EXIT_FAIL;
    bool ok = read_manifest(opt->manifest, &m);
    /* --hash always writes the total; only a filtered manifest may list nothing at all. */
    if (ok && m.tensors.count == 0 && m.keys.count == 0 && !m.has_total && !opt->tensor_glob) {
        inspect_error("%s: no manifest lines, expected '<16 hex digits>  <tensor name>' lines as "
                      "--hash writes them", opt->manifest);
        ok = false;
    }
    if (!ok || !open_hashed(opt, &h))
        goto done;
    int64_t in_keys = compare_keys(opt, &h, &m, &ok);
    int64_t in_tensors = ok ? compare_tensors(opt, &h, &m, &ok) : 0;
    if (!ok)
        goto done;
    if (in_keys + in_tensors > 0) {
        /* A metadata edit (gguf-edit) leaves the tensor data as it was: say so apart. */
        if (in_tensors == 0 && !opt->tensor_glob)
            printf("%s: tensor data OK, all %lld tensors match %s; metadata differs in %lld "
                   "keys\n", opt->files[0], (long long)ggtk_tensor_count(h.file), opt->manifest,
                   (long long)in_keys);
        inspect_error("%s: %lld mismatches against %s (metadata: %lld keys, tensors: %lld)",
                      opt->files[0], (long long)(in_keys + in_tensors), opt->manifest,
                      (long long)in_keys, (long long)in_tensors);
    } else {
        printf("%s: OK, matches %s\n", opt->files[0], opt->manifest);
        status = EXIT_OK;
    }
done:
    close_hashed(&h);
    manifest_free(&m);
    return status;
}
