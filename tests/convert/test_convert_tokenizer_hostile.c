/* test_convert_tokenizer_hostile.c - the tokenizer converter refuses bad input with one line
 * naming the file and the field: broken or mistyped JSON, missing fields, ids out of range,
 * truncated or oversized protobuf in tokenizer.model, GGUF files whose tokenizer cannot be
 * exported (and then writes no file). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert_tokenizer_support.h"
#include "test.h"

#define BYTE_LEVEL_PRE "\"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": true}"
#define GOOD_MODEL "\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2}, \"merges\": [\"a b\"]}"

typedef struct bad_folder {
    const char *name;
    const char *tokenizer_json;   /* NULL: absent */
    const char *tokenizer_config; /* NULL: absent */
    const char *config;           /* NULL: absent */
    const char *expect[2];        /* substrings of the message */
} bad_folder;

static const bad_folder bad_folders[] = {
    {"empty", NULL, NULL, NULL, {"neither tokenizer.model nor tokenizer.json", NULL}},
    {"bad_json", "{\"model\": ", NULL, NULL, {"tokenizer.json: line 1", NULL}},
    {"array_top", "[1, 2]", NULL, NULL, {"tokenizer.json", "top level is not an object"}},
    {"no_model", "{" BYTE_LEVEL_PRE "}", NULL, NULL, {"tokenizer.json", "no \"model\" object"}},
    {"wordpiece", "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}, " BYTE_LEVEL_PRE "}", NULL, NULL,
     {"tokenizer.json", "model.type is WordPiece"}},
    {"vocab_not_object", "{\"model\": {\"type\": \"BPE\", \"vocab\": [1]}, " BYTE_LEVEL_PRE "}", NULL, NULL,
     {"tokenizer.json", "model.vocab is missing or not an object"}},
    {"vocab_id_string", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": \"0\"}}, " BYTE_LEVEL_PRE "}", NULL, NULL,
     {"tokenizer.json", "model.vocab: the id"}},
    {"vocab_id_huge", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 1099511627776}}, " BYTE_LEVEL_PRE "}", NULL,
     NULL, {"tokenizer.json", "model.vocab: the id"}},
    {"vocab_same_id", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 0}}, " BYTE_LEVEL_PRE "}", NULL,
     NULL, {"tokenizer.json", "two tokens have id 0"}},
    {"vocab_gap", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 5}}, " BYTE_LEVEL_PRE "}", NULL, NULL,
     {"tokenizer.json", "token id 5 is not below the vocabulary size 2"}},
    {"vocab_nul", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\\u0000\": 0}}, " BYTE_LEVEL_PRE "}", NULL, NULL,
     {"tokenizer.json: line 1", NULL}},
    {"merges_mixed", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a b\", 7]}, " BYTE_LEVEL_PRE "}",
     NULL, NULL, {"tokenizer.json", "model.merges[1] is not a string"}},
    {"merges_triple", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [[\"a\", \"b\", \"c\"]]}, " BYTE_LEVEL_PRE "}",
     NULL, NULL, {"tokenizer.json", "model.merges[0] is not a pair of strings"}},
    {"merges_object", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": {}}, " BYTE_LEVEL_PRE "}", NULL,
     NULL, {"tokenizer.json", "model.merges is not a list"}},
    {"added_not_list", "{" GOOD_MODEL ", \"added_tokens\": {}, " BYTE_LEVEL_PRE "}", NULL, NULL,
     {"tokenizer.json", "added_tokens is not a list"}},
    {"added_negative", "{" GOOD_MODEL ", \"added_tokens\": [{\"id\": -1, \"content\": \"x\"}], " BYTE_LEVEL_PRE "}", NULL,
     NULL, {"tokenizer.json", "added_tokens[0]"}},
    {"added_no_content", "{" GOOD_MODEL ", \"added_tokens\": [{\"id\": 3}], " BYTE_LEVEL_PRE "}", NULL, NULL,
     {"tokenizer.json", "added_tokens[0]"}},
    {"unknown_pre", "{" GOOD_MODEL ", \"pre_tokenizer\": {\"type\": \"Whitespace\"}}", NULL, NULL,
     {"tokenizer.json: unrecognised pre_tokenizer", "Whitespace"}},
    {"no_pre", "{" GOOD_MODEL "}", NULL, NULL, {"tokenizer.json: unrecognised pre_tokenizer", "null"}},
    {"config_bad_json", "{" GOOD_MODEL ", " BYTE_LEVEL_PRE "}", "{\"bos_token\": }", NULL,
     {"tokenizer_config.json: line 1", NULL}},
    {"config_vocab_size", "{" GOOD_MODEL ", " BYTE_LEVEL_PRE "}", NULL, "{\"vocab_size\": \"big\"}",
     {"config.json", "vocab_size is not a positive integer"}},
    {"config_huge_vocab", "{" GOOD_MODEL ", " BYTE_LEVEL_PRE "}", NULL, "{\"vocab_size\": 1000000000000}",
     {"config.json", "vocab_size 1000000000000 is larger than 2^31-1"}},
    {"config_small_vocab", "{" GOOD_MODEL ", " BYTE_LEVEL_PRE "}", NULL, "{\"vocab_size\": 2}",
     {"tokenizer.json", "token id 2 is not below the vocabulary size 2"}},
    {"negative_special", "{" GOOD_MODEL ", " BYTE_LEVEL_PRE "}", NULL, "{\"bos_token_id\": -1}",
     {"config.json", "bos token id -1 is negative"}},
    {"template_list", "{" GOOD_MODEL ", " BYTE_LEVEL_PRE "}", "{\"chat_template\": [\"x\"]}", NULL,
     {"tokenizer_config.json", "chat_template[0] is not an object"}},
    {"template_number", "{" GOOD_MODEL ", " BYTE_LEVEL_PRE "}",
     "{\"chat_template\": [{\"name\": \"tools\", \"template\": 3}]}", NULL,
     {"tokenizer_config.json", "chat template for tokenizer.chat_template.tools is not a string"}},
};

TEST(test_convert_tokenizer_refuses_bad_hf_json_with_one_line)
{
    for (size_t i = 0; i < sizeof bad_folders / sizeof bad_folders[0]; i++) {
        const bad_folder *b = &bad_folders[i];
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", ct_dir(b->name));
        CHECK((!b->tokenizer_json || ct_write(dir, "tokenizer.json", b->tokenizer_json)) &&
              (!b->tokenizer_config || ct_write(dir, "tokenizer_config.json", b->tokenizer_config)) &&
              (!b->config || ct_write(dir, "config.json", b->config)));
        ggtk_error err = {0};
        ggtk_file *f = ct_from_hf(dir, b->name, &err);
        CHECK_MSG(!f, "%s: converted", b->name);
        for (int k = 0; k < 2; k++) {
            CHECK_MSG(!b->expect[k] || strstr(err.message, b->expect[k]), "%s: message '%s' lacks '%s'", b->name,
                      err.message, b->expect[k]);
        }
        CHECK_MSG(!strchr(err.message, '\n'), "%s: message has a newline", b->name);
    }
}

/* One SentencePiece piece message (field 1 of ModelProto) with text, score 0 and `type`. */
static size_t piece(unsigned char *out, const char *text, int type)
{
    size_t n = strlen(text), k = 0;
    out[k++] = 0x0A;
    out[k++] = (unsigned char)(2 + n + 5 + 2);
    out[k++] = 0x0A;
    out[k++] = (unsigned char)n;
    memcpy(out + k, text, n);
    k += n;
    out[k++] = 0x15;
    memset(out + k, 0, 4);
    k += 4;
    out[k++] = 0x18;
    out[k++] = (unsigned char)type;
    return k;
}

static const char *spm_message(const char *name, const unsigned char *bytes, size_t n)
{
    static char msg[700];
    char dir[1024], path[1100];
    snprintf(dir, sizeof dir, "%s", ct_dir(name));
    snprintf(path, sizeof path, "%s/tokenizer.model", dir);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, n, f) != n || fclose(f) != 0) {
        return "could not write tokenizer.model";
    }
    ggtk_error err = {0};
    ggtk_file *file = ct_from_hf(dir, name, &err);
    snprintf(msg, sizeof msg, "%s", file ? "converted" : err.message);
    ggtk_close(file);
    return msg;
}

