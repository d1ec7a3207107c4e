/* safetensors_fixture.c - see safetensors_fixture.h. */
#include "safetensors_fixture.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

bool st_fixture_write(const char *path, const char *header, uint64_t declared_length,
                      size_t data_size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    uint64_t n = declared_length != UINT64_MAX ? declared_length : strlen(header);
    for (int i = 0; i < 8; i++)
        fputc((int)(n >> (8 * i)) & 0xff, f);
    fputs(header, f);
    for (size_t i = 0; i < data_size; i++)
        fputc((int)(i & 0xff), f);
    return fclose(f) == 0;
}

bool st_fixture_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fputs(text, f);
    return fclose(f) == 0;
}

int st_fixture_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}
