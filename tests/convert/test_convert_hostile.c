/* The HF -> GGUF converter on hostile folders: config values that do not fit their GGUF type,
 * unknown architectures, tensors, dtypes and rope scaling, rows that do not split into heads,
 * broken safetensors. Each is refused with one line naming the file and the field, and no output
 * file appears. A minimal valid folder converts, so each failure is the one change made. */
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

/* A folder `name` with `config` and the safetensors header `tensors` over `data` bytes. */
static const char *folder(const char *name, const char *config, const char *tensors, size_t data)
{
    static char dir[512];
    snprintf(dir, sizeof dir, "%s", test_tmpfile(name));
    mkdir(dir, 0777);
    char path[600];
    snprintf(path, sizeof path, "%s/config.json", dir);
    st_fixture_text(path, config);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    st_fixture_write(path, tensors, UINT64_MAX, data);
    return dir;
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
              st_fixture_count_entries(dir) == 2;
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
    CHECK(st_fixture_count_entries(dir) == 2);
    CHECK(test_run(NULL, "%s --to-hf %s/model.safetensors %s/hf 2>/dev/null",
                   test_tool("gguf-convert"), dir, dir) == 1);
    CHECK(st_fixture_count_entries(dir) == 2);
}
