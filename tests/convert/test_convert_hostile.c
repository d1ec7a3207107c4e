/* The HF -> GGUF converter on hostile folders: config values that do not fit their GGUF type,
 * unknown architectures, tensors, dtypes and rope scaling, rows that do not split into heads,
 * broken safetensors. Each is refused with one line naming the file and the field, and no output
 * file appears. A minimal valid folder (with a 4-token tokenizer.json) converts, so each failure
 * is the one change made; a folder with several problems reports the first in the converter's
 * reading order (docs/convert.md). */
#include "safetensors_fixture.h"
#include "test.h"

#include <ggtk/gguf_util.h>
#include <ggtk/inf_convert.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Two F32 tensors: the embedding (4 x 8) and layer 0's query (8 x 8). */
#define TENSORS                                                                                    \
    "{\"model.embed_tokens.weight\":{\"dtype\":\"F32\",\"shape\":[4,8],\"data_offsets\":[0,128]},"  \
    "\"model.layers.0.self_attn.q_proj.weight\":{\"dtype\":\"F32\",\"shape\":[8,8],"                \
    "\"data_offsets\":[128,384]}}"

#define CONFIG_HEAD "{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":8,\"vocab_size\":4,"
#define GOOD_CONFIG CONFIG_HEAD "\"num_attention_heads\":2,\"num_hidden_layers\":1,\"rms_norm_eps\":1e-5}"

/* A byte-level BPE of vocab_size (4) tokens with one merge: the GPT-2 pre-tokenizer. */
#define TOKENIZER                                                                                  \
    "{\"added_tokens\":[],\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false,"   \
    "\"trim_offsets\":true,\"use_regex\":true},\"model\":{\"type\":\"BPE\","                     \
    "\"vocab\":{\"a\":0,\"b\":1,\"c\":2,\"ab\":3},\"merges\":[\"a b\"]}}"

/* Entries of a folder made by folder(): config.json, model.safetensors, tokenizer.json. */
#define FOLDER_ENTRIES 3

/* A folder `name` with `config`, the safetensors header `tensors` over `data` bytes and
 * `tokenizer` as tokenizer.json. */
static const char *folder_with(const char *name, const char *config, const char *tensors,
                               size_t data, const char *tokenizer)
{
    static char dir[512];
    snprintf(dir, sizeof dir, "%s", test_tmpfile(name));
    mkdir(dir, 0777);
    char path[600];
    snprintf(path, sizeof path, "%s/config.json", dir);
    st_fixture_text(path, config);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    st_fixture_write(path, tensors, UINT64_MAX, data);
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    st_fixture_text(path, tokenizer);
    return dir;
}

static const char *folder(const char *name, const char *config, const char *tensors, size_t data)
{
    return folder_with(name, config, tensors, data, TOKENIZER);
}

/* Convert `dir` and expect `status` with `needle` in a one-line message and no output. */
static bool refused(const char *dir, ggtk_status status, const char *needle)
{
    char out[600];
    snprintf(out, sizeof out, "%s/out.gguf", dir);
    ggtk_error err = {0};
    inf_convert_options o = inf_convert_options_default();
    ggtk_status got = inf_convert_hf_to_gguf(dir, out, &o, &err);
    bool ok = got == status && strstr(err.message, needle) && !strchr(err.message, '\n') &&
              st_fixture_count_entries(dir) == FOLDER_ENTRIES;
    if (!ok)
        fprintf(stderr, "    got %d: %s (%d entries)\n", got, err.message,
                st_fixture_count_entries(dir));
    return ok;
}

TEST(test_convert_minimal_folder_converts)
{
    const char *dir = folder("good", GOOD_CONFIG, TENSORS, 384);
    char out[600];
    snprintf(out, sizeof out, "%s/out.gguf", dir);
    ggtk_error err;
    inf_convert_options o = inf_convert_options_default();
    o.file_type = GGTK_FILE_TYPE_Q8_0;
    CHECK_MSG(inf_convert_hf_to_gguf(dir, out, &o, &err) == GGTK_OK, "%s", err.message);
    ggtk_file *f = ggtk_open(out, GGTK_OPEN_MMAP, &err);
    CHECK_MSG(f, "%s", err.message);
    CHECK(ggtk_tensor_count(f) == 2);
    const ggtk_tensor_info *q = ggtk_tensor(f, ggtk_find_tensor(f, "blk.0.attn_q.weight"));
    CHECK(q && q->ne[0] == 8 && q->ne[1] == 8 && q->type == GGTK_TENSOR_F16); /* 8 % 32: F16 */
    uint64_t v = 0;
    CHECK(ggtk_get_uint(f, "llama.rope.dimension_count", &v) == GGTK_OK && v == 4);
    CHECK(ggtk_get_uint(f, "general.file_type", &v) == GGTK_OK && v == GGTK_FILE_TYPE_Q8_0);
    ggtk_close(f);
}

