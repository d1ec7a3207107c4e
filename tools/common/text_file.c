/* text_file.c - reads the evaluation text: plain, gzip or the first file of a zip archive.
 * The whole file is read into memory first (texts are small next to models), so gzip and zip
 * are both decoded from a buffer whose every field is bounds-checked before use. */

#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "text_file.h"

enum {
    ZIP_LOCAL_SIG = 0x04034b50,
    ZIP_CENTRAL_SIG = 0x02014b50,
    ZIP_END_SIG = 0x06054b50,
    ZIP_DESCRIPTOR_SIG = 0x08074b50,
    ZIP_LOCAL_SIZE = 30,
    ZIP_CENTRAL_SIZE = 46,
    ZIP_END_SIZE = 22,
    ZIP_FLAG_ENCRYPTED = 1 << 0,
    ZIP_FLAG_DESCRIPTOR = 1 << 3,
    ZIP_METHOD_STORED = 0,
    ZIP_METHOD_DEFLATE = 8,
};

/* The bytes of a file in memory. */
typedef struct byte_span {
    const uint8_t *data;
    size_t size;
} byte_span;

/* Growable output of a decoder, capped at TEXT_FILE_MAX_BYTES. */
typedef struct text_buffer {
    char *data;
    size_t len;
    size_t cap;
} text_buffer;

static uint16_t read_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static uint32_t read_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Make room for `extra` more bytes plus a NUL. False when over the cap or out of memory. */
static bool text_buffer_reserve(text_buffer *buf, size_t extra)
{
    if (extra > TEXT_FILE_MAX_BYTES - buf->len)
        return false;
    size_t need = buf->len + extra + 1;
    if (need <= buf->cap)
        return true;
    size_t cap = buf->cap ? buf->cap : 1 << 16;
    while (cap < need)
        cap *= 2;
    char *data = realloc(buf->data, cap);
    if (!data)
        return false;
    buf->data = data;
    buf->cap = cap;
    return true;
}

/* Read the whole file into memory. */
static ggtk_status read_file(const char *path, text_buffer *out, ggtk_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: cannot open: %s", path, strerror(errno));
        return GGTK_ERR_IO;
    }
    ggtk_status status = GGTK_OK;
    for (;;) {
        size_t want = TEXT_FILE_MAX_BYTES - out->len < (1u << 20) ? TEXT_FILE_MAX_BYTES - out->len
                                                                 : (1u << 20);
        if (want == 0) {
            if (fgetc(f) != EOF) {
                ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "%s: larger than %zu bytes", path,
                                   (size_t)TEXT_FILE_MAX_BYTES);
                status = GGTK_ERR_INVALID;
            }
            break;
        }
        if (!text_buffer_reserve(out, want)) {
            ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", path);
            status = GGTK_ERR_NOMEM;
            break;
        }
        size_t got = fread(out->data + out->len, 1, want, f);
        out->len += got;
        if (got < want) {
            if (ferror(f)) {
                ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: read failed: %s", path, strerror(errno));
                status = GGTK_ERR_IO;
            }
            break;
        }
    }
    fclose(f);
    return status;
}

/* Inflate `in` into `out` with the given zlib window bits. For gzip (`multi_member`), members
 * that follow the first are decoded too. `expect` (or SIZE_MAX) is the exact output size. */
