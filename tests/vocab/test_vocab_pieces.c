/* test_vocab_pieces.c - text is tokenized in pieces of bounded size: a 20 MB "word" must not cost
 * memory in proportion (llama.cpp spends ~50 bytes per byte), and the cuts between pieces must not
 * change any id of real text: each place the pre-tokenizer cut rule allows gives the words of the
 * whole text, and small pieces give the ids of the whole on the HF corpus. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "vocab/vocab_internal.h"
#include "vocab/unicode.h"
#include "vocab_test_support.h"

/* Characters of every class the pre-tokenizer regexes tell apart. */
static const char *const class_samples[] = {
    "a", "Z", "s", "t", "r", "e", "'", "1", "7", " ", "  ", "\n", "\r", "\t", ",", "!", "$", "+", "@",
    "\xc3\xa9",         /* é, a letter */
    "\xcc\x81",         /* combining acute accent, a mark */
    "\xe4\xb8\xad",     /* a CJK letter */
    "\xd9\xa3",         /* Arabic-Indic digit three */
    "\xe2\x85\xa2",     /* Roman numeral three, a letter-like number */
    "\xc2\xa0",         /* no-break space */
    "\xe3\x80\x82",     /* ideographic full stop */
    "\xf0\x9f\x98\x80", /* an emoji, a symbol */
    "\xff",             /* an invalid byte */
};
enum { N_SAMPLES = sizeof class_samples / sizeof class_samples[0] };

static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 33;
}

/* Words (lengths in code points) of cps[0..n) into lengths; returns their count. */
static size_t words_of(const inf_pre_program *pre, const uint32_t *cps, const uint8_t *cls, size_t n,
                       uint32_t *lengths)
{
    uint32_t scratch[512];
    return inf_pretokenize(pre, cps, cls, n, lengths, scratch);
}

/* Whether the words of cps[0..p) followed by those of cps[p..n) are the words of cps[0..n). */
static bool cut_keeps_words(const inf_pre_program *pre, const uint32_t *cps, const uint8_t *cls, size_t n,
                            size_t p)
{
    uint32_t whole[512], parts[512];
    size_t n_whole = words_of(pre, cps, cls, n, whole);
    size_t n_parts = words_of(pre, cps, cls, p, parts);
    n_parts += words_of(pre, cps + p, cls + p, n - p, parts + n_parts);
    return n_whole == n_parts && memcmp(whole, parts, n_whole * sizeof *whole) == 0;
}

/* Every cut the program's rule allows in random text of every class gives the words of the whole
 * text; returns the number of cuts checked, or -1 after a test failure. */
static long check_cuts(const char *pre_name)
{
    inf_pre_program prog;
    const char *why;
    if (!inf_pre_program_init(&prog, inf_pretokenizer_find(pre_name), &why)) {
        test_fail(__FILE__, __LINE__, "%s: %s", pre_name, why ? why : "out of memory");
        return -1;
    }
    uint64_t seed = 3;
    long cuts = 0;
    for (int round = 0; round < 100 && cuts >= 0; round++) {
        char text[2048];
        size_t len = 0;
        for (int i = 0; i < 120; i++) {
            const char *sample = class_samples[next_random(&seed) % N_SAMPLES];
            memcpy(text + len, sample, strlen(sample));
            len += strlen(sample);
        }
        uint32_t cps[512];
        uint8_t cls[512];
        size_t n = inf_utf8_decode(text, len, cps);
        for (size_t i = 0; i < n; i++) {
            cls[i] = (uint8_t)inf_unicode_class_of(cps[i]);
        }
        for (size_t p = 1; p < n && cuts >= 0; p++) {
            if (inf_pretokenize_last_cut(&prog, cps, cls, p + 1) != p) {
                continue;
            }
            cuts++;
            if (!cut_keeps_words(&prog, cps, cls, n, p)) {
                test_fail(__FILE__, __LINE__, "%s: cutting before code point %zu (U+%04X after U+%04X) changes the words",
                          pre_name, p, (unsigned)cps[p], (unsigned)cps[p - 1]);
                cuts = -1;
            }
        }
    }
    inf_pre_program_free(&prog);
    return cuts;
}

