/* Tests of gguf-edit on a small fixture: setting, adding and removing keys of every type, arrays,
 * the chat template from a file, special tokens, --in-place, --dry-run, results read back by our
 * reader and by gguf-py, tensor data unchanged, and every refusal (exit status, one line, the
 * input untouched, nothing written). */
#include "edit_fixture.h"
#include "gguf/writer_test_support.h"
#include "test.h"

#include <ggtk/gguf.h>
#include <ggtk/gguf_util.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A fresh directory holding the fixture as in.gguf and a pristine copy as orig.gguf. */
static const char *fixture_dir(const char *name, bool split)
{
    static char dir[512];
    snprintf(dir, sizeof dir, "%s", support_make_dir(name));
    char path[600];
    snprintf(path, sizeof path, "%s/in.gguf", dir);
    bool ok = edit_fixture_write(path, split);
    snprintf(path, sizeof path, "%s/orig.gguf", dir);
    if (!ok || !edit_fixture_write(path, split)) {
        fprintf(stderr, "cannot write the fixture in %s\n", dir);
        abort();
    }
    return dir;
}

static const char *in_dir(const char *dir, const char *file)
{
    static char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return path;
}

/* True when `name` in `dir` holds the same tensor data as orig.gguf there (ggtk_hash_tensors). */
static bool same_tensor_data(const char *dir, const char *name)
{
    char a[700], b[700];
    snprintf(a, sizeof a, "%s/orig.gguf", dir);
    snprintf(b, sizeof b, "%s/%s", dir, name);
    ggtk_file *fa = ggtk_open(a, GGTK_OPEN_MMAP, NULL), *fb = ggtk_open(b, GGTK_OPEN_MMAP, NULL);
    bool same = fa && fb && ggtk_tensor_count(fa) == ggtk_tensor_count(fb);
    for (int64_t i = 0; same && i < ggtk_tensor_count(fa); i++) {
        const ggtk_tensor_info *ta = ggtk_tensor(fa, i), *tb = ggtk_tensor(fb, i);
        same = strcmp(ta->name, tb->name) == 0 && ta->size == tb->size &&
               memcmp(ta->data, tb->data, ta->size) == 0;
    }
    ggtk_close(fa);
    ggtk_close(fb);
    return same;
}

TEST(test_edit_sets_every_scalar_type_keeping_the_type_in_the_file)
{
    const char *dir = fixture_dir("edit_scalars", false);
    edit_run run = edit_tool_run(
        dir, "in.gguf out.gguf --set x.u8=255 --set x.i8=-128 --set x.u16=65535 --set x.i16=-32768 "
             "--set x.u32=4294967295 --set x.i32=-2147483648 --set x.u64=18446744073709551615 "
             "--set x.i64=-9223372036854775808 --set x.f32=0.1 --set x.f64=1e-300 "
             "--set x.bool=false --set 'x.str=h\xc3\xa9llo \"q\"' --set 'x.arr_i32=[-1, 5]'");
    CHECK_MSG(run.rc == 0, "exit %d: %s%s", run.rc, run.out, run.err);
    CHECK_MSG(strstr(run.out, "~ x.u8  u8  8 -> 255\n") && strstr(run.out, "~ x.bool  bool  true -> false\n"),
              "%s", run.out);
    CHECK_MSG(strstr(run.out, "13 keys changed; wrote out.gguf"), "%s", run.out);
    char *py = edit_gguf_py_metadata(in_dir(dir, "out.gguf"));
    CHECK(py);
    static const char *const expected[] = {
        "x.u8\tUINT8\t255\n", "x.i8\tINT8\t-128\n", "x.u16\tUINT16\t65535\n",
        "x.i16\tINT16\t-32768\n", "x.u32\tUINT32\t4294967295\n", "x.i32\tINT32\t-2147483648\n",
        "x.u64\tUINT64\t18446744073709551615\n", "x.i64\tINT64\t-9223372036854775808\n",
        "x.f32\tFLOAT32\t0.10000000149011612\n", "x.f64\tFLOAT64\t1e-300\n", "x.bool\tBOOL\tfalse\n",
        "x.str\tSTRING\t\"h\xc3\xa9llo \\\"q\\\"\"\n", "x.arr_i32\tARRAY[INT32]\t[-1, 5]\n",
        "general.name\tSTRING\t\"fixture\"\n"};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        CHECK_MSG(strstr(py, expected[i]), "gguf-py lacks '%s':\n%s", expected[i], py);
    /* The same keys keep their place: x.u8 is still the third pair. */
    ggtk_file *f = ggtk_open(in_dir(dir, "out.gguf"), GGTK_OPEN_METADATA, NULL);
    CHECK(f);
    CHECK(strcmp(ggtk_kv_key(f, 2), "x.u8") == 0 && ggtk_kv_value(f, 2)->v.u8 == 255);
    CHECK(ggtk_get(f, "x.f32")->v.f32 == 0.1f && ggtk_get(f, "x.u64")->v.u64 == UINT64_MAX);
    ggtk_close(f);
    CHECK(same_tensor_data(dir, "out.gguf"));
    CHECK(support_same_bytes(in_dir(dir, "in.gguf"), in_dir(dir, "orig.gguf")));
    free(py);
    edit_run_free(&run);
}

