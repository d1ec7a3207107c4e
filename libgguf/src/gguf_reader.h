/* gguf_reader.h - private pieces of the GGUF reader: the opened file, the bounds-checked byte
 * cursor the parser reads through, the arena that owns every string and array, and the entry
 * points shared by gguf_parse*.c, gguf_validate.c, gguf_file.c and gguf_get.c. Not installed. */
#ifndef GGTK_READER_H
#define GGTK_READER_H

#include "gguf_internal.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the reader loads little-endian fields with memcpy; a big-endian host needs byte swaps"
#endif

/* Deepest nesting of arrays inside arrays the parser follows (bounds its recursion). */
enum { GGTK_MAX_ARRAY_DEPTH = 64 };
/* Input size of a stream whose length cannot be known (a pipe). */
#define GGTK_SIZE_UNKNOWN UINT64_MAX

/* ---- arena: owns the strings and arrays of one file; freed all at once ---- */

typedef struct ggtk_arena_block ggtk_arena_block;
typedef struct ggtk_arena {
    ggtk_arena_block *head;
} ggtk_arena;

/* `size` bytes aligned to 16, or NULL when out of memory or when size cannot be represented. */
void *ggtk_arena_alloc(ggtk_arena *arena, uint64_t size);
/* Copy of `len` bytes followed by a NUL; NULL when out of memory. */
char *ggtk_arena_strndup(ggtk_arena *arena, const void *bytes, uint64_t len);
/* Copy of `size` bytes (NULL for size 0 or out of memory; check size before blaming memory). */
void *ggtk_arena_memdup(ggtk_arena *arena, const void *bytes, uint64_t size);
void ggtk_arena_free(ggtk_arena *arena);

/* ---- growable array for tables whose final length is only known once read ---- */

typedef struct ggtk_vec {
    unsigned char *items;
    uint64_t count, capacity;
    size_t item_size;
} ggtk_vec;

/* Start empty with room for `reserve` items; false when out of memory. */
bool ggtk_vec_init(ggtk_vec *vec, size_t item_size, uint64_t reserve);
/* A zeroed new item at the end, or NULL when out of memory. Invalidates earlier pointers. */
void *ggtk_vec_push(ggtk_vec *vec);
void ggtk_vec_free(ggtk_vec *vec);

/* ---- cursor: every byte of the header is read through it ---- */

/* The input is either wholly in memory (`memory`, a map or a caller's buffer) or a stream read
 * exactly as far as the parser asks, so the stream is left at the first unread byte. */
typedef struct ggtk_cursor {
    const unsigned char *memory;
    FILE *stream;
    uint64_t pos;         /* offset of the next byte from the start of the GGUF input */
    uint64_t size;        /* bytes of input, or GGTK_SIZE_UNKNOWN */
    uint64_t end;         /* after GGTK_ERR_TRUNCATED: where the input was found to end */
    int io_errno;         /* after GGTK_ERR_IO: errno of the failed read */
    unsigned char *scratch; /* stream mode: holds the bytes of the latest take */
    size_t scratch_capacity;
} ggtk_cursor;

void ggtk_cursor_init_memory(ggtk_cursor *cursor, const void *data, uint64_t size);
void ggtk_cursor_init_stream(ggtk_cursor *cursor, FILE *stream, uint64_t size);
/* Bytes known to be left, or GGTK_SIZE_UNKNOWN. */
uint64_t ggtk_cursor_remaining(const ggtk_cursor *cursor);
/* Point *out at the next `n` bytes and move past them. The bytes stay valid until the next take.
 * Returns GGTK_ERR_TRUNCATED (cursor->end set) when the input ends first, GGTK_ERR_NOMEM, or
 * GGTK_ERR_IO (cursor->io_errno set). Memory grows only as fast as stream bytes arrive, so a
 * hostile length never causes a large allocation by itself. */
ggtk_status ggtk_cursor_take(ggtk_cursor *cursor, uint64_t n, const unsigned char **out);
void ggtk_cursor_release(ggtk_cursor *cursor);

/* ---- the opened file ---- */

typedef struct ggtk_kv {
    const char *key;
    ggtk_value value;
    uint64_t offset; /* where the pair starts in the file */
} ggtk_kv;

/* One entry of a name index: names sorted with strcmp for binary search. */
typedef struct ggtk_name_index {
    const char *name;
    int64_t index;
} ggtk_name_index;

