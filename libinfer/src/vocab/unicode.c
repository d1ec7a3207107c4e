/* unicode.c - UTF-8 decoding, class lookup over the generated range table, and GPT-2's
 * byte-to-code-point alphabet. */
#include "unicode.h"

unsigned inf_unicode_class_of(uint32_t cp)
{
    if (cp < 0x100) {
        return inf_unicode_latin1_classes[cp];
    }
    if (cp > 0x10FFFFu) {
        return INF_UNICODE_OTHER;
    }
    /* Last range whose start is <= cp; the table starts at U+0000, so one always exists. */
    size_t lo = 0, hi = inf_unicode_range_count;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if ((inf_unicode_ranges[mid] >> 4) <= cp) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return inf_unicode_ranges[lo] & 0xFu;
}

size_t inf_utf8_sequence_length(unsigned char lead)
{
    static const unsigned char by_top_bits[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return by_top_bits[lead >> 4];
}

static int is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

/* Length of the well-formed sequence at text[0..avail) and its code point, or 0 when malformed.
 * Like llama.cpp, overlong forms and surrogates are accepted; only structure is checked. */
static size_t decode_one(const unsigned char *s, size_t avail, uint32_t *cp)
{
    size_t n;
    uint32_t value;
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if ((s[0] & 0xE0) == 0xC0) {
        n = 2;
        value = s[0] & 0x1Fu;
    } else if ((s[0] & 0xF0) == 0xE0) {
        n = 3;
        value = s[0] & 0x0Fu;
    } else if ((s[0] & 0xF8) == 0xF0) {
        n = 4;
        value = s[0] & 0x07u;
    } else {
        return 0;
    }
    if (n > avail) {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if (!is_continuation(s[i])) {
            return 0;
        }
        value = (value << 6) | (s[i] & 0x3Fu);
    }
    if (value > 0x10FFFFu) {
        return 0;
    }
    *cp = value;
    return n;
}

size_t inf_utf8_decode(const char *text, size_t len, uint32_t *out)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t count = 0;
    size_t pos = 0;
    while (pos < len) {
        uint32_t cp;
        size_t n = decode_one(s + pos, len - pos, &cp);
        if (n == 0) {
            cp = INF_UNICODE_REPLACEMENT;
            n = 1;
        }
        out[count++] = cp;
        pos += n;
    }
    return count;
}

size_t inf_utf8_decoded_bytes(const char *text, size_t len, size_t n_cps)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t pos = 0;
    for (size_t i = 0; i < n_cps && pos < len; i++) {
        uint32_t cp;
        size_t n = decode_one(s + pos, len - pos, &cp);
        pos += n ? n : 1;
    }
    return pos;
}

size_t inf_utf8_encode(uint32_t cp, char *out)
{
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* GPT-2 keeps the printable Latin-1 bytes ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) as
 * themselves and gives the other 68 bytes the code points from U+0100 on, in byte order. */
static int byte_is_printable(unsigned b)
{
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
}

uint32_t inf_byte_to_code_point(unsigned char byte)
{
    if (byte_is_printable(byte)) {
        return byte;
    }
    uint32_t skipped = 0; /* non-printable bytes below this one */
    for (unsigned b = 0; b < byte; b++) {
        skipped += !byte_is_printable(b);
    }
    return 0x100 + skipped;
}

int inf_code_point_to_byte(uint32_t cp)
{
    if (cp < 0x100) {
        return byte_is_printable(cp) ? (int)cp : -1;
    }
    uint32_t wanted = cp - 0x100;
    for (unsigned b = 0; b < 256; b++) {
        if (!byte_is_printable(b) && wanted-- == 0) {
            return (int)b;
        }
    }
    return -1;
}