TEST(test_vocab_every_allowed_cut_gives_the_words_of_the_whole_text)
{
    static const char *const pres[] = {
        "gpt-2", "llama-bpe", "qwen2", "smollm", "default", "qwen35", "falcon", "deepseek-llm", "deepseek-coder",
        "deepseek-v3", "poro-chat", "viking", "tekken", "gpt-4o", "chameleon", "kimi-k2", "seed-coder",
        "bailingmoe", "exaone-moe", "jais-2", "youtu", "minicpm5", "tiny_aya", "superbpe", "afmoe", "laguna",
    };
    for (size_t k = 0; k < sizeof pres / sizeof pres[0]; k++) {
        long cuts = check_cuts(pres[k]);
        CHECK(cuts >= 0);
        CHECK_MSG(cuts > 50, "%s: only %ld cuts allowed", pres[k], cuts);
    }
}

/* The ids of text[0..len) tokenized in pieces of at most piece_cap bytes, appended to out. */
static bool tokenize_in_pieces(const inf_vocab *v, const char *text, size_t len, size_t piece_cap, token_list *out)
{
    word_cache cache = {0};
    bool ok = v->type == INF_VOCAB_BPE ? bpe_tokenize(v, text, len, piece_cap, &cache, out)
                                       : spm_tokenize(v, text, len, true, piece_cap, out);
    word_cache_free(&cache);
    return ok;
}

/* Every corpus text gives the same ids whole and in pieces of piece_cap bytes; the number of ids
 * compared, or 0 after a test failure naming the text and the first id that differs. */
static size_t check_pieces_keep_ids(const inf_vocab *v, const char *dir, size_t piece_cap)
{
    char path[1024], name[256];
    snprintf(path, sizeof path, "%s/list.txt", dir);
    FILE *list = fopen(path, "r");
    size_t compared = 0;
    bool ok = list != NULL;
    while (ok && fscanf(list, "%255s", name) == 1) {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        size_t len;
        char *text = vt_read_file(path, &len);
        token_list whole = {0}, pieces = {0};
        ok = text && tokenize_in_pieces(v, text, len, SIZE_MAX, &whole) &&
             tokenize_in_pieces(v, text, len, piece_cap, &pieces);
        size_t same = 0;
        while (ok && same < whole.count && same < pieces.count && whole.data[same] == pieces.data[same]) {
            same++;
        }
        if (ok && (same != whole.count || whole.count != pieces.count)) {
            test_fail(__FILE__, __LINE__, "%s, %s in pieces of %zu bytes: %zu vs %zu ids, the first %zu the same",
                      inf_vocab_pre_name(v), name, piece_cap, pieces.count, whole.count, same);
            ok = false;
        }
        compared += whole.count;
        free(whole.data);
        free(pieces.data);
        free(text);
    }
    if (list) {
        fclose(list);
    }
    return ok ? compared : 0;
}

TEST(test_vocab_pieces_of_2_kib_give_the_ids_of_whole_texts)
{
    const char *dir = vt_make_corpus("pieces_corpus");
    CHECK(dir);
    char err[512], path[512];
    if (test_model_path()) {
        inf_vocab *v = vt_load(test_model_path(), err, sizeof err);
        CHECK_MSG(v, "%s", err);
        CHECK(check_pieces_keep_ids(v, dir, 2048) > 100000);
        inf_vocab_free(v);
    }
    /* Families whose pieces end after a lone LF before a letter (or before a number) instead of at
     * class changes; indented text (licences, sources) has no such place in 2 KiB, and their
     * pieces grow there. */
    static const char *const line_cut_families[] = {"gpt-4o", "deepseek-llm", "poro-chat", "kimi-k2", "qwen35",
                                                     "afmoe", "superbpe"};
    for (size_t i = 0; test_model_path() && i < sizeof line_cut_families / sizeof line_cut_families[0]; i++) {
        const char *vocab = test_tmpfile("pieces-vocab.gguf");
        CHECK(test_run(NULL, "python3 tests/vocab/py/vocab_with_pre.py %s %s %s", test_model_path(), vocab,
                       line_cut_families[i]) == 0);
        inf_vocab *v = vt_load(vocab, err, sizeof err);
        CHECK_MSG(v, "%s", err);
        CHECK(check_pieces_keep_ids(v, dir, 2048) > 100000);
        inf_vocab_free(v);
    }
    if (test_shared_data()) {
        snprintf(path, sizeof path, "%s/vocab/ggml-vocab-llama-spm.gguf", test_shared_data());
        inf_vocab *v = vt_load(path, err, sizeof err);
        CHECK_MSG(v, "%s", err);
        CHECK(check_pieces_keep_ids(v, dir, 2048) > 100000);
        inf_vocab_free(v);
    }
}

