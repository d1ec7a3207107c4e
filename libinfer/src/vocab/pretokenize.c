/* pretokenize.c - the table of pre-tokenizers (name -> the regexes llama.cpp applies, with the
 * family's flags) and running one: each step splits every word the previous step produced. The
 * regexes are llama.cpp's (the HF tokenizer.json ones, with (?i:...) spelled out as llama.cpp
 * does); steps llama.cpp runs with hand-written code use the matchers of pretokenize_splits.c. */
#include "pretokenize.h"

#include <stdlib.h>
#include <string.h>

#include "unicode.h"

#define RE_GPT2 "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
#define RE_CONTRACTIONS "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
#define RE_LLAMA3 RE_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RE_QWEN2 RE_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RE_QWEN35 RE_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

/* One row per family; names llama.cpp maps to the same regexes and flags share a row. Names it
 * knows but that are not here (gemma4, sarvam-moe, whitespace: BPE without the byte alphabet;
 * jina-v1-en, jina-v2-code, roberta-bpe: separator tokens) are refused. */
static const inf_pretokenizer pretokenizers[] = {
    {.names = "default",
     .steps = {{INF_PRE_SPLIT_PUNCT_RUN, "[\\p{P}\\$\\+<=>\\^~\\|]+"},
      {INF_PRE_SPLIT_GPT2, RE_GPT2},
      {INF_PRE_SPLIT_NUMBER_RUN, "\\p{N}+"},
      {INF_PRE_SPLIT_ASCII_DIGIT3, "[0-9][0-9][0-9]"}},
     .n_steps = 4},
    {.names = "llama3|llama-v3|llama-bpe|falcon3|falcon-h1|pixtral|midm-2.0|lfm2|jina-v5-nano",
     .steps = {{INF_PRE_SPLIT_LLAMA3, RE_LLAMA3}},
     .n_steps = 1, .ignore_merges = true, .add_bos = true},
    {.names = "dbrx|smaug-bpe",
     .steps = {{INF_PRE_SPLIT_LLAMA3, RE_LLAMA3}},
     .n_steps = 1},
    {.names = "chatglm-bpe|glm4",
     .steps = {{INF_PRE_SPLIT_LLAMA3, RE_LLAMA3}},
     .n_steps = 1, .no_bos = true},
    {.names = "gpt-2|phi-2|jina-es|jina-de|gigachat|jina-v2-es|jina-v2-de|a.x-4.0|mellum|modern-bert|mpt|olmo|jais|trillion|granite-docling|exaone4",
     .steps = {{INF_PRE_SPLIT_GPT2, RE_GPT2}},
     .n_steps = 1},
    {.names = "starcoder|refact|command-r|smollm|codeshell|exaone|minerva-7b|mellum2",
     .steps = {{INF_PRE_SPLIT_NUMBER_EACH, "\\p{N}"},
      {INF_PRE_SPLIT_GPT2, RE_GPT2}},
     .n_steps = 2},
    {.names = "qwen2|deepseek-r1-qwen|kormo|f2llmv2|megrez|stablelm2|hunyuan|solar-open",
     .steps = {{INF_PRE_SPLIT_QWEN2, RE_QWEN2}},
     .n_steps = 1},
    {.names = "grok-2",
     .steps = {{INF_PRE_SPLIT_QWEN2, RE_QWEN2}},
     .n_steps = 1},
    {.names = "qwen35",
     .steps = {{INF_PRE_SPLIT_QWEN35, RE_QWEN35}},
     .n_steps = 1},
    {.names = "falcon",
     .steps = {{INF_PRE_SPLIT_REGEX, "[\\p{P}\\$\\+<=>\\^~\\|`]+"},
      {INF_PRE_SPLIT_GPT2, RE_GPT2},
      {INF_PRE_SPLIT_ASCII_DIGIT3, "[0-9][0-9][0-9]"}},
     .n_steps = 3},
    {.names = "deepseek-llm",
     .steps = {{INF_PRE_SPLIT_REGEX, "[\r\n]"},
      {INF_PRE_SPLIT_REGEX, "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+"},
      {INF_PRE_SPLIT_REGEX, "\\s?[!-/:-~！-／：-～‘-‟　-。]+"},
      {INF_PRE_SPLIT_REGEX, "\\s+$"},
      {INF_PRE_SPLIT_REGEX, "[一-龥ࠀ-一가-퟿]+"},
      {INF_PRE_SPLIT_NUMBER_RUN, "\\p{N}+"}},
     .n_steps = 6},
    {.names = "deepseek-coder",
     .steps = {{INF_PRE_SPLIT_REGEX, "[\r\n]"},
      {INF_PRE_SPLIT_REGEX, "\\s?\\p{L}+"},
      {INF_PRE_SPLIT_REGEX, "\\s?\\p{P}+"},
      {INF_PRE_SPLIT_REGEX, "[一-龥ࠀ-一가-퟿]+"},
      {INF_PRE_SPLIT_NUMBER_EACH, "\\p{N}"}},
     .n_steps = 5},
    {.names = "deepseek-v3|hunyuan-dense|joyai-llm",
     .steps = {{INF_PRE_SPLIT_REGEX, "\\p{N}{1,3}"},
      {INF_PRE_SPLIT_REGEX, "[一-龥぀-ゟ゠-ヿ]+"},
      {INF_PRE_SPLIT_REGEX, "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"}},
     .n_steps = 3},
    {.names = "poro-chat|bloom|gpt3-finnish",
     .steps = {{INF_PRE_SPLIT_REGEX, " ?[^(\\s|.,!?…。，、।۔،)]+"}},
     .n_steps = 1},
    {.names = "viking",
     .steps = {{INF_PRE_SPLIT_REGEX, " ?[^(\\s|.,!?…。，、।۔،)]+"},
      {INF_PRE_SPLIT_NUMBER_EACH, "\\p{N}"}},
     .n_steps = 2},
    {.names = "tekken",
     .steps = {{INF_PRE_SPLIT_REGEX, "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
     .n_steps = 1, .ignore_merges = true, .add_bos = true},
    {.names = "gpt-4o|llama4|kanana2|talkie|minimax-m2",
     .steps = {{INF_PRE_SPLIT_REGEX, "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
     .n_steps = 1},
    {.names = "granite-embed-multi-97m",
     .steps = {{INF_PRE_SPLIT_REGEX, "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
     .n_steps = 1, .ignore_merges = true},
    {.names = "chameleon",
     .steps = {{INF_PRE_SPLIT_REGEX, "<sentinel:[0-9]+>"},
      {INF_PRE_SPLIT_REGEX, "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z"},
      {INF_PRE_SPLIT_REGEX, "([\\t\\n]|    |  )"},
      {INF_PRE_SPLIT_NUMBER_EACH, "\\p{N}"},
      {INF_PRE_SPLIT_REGEX, "[\\p{P}!-/:-@\\[-`{-~]"},
      {INF_PRE_SPLIT_GPT2, RE_GPT2}},
     .n_steps = 6, .add_bos = true},
    {.names = "kimi-k2",
     .steps = {{INF_PRE_SPLIT_KIMI_K2, "\\p{Han}+"}},
     .n_steps = 1, .merges_optional = true},
    {.names = "seed-coder",
     .steps = {{INF_PRE_SPLIT_REGEX, "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
     .n_steps = 1},
    {.names = "bailingmoe|bailingmoe2|llada-moe",
     .steps = {{INF_PRE_SPLIT_REGEX, "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"}},
     .n_steps = 1},
    {.names = "exaone-moe",
     .steps = {{INF_PRE_SPLIT_REGEX, "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"}},
     .n_steps = 1},
    {.names = "jais-2",
     .steps = {{INF_PRE_SPLIT_REGEX, "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}"}},
     .n_steps = 1},
    {.names = "youtu",
     .steps = {{INF_PRE_SPLIT_REGEX, "[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+"},
      {INF_PRE_SPLIT_REGEX, "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
     .n_steps = 2, .ignore_merges = true},
    {.names = "minicpm5",
     .steps = {{INF_PRE_SPLIT_REGEX, "\\p{N}{1,3}"},
      {INF_PRE_SPLIT_REGEX, "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
     .n_steps = 2, .ignore_merges = true},
    {.names = "tiny_aya|cohere2moe",
     .steps = {{INF_PRE_SPLIT_DIGIT_GROUPS, "\\d{1,3}(?=(?:\\d{3})*\\b)"},
      {INF_PRE_SPLIT_REGEX, "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
     .n_steps = 2},
    {.names = "superbpe", .words_span_lines = true,
     .steps = {{INF_PRE_SPLIT_NUMBER_RUN, "\\p{N}+"},
      {INF_PRE_SPLIT_REGEX, "(?=(\\d{3})+(?!\\d))"}},
     .n_steps = 2},
    {.names = "afmoe",
     .steps = {{INF_PRE_SPLIT_DIGIT_GROUPS, "\\p{AFMoE_digits}"},
      {INF_PRE_SPLIT_REGEX, "[一-鿿㐀-䶿豈-﫿぀-ゟ゠-ヿ･-ﾟ⼀-⿟เ-๿຀-໿ក-៿က-႟ꩠ-ꩿꧠ-꧿가-힯ᄀ-ᇿ]+"},
      {INF_PRE_SPLIT_REGEX, "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
     .n_steps = 3},
    {.names = "laguna",
     .steps = {{INF_PRE_SPLIT_NEWLINE_RUNS, "[^\\n]+|[\\n]+"},
      {INF_PRE_SPLIT_QWEN2, RE_QWEN2}},
     .n_steps = 2},
};

static bool name_in_list(const char *list, const char *name)
{
    size_t name_len = strlen(name);
    for (const char *p = list;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == name_len && memcmp(p, name, len) == 0) {
            return true;
        }
        if (!bar) {
            return false;
        }
        p = bar + 1;
    }
}

const inf_pretokenizer *inf_pretokenizer_find(const char *pre_name)
{
    for (size_t i = 0; i < sizeof pretokenizers / sizeof pretokenizers[0]; i++) {
        if (name_in_list(pretokenizers[i].names, pre_name)) {
            return &pretokenizers[i];
        }
    }
    return NULL;
}

/* Steps after which inf_pretokenize_last_cut's class-change rule holds. */
static bool ends_words_at_class_changes(inf_pre_split split)
{
    switch (split) {
    case INF_PRE_SPLIT_GPT2: case INF_PRE_SPLIT_LLAMA3: case INF_PRE_SPLIT_QWEN2:
    case INF_PRE_SPLIT_NUMBER_EACH: case INF_PRE_SPLIT_NUMBER_RUN: case INF_PRE_SPLIT_PUNCT_RUN:
    case INF_PRE_SPLIT_ASCII_DIGIT3:
        return true;
    default:
        return false;
    }
}

bool inf_pre_program_init(inf_pre_program *prog, const inf_pretokenizer *def, const char **why)
{
    memset(prog, 0, sizeof *prog);
    prog->def = def;
    prog->cut_at_class_change = true;
    *why = NULL;
    for (int s = 0; s < def->n_steps; s++) {
        prog->cut_at_class_change &= ends_words_at_class_changes(def->steps[s].split);
        if (def->steps[s].split == INF_PRE_SPLIT_REGEX) {
            prog->regex[s] = pre_regex_compile(def->steps[s].regex, why);
            if (!prog->regex[s]) {
                return false;
            }
        }
    }
    return true;
}

void inf_pre_program_free(inf_pre_program *prog)
{
    for (int s = 0; s < INF_PRE_MAX_SPLITS; s++) {
        pre_regex_free(prog->regex[s]);
        prog->regex[s] = NULL;
    }
}

size_t inf_pretokenize(const inf_pre_program *prog, const uint32_t *cps, const uint8_t *cls, size_t n,
                       uint32_t *lengths, uint32_t *scratch)
{
    if (n == 0) {
        return 0;
    }
    const inf_pretokenizer *pre = prog->def;
    /* Ping-pong between the two buffers so the last step's output lands in `lengths`. */
    uint32_t *in = (pre->n_steps % 2 == 0) ? lengths : scratch;
    uint32_t *out = (in == lengths) ? scratch : lengths;
    in[0] = (uint32_t)n;
    size_t n_words = 1;
    for (int s = 0; s < pre->n_steps; s++) {
        size_t count = 0;
        if (prog->regex[s]) {
            count = pre_regex_split(prog->regex[s], cps, cls, n, in, n_words, out);
            if (count == (size_t)-1) {
                return count;
            }
        } else {
            size_t start = 0;
            for (size_t w = 0; w < n_words; w++) {
                count += inf_pre_split_word(pre->steps[s].split, cps, cls, start, start + in[w], out + count);
                start += in[w];
            }
        }
        n_words = count;
        uint32_t *swap = in;
        in = out;
        out = swap;
    }
    return n_words;
}

static bool ends_word_whatever_follows(const uint32_t *cps, const uint8_t *cls, size_t p)
{
    unsigned before = cls[p - 1], after = cls[p];
    if (inf_unicode_is_space(before)) {
        return false; /* a space run may give its last space to the next word */
    }
    if (inf_unicode_is_letter(before)) {
        return !inf_unicode_is_letter(after);
    }
    if (inf_unicode_is_number(before)) {
        return !inf_unicode_is_number(after); /* digit groups ({1,3}) run on across digits */
    }
    /* Llama 3 joins other characters with the letters after them and the CR/LF after them. */
    return inf_unicode_is_number(after) ||
           (inf_unicode_is_space(after) && cps[p] != '\r' && cps[p] != '\n');
}

/* A lone LF after a non-space and before a letter: no regex of the table matches across an LF
 * (they stop at it or take it as a whitespace run of one, which no lookahead can lengthen), and a
 * letter starts a match in every one of them, so the LF cannot join a gap after it either. */
static bool is_lone_newline_before(const uint32_t *cps, const uint8_t *cls, size_t p)
{
    return p >= 2 && cps[p - 1] == '\n' && !inf_unicode_is_space(cls[p - 2]) && inf_unicode_is_letter(cls[p]);
}

size_t inf_pretokenize_last_cut(const inf_pre_program *prog, const uint32_t *cps, const uint8_t *cls, size_t n)
{
    for (size_t p = n; p-- > 1;) {
        bool cut = prog->cut_at_class_change ? ends_word_whatever_follows(cps, cls, p)
                   : prog->def->words_span_lines ? inf_unicode_is_number(cls[p]) && !inf_unicode_is_number(cls[p - 1])
                   : is_lone_newline_before(cps, cls, p);
        if (cut) {
            return p;
        }
    }
    return 0;
}
