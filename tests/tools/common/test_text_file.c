/* test_text_file.c - text_file_read() and text_file_decode(): plain, gzip and zip texts, and a clear error for every
 * broken archive. Archives are made by Python's gzip/zipfile modules (an independent writer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "text_file.h"
#include "test.h"

static const char SAMPLE[] = "The quick brown fox jumps over the lazy dog.\nSecond line: 0123456789\n";

static void write_bytes(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, size, f);
        fclose(f);
    }
}

/* Make a zip of SAMPLE with Python. `how` selects the variant (see the script). */
static int make_zip(const char *path, const char *how)
{
    return test_run(NULL,
                    "python3 -c \"import sys,zipfile,io\n"
                    "how=sys.argv[2]; data=open(sys.argv[3],'rb').read()\n"
                    "method={'stored':zipfile.ZIP_STORED,'bzip2':zipfile.ZIP_BZIP2,'evil':zipfile.ZIP_STORED,\n"
                    "        'evil_bzip2':zipfile.ZIP_BZIP2}.get(how,zipfile.ZIP_DEFLATED)\n"
                    "name={'dir':'folder/sample.txt'}.get(how,'sample.txt')\n"
                    "if how.startswith('evil'): name='a'+chr(10)+'b'+chr(27)+'[2J.txt'\n"
                    "if how=='stream':\n"
                    "    class W(io.RawIOBase):\n"
                    "        def __init__(s,f): s.f=f\n"
                    "        def writable(s): return True\n"
                    "        def write(s,b): s.f.write(b); return len(b)\n"
                    "    z=zipfile.ZipFile(W(open(sys.argv[1],'wb')),'w',zipfile.ZIP_DEFLATED)\n"
                    "else:\n"
                    "    z=zipfile.ZipFile(sys.argv[1],'w',method)\n"
                    "if how=='dir': z.writestr('folder/','')\n"
                    "z.writestr(name,data)\n"
                    "z.close()\" '%s' %s '%s'",
                    path, how, test_tmpfile("sample.txt"));
}

static void write_sample(void) { write_bytes(test_tmpfile("sample.txt"), SAMPLE, strlen(SAMPLE)); }

/* Read `path` and check it holds SAMPLE. */
static int read_equals_sample(const char *path, char *member)
{
    char *text = NULL;
    ggtk_error err = {0};
    size_t len = 0;
    ggtk_status st = text_file_read(path, &text, &len, member, 64, &err);
    int ok = st == GGTK_OK && len == strlen(SAMPLE) && memcmp(text, SAMPLE, len) == 0 &&
             text[len] == '\0';
    if (!ok)
        fprintf(stderr, "    read %s: status %d, len %zu, err '%s'\n", path, st, len, err.message);
    free(text);
    return ok;
}

/* Expect text_file_read to fail with a message containing `needle`. */
static int read_fails_with(const char *path, const char *needle)
{
    char *text = (char *)1;
    ggtk_error err = {0};
    size_t len = 7;
    ggtk_status st = text_file_read(path, &text, &len, NULL, 0, &err);
    int ok = st != GGTK_OK && text == NULL && len == 0 && strstr(err.message, needle) && strstr(err.message, path);
    if (!ok)
        fprintf(stderr, "    %s: status %d, err '%s' (wanted '%s')\n", path, st, err.message, needle);
    return ok;
}

TEST(test_text_reads_plain_file)
{
    write_sample();
    char member[64] = "x";
    CHECK(read_equals_sample(test_tmpfile("sample.txt"), member));
    CHECK(member[0] == '\0');
}

TEST(test_text_reads_gzip_including_concatenated_members)
{
    char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile("sample.gz"));
    size_t half = strlen(SAMPLE) / 2;
    gzFile gz = gzopen(path, "wb");
    CHECK(gz != NULL);
    gzwrite(gz, SAMPLE, (unsigned)half);
    gzclose(gz);
    gz = gzopen(path, "ab"); /* a second gzip member appended */
    CHECK(gz != NULL);
    gzwrite(gz, SAMPLE + half, (unsigned)(strlen(SAMPLE) - half));
    gzclose(gz);
    CHECK(read_equals_sample(path, NULL));
}

TEST(test_text_reads_zip_deflated_stored_and_streamed)
{
    write_sample();
    const char *variants[] = {"deflate", "stored", "stream"};
    for (int i = 0; i < 3; i++) {
        char path[512], member[64] = "";
        snprintf(path, sizeof path, "%s", test_tmpfile(variants[i]));
        CHECK_MSG(make_zip(path, variants[i]) == 0, "python zipfile failed for %s", variants[i]);
        CHECK(read_equals_sample(path, member));
        CHECK_MSG(strcmp(member, "sample.txt") == 0, "member '%s'", member);
    }
}

TEST(test_text_zip_skips_directory_entries)
{
    write_sample();
    char path[512], member[64] = "";
    snprintf(path, sizeof path, "%s", test_tmpfile("dir.zip"));
    CHECK(make_zip(path, "dir") == 0);
    CHECK(read_equals_sample(path, member));
    CHECK(strcmp(member, "folder/sample.txt") == 0);
}

