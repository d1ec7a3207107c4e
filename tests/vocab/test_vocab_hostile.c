/* test_vocab_hostile.c - tokenizing stays linear and bounded on hostile input: a vocabulary whose
 * ~30k tokens are all special (matching must not be the text times the number of special tokens,
 * and must keep llama.cpp's rule), and single "words" of 20 MB (memory must not grow with them).
 * Pieces must not change the ids of real text: cuts are checked against whole-text results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "vocab/vocab_internal.h"
#include "vocab/unicode.h"
#include "vocab_test_support.h"

static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 33;
}

/* ---------------------------------------------------------------------------------------------
 * A vocabulary of special tokens
 * ------------------------------------------------------------------------------------------- */

enum { N_PLAIN = 3, N_HOSTILE = 30000, HOSTILE_TEXT_MAX = 17 };

/* Three plain tokens ("e", "Ġ", "Ġe", merged by "Ġ e"), every string over "abcd" of 1 to 7
 * letters (they overlap everywhere in a text of those letters), pseudo-random strings of 8 to 16
 * letters, and last a second "abab". Every fifth special token is CONTROL, the rest USER_DEFINED. */
static inf_vocab *hostile_vocab(void)
{
    static char texts[N_HOSTILE][HOSTILE_TEXT_MAX];
    static const char *tokens[N_HOSTILE];
    static int32_t types[N_HOSTILE];
    static const char *const plain[N_PLAIN] = {"e", "\xc4\xa0", "\xc4\xa0" "e"};
    uint64_t seed = 7;
    int32_t id = 0;
    for (; id < N_PLAIN; id++) {
        snprintf(texts[id], HOSTILE_TEXT_MAX, "%s", plain[id]);
    }
    for (int len = 1; len <= 7; len++) {
        for (int code = 0; code < (1 << (2 * len)); code++, id++) {
            for (int i = 0; i < len; i++) {
                texts[id][i] = (char)('a' + ((code >> (2 * i)) & 3));
            }
        }
    }
    for (; id < N_HOSTILE - 1; id++) {
        int len = 8 + (int)(next_random(&seed) % 9);
        for (int i = 0; i < len; i++) {
            texts[id][i] = (char)('a' + next_random(&seed) % 4);
        }
    }
    snprintf(texts[id], HOSTILE_TEXT_MAX, "abab");
    for (id = 0; id < N_HOSTILE; id++) {
        tokens[id] = texts[id];
        types[id] = id < N_PLAIN ? INF_TOKEN_NORMAL : id % 5 == 0 ? INF_TOKEN_CONTROL : INF_TOKEN_USER_DEFINED;
    }
    ggtk_writer *w = vt_writer("gpt2", tokens, N_HOSTILE, (const char *const[]){"\xc4\xa0 e"}, 1, NULL);
    ggtk_writer_set_string(w, "tokenizer.ggml.pre", "gpt-2");
    ggtk_writer_set_array(w, "tokenizer.ggml.token_type", GGTK_VALUE_INT32, N_HOSTILE, types);
    ggtk_writer_set_u32(w, "tokenizer.ggml.bos_token_id", 0);
    ggtk_writer_set_u32(w, "tokenizer.ggml.eos_token_id", 0);
    char err[512];
    inf_vocab *v = vt_finish(w, "hostile.gguf", err, sizeof err);
    if (!v) {
        test_fail(__FILE__, __LINE__, "%s", err);
    }
    return v;
}

/* Letters that the special tokens are made of, now and then a plain "e" or a space. */
static char *hostile_text(size_t len, uint64_t seed)
{
    static const char alphabet[] = "abcdabcdabcdabcdabcde ";
    char *text = malloc(len + 1);
    for (size_t i = 0; text && i < len; i++) {
        text[i] = alphabet[next_random(&seed) % (sizeof alphabet - 1)];
    }
    if (text) {
        text[len] = '\0';
    }
    return text;
}

typedef struct ranked_token {
    size_t len;
    inf_token id;
} ranked_token;

static int longest_first(const void *a, const void *b)
{
    const ranked_token *x = a, *y = b;
    if (x->len != y->len) {
        return x->len > y->len ? -1 : 1;
    }
    return (x->id > y->id) - (x->id < y->id);
}

/* llama.cpp's tokenizer_st_partition taken literally: each special token in turn (longest text
 * first, equal lengths by id) takes its leftmost non-overlapping occurrences in what is still
 * plain text. owner[i] gets the token that covers byte i, or INF_TOKEN_NONE. */