static ggtk_status inflate_span(const char *path, byte_span in, int window_bits, bool multi_member,
                               size_t expect, text_buffer *out, ggtk_error *err)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, window_bits) != Z_OK) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: cannot start zlib", path);
        return GGTK_ERR_NOMEM;
    }
    ggtk_status status = GGTK_OK;
    size_t pos = 0;
    int ret = Z_OK;
    while (pos < in.size || ret != Z_STREAM_END) {
        if (!text_buffer_reserve(out, 1 << 20)) {
            ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "%s: decompressed text larger than %zu bytes", path,
                               (size_t)TEXT_FILE_MAX_BYTES);
            status = GGTK_ERR_INVALID;
            break;
        }
        size_t chunk_in = in.size - pos < (1u << 30) ? in.size - pos : (1u << 30);
        zs.next_in = (Bytef *)(in.data + pos);
        zs.avail_in = (uInt)chunk_in;
        size_t room = out->cap - out->len - 1;
        zs.next_out = (Bytef *)(out->data + out->len);
        zs.avail_out = room > (1u << 30) ? (1u << 30) : (uInt)room;
        uInt avail_out_before = zs.avail_out;
        ret = inflate(&zs, Z_NO_FLUSH);
        pos += chunk_in - zs.avail_in;
        out->len += avail_out_before - zs.avail_out;
        if (ret == Z_STREAM_END) {
            if (!multi_member || pos == in.size)
                break;
            inflateReset(&zs);
            ret = Z_OK;
            continue;
        }
        if (ret == Z_BUF_ERROR && pos == in.size) {
            ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: truncated compressed data (stream ends early "
                               "at byte %zu)", path, pos);
            status = GGTK_ERR_IO;
            break;
        }
        if (ret != Z_OK && ret != Z_BUF_ERROR) {
            status = ret == Z_MEM_ERROR ? GGTK_ERR_NOMEM : GGTK_ERR_IO;
            ggtk_error_set(err, status, GGTK_NO_OFFSET, "%s: corrupt compressed data near byte %zu: %s",
                           path, pos, zs.msg ? zs.msg : "zlib error");
            break;
        }
    }
    inflateEnd(&zs);
    if (status == GGTK_OK && expect != SIZE_MAX && out->len != expect) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: entry decompresses to %zu bytes, header says %zu",
                           path, out->len, expect);
        status = GGTK_ERR_IO;
    }
    return status;
}

/* Facts about one zip entry. */
typedef struct zip_entry {
    size_t header_offset; /* offset of its local header */
    size_t data_offset;   /* offset of its (compressed) data */
    size_t next_offset;   /* offset of the next local header */
    uint16_t flags, method;
    uint32_t crc, compressed_size, size;
    char name[256];
} zip_entry;

/* Sizes and CRC of the entry whose local header is at `header_offset`, from the central
 * directory (used when the local header defers them to a data descriptor). */
static bool zip_central_sizes(byte_span zip, zip_entry *entry)
{
    if (zip.size < ZIP_END_SIZE)
        return false;
    size_t lowest = zip.size > 0xffff + ZIP_END_SIZE ? zip.size - 0xffff - ZIP_END_SIZE : 0;
    for (size_t end = zip.size - ZIP_END_SIZE + 1; end-- > lowest;) {
        if (read_u32(zip.data + end) != ZIP_END_SIG)
            continue;
        uint16_t n_entries = read_u16(zip.data + end + 10);
        size_t pos = read_u32(zip.data + end + 16);
        for (uint16_t i = 0; i < n_entries; i++) {
            if (pos > zip.size || zip.size - pos < ZIP_CENTRAL_SIZE ||
                read_u32(zip.data + pos) != ZIP_CENTRAL_SIG)
                return false;
            const uint8_t *c = zip.data + pos;
            if (read_u32(c + 42) == entry->header_offset) {
                entry->crc = read_u32(c + 16);
                entry->compressed_size = read_u32(c + 20);
                entry->size = read_u32(c + 24);
                return true;
            }
            pos += (size_t)ZIP_CENTRAL_SIZE + read_u16(c + 28) + read_u16(c + 30) + read_u16(c + 32);
        }
        return false;
    }
    return false;
}

/* Entry names reach one-line messages and the tool's output: control bytes (a newline, a
 * terminal escape) become '?'. */
