/* text_file.h - the evaluation text: plain, gzip or the first file of a zip archive.
 * Shared by the tools (tools/common is linked into each tool, not installed). */
#ifndef TOOLS_TEXT_FILE_H
#define TOOLS_TEXT_FILE_H

#include <stddef.h>
#include <stdint.h>

#include <ggtk/error.h>

/* ---------------------------------------------------------------------------------------------
 * Text files
 * ------------------------------------------------------------------------------------------- */

/* Largest text text_file_read() accepts after decompression (a guard against decompression
 * bombs and files that are not text). */
#define TEXT_FILE_MAX_BYTES ((size_t)1 << 30)

/* Read the whole text file `path` into a malloc'd buffer (*text, NUL-terminated; the terminator
 * is not counted in *len). The format is recognised by its first bytes, not by its name:
 *  - gzip ("\x1f\x8b"): decompressed (several concatenated members are read as one stream);
 *  - zip ("PK\3\4"): the first entry that is a file (directory entries are skipped), stored or
 *    deflated; its CRC-32 is checked; zip64 and encrypted entries are refused;
 *  - anything else: read as is.
 * An empty text (0 bytes after decompression) is an error. Returns GGTK_OK, or GGTK_ERR_IO (open or
 * read failed, or a corrupt/truncated/unsupported archive) / GGTK_ERR_INVALID (empty or larger than
 * TEXT_FILE_MAX_BYTES) / GGTK_ERR_NOMEM with one line naming the file and the fault in *err (may be NULL); *text is then NULL and *len 0. `member` (may be NULL) receives the
 * name of the zip entry read, "" for other formats (at most member_size bytes, NUL-terminated). */
ggtk_status text_file_read(const char *path, char **text, size_t *len, char *member,
                         size_t member_size, ggtk_error *err);

/* text_file_read() on the `size` bytes at `data` instead of a file's content (the caller keeps
 * `data`); `name` stands for the file in messages. For callers that hold the bytes already, and
 * for the fuzzer. */
ggtk_status text_file_decode(const void *data, size_t size, const char *name, char **text,
                             size_t *len, char *member, size_t member_size, ggtk_error *err);


#endif
