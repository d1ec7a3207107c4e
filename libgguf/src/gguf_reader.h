/* gguf_reader.h - private pieces of the GGUF reader: the opened file, the bounds-checked byte
 * cursor the parser reads through, the arena that owns every string and array, and the entry
 * points shared by gguf_parse*.c, gguf_validate.c, gguf_file.c and gguf_get.c. Not installed. */
#ifndef GGUF_READER_H
#define GGUF_READER_H

#include "gguf_internal.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the reader loads little-endian fields with memcpy; a big-endian host needs byte swaps"
#endif

/* Deepest nesting of arrays inside arrays the parser follows (bounds its recursion). */
enum { GGUF_MAX_ARRAY_DEPTH = 64 };
/* Input size of a stream whose length cannot be known (a pipe). */
#define GGUF_SIZE_UNKNOWN UINT64_MAX

/* ---- arena: owns the strings and arrays of one file; freed all at once ---- */

typedef struct gguf_arena_block gguf_arena_block;
typedef struct gguf_arena {
    gguf_arena_block *head;
} gguf_arena;

/* `size` bytes aligned to 16, or NULL when out of memory or when size cannot be represented. */
void *gguf_arena_alloc(gguf_arena *arena, uint64_t size);
/* Copy of `len` bytes followed by a NUL; NULL when out of memory. */
char *gguf_arena_strndup(gguf_arena *arena, const void *bytes, uint64_t len);
/* Copy of `size` bytes (NULL for size 0 or out of memory; check size before blaming memory). */
void *gguf_arena_memdup(gguf_arena *arena, const void *bytes, uint64_t size);
void gguf_arena_free(gguf_arena *arena);

/* ---- growable array for tables whose final length is only known once read ---- */

typedef struct gguf_vec {
    unsigned char *items;
    uint64_t count, capacity;
    size_t item_size;
} gguf_vec;

/* Start empty with room for `reserve` items; false when out of memory. */
bool gguf_vec_init(gguf_vec *vec, size_t item_size, uint64_t reserve);
/* A zeroed new item at the end, or NULL when out of memory. Invalidates earlier pointers. */
void *gguf_vec_push(gguf_vec *vec);
void gguf_vec_free(gguf_vec *vec);

/* ---- cursor: every byte of the header is read through it ---- */

/* The input is either wholly in memory (`memory`, a map or a caller's buffer) or a stream read
 * exactly as far as the parser asks, so the stream is left at the first unread byte. */
typedef struct gguf_cursor {
    const unsigned char *memory;
    FILE *stream;
    uint64_t pos;         /* offset of the next byte from the start of the GGUF input */
    uint64_t size;        /* bytes of input, or GGUF_SIZE_UNKNOWN */
    uint64_t end;         /* after GGUF_ERR_TRUNCATED: where the input was found to end */
    int io_errno;         /* after GGUF_ERR_IO: errno of the failed read */
    unsigned char *scratch; /* stream mode: holds the bytes of the latest take */
    size_t scratch_capacity;
} gguf_cursor;

void gguf_cursor_init_memory(gguf_cursor *cursor, const void *data, uint64_t size);
void gguf_cursor_init_stream(gguf_cursor *cursor, FILE *stream, uint64_t size);
/* Bytes known to be left, or GGUF_SIZE_UNKNOWN. */
uint64_t gguf_cursor_remaining(const gguf_cursor *cursor);
/* Point *out at the next `n` bytes and move past them. The bytes stay valid until the next take.
 * Returns GGUF_ERR_TRUNCATED (cursor->end set) when the input ends first, GGUF_ERR_NOMEM, or
 * GGUF_ERR_IO (cursor->io_errno set). Memory grows only as fast as stream bytes arrive, so a
 * hostile length never causes a large allocation by itself. */
gguf_status gguf_cursor_take(gguf_cursor *cursor, uint64_t n, const unsigned char **out);
void gguf_cursor_release(gguf_cursor *cursor);

/* ---- the opened file ---- */

typedef struct gguf_kv {
    const char *key;
    gguf_value value;
    uint64_t offset; /* where the pair starts in the file */
} gguf_kv;

/* One entry of a name index: names sorted with strcmp for binary search. */
typedef struct gguf_name_index {
    const char *name;
    int64_t index;
} gguf_name_index;