static void printable_name(char *name)
{
    for (char *c = name; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
}

/* Parse the local header at `offset`. */
static ggtk_status zip_parse_entry(const char *path, byte_span zip, size_t offset, zip_entry *entry,
                                  ggtk_error *err)
{
    memset(entry, 0, sizeof *entry);
    entry->header_offset = offset;
    if (offset > zip.size || zip.size - offset < ZIP_LOCAL_SIZE) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: zip truncated: local header at byte %zu needs %d "
                           "bytes", path, offset, ZIP_LOCAL_SIZE);
        return GGTK_ERR_IO;
    }
    const uint8_t *h = zip.data + offset;
    if (read_u32(h) != ZIP_LOCAL_SIG) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: zip has no file entry (byte %zu is not a local "
                           "header)", path, offset);
        return GGTK_ERR_IO;
    }
    entry->flags = read_u16(h + 6);
    entry->method = read_u16(h + 8);
    entry->crc = read_u32(h + 14);
    entry->compressed_size = read_u32(h + 18);
    entry->size = read_u32(h + 22);
    size_t name_len = read_u16(h + 26), extra_len = read_u16(h + 28);
    size_t data_offset = offset + ZIP_LOCAL_SIZE + name_len + extra_len;
    if (data_offset > zip.size) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: zip truncated: entry name at byte %zu runs past "
                           "the end", path, offset + ZIP_LOCAL_SIZE);
        return GGTK_ERR_IO;
    }
    size_t copy = name_len < sizeof entry->name - 1 ? name_len : sizeof entry->name - 1;
    memcpy(entry->name, h + ZIP_LOCAL_SIZE, copy);
    printable_name(entry->name);
    entry->data_offset = data_offset;
    if ((entry->flags & ZIP_FLAG_DESCRIPTOR) && !zip_central_sizes(zip, entry)) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: zip entry '%s' keeps its sizes in a data "
                           "descriptor and the central directory is missing or corrupt", path,
                           entry->name);
        return GGTK_ERR_IO;
    }
    if (entry->compressed_size == 0xffffffffu || entry->size == 0xffffffffu) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: zip entry '%s' is zip64, which is not supported",
                           path, entry->name);
        return GGTK_ERR_IO;
    }
    if (entry->compressed_size > zip.size - data_offset) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: zip truncated: entry '%s' has %u compressed bytes "
                           "at byte %zu, the file ends at %zu", path, entry->name,
                           entry->compressed_size, data_offset, zip.size);
        return GGTK_ERR_IO;
    }
    size_t next = data_offset + entry->compressed_size;
    if (entry->flags & ZIP_FLAG_DESCRIPTOR)
        next += next + 4 <= zip.size && read_u32(zip.data + next) == ZIP_DESCRIPTOR_SIG ? 16 : 12;
    entry->next_offset = next;
    return GGTK_OK;
}

/* Decode the first file entry of a zip archive. */
static ggtk_status read_zip(const char *path, byte_span zip, text_buffer *out, char *member,
                           size_t member_size, ggtk_error *err)
{
    zip_entry entry;
    size_t offset = 0;
    for (;;) {
        ggtk_status status = zip_parse_entry(path, zip, offset, &entry, err);
        if (status != GGTK_OK)
            return status;
        size_t name_len = strlen(entry.name);
        bool directory = name_len > 0 && entry.name[name_len - 1] == '/';
        if (!directory)
            break;
        offset = entry.next_offset;
    }
    if (member && member_size)
        snprintf(member, member_size, "%s", entry.name);
    if (entry.flags & ZIP_FLAG_ENCRYPTED) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: zip entry '%s' is encrypted", path, entry.name);
        return GGTK_ERR_IO;
    }
    byte_span data = {zip.data + entry.data_offset, entry.compressed_size};
    ggtk_status status;
    if (entry.method == ZIP_METHOD_STORED) {
        if (entry.size != entry.compressed_size) {
            ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: stored zip entry '%s' has size %u but %u "
                               "stored bytes", path, entry.name, entry.size,
                               entry.compressed_size);
            return GGTK_ERR_IO;
        }
        if (!text_buffer_reserve(out, data.size)) {
            ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", path);
            return GGTK_ERR_NOMEM;
        }
        memcpy(out->data, data.data, data.size);
        out->len = data.size;
        status = GGTK_OK;
    } else if (entry.method == ZIP_METHOD_DEFLATE) {
        status = inflate_span(path, data, -15, false, entry.size, out, err);
    } else {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: zip entry '%s' uses compression method %u (only "
                           "stored and deflate are supported)", path, entry.name, entry.method);
        return GGTK_ERR_IO;
    }
    if (status != GGTK_OK)
        return status;
    uint32_t crc = 0;
    for (size_t done = 0; done < out->len;) {
        uInt n = out->len - done > (1u << 30) ? (1u << 30) : (uInt)(out->len - done);
        crc = (uint32_t)crc32(crc, (const Bytef *)out->data + done, n);
        done += n;
    }
    if (crc != entry.crc) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: zip entry '%s' fails its CRC-32 check (stored "
                           "%08x, computed %08x)", path, entry.name, entry.crc, crc);
        return GGTK_ERR_IO;
    }
    return GGTK_OK;
}