TEST(test_edit_adds_keys_of_every_type_and_arrays)
{
    const char *dir = fixture_dir("edit_add", false);
    edit_run run = edit_tool_run(
        dir, "in.gguf out.gguf --set n.u8:u8=1 --set n.i8:int8=-1 --set n.u16:u16=2 "
             "--set n.i16:i16=-2 --set n.u32:uint32=3 --set n.i32:i32=-3 --set n.u64:u64=4 "
             "--set n.i64:i64=-4 --set n.f32:f32=-inf --set n.f64:float64=2.5 "
             "--set n.bool:bool=1 --set n.str:str= --set 'n.a8:arr[u8]=[0, 255]' "
             "--set 'n.af32:arr[f32]=[0.5,nan]' --set 'n.ab:arr[bool]=[true, false]' "
             "--set 'n.as:arr[str]=[\"x\", \"\\u00fc\", \"a,b\"]' --set 'n.ai64:arr[i64]=[-9, 9]' "
             "--set 'n.empty:arr[u64]=[]' --set 'x.u32:str=now a string'");
    CHECK_MSG(run.rc == 0, "exit %d: %s%s", run.rc, run.out, run.err);
    CHECK_MSG(strstr(run.out, "+ n.as  arr[str]  [\"x\", \"\xc3\xbc\", \"a,b\"]\n"), "%s", run.out);
    CHECK_MSG(strstr(run.out, "~ x.u32  u32  32 -> str  \"now a string\"\n"), "%s", run.out);
    char *py = edit_gguf_py_metadata(in_dir(dir, "out.gguf"));
    CHECK(py);
    static const char *const expected[] = {
        "n.u8\tUINT8\t1\n", "n.i8\tINT8\t-1\n", "n.u16\tUINT16\t2\n", "n.i16\tINT16\t-2\n",
        "n.u32\tUINT32\t3\n", "n.i32\tINT32\t-3\n", "n.u64\tUINT64\t4\n", "n.i64\tINT64\t-4\n",
        "n.f32\tFLOAT32\t-inf\n", "n.f64\tFLOAT64\t2.5\n", "n.bool\tBOOL\ttrue\n",
        "n.str\tSTRING\t\"\"\n", "n.a8\tARRAY[UINT8]\t[0, 255]\n",
        "n.af32\tARRAY[FLOAT32]\t[0.5, nan]\n", "n.ab\tARRAY[BOOL]\t[true, false]\n",
        "n.as\tARRAY[STRING]\t[\"x\", \"\xc3\xbc\", \"a,b\"]\n", "n.ai64\tARRAY[INT64]\t[-9, 9]\n",
        "n.empty\tARRAY", "x.u32\tSTRING\t\"now a string\"\n"};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        CHECK_MSG(strstr(py, expected[i]), "gguf-py lacks '%s':\n%s", expected[i], py);
    /* gguf-py cannot tell an empty array's element type; our reader can. */
    ggtk_file *f = ggtk_open(in_dir(dir, "out.gguf"), GGTK_OPEN_METADATA, NULL);
    const ggtk_array *empty = NULL;
    CHECK(f && ggtk_get_array(f, "n.empty", &empty) == GGTK_OK);
    CHECK(empty->count == 0 && empty->elem_type == GGTK_VALUE_UINT64);
    CHECK(strcmp(ggtk_kv_key(f, ggtk_kv_count(f) - 1), "n.empty") == 0); /* appended in order */
    ggtk_close(f);
    CHECK(same_tensor_data(dir, "out.gguf"));
    free(py);
    edit_run_free(&run);
}