TEST(test_convert_refuses_config_values_that_do_not_fit)
{
    static const struct { const char *value, *needle; } cases[] = {
        {"\"num_hidden_layers\":-1", "\"num_hidden_layers\" is not an integer from 0 to 4294967295"},
        {"\"num_hidden_layers\":4294967296", "\"num_hidden_layers\" is not an integer"},
        {"\"num_hidden_layers\":\"2\"", "\"num_hidden_layers\" is not an integer"},
        {"\"num_hidden_layers\":1.5", "\"num_hidden_layers\" is not an integer"},
        {"\"num_hidden_layers\":1,\"rms_norm_eps\":1e300", "\"rms_norm_eps\" is not a number that fits a float32"},
        {"\"num_hidden_layers\":1,\"rope_scaling\":{\"rope_type\":\"llama3\",\"factor\":8}",
         "rope scaling type 'llama3' is not supported"},
        {"\"rms_norm_eps\":1e-5", "\"num_hidden_layers\" or \"n_layer\" or \"num_layers\" is missing "
                                  "(llama needs it for llama.block_count)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char config[512], name[32];
        snprintf(config, sizeof config, CONFIG_HEAD "\"num_attention_heads\":2,%s}", cases[i].value);
        snprintf(name, sizeof name, "config%zu", i);
        CHECK_MSG(refused(folder(name, config, TENSORS, 384),
                          strstr(cases[i].needle, "rope") ? GGTK_ERR_UNSUPPORTED : GGTK_ERR_INVALID,
                          cases[i].needle),
                  "case %zu", i);
    }
}

TEST(test_convert_refuses_unknown_architectures_tensors_and_dtypes)
{
    CHECK(refused(folder("arch", "{\"architectures\":[\"GPT2LMHeadModel\"]}", TENSORS, 384),
                  GGTK_ERR_UNSUPPORTED, "architecture 'GPT2LMHeadModel' is not supported"));
    CHECK(refused(folder("noarch", "{\"hidden_size\":8}", TENSORS, 384), GGTK_ERR_INVALID,
                  "no \"architectures\" list"));
    CHECK(refused(folder("badjson", "{\"architectures\":[", TENSORS, 384), GGTK_ERR_INVALID,
                  "config.json"));
    CHECK(refused(folder("name", GOOD_CONFIG,
                         "{\"model.layers.0.mystery.weight\":{\"dtype\":\"F32\",\"shape\":[1],"
                         "\"data_offsets\":[0,4]}}", 4),
                  GGTK_ERR_UNSUPPORTED, "tensor 'model.layers.0.mystery.weight' has no GGUF name"));
    CHECK(refused(folder("dtype", GOOD_CONFIG,
                         "{\"model.norm.weight\":{\"dtype\":\"I64\",\"shape\":[1],"
                         "\"data_offsets\":[0,8]}}", 8),
                  GGTK_ERR_UNSUPPORTED, "dtype I64 is not F32, F16 or BF16"));
    CHECK(refused(folder("heads", CONFIG_HEAD "\"num_attention_heads\":3,\"num_hidden_layers\":1}",
                         TENSORS, 384),
                  GGTK_ERR_INVALID, "8 rows do not split into 3 heads"));
    CHECK(refused(folder("truncated", GOOD_CONFIG, TENSORS, 100), GGTK_ERR_LAYOUT,
                  "run past the 100-byte data section"));
}

/* config.json's architecture, then the safetensors files and tensors, then config.json's values,
 * then the tokenizer: a folder with several problems reports the first of these. */
TEST(test_convert_reports_the_first_problem_in_reading_order)
{
    const char *broken_tokenizer = "{\"model\":";
    CHECK(refused(folder_with("order-tok", GOOD_CONFIG, TENSORS, 384, broken_tokenizer),
                  GGTK_ERR_INVALID, "tokenizer.json: line 1"));
    CHECK(refused(folder_with("order-data", GOOD_CONFIG, TENSORS, 100, broken_tokenizer),
                  GGTK_ERR_LAYOUT, "run past the 100-byte data section"));
    CHECK(refused(folder_with("order-heads", CONFIG_HEAD "\"num_attention_heads\":3,\"num_hidden_layers\":1}",
                              TENSORS, 384, broken_tokenizer),
                  GGTK_ERR_INVALID, "8 rows do not split into 3 heads"));
    CHECK(refused(folder_with("order-config", CONFIG_HEAD "\"num_attention_heads\":2,\"num_hidden_layers\":-1}",
                              TENSORS, 384, broken_tokenizer),
                  GGTK_ERR_INVALID, "\"num_hidden_layers\" is not an integer"));
    CHECK(refused(folder_with("order-arch", "{\"architectures\":[\"GPT2LMHeadModel\"]}", TENSORS, 100,
                              broken_tokenizer),
                  GGTK_ERR_UNSUPPORTED, "architecture 'GPT2LMHeadModel' is not supported"));
}

/* on_temp_file hook: once the tokenizer's first file is staged, put a folder where a later file
 * of the export must be renamed to, so that the commit fails after the tokenizer was built. */
static void block_special_tokens_map(const char *temp_path, void *user)
{
    if (temp_path && strstr(temp_path, "/.tokenizer.json.")) {
        char path[700];
        snprintf(path, sizeof path, "%s/special_tokens_map.json", (const char *)user);
        mkdir(path, 0777);
    }
}

TEST(test_convert_to_hf_failing_at_the_end_leaves_no_file)
{
    const char *dir = folder("late", GOOD_CONFIG, TENSORS, 384);
    char gguf[600], out[600];
    snprintf(gguf, sizeof gguf, "%s/model.gguf", dir);
    snprintf(out, sizeof out, "%s/hf", dir);
    ggtk_error err = {0};
    inf_convert_options o = inf_convert_options_default();
    o.file_type = GGTK_FILE_TYPE_F32;
    CHECK_MSG(inf_convert_hf_to_gguf(dir, gguf, &o, &err) == GGTK_OK, "%s", err.message);
    mkdir(out, 0777);
    inf_convert_hf_options h = inf_convert_hf_options_default();
    h.on_temp_file = block_special_tokens_map;
    h.user = out;
    CHECK(inf_convert_gguf_to_hf(gguf, out, &h, &err) != GGTK_OK);
    CHECK_MSG(strstr(err.message, "special_tokens_map.json") && !strchr(err.message, '\n'), "%s",
              err.message);
    CHECK_MSG(st_fixture_count_entries(out) == 1, "%d entries left in %s (the blocking folder only)",
              st_fixture_count_entries(out), out);
}

TEST(test_convert_cli_refuses_bad_usage_with_one_line)
{
    static const struct { const char *args, *needle; } cases[] = {
        {"--bogus a b", "unknown option '--bogus'"},
        {"a b --outtype", "--outtype wants a value"},
        {"--threads 0 a b", "--threads '0': not 1 to 1024"},
        {"--to-hf --shard-size 0 a b", "--shard-size '0': not a positive size"},
        {"--to-hf --metadata m.json a b", "--metadata applies to HF -> GGUF only"},
        {"--shard-size 1M a b", "--shard-size applies to --to-hf only"},
        {"a", "expected an input and an output"},
        {"a b c", "unexpected argument 'c'"},
        {"--outtype q9 a b", "--outtype 'q9': not a file type"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *log = NULL;
        int rc = test_run(&log, "%s %s 2>&1", test_tool("gguf-convert"), cases[i].args);
        CHECK_MSG(rc == 2 && log && strncmp(log, "gguf-convert: error: ", 21) == 0 &&
                      strstr(log, cases[i].needle) && strchr(log, '\n') && !strchr(log, '\n')[1],
                  "%s: rc %d: %s", cases[i].args, rc, log ? log : "");
        free(log);
    }
    char *log = NULL;
    CHECK(test_run(&log, "%s --help a", test_tool("gguf-convert")) == 0 && log &&
          strncmp(log, "usage: gguf-convert", 19) == 0);
    free(log);
}

TEST(test_convert_cli_prints_one_line_and_writes_nothing)
{
    const char *dir = folder("cli", GOOD_CONFIG, TENSORS, 383);
    char *log = NULL;
    int rc = test_run(&log, "%s %s %s/out.gguf 2>&1", test_tool("gguf-convert"), dir, dir);
    CHECK(rc == 1);
    CHECK_MSG(log && strncmp(log, "gguf-convert: error: ", 21) == 0 && strchr(log, '\n') &&
                  !strchr(log, '\n')[1] && strstr(log, "model.safetensors"),
              "%s", log ? log : "");
    free(log);
    CHECK(st_fixture_count_entries(dir) == FOLDER_ENTRIES);
    CHECK(test_run(NULL, "%s --to-hf %s/model.safetensors %s/hf 2>/dev/null",
                   test_tool("gguf-convert"), dir, dir) == 1);
    CHECK(st_fixture_count_entries(dir) == FOLDER_ENTRIES);
}