/* Decode `raw` (a whole file's bytes, consumed: freed or handed out as the text). */
static ggtk_status decode_owned(const char *name, text_buffer raw, char **text, size_t *len,
                                char *member, size_t member_size, ggtk_error *err)
{
    ggtk_status status = GGTK_OK;
    text_buffer decoded = {0};
    text_buffer *result = &raw;
    if (raw.len >= 2 && (uint8_t)raw.data[0] == 0x1f && (uint8_t)raw.data[1] == 0x8b) {
        byte_span span = {(const uint8_t *)raw.data, raw.len};
        status = inflate_span(name, span, 15 + 16, true, SIZE_MAX, &decoded, err);
        result = &decoded;
    } else if (raw.len >= 4 && read_u32((const uint8_t *)raw.data) == ZIP_LOCAL_SIG) {
        byte_span span = {(const uint8_t *)raw.data, raw.len};
        status = read_zip(name, span, &decoded, member, member_size, err);
        result = &decoded;
    }
    if (status == GGTK_OK && result->len == 0)
        status = ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "%s: the text is empty",
                                name);
    if (status == GGTK_OK && !text_buffer_reserve(result, 0))
        status = ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", name);
    if (status != GGTK_OK) {
        free(raw.data);
        free(decoded.data);
        return status;
    }
    result->data[result->len] = '\0';
    *text = result->data;
    *len = result->len;
    free(result == &raw ? decoded.data : raw.data);
    return GGTK_OK;
}

/* The outputs of a failed or not yet finished call. */
static void clear_outputs(char **text, size_t *len, char *member, size_t member_size)
{
    *text = NULL;
    *len = 0;
    if (member && member_size)
        member[0] = '\0';
}

ggtk_status text_file_read(const char *path, char **text, size_t *len, char *member,
                         size_t member_size, ggtk_error *err)
{
    clear_outputs(text, len, member, member_size);
    text_buffer raw = {0};
    ggtk_status status = read_file(path, &raw, err);
    if (status != GGTK_OK) {
        free(raw.data);
        return status;
    }
    return decode_owned(path, raw, text, len, member, member_size, err);
}

ggtk_status text_file_decode(const void *data, size_t size, const char *name, char **text,
                             size_t *len, char *member, size_t member_size, ggtk_error *err)
{
    clear_outputs(text, len, member, member_size);
    if (size > TEXT_FILE_MAX_BYTES)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "%s: larger than %zu bytes",
                              name, (size_t)TEXT_FILE_MAX_BYTES);
    text_buffer raw = {0};
    if (!text_buffer_reserve(&raw, size))
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", name);
    if (size)
        memcpy(raw.data, data, size);
    raw.len = size;
    return decode_owned(name, raw, text, len, member, member_size, err);
}