#define CHECK_SPM(name, bytes, n, want)                                                          \
    do {                                                                                         \
        const char *m_ = spm_message(name, bytes, n);                                            \
        CHECK_MSG(strstr(m_, "tokenizer.model") && strstr(m_, want), "%s: '%s' lacks '%s'", name, m_, want); \
    } while (0)

TEST(test_convert_tokenizer_refuses_bad_sentencepiece_models)
{
    unsigned char good[64];
    size_t n = piece(good, "<unk>", 2);
    n += piece(good + n, "ab", 1);
    CHECK(strcmp(spm_message("spm_good", good, n), "converted") == 0);

    CHECK_SPM("spm_empty", good, 0, "no pieces");
    CHECK_SPM("spm_cut", good, n - 3, "runs past the end");
    unsigned char huge[] = {0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F};
    CHECK_SPM("spm_huge_length", huge, sizeof huge, "runs past the end");
    unsigned char long_varint[] = {0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
    CHECK_SPM("spm_long_varint", long_varint, sizeof long_varint, "varint");
    unsigned char group[] = {0x0B, 0x0C};
    CHECK_SPM("spm_group", group, sizeof group, "wire type");
    unsigned char bad_type[32];
    CHECK_SPM("spm_bad_type", bad_type, piece(bad_type, "x", 9), "piece type is not 1..6");
    unsigned char bad_utf8[32];
    CHECK_SPM("spm_bad_utf8", bad_utf8, piece(bad_utf8, "\xff\xfe", 1), "not UTF-8");
    unsigned char no_text[] = {0x0A, 0x02, 0x18, 0x01};
    CHECK_SPM("spm_no_text", no_text, sizeof no_text, "piece without text");
}

TEST(test_convert_tokenizer_reads_both_merge_forms)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", ct_dir("merge_forms"));
    CHECK(ct_write(dir, "tokenizer.json",
                   "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b c\": 1, \"ab c\": 2}, "
                   "\"merges\": [[\"a\", \"b c\"]]}, " BYTE_LEVEL_PRE "}"));
    ggtk_error err = {0};
    ggtk_file *f = ct_from_hf(dir, "merge_forms", &err);
    CHECK_MSG(f, "%s", err.message);
    const ggtk_array *merges;
    CHECK(ggtk_get_array(f, "tokenizer.ggml.merges", &merges) == GGTK_OK && merges->count == 1);
    const ggtk_string *m = merges->data;
    CHECK_MSG(m->len == 6 && memcmp(m->data, "a b\xc4\xa0" "c", 6) == 0, "merge is '%s'", m->data);
    ggtk_close(f);
}