struct ggtk_file {
    char *path;
    uint32_t version;
    uint32_t alignment;
    uint64_t file_size;   /* GGTK_SIZE_UNKNOWN while parsing a pipe */
    uint64_t data_offset;
    uint64_t data_size;
    const unsigned char *data; /* start of the data section in memory, or NULL */
    ggtk_kv *kvs;
    int64_t n_kv;
    ggtk_tensor_info *tensors;
    int64_t n_tensors;
    ggtk_name_index *kv_index;     /* n_kv entries sorted by key */
    ggtk_name_index *tensor_index; /* n_tensors entries sorted by name */
    ggtk_arena arena;
    void *map;           /* GGTK_OPEN_MMAP: the mapping */
    size_t map_size;
    void *data_buffer;   /* GGTK_OPEN_READ: the heap copy of the data section */
};

/* ---- parser ---- */

typedef struct ggtk_parser {
    ggtk_cursor cursor;
    ggtk_file *file;
    ggtk_error *err;
    char context[160]; /* "kv 3 'general.name'" or "tensor 7 'x'": prefixes every message */
} ggtk_parser;

/* Parse magic, version, counts, key/value pairs and tensor infos, checking each field as it is
 * read; on success file->data_offset is the aligned end of the header and the cursor is at the
 * end of the tensor-info table (the padding is not consumed). */
ggtk_status ggtk_parse_header(ggtk_parser *parser);

/* Parse one value of `type` (already checked to be a known code) at nesting depth `depth`. */
ggtk_status ggtk_parse_value(ggtk_parser *parser, ggtk_value_type type, ggtk_value *out,
                             int depth);
/* Parse a length-prefixed string into the arena; `field` names it in errors. */
ggtk_status ggtk_parse_string(ggtk_parser *parser, const char *field, ggtk_string *out);
ggtk_status ggtk_read_u32(ggtk_parser *parser, const char *field, uint32_t *out);
ggtk_status ggtk_read_u64(ggtk_parser *parser, const char *field, uint64_t *out);
/* Take `n` bytes for `field` (which starts at `field_offset`), turning a cursor failure into a
 * message. */
ggtk_status ggtk_parser_take(ggtk_parser *parser, uint64_t n, uint64_t field_offset,
                             const char *field, const unsigned char **out);
/* Check that `count` items of at least `min_bytes` each can fit in the bytes left, so tables
 * are never allocated from a count alone. */
ggtk_status ggtk_parser_check_count(ggtk_parser *parser, uint64_t count, uint64_t min_bytes,
                                    uint64_t field_offset, const char *field);
/* Room to reserve for a table of `count` entries: exactly `count` when the bytes left are known
 * (and were checked to hold them), a modest start that grows as entries arrive from a pipe. */
uint64_t ggtk_parser_reserve(const ggtk_parser *parser, uint64_t count);
/* Set the message prefix to "<what> <index>" or "<what> <index> '<name>'". */
void ggtk_parser_set_context(ggtk_parser *parser, const char *what, int64_t index,
                             const char *name);
/* Write "<what> <index>" or "<what> <index> '<name>'" into `out`, the name escaped
 * (ggtk_escape()) and cut to a readable length so that a message stays one safe line. */
void ggtk_describe(char *out, size_t capacity, const char *what, int64_t index, const char *name);
/* ggtk_fail() with the parser's file name and context prefix. */
ggtk_status ggtk_parser_fail(ggtk_parser *parser, ggtk_status status, uint64_t offset,
                             const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---- validation rules (gguf_validate.c) ---- */

/* A key or tensor name: non-empty, no NUL byte, valid UTF-8. `offset` is its length field. */
ggtk_status ggtk_check_name(ggtk_parser *parser, const char *field, const ggtk_string *name,
                            uint64_t offset);
ggtk_status ggtk_check_n_dims(ggtk_parser *parser, uint32_t n_dims, uint64_t offset);
/* ne > 0, known type, ne[0] a multiple of the block size, element count and byte size fit;
 * sets tensor->size. */
ggtk_status ggtk_check_tensor_shape(ggtk_parser *parser, ggtk_tensor_info *tensor,
                                    uint64_t ne_offset, uint64_t type_offset);
ggtk_status ggtk_check_tensor_offset(ggtk_parser *parser, const ggtk_tensor_info *tensor,
                                     uint64_t offset_field);
/* Sort the names into an index and fail with GGTK_ERR_DUPLICATE on the first repeated name. */
ggtk_status ggtk_index_keys(ggtk_parser *parser);
ggtk_status ggtk_index_tensors(ggtk_parser *parser);
/* general.alignment, when present, is a UINT32 non-zero power of two; sets file->alignment. */
ggtk_status ggtk_check_alignment_key(ggtk_parser *parser);
/* With file->data_size known (or `size_known` false for a pipe read for metadata only): every
 * tensor's data lies inside the data section and no two overlap. */
ggtk_status ggtk_check_layout(const ggtk_file *file, bool size_known, ggtk_error *err);

/* Binary search of a name index; -1 when absent. */
int64_t ggtk_index_find(const ggtk_name_index *index, int64_t count, const char *name);

#endif
