/* tokenizer_pre_table.c - one row per pre-tokenizer family: the regexes and flags tokenizer.json
 * states, and llama.cpp's tokenizer.ggml.pre names for them. llama.cpp's converter recognises a
 * family by hashing the Python tokenizer's output on a probe text; here the definition itself is
 * compared, so a folder is recognised without running its tokenizer, and an unknown definition is
 * refused rather than guessed. */
#include "convert/tokenizer_pre_table.h"

#include <stdbool.h>
#include <string.h>

#include "convert/tokenizer_internal.h"

/* The regexes as tokenizer.json spells them (Split patterns, "Isolated"). */
#define RE_CONTRACTIONS_I "(?i:'s|'t|'re|'ve|'m|'ll|'d)"
#define RE_LLAMA3 RE_CONTRACTIONS_I "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RE_QWEN2 RE_CONTRACTIONS_I "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RE_QWEN35 RE_CONTRACTIONS_I "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RE_CASED_WORDS(contraction)                                                                        \
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+" contraction \
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*" contraction
#define RE_GPT4O RE_CASED_WORDS(RE_CONTRACTIONS_I "?") "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RE_TEKKEN RE_CASED_WORDS("") "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

/* A family's pre-tokenizer: [Split(regex)] or [Digits(individual)], then ByteLevel without a
 * prefix space, using GPT-2's regex or not. */
typedef struct pre_row {
    const char *names;       /* the name written on import first, then llama.cpp's aliases, '|' */
    const char *split_regex; /* a Split before ByteLevel, or NULL */
    bool digits;             /* Digits(individual_digits) before ByteLevel */
    bool byte_level_regex;   /* ByteLevel's use_regex */
    bool clean_spaces;       /* llama.cpp's clean_spaces for the family (tokenizer_config.json's
                                clean_up_tokenization_spaces) */
    bool ignore_merges;      /* a word that is a token is taken whole (llama.cpp's ignore_merges) */
} pre_row;

static const pre_row pre_rows[] = {
    {"gpt-2|phi-2|jina-es|jina-de|gigachat|jina-v2-es|jina-v2-de|a.x-4.0|mellum|modern-bert|exaone4", NULL, false, true, true, false},
    {"llama-bpe|llama3|llama-v3|falcon3|falcon-h1|pixtral|midm-2.0|lfm2|jina-v5-nano", RE_LLAMA3, false, false, true, true},
    {"qwen2|deepseek-r1-qwen|kormo|f2llmv2", RE_QWEN2, false, false, false, false},
    {"qwen35", RE_QWEN35, false, false, false, false},
    {"smollm", NULL, true, true, false, false},
    {"starcoder|refact|codeshell|exaone|minerva-7b", NULL, true, true, true, false},
    {"gpt-4o|llama4|kanana2|talkie", RE_GPT4O, false, false, false, false},
    {"tekken", RE_TEKKEN, false, false, false, true},
};
enum { PRE_ROWS = sizeof pre_rows / sizeof pre_rows[0] };

static json_t *byte_level(bool use_regex)
{
    return json_pack("{s:s, s:b, s:b, s:b}", "type", "ByteLevel", "add_prefix_space", 0, "trim_offsets", 1,
                     "use_regex", use_regex);
}

static json_t *row_json(const pre_row *row)
{
    json_t *first = NULL;
    if (row->split_regex) {
        first = json_pack("{s:s, s:{s:s}, s:s, s:b}", "type", "Split", "pattern", "Regex", row->split_regex,
                          "behavior", "Isolated", "invert", 0);
    } else if (row->digits) {
        first = json_pack("{s:s, s:b}", "type", "Digits", "individual_digits", 1);
    }
    if (!first) {
        return byte_level(row->byte_level_regex);
    }
    return json_pack("{s:s, s:[o, o]}", "type", "Sequence", "pretokenizers", first, byte_level(row->byte_level_regex));
}

static bool is_type(const json_t *obj, const char *type)
{
    const char *t = json_string_value(json_object_get(obj, "type"));
    return t && strcmp(t, type) == 0;
}

static bool flag_or(const json_t *obj, const char *key, bool fallback)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_boolean(v) ? json_is_true(v) : fallback;
}

/* `pre` reduced to what decides the split: Sequences flattened (one step is the step itself),
 * ByteLevel as its two flags with tokenizers' defaults, trim_offsets dropped elsewhere. */
static bool normalise_into(const json_t *pre, json_t *steps)
{
    if (json_is_object(pre) && is_type(pre, "Sequence") && json_is_array(json_object_get(pre, "pretokenizers"))) {
        size_t i;
        const json_t *step;
        json_array_foreach(json_object_get(pre, "pretokenizers"), i, step) {
            if (!normalise_into(step, steps)) {
                return false;
            }
        }
        return true;
    }
    json_t *copy;
    if (json_is_object(pre) && is_type(pre, "ByteLevel")) {
        copy = json_pack("{s:s, s:b, s:b}", "type", "ByteLevel", "add_prefix_space",
                         flag_or(pre, "add_prefix_space", true), "use_regex", flag_or(pre, "use_regex", true));
    } else {
        copy = pre ? json_deep_copy(pre) : json_null(); /* a missing pre_tokenizer reads as null */
        if (json_is_object(copy)) {
            json_object_del(copy, "trim_offsets");
        }
    }
    return copy && json_array_append_new(steps, copy) == 0;
}

static json_t *normalise(const json_t *pre)
{
    json_t *steps = json_array();
    if (!steps || !normalise_into(pre, steps)) {
        json_decref(steps);
        return NULL;
    }
    return steps;
}

/* The first name of a '|' list into buf. */
static const char *first_name(const char *names, char *buf, size_t size)
{
    size_t n = strcspn(names, "|");
    if (n >= size) {
        n = size - 1;
    }
    memcpy(buf, names, n);
    buf[n] = '\0';
    return buf;
}

const char *tokenizer_pre_name(const json_t *pre, int clean_spaces)
{
    /* transformers' default for clean_up_tokenization_spaces was true when these files were made */
    bool clean = clean_spaces != 0;
    json_t *want = normalise(pre);
    const pre_row *found = NULL;
    for (int i = 0; want && i < PRE_ROWS; i++) {
        json_t *row = row_json(&pre_rows[i]);
        json_t *have = row ? normalise(row) : NULL;
        if (have && json_equal(want, have) && (!found || (found->clean_spaces != clean && pre_rows[i].clean_spaces == clean))) {
            found = &pre_rows[i];
        }
        json_decref(have);
        json_decref(row);
    }
    json_decref(want);
    static _Thread_local char name[32];
    return found ? first_name(found->names, name, sizeof name) : NULL;
}

json_t *tokenizer_pre_json(const char *name, bool *clean_spaces, bool *ignore_merges)
{
    for (int i = 0; i < PRE_ROWS; i++) {
        if (conv_name_in_list(pre_rows[i].names, name)) {
            *clean_spaces = pre_rows[i].clean_spaces;
            *ignore_merges = pre_rows[i].ignore_merges;
            return row_json(&pre_rows[i]);
        }
    }
    return NULL;
}

char *tokenizer_pre_describe(const json_t *pre)
{
    json_t *steps = normalise(pre);
    char *text = steps ? json_dumps(steps, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    json_decref(steps);
    return text;
}