static bool folder_is_empty(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int entries = 0;
    while (d && (e = readdir(d))) {
        entries += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    }
    if (d) {
        closedir(d);
    }
    return d && entries == 0;
}

/* A GGUF tokenizer written from `w` (freed) that must fail to export with `want`. */
static void check_export_refused(ggtk_writer *w, const char *name, const char *want)
{
    char path[1024], dir[1024];
    snprintf(path, sizeof path, "%s/%s.gguf", test_tmpdir(), name);
    ggtk_error err = {0};
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_OK && ggtk_writer_finish(w, &err) == GGTK_OK);
    ggtk_writer_free(w);
    ggtk_file *f = ggtk_open(path, GGTK_OPEN_METADATA, &err);
    CHECK_MSG(f, "%s", err.message);
    snprintf(dir, sizeof dir, "%s", ct_dir(name));
    bool ok = ct_to_hf(f, dir, &err);
    ggtk_close(f);
    CHECK_MSG(!ok, "%s: exported", name);
    CHECK_MSG(strstr(err.message, name) && strstr(err.message, want), "%s: '%s' lacks '%s'", name, err.message, want);
    CHECK_MSG(folder_is_empty(dir), "%s: files were written", name);
}

static ggtk_writer *bpe_writer(const char *pre)
{
    static const char *const tokens[] = {"a", "b", "ab"};
    static const char *const merges[] = {"a b"};
    ggtk_writer *w = ggtk_writer_new();
    ggtk_writer_set_string(w, "tokenizer.ggml.model", "gpt2");
    ggtk_writer_set_string(w, "tokenizer.ggml.pre", pre);
    ggtk_writer_set_string_array(w, "tokenizer.ggml.tokens", tokens, 3);
    ggtk_writer_set_string_array(w, "tokenizer.ggml.merges", merges, 1);
    return w;
}

TEST(test_convert_tokenizer_refuses_gguf_tokenizers_it_cannot_export)
{
    ggtk_writer *w = bpe_writer("smollm");
    ggtk_writer_set_string(w, "tokenizer.ggml.model", "bert");
    check_export_refused(w, "export_bert", "tokenizer.ggml.model \"bert\" cannot be exported");

    check_export_refused(bpe_writer("deepseek-llm"), "export_pre", "tokenizer.ggml.pre \"deepseek-llm\"");

    w = bpe_writer("smollm");
    ggtk_writer_remove(w, "tokenizer.ggml.tokens");
    check_export_refused(w, "export_no_tokens", "tokenizer.ggml.tokens is missing");

    w = bpe_writer("smollm");
    int32_t types[2] = {1, 1};
    ggtk_writer_set_array(w, "tokenizer.ggml.token_type", GGTK_VALUE_INT32, 2, types);
    check_export_refused(w, "export_types", "tokenizer.ggml.token_type has another length");

    w = bpe_writer("smollm");
    ggtk_writer_set_array(w, "tokenizer.ggml.token_type", GGTK_VALUE_FLOAT32, 3, (float[]){1, 1, 1});
    check_export_refused(w, "export_type_type", "tokenizer.ggml.token_type is not an array of the expected type");

    w = bpe_writer("smollm");
    ggtk_writer_set_u32(w, "tokenizer.ggml.bos_token_id", 3);
    check_export_refused(w, "export_bos", "tokenizer.ggml.bos_token_id is not a token id");

    w = bpe_writer("smollm");
    static const char *const bad_tokens[] = {"a", "\xff", "ab"};
    ggtk_writer_set_string_array(w, "tokenizer.ggml.tokens", bad_tokens, 3);
    check_export_refused(w, "export_utf8", "tokenizer.ggml.tokens[1] is not UTF-8");

    w = bpe_writer("smollm");
    static const char *const bad_merges[] = {"ab"};
    ggtk_writer_set_string_array(w, "tokenizer.ggml.merges", bad_merges, 1);
    check_export_refused(w, "export_merge", "tokenizer.ggml.merges[0] is not \"left right\"");
}