static void reference_partition(const inf_vocab *v, const char *text, size_t len, bool parse_special, inf_token *owner)
{
    int32_t n = inf_vocab_n_tokens(v);
    ranked_token *ranked = malloc((size_t)n * sizeof *ranked);
    size_t count = 0;
    for (inf_token id = 0; id < n; id++) {
        inf_token_type type = inf_vocab_token_type(v, id);
        size_t token_len;
        inf_vocab_token_text(v, id, &token_len);
        if (token_len > 0 && (type == INF_TOKEN_USER_DEFINED ||
                              (parse_special && (type == INF_TOKEN_CONTROL || type == INF_TOKEN_UNKNOWN)))) {
            ranked[count++] = (ranked_token){token_len, id};
        }
    }
    qsort(ranked, count, sizeof *ranked, longest_first);
    for (size_t i = 0; i < len; i++) {
        owner[i] = INF_TOKEN_NONE;
    }
    for (size_t r = 0; r < count; r++) {
        const char *special = inf_vocab_token_text(v, ranked[r].id, NULL);
        size_t special_len = ranked[r].len;
        for (size_t pos = 0; pos + special_len <= len;) {
            bool plain = memcmp(text + pos, special, special_len) == GGTK_OK;
            for (size_t k = 0; plain && k < special_len; k++) {
                plain = owner[pos + k] == INF_TOKEN_NONE;
            }
            if (!plain) {
                pos++;
                continue;
            }
            for (size_t k = 0; k < special_len; k++) {
                owner[pos + k] = ranked[r].id;
            }
            pos += special_len;
        }
    }
    free(ranked);
}

/* The ids the reference partition gives: special tokens as they are, each plain stretch as the
 * tokenizer gives it on its own (it holds no special token, so only BPE acts on it). */
static bool reference_ids(const inf_vocab *v, const char *text, size_t len, unsigned flags, inf_token **ids,
                          size_t *n_ids)
{
    inf_token *owner = malloc(len * sizeof *owner);
    reference_partition(v, text, len, flags & INF_TOKENIZE_PARSE_SPECIAL, owner);
    inf_token *out = malloc(len * sizeof *out);
    size_t n = 0;
    bool ok = true;
    for (size_t pos = 0; ok && pos < len;) {
        size_t end = pos + 1;
        if (owner[pos] != INF_TOKEN_NONE) {
            size_t token_len;
            inf_vocab_token_text(v, owner[pos], &token_len);
            out[n++] = owner[pos];
            pos += token_len;
            continue;
        }
        while (end < len && owner[end] == INF_TOKEN_NONE) {
            end++;
        }
        inf_token *part;
        size_t n_part;
        ok = inf_vocab_tokenize(v, text + pos, end - pos, flags, &part, &n_part, NULL) == GGTK_OK;
        for (size_t i = 0; ok && i < n_part; i++) {
            out[n++] = part[i];
        }
        free(part);
        pos = end;
    }
    free(owner);
    *ids = out;
    *n_ids = n;
    return ok;
}

TEST(test_vocab_all_special_vocab_follows_llama_cpp_partition_rule)
{
    inf_vocab *v = hostile_vocab();
    CHECK(v);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        size_t len = 3000;
        char *text = hostile_text(len, seed);
        for (unsigned flags = 0; flags <= INF_TOKENIZE_PARSE_SPECIAL; flags += INF_TOKENIZE_PARSE_SPECIAL) {
            inf_token *want, *got;
            size_t n_want, n_got;
            CHECK(reference_ids(v, text, len, flags, &want, &n_want));
            CHECK(inf_vocab_tokenize(v, text, len, flags, &got, &n_got, NULL) == GGTK_OK);
            size_t first_diff = 0;
            while (first_diff < n_want && first_diff < n_got && want[first_diff] == got[first_diff]) {
                first_diff++;
            }
            CHECK_MSG(n_want == n_got && first_diff == n_want, "seed %llu flags %u: %zu vs %zu ids, first difference at %zu",
                      (unsigned long long)seed, flags, n_got, n_want, first_diff);
            free(want);
            free(got);
        }
        free(text);
    }
    inf_vocab_free(v);
}

/* special_piece_fn: count the pieces. */
static bool count_piece(void *ctx, inf_token token, size_t start, size_t len)
{
    (void)token;
    (void)start;
    (void)len;
    ++*(size_t *)ctx;
    return true;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

TEST(test_vocab_all_special_vocab_tokenizes_a_megabyte_in_linear_work)
{
    inf_vocab *v = hostile_vocab();
    CHECK(v);
    size_t len = 1 << 20;
    char *text = hostile_text(len, 42);
    CHECK(text);
    /* Scanning the text once per special token (what llama.cpp does) would be ~3e10 steps. */
    size_t work = 0, pieces = 0;
    CHECK(special_partition(&v->specials, text, len, SPECIAL_ALL, count_piece, &pieces, &work));
    CHECK_MSG(work < 16 * len, "%zu steps for %zu bytes", work, len);
    CHECK(pieces > len / 16);
    double start = seconds_now();
    inf_token *ids;
    size_t n;
    CHECK(inf_vocab_tokenize(v, text, len, INF_TOKENIZE_PARSE_SPECIAL, &ids, &n, NULL) == GGTK_OK);
    double seconds = seconds_now() - start;
    fprintf(stderr, "    1 MiB, %d special tokens: %zu steps, %zu ids, %.2f s\n", N_HOSTILE - N_PLAIN, work, n, seconds);
    CHECK_MSG(seconds < 10, "%.1f s", seconds);
    free(ids);
    free(text);
    inf_vocab_free(v);
}