/* `len` bytes of `unit` repeated. */
static char *repeated(const char *unit, size_t len)
{
    char *text = malloc(len);
    size_t unit_len = strlen(unit);
    for (size_t i = 0; text && i < len; i++) {
        text[i] = unit[i % unit_len];
    }
    return text;
}

/* Resident memory now, in KiB (a forked child's peak starts from its parent's peak, so growth is
 * measured from here). */
static long resident_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) {
            resident = 0;
        }
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* How far tokenizing text[0..len) raises the peak resident memory, in MiB, measured in a forked
 * child; -1 when tokenizing failed. The token count goes to *n_tokens. */
static long tokenize_peak_mib(const inf_vocab *v, const char *text, size_t len, size_t *n_tokens)
{
    int fds[2];
    if (pipe(fds) != 0) {
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        malloc_trim(0); /* memory freed earlier but still resident would hide new allocations */
        long before = resident_kib();
        inf_token *ids;
        size_t n = 0;
        int rc = inf_vocab_tokenize(v, text, len, 0, &ids, &n, NULL);
        struct rusage after;
        getrusage(RUSAGE_SELF, &after);
        long result[2] = {rc == 0 ? (after.ru_maxrss - before) / 1024 : -1, (long)n};
        _exit(write(fds[1], result, sizeof result) == sizeof result ? 0 : 1);
    }
    close(fds[1]);
    long result[2] = {-1, 0};
    if (pid < 0 || read(fds[0], result, sizeof result) != sizeof result) {
        result[0] = -1;
    }
    close(fds[0]);
    if (pid > 0) {
        waitpid(pid, NULL, 0);
    }
    *n_tokens = (size_t)result[1];
    return result[0];
}

/* AddressSanitizer's shadow memory and quarantine of freed blocks count as resident too. */
#ifdef __SANITIZE_ADDRESS__
#define PEAK_LIMIT_MIB 300
#else
#define PEAK_LIMIT_MIB 150
#endif

/* Tokenize `mib` MiB of `unit` repeated (one word: no spaces) and check the peak memory it adds. */
static void check_long_word(const inf_vocab *v, const char *name, const char *unit, size_t mib)
{
    size_t len = mib << 20;
    char *text = repeated(unit, len);
    CHECK(text);
    size_t n_tokens = 0;
    long peak = tokenize_peak_mib(v, text, len, &n_tokens);
    fprintf(stderr, "    %s, %zu MiB of '%s': %zu tokens, peak +%ld MiB\n", name, mib, unit, n_tokens, peak);
    CHECK_MSG(peak >= 0 && n_tokens > 0, "%s: tokenizing failed", name);
    /* The ids alone take up to 8 bytes a token while the array grows. */
    CHECK_MSG(peak < PEAK_LIMIT_MIB, "%s: %ld MiB more at peak for %zu MiB of text", name, peak, mib);
    free(text);
}

TEST(test_vocab_a_20_mib_word_keeps_memory_bounded)
{
    char err[512], path[512];
    if (!test_model_path() && !test_shared_data()) {
        SKIP("neither the model nor ../shared/testdata is here");
    }
    if (test_model_path()) {
        inf_vocab *v = vt_load(test_model_path(), err, sizeof err);
        CHECK_MSG(v, "%s", err);
        check_long_word(v, "SmolLM2 BPE", "a", 20);
        check_long_word(v, "SmolLM2 BPE", "\xc3\xa9", 20);
        inf_vocab_free(v);
    }
    if (test_shared_data()) {
        snprintf(path, sizeof path, "%s/vocab/ggml-vocab-llama-spm.gguf", test_shared_data());
        inf_vocab *v = vt_load(path, err, sizeof err);
        CHECK_MSG(v, "%s", err);
        check_long_word(v, "Llama SPM", "\xc3\xa9", 20);
        check_long_word(v, "Llama SPM", "a", 4);
        inf_vocab_free(v);
    }
}