TEST(test_edit_removes_keys_by_name_and_by_pattern)
{
    const char *dir = fixture_dir("edit_remove", false);
    edit_run run = edit_tool_run(dir, "in.gguf out.gguf --remove x.str --remove-metadata 'x.i*' "
                                      "--set added:u8=1 --remove 'add*'");
    CHECK_MSG(run.rc == 0, "exit %d: %s%s", run.rc, run.out, run.err);
    CHECK_MSG(strstr(run.out, "- x.str  str  \"text\"\n") && strstr(run.out, "- x.i64  i64  -64\n"),
              "%s", run.out);
    CHECK_MSG(!strstr(run.out, "added"), "added then removed is no change: %s", run.out);
    CHECK_MSG(strstr(run.out, "5 keys changed"), "%s", run.out);
    ggtk_file *f = ggtk_open(in_dir(dir, "out.gguf"), GGTK_OPEN_METADATA, NULL);
    CHECK(f && ggtk_kv_count(f) == 17 - 5);
    CHECK(!ggtk_get(f, "x.str") && !ggtk_get(f, "x.i8") && !ggtk_get(f, "x.i16") &&
          !ggtk_get(f, "x.i32") && !ggtk_get(f, "x.i64") && !ggtk_get(f, "added"));
    CHECK(ggtk_get(f, "x.u8") && ggtk_get(f, "x.u64"));
    ggtk_close(f);
    CHECK(same_tensor_data(dir, "out.gguf"));
    edit_run_free(&run);
}

TEST(test_edit_later_edits_see_earlier_ones)
{
    const char *dir = fixture_dir("edit_order", false);
    /* new.key takes the type the first --set gave it; x.u8 set twice ends at the last value. */
    edit_run run = edit_tool_run(dir, "in.gguf out.gguf --set new.key:i16=5 --set new.key=-7 "
                                      "--set x.u8=1 --set x.u8=8 --name renamed");
    CHECK_MSG(run.rc == 0, "exit %d: %s%s", run.rc, run.out, run.err);
    CHECK_MSG(!strstr(run.out, "x.u8"), "x.u8 ends as it began: %s", run.out);
    CHECK_MSG(strstr(run.out, "+ new.key  i16  -7\n"), "%s", run.out);
    CHECK_MSG(strstr(run.out, "~ general.name  str  \"fixture\" -> \"renamed\"\n"), "%s", run.out);
    edit_run_free(&run);
    run = edit_tool_run(dir, "in.gguf out2.gguf --set new.key:i16=5 --set new.key=40000");
    CHECK_MSG(run.rc == 2 && strstr(run.err, "'40000' is not an int16"), "%s", run.err);
    edit_run_free(&run);
}