TEST(test_text_zip_entry_names_lose_control_bytes)
{
    /* Found by fuzz_text_file: a newline in an entry name split the one-line message. */
    write_sample();
    char path[512], member[64] = "";
    snprintf(path, sizeof path, "%s", test_tmpfile("evil.zip"));
    CHECK(make_zip(path, "evil") == 0);
    CHECK(read_equals_sample(path, member));
    CHECK_MSG(strcmp(member, "a?b?[2J.txt") == 0, "member '%s'", member);
    snprintf(path, sizeof path, "%s", test_tmpfile("evil_bzip2.zip"));
    CHECK(make_zip(path, "evil_bzip2") == 0);
    CHECK(read_fails_with(path, "zip entry 'a?b?[2J.txt' uses compression method 12"));
}

TEST(test_text_decode_from_memory_equals_reading_the_file)
{
    write_sample();
    char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile("memory.zip"));
    CHECK(make_zip(path, "deflate") == 0);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    unsigned char data[4096];
    size_t size = fread(data, 1, sizeof data, f);
    fclose(f);
    char *text = NULL, member[64] = "";
    size_t len = 0;
    ggtk_error err = {0};
    CHECK_MSG(text_file_decode(data, size, "memory", &text, &len, member, sizeof member, &err) ==
              GGTK_OK, "%s", err.message);
    CHECK(len == strlen(SAMPLE) && memcmp(text, SAMPLE, len) == 0 && text[len] == '\0');
    CHECK(strcmp(member, "sample.txt") == 0);
    free(text);
    CHECK(text_file_decode(data, 40, "memory", &text, &len, NULL, 0, &err) != GGTK_OK);
    CHECK_MSG(text == NULL && len == 0 && strncmp(err.message, "memory: ", 8) == 0, "%s",
              err.message);
    CHECK(text_file_decode("plain", 5, "memory", &text, &len, NULL, 0, &err) == GGTK_OK);
    CHECK(len == 5 && strcmp(text, "plain") == 0);
    free(text);
}

TEST(test_text_refuses_empty_missing_and_broken_files)
{
    write_bytes(test_tmpfile("empty.txt"), "", 0);
    CHECK(read_fails_with(test_tmpfile("empty.txt"), "empty"));
    CHECK(read_fails_with(test_tmpfile("missing.txt"), "cannot open"));

    /* An empty gzip stream is an empty text too. */
    char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile("empty.gz"));
    gzFile gz = gzopen(path, "wb");
    CHECK(gz != NULL);
    gzclose(gz);
    CHECK(read_fails_with(path, "empty"));
}

TEST(test_text_refuses_truncated_gzip)
{
    char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile("cut.gz"));
    gzFile gz = gzopen(path, "wb");
    CHECK(gz != NULL);
    for (int i = 0; i < 200; i++)
        gzwrite(gz, SAMPLE, (unsigned)strlen(SAMPLE));
    gzclose(gz);
    CHECK(test_run(NULL, "truncate -s 60 '%s'", path) == 0);
    CHECK(read_fails_with(path, "truncated"));
}

/* Load a file, let `edit` change it, write it back. */
static void edit_file(const char *path, long offset, unsigned char value, long new_size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    unsigned char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (offset >= 0 && (size_t)offset < n)
        buf[offset] = value;
    write_bytes(path, buf, new_size >= 0 && (size_t)new_size < n ? (size_t)new_size : n);
}

TEST(test_text_refuses_zip_with_bad_crc_truncation_or_unknown_method)
{
    write_sample();
    char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile("crc.zip"));
    CHECK(make_zip(path, "stored") == 0);
    /* Stored data starts after the 30-byte header and the 10-byte name "sample.txt". */
    edit_file(path, 30 + 10 + 4, 'X', -1);
    CHECK(read_fails_with(path, "CRC-32"));

    snprintf(path, sizeof path, "%s", test_tmpfile("cut.zip"));
    CHECK(make_zip(path, "deflate") == 0);
    edit_file(path, -1, 0, 50);
    CHECK(read_fails_with(path, "truncated"));

    snprintf(path, sizeof path, "%s", test_tmpfile("header.zip"));
    CHECK(make_zip(path, "deflate") == 0);
    edit_file(path, -1, 0, 20);
    CHECK(read_fails_with(path, "truncated"));

    snprintf(path, sizeof path, "%s", test_tmpfile("bzip2.zip"));
    CHECK(make_zip(path, "bzip2") == 0);
    CHECK(read_fails_with(path, "compression method 12"));

    snprintf(path, sizeof path, "%s", test_tmpfile("encrypted.zip"));
    CHECK(make_zip(path, "stored") == 0);
    edit_file(path, 6, 1, -1); /* general purpose flag bit 0: encrypted */
    CHECK(read_fails_with(path, "encrypted"));
}

TEST(test_text_reads_the_committed_evaluation_text)
{
    char *text = NULL;
    ggtk_error err = {0};
    size_t len = 0;
    CHECK_MSG(text_file_read("tests/eval/data/licenses.txt.gz", &text, &len, NULL, 0, &err) == GGTK_OK, "%s", err.message);
    /* GPL-3, Apache-2.0, GFDL-1.3, LGPL-2.1, MPL-2.0, GPL-2 from /usr/share/common-licenses. */
    CHECK_MSG(len == 130810, "length %zu", len);
    CHECK(strncmp(text, "                    GNU GENERAL PUBLIC LICENSE", 46) == 0);
    free(text);
}