struct gguf_file {
    char *path;
    uint32_t version;
    uint32_t alignment;
    uint64_t file_size;   /* GGUF_SIZE_UNKNOWN while parsing a pipe */
    uint64_t data_offset;
    uint64_t data_size;
    const unsigned char *data; /* start of the data section in memory, or NULL */
    gguf_kv *kvs;
    int64_t n_kv;
    gguf_tensor_info *tensors;
    int64_t n_tensors;
    gguf_name_index *kv_index;     /* n_kv entries sorted by key */
    gguf_name_index *tensor_index; /* n_tensors entries sorted by name */
    gguf_arena arena;
    void *map;           /* GGUF_OPEN_MMAP: the mapping */
    size_t map_size;
    void *data_buffer;   /* GGUF_OPEN_READ: the heap copy of the data section */
};

/* ---- parser ---- */

typedef struct gguf_parser {
    gguf_cursor cursor;
    gguf_file *file;
    gguf_error *err;
    char context[160]; /* "kv 3 'general.name'" or "tensor 7 'x'": prefixes every message */
} gguf_parser;

/* Parse magic, version, counts, key/value pairs and tensor infos, checking each field as it is
 * read; on success file->data_offset is the aligned end of the header and the cursor is at the
 * end of the tensor-info table (the padding is not consumed). */
gguf_status gguf_parse_header(gguf_parser *parser);

/* Parse one value of `type` (already checked to be a known code) at nesting depth `depth`. */
gguf_status gguf_parse_value(gguf_parser *parser, gguf_value_type type, gguf_value *out,
                             int depth);
/* Parse a length-prefixed string into the arena; `field` names it in errors. */
gguf_status gguf_parse_string(gguf_parser *parser, const char *field, gguf_string *out);
gguf_status gguf_read_u32(gguf_parser *parser, const char *field, uint32_t *out);
gguf_status gguf_read_u64(gguf_parser *parser, const char *field, uint64_t *out);
/* Take `n` bytes for `field` (which starts at `field_offset`), turning a cursor failure into a
 * message. */
gguf_status gguf_parser_take(gguf_parser *parser, uint64_t n, uint64_t field_offset,
                             const char *field, const unsigned char **out);
/* Check that `count` items of at least `min_bytes` each can fit in the bytes left, so tables
 * are never allocated from a count alone. */
gguf_status gguf_parser_check_count(gguf_parser *parser, uint64_t count, uint64_t min_bytes,
                                    uint64_t field_offset, const char *field);
/* Room to reserve for a table of `count` entries: exactly `count` when the bytes left are known
 * (and were checked to hold them), a modest start that grows as entries arrive from a pipe. */
uint64_t gguf_parser_reserve(const gguf_parser *parser, uint64_t count);
/* Set the message prefix to "<what> <index>" or "<what> <index> '<name>'". */
void gguf_parser_set_context(gguf_parser *parser, const char *what, int64_t index,
                             const char *name);
/* Write "<what> <index>" or "<what> <index> '<name>'" into `out`, the name cut to a readable
 * length and its control characters shown as '?' so that a message stays one line. */
void gguf_describe(char *out, size_t capacity, const char *what, int64_t index, const char *name);
/* gguf_fail() with the parser's file name and context prefix. */
gguf_status gguf_parser_fail(gguf_parser *parser, gguf_status status, uint64_t offset,
                             const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---- validation rules (gguf_validate.c) ---- */

/* A key or tensor name: non-empty, no NUL byte, valid UTF-8. `offset` is its length field. */
gguf_status gguf_check_name(gguf_parser *parser, const char *field, const gguf_string *name,
                            uint64_t offset);
gguf_status gguf_check_n_dims(gguf_parser *parser, uint32_t n_dims, uint64_t offset);
/* ne > 0, known type, ne[0] a multiple of the block size, element count and byte size fit;
 * sets tensor->size. */
gguf_status gguf_check_tensor_shape(gguf_parser *parser, gguf_tensor_info *tensor,
                                    uint64_t ne_offset, uint64_t type_offset);
gguf_status gguf_check_tensor_offset(gguf_parser *parser, const gguf_tensor_info *tensor,
                                     uint64_t offset_field);
/* Sort the names into an index and fail with GGUF_ERR_DUPLICATE on the first repeated name. */
gguf_status gguf_index_keys(gguf_parser *parser);
gguf_status gguf_index_tensors(gguf_parser *parser);
/* general.alignment, when present, is a UINT32 non-zero power of two; sets file->alignment. */
gguf_status gguf_check_alignment_key(gguf_parser *parser);
/* With file->data_size known (or `size_known` false for a pipe read for metadata only): every
 * tensor's data lies inside the data section and no two overlap. */
gguf_status gguf_check_layout(const gguf_file *file, bool size_known, gguf_error *err);

/* Binary search of a name index; -1 when absent. */
int64_t gguf_index_find(const gguf_name_index *index, int64_t count, const char *name);

#endif