TEST(test_edit_chat_template_from_a_file_and_a_tokenizer_config)
{
    const char *dir = fixture_dir("edit_template", false);
    static const char template[] =
        "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}\t\xe2\x9c\x93{% endfor %}\n";
    FILE *f = fopen(in_dir(dir, "t.jinja"), "wb");
    CHECK(f && fwrite(template, 1, sizeof template - 1, f) == sizeof template - 1 && fclose(f) == 0);
    edit_run run = edit_tool_run(dir, "in.gguf out.gguf --chat-template-file t.jinja");
    CHECK_MSG(run.rc == 0, "exit %d: %s%s", run.rc, run.out, run.err);
    /* The diff shows long strings cut, escaped, with their length. */
    CHECK_MSG(strstr(run.out, "+ tokenizer.chat_template  str  \"{% for m in messages %}<|{{ "
                              "m.role }}|>\\n{{ m.content }}\\t\xe2\x9c\x93{\"... (72 bytes)\n"),
              "%s", run.out);
    ggtk_file *out = ggtk_open(in_dir(dir, "out.gguf"), GGTK_OPEN_METADATA, NULL);
    const char *read_back = NULL;
    CHECK(out && ggtk_get_string(out, "tokenizer.chat_template", &read_back) == GGTK_OK);
    CHECK(strcmp(read_back, template) == 0);
    ggtk_close(out);
    edit_run_free(&run);

    /* Named templates as Hugging Face's tokenizer_config.json lists them. */
    f = fopen(in_dir(dir, "tokenizer_config.json"), "w");
    CHECK(f && fputs("{\"chat_template\": [{\"name\": \"default\", \"template\": \"D\"}, "
                     "{\"name\": \"tool use\", \"template\": \"T\"}]}", f) >= 0 && fclose(f) == 0);
    run = edit_tool_run(dir, "out.gguf named.gguf --chat-template-config tokenizer_config.json");
    CHECK_MSG(run.rc == 0, "exit %d: %s%s", run.rc, run.out, run.err);
    char *py = edit_gguf_py_metadata(in_dir(dir, "named.gguf"));
    CHECK(py);
    CHECK_MSG(strstr(py, "tokenizer.chat_template\tSTRING\t\"D\"\n") &&
              strstr(py, "tokenizer.chat_template.tool_use\tSTRING\t\"T\"\n") &&
              strstr(py, "tokenizer.chat_templates\tARRAY[STRING]\t[\"tool_use\"]\n"), "%s", py);
    free(py);
    edit_run_free(&run);
}

TEST(test_edit_chat_template_file_must_be_utf8)
{
    const char *dir = fixture_dir("edit_template_bad", false);
    FILE *f = fopen(in_dir(dir, "bad.jinja"), "wb");
    CHECK(f && fputs("ok \xc3\x28 not", f) >= 0 && fclose(f) == 0);
    edit_run run = edit_tool_run(dir, "in.gguf out.gguf --chat-template-file bad.jinja");
    CHECK_MSG(run.rc == 1 && edit_count_lines(run.err) == 1 &&
              strstr(run.err, "bad.jinja: not valid UTF-8 (byte 3)"), "%d %s", run.rc, run.err);
    CHECK(access(in_dir(dir, "out.gguf"), F_OK) != 0);
    edit_run_free(&run);
}

TEST(test_edit_special_tokens_by_text_and_by_id)
{
    const char *dir = fixture_dir("edit_tokens", false);
    edit_run run = edit_tool_run(dir, "in.gguf out.gguf --special-token 'eos=</s>' "
                                      "--special-token pad=a --special-token-by-id bos=3");
    CHECK_MSG(run.rc == 0, "exit %d: %s%s", run.rc, run.out, run.err);
    CHECK_MSG(strstr(run.err, "'a' is 2 tokens; chose the first, id 2"), "%s", run.err);
    ggtk_file *f = ggtk_open(in_dir(dir, "out.gguf"), GGTK_OPEN_METADATA, NULL);
    CHECK(f);
    CHECK(ggtk_get(f, "tokenizer.ggml.eos_token_id")->type == GGTK_VALUE_UINT32);
    CHECK(ggtk_get(f, "tokenizer.ggml.eos_token_id")->v.u32 == 1);
    CHECK(ggtk_get(f, "tokenizer.ggml.padding_token_id")->v.u32 == 2);
    CHECK(ggtk_get(f, "tokenizer.ggml.bos_token_id")->v.u32 == 3);
    ggtk_close(f);
    edit_run_free(&run);
}

TEST(test_edit_in_place_rewrites_through_a_link_keeping_permissions)
{
    const char *dir = fixture_dir("edit_in_place", false);
    CHECK(chmod(in_dir(dir, "in.gguf"), 0640) == 0);
    CHECK(symlink("in.gguf", in_dir(dir, "link.gguf")) == 0);
    edit_run run = edit_tool_run(dir, "--in-place link.gguf --set x.u32=33 --set general.alignment=64");
    CHECK_MSG(run.rc == 0, "exit %d: %s%s", run.rc, run.out, run.err);
    CHECK_MSG(strstr(run.out, "2 keys changed; rewrote link.gguf"), "%s", run.out);
    CHECK_MSG(strstr(run.err, "re-laid out at 64-byte alignment (was 32)"), "%s", run.err);
    struct stat st;
    CHECK(lstat(in_dir(dir, "link.gguf"), &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(stat(in_dir(dir, "in.gguf"), &st) == 0 && (st.st_mode & 07777) == 0640);
    ggtk_file *f = ggtk_open(in_dir(dir, "in.gguf"), GGTK_OPEN_MMAP, NULL);
    CHECK(f && ggtk_get(f, "x.u32")->v.u32 == 33 && ggtk_alignment(f) == 64);
    CHECK(ggtk_data_offset(f) % 64 == 0);
    ggtk_close(f);
    CHECK(same_tensor_data(dir, "in.gguf"));
    CHECK(support_dir_entries(dir) == 3); /* in, orig, link: no temporary file left */
    edit_run_free(&run);
    /* No change: the file is not rewritten. */
    CHECK(stat(in_dir(dir, "in.gguf"), &st) == 0);
    run = edit_tool_run(dir, "-i in.gguf --set x.u32=33");
    struct stat after;
    CHECK(run.rc == 0 && strstr(run.out, "no key changes; in.gguf left as it was"));
    CHECK(stat(in_dir(dir, "in.gguf"), &after) == 0 && after.st_ino == st.st_ino);
    edit_run_free(&run);
}

TEST(test_edit_dry_run_prints_the_diff_and_writes_nothing)
{
    const char *dir = fixture_dir("edit_dry", false);
    edit_run run = edit_tool_run(dir, "--dry-run in.gguf out.gguf --set x.f64=0.25 --remove x.str "
                                      "--set 'y:arr[u16]=[1,2,3,4,5,6,7,8]'");
    CHECK_MSG(run.rc == 0, "exit %d: %s%s", run.rc, run.out, run.err);
    CHECK_MSG(strcmp(run.out, "~ x.f64  f64  -2.5 -> 0.25\n"
                              "- x.str  str  \"text\"\n"
                              "+ y  arr[u16]  [1, 2, 3, 4, 5, 6, ... (8 elements)]\n"
                              "dry run: 3 keys would change; nothing written\n") == 0,
              "%s", run.out);
    CHECK(support_dir_entries(dir) == 2);
    CHECK(support_same_bytes(in_dir(dir, "in.gguf"), in_dir(dir, "orig.gguf")));
    edit_run_free(&run);
    run = edit_tool_run(dir, "-n -i in.gguf --name x");
    CHECK(run.rc == 0 && strstr(run.out, "dry run: 1 keys would change"));
    CHECK(support_dir_entries(dir) == 2);
    edit_run_free(&run);
}

TEST(test_edit_output_verifies_against_the_input_manifest)
{
    const char *dir = fixture_dir("edit_verify", false);
    char *out = NULL;
    CHECK(test_run(&out, "%s --hash %s > %s", test_tool("gguf-inspect"), in_dir(dir, "in.gguf"),
                   test_tmpfile("edit.xxh64")) == 0);
    free(out);
    edit_run run = edit_tool_run(dir, "-q in.gguf out.gguf --name changed --set general.alignment=128");
    CHECK_MSG(run.rc == 0 && !*run.out, "exit %d: %s%s", run.rc, run.out, run.err);
    edit_run_free(&run);
    int rc = test_run(&out, "%s --verify %s %s", test_tool("gguf-inspect"), test_tmpfile("edit.xxh64"),
                      in_dir(dir, "out.gguf"));
    CHECK_MSG(rc == 1 && strstr(out, "DIFFERS  key general.name") &&
              strstr(out, "EXTRA    key general.alignment") &&
              strstr(out, "tensor data OK, all 2 tensors match") &&
              strstr(out, "metadata differs in 2 keys"), "exit %d: %s", rc, out);
    free(out);
    rc = test_run(&out, "%s --verify %s --tensors '*' %s", test_tool("gguf-inspect"),
                  test_tmpfile("edit.xxh64"), in_dir(dir, "out.gguf"));
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    free(out);
}

/* Each refusal: the exit status, exactly one stderr line naming the problem, nothing on stdout,
 * the input untouched and nothing written. */
TEST(test_edit_refuses_hostile_command_lines_in_one_line)
{
    static const struct {
        const char *args;
        int rc;
        const char *needle;
    } cases[] = {
        {"in.gguf out.gguf --set x.u8=256", 2, "--set x.u8: '256' is not a uint8 (a whole number from 0 to 255)"},
        {"in.gguf out.gguf --set x.u8=-1", 2, "'-1' is not a uint8"},
        {"in.gguf out.gguf --set x.i8=-129", 2, "'-129' is not an int8 (a whole number from -128 to 127)"},
        {"in.gguf out.gguf --set x.u64=18446744073709551616", 2, "is not a uint64"},
        {"in.gguf out.gguf --set x.i32=1.5", 2, "'1.5' is not an int32"},
        {"in.gguf out.gguf --set 'x.u32= 7'", 2, "' 7' is not a uint32"},
        {"in.gguf out.gguf --set x.f32=1e39", 2, "'1e39' is not a float32"},
        {"in.gguf out.gguf --set x.f64=1e400", 2, "'1e400' is not a float64"},
        {"in.gguf out.gguf --set x.f64=", 2, "'' is not a float64"},
        {"in.gguf out.gguf --set x.bool=yes", 2, "'yes' is not a bool (true, false, 1 or 0)"},
        {"in.gguf out.gguf --set x.arr_i32=7", 2, "expected a JSON list such as [1, 2, 3]"},
        {"in.gguf out.gguf --set 'x.arr_i32=[1,,2]'", 2, "element 1: '' is not an int32"},
        {"in.gguf out.gguf --set 'tokenizer.ggml.tokens=[1]'", 2, "expected a JSON list of strings"},
        {"in.gguf out.gguf --set no.such=1", 2, "--set no.such: no such key in the file; to add it, give its type"},
        {"in.gguf out.gguf --set n:u128=1", 2, "unknown type 'u128'"},
        {"in.gguf out.gguf --set 'n:arr[arr[u8]]=[]'", 2, "unknown type 'arr[arr[u8]]'"},
        {"in.gguf out.gguf --set 'bad key:u8=1'", 2, "expected a key of printable ASCII"},
        {"in.gguf out.gguf --set x.str=$(printf 'a\\377')", 2, "the string is not valid UTF-8 (byte 1)"},
        {"in.gguf out.gguf --set novalue", 2, "--set wants KEY=VALUE or KEY:TYPE=VALUE"},
        {"in.gguf out.gguf --set general.alignment=48", 2, "general.alignment: expected a non-zero power of two of type u32"},
        {"in.gguf out.gguf --set general.alignment:u64=64", 2, "general.alignment: expected a non-zero power of two of type u32"},
        {"in.gguf out.gguf --remove no.such", 2, "--remove no.such: no such key in the file"},
        {"in.gguf out.gguf --remove 'z*'", 2, "--remove z*: no key in the file matches it"},
        {"in.gguf out.gguf --special-token-by-id bos=5", 2, "token id 5 is past the vocabulary (5 tokens)"},
        {"in.gguf out.gguf --special-token-by-id bos=x", 2, "'x' is not a uint32"},
        {"in.gguf out.gguf --special-token bos=zz", 2, "no token 'zz' in tokenizer.ggml.tokens"},
        {"in.gguf out.gguf --special-token boss=1", 2, "wants NAME=TOKEN with NAME one of bos eos"},
        {"in.gguf out.gguf --chat-template-file nofile.jinja", 1, "nofile.jinja: cannot read it"},
        {"in.gguf out.gguf --chat-template-config in.gguf", 1, "expected a JSON file such as tokenizer_config.json"},
        {"in.gguf out.gguf", 2, "no edits given"},
        {"in.gguf --name x", 2, "expected IN OUT"},
        {"in.gguf out.gguf extra.gguf --name x", 2, "expected IN OUT"},
        {"-i in.gguf out.gguf --name x", 2, "--in-place takes one file, IN"},
        {"in.gguf out.gguf --bogus", 2, "unknown option '--bogus'"},
        {"in.gguf out.gguf --name", 2, "--name wants a value"},
        {"missing.gguf out.gguf --name x", 1, "missing.gguf"},
        {"in.gguf in.gguf --name x", 1, "OUT in.gguf: is the input IN in.gguf; it would be overwritten (use --in-place"},
        {"in.gguf ./sub/../in.gguf --name x", 1, "is the input IN in.gguf"},
        {"in.gguf . --name x", 1, "OUT .: is a directory"},
        {"orig.gguf out.gguf --name x --set x.u8=300", 2, "'300' is not a uint8"},
    };
    const char *dir = fixture_dir("edit_hostile", false);
    CHECK(mkdir(in_dir(dir, "sub"), 0755) == 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        edit_run run = edit_tool_run(dir, "%s", cases[i].args);
        bool ok = run.rc == cases[i].rc && edit_count_lines(run.err) == 1 && !*run.out &&
                  strncmp(run.err, "gguf-edit: error: ", 18) == 0 && strstr(run.err, cases[i].needle);
        CHECK_MSG(ok, "gguf-edit %s\n    -> exit %d, stdout '%s', stderr '%s' (wanted exit %d, '%s')",
                  cases[i].args, run.rc, run.out, run.err, cases[i].rc, cases[i].needle);
        edit_run_free(&run);
        CHECK_MSG(support_dir_entries(dir) == 3, "%s left a file behind", cases[i].args);
        CHECK(support_same_bytes(in_dir(dir, "in.gguf"), in_dir(dir, "orig.gguf")));
    }
}

TEST(test_edit_refuses_split_keys)
{
    const char *dir = fixture_dir("edit_split", true);
    static const char *const args[] = {
        "in.gguf out.gguf --set split.count=2", "in.gguf out.gguf --remove split.no",
        "in.gguf out.gguf --remove 'split.*'", "in.gguf out.gguf --remove '*'",
        "-i in.gguf --set split.new:u8=1"};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        edit_run run = edit_tool_run(dir, "%s", args[i]);
        CHECK_MSG(run.rc == 2 && edit_count_lines(run.err) == 1 &&
                  strstr(run.err, ": split.* keys describe a set of split files"),
                  "%s -> %d %s", args[i], run.rc, run.err);
        edit_run_free(&run);
        CHECK(support_dir_entries(dir) == 2);
        CHECK(support_same_bytes(in_dir(dir, "in.gguf"), in_dir(dir, "orig.gguf")));
    }
    /* Other keys of a part may change. */
    edit_run run = edit_tool_run(dir, "-q -i in.gguf --name part");
    CHECK_MSG(run.rc == 0, "%s", run.err);
    edit_run_free(&run);
}

TEST(test_edit_help_lists_every_edit)
{
    edit_run run = edit_tool_run(".", "--help");
    CHECK(run.rc == 0);
    static const char *const options[] = {"--set KEY=VALUE", "--set KEY:TYPE=VALUE", "--remove",
                                          "--chat-template-file", "--chat-template-config",
                                          "--special-token-by-id", "--in-place", "--dry-run"};
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
        CHECK_MSG(strstr(run.out, options[i]), "help lacks %s", options[i]);
    edit_run_free(&run);
}
