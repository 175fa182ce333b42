/*
 * test_runtime_pins.c — one table row per runtime-pin rule of DESIGN §4.3:
 * loading the pins (version, requirements file as UTF-8) and replaying a
 * recorded request against the pins in force now.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "base/json.h"
#include "contracts/pins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENVF AKA_ENV_REQUIREMENTS_FILE
#define ENVV AKA_ENV_BENCH_VERSION

enum file_kind {
    NO_FILE,     /* requirements not pinned */
    CONTENT,     /* a regular file with `content` */
    MISSING,     /* the path does not exist */
    DIRECTORY,   /* the path is a directory */
    UNREADABLE,  /* mode 000 */
    EMPTY_VALUE, /* the variable is set to "" */
};

struct load_row {
    const char *name;
    const char *version;
    enum file_kind kind;
    const char *content;
    size_t content_len;    /* for content with NUL bytes; 0 = strlen */
    const char *lines;     /* expected requirement lines joined by '|' */
    const char *error_fmt; /* expected error; "%s" stands for the file's path */
};

#define UTF8_ERR(line, why, off)                                                                   \
    ENVF "=%s:" #line ": the requirements file is not valid UTF-8: " why " at byte offset " #off

static const struct load_row load_rows[] = {
    {"unset", NULL, NO_FILE, NULL, 0, "", NULL},
    {"empty values count as unset", "", EMPTY_VALUE, NULL, 0, "", NULL},
    {"version only", "0.1.0", NO_FILE, NULL, 0, "", NULL},
    {"version with whitespace", "0.1 .0", NO_FILE, NULL, 0, NULL,
     ENVV ": expected a version without whitespace or control characters; got \"0.1 .0\""},
    {"requirements OK", "0.1.0", CONTENT, "torch==2.4.0\nnumpy>=1.26\n", 0,
     "torch==2.4.0|numpy>=1.26", NULL},
    {"comments and blank lines", NULL, CONTENT,
     "# header comment\n\n   \ntorch==2.4.0   # trailing comment\n\t numpy \r\n"
     "pkg @ https://example.org/p.whl#sha256=ab\n#last\n",
     0, "torch==2.4.0|numpy|pkg @ https://example.org/p.whl#sha256=ab", NULL},
    {"no trailing newline, BOM, unicode comment", NULL, CONTENT,
     "\xEF\xBB\xBF# r\xC3\xA9sum\xC3\xA9 \xE2\x9C\x93 \xF0\x9F\x98\x80\ntriton==3.0", 0,
     "triton==3.0", NULL},
    {"only comments", NULL, CONTENT, "# nothing\n\n", 0, "", NULL},
    {"backslash continuation refused", NULL, CONTENT, "torch==2.4 \\\n  --hash=x\n", 0, NULL,
     ENVF "=%s:1: requirement \"torch==2.4 \\\" ends with a backslash continuation, which aka "
          "does not join; write the requirement on one line"},
    {"include refused", NULL, CONTENT, "numpy\n-r base.txt\n", 0, NULL,
     ENVF "=%s:2: requirement \"-r base.txt\" includes another file, which is not sent to the "
          "sandbox; list its requirements here instead"},
    {"missing file", NULL, MISSING, NULL, 0, NULL,
     ENVF "=%s: the requirements file does not exist"},
    {"directory", NULL, DIRECTORY, NULL, 0, NULL,
     ENVF "=%s: the requirements file is not a regular file"},
    /* Root reads any file whatever its mode, so this row is skipped under euid 0. */
    {"unreadable", NULL, UNREADABLE, "torch\n", 0, NULL,
     ENVF "=%s: cannot read the requirements file: %s: cannot open: Permission denied"},
    {"overlong 2-byte", NULL, CONTENT, "ok\n\xC0\xAF\n", 0, NULL,
     UTF8_ERR(2, "an overlong encoding", 3)},
    {"overlong 3-byte", NULL, CONTENT, "a\nb\nc\xE0\x80\xAF", 0, NULL,
     UTF8_ERR(3, "an overlong encoding", 5)},
    {"overlong 4-byte", NULL, CONTENT, "\xF0\x8F\xBF\xBF", 0, NULL,
     UTF8_ERR(1, "an overlong encoding", 0)},
    {"surrogate", NULL, CONTENT, "x\xED\xA0\x80", 0, NULL,
     UTF8_ERR(1, "a UTF-16 surrogate code point", 1)},
    {"beyond U+10FFFF", NULL, CONTENT, "\n\n\xF4\x90\x80\x80", 0, NULL,
     UTF8_ERR(3, "a code point beyond U+10FFFF", 2)},
    {"lead byte F5", NULL, CONTENT, "\xF5\x80\x80\x80", 0, NULL,
     UTF8_ERR(1, "a code point beyond U+10FFFF", 0)},
    {"lone continuation", NULL, CONTENT, "torch\x80", 0, NULL,
     UTF8_ERR(1, "a continuation byte without a lead byte", 5)},
    {"truncated at end", NULL, CONTENT, "numpy\xE2\x82", 0, NULL,
     UTF8_ERR(1, "a truncated multi-byte sequence", 5)},
    {"bad continuation", NULL, CONTENT, "\xE2\x28\xA1", 0, NULL,
     UTF8_ERR(1, "a truncated multi-byte sequence", 0)},
    {"byte FF (Latin-1 file)", NULL, CONTENT, "# caf\xE9\n", 0, NULL,
     UTF8_ERR(1, "a truncated multi-byte sequence", 5)},
    {"byte FF", NULL, CONTENT, "\xFF", 0, NULL,
     UTF8_ERR(1, "a byte that never appears in UTF-8", 0)},
    {"NUL byte", NULL, CONTENT, "torch\0\n", 7, NULL, UTF8_ERR(1, "a NUL byte", 5)},
    {"UTF-16 file", NULL, CONTENT, "\xFF\xFEt\0", 4, NULL,
     UTF8_ERR(1, "a byte that never appears in UTF-8", 0)},
};

static void write_bytes(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* Create the requirements file a row describes; returns the value for the variable. */
static const char *prepare_file(const struct load_row *r, char *path, size_t size, size_t i)
{
    snprintf(path, size, "%s/req-%zu.txt", aka_scratch_dir(), i);
    switch (r->kind) {
    case NO_FILE:
        return NULL;
    case EMPTY_VALUE:
        return "";
    case MISSING:
        return path;
    case DIRECTORY:
        mkdir(path, 0755);
        return path;
    case CONTENT:
    case UNREADABLE:
        write_bytes(path, r->content, r->content_len ? r->content_len : strlen(r->content));
        if (r->kind == UNREADABLE)
            chmod(path, 0);
        return path;
    }
    return NULL;
}

static void join_lines(const struct strvec *sv, struct strbuf *out)
{
    for (size_t i = 0; i < sv->n; i++)
        strbuf_addf(out, "%s%s", i ? "|" : "", sv->v[i]);
}

static void check_load_row(const struct load_row *r, size_t i)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_runtime_pins p;
    char path[512], want[2048];
    const char *value = prepare_file(r, path, sizeof(path), i);
    int rc = aka_runtime_pins_load(r->version, value, &p, &err);

    if (r->error_fmt) {
        snprintf(want, sizeof(want), r->error_fmt, path, path);
        if (rc == 0 || strcmp(err.msg, want) != 0)
            fail_msg("%s: expected error\n  %s\ngot rc %d\n  %s", r->name, want, rc, err.msg);
        assert_int_equal(err.code, AKA_EXIT_USAGE);
        assert_null(p.bench_version);
        assert_null(p.requirements_file);
        return;
    }
    if (rc != 0)
        fail_msg("%s: unexpected error: %s", r->name, err.msg);
    struct strbuf got = STRBUF_INIT;
    join_lines(&p.requirements, &got);
    if (strcmp(got.buf, r->lines) != 0)
        fail_msg("%s: lines\n  %s\nexpected\n  %s", r->name, got.buf, r->lines);
    strbuf_release(&got);
    if (r->version && *r->version)
        assert_string_equal(p.bench_version, r->version);
    else
        assert_null(p.bench_version);
    if (value && *value)
        assert_string_equal(p.requirements_file, value);
    else
        assert_null(p.requirements_file);
    aka_runtime_pins_release(&p);
}

static void t_load_table(void **state)
{
    for (size_t i = 0; i < sizeof(load_rows) / sizeof(load_rows[0]); i++) {
        if (load_rows[i].kind == UNREADABLE && geteuid() == 0) {
            print_message("skipping row \"%s\": running as root, which can read any file\n",
                          load_rows[i].name);
            continue;
        }
        check_load_row(&load_rows[i], i);
    }
}

/* ---- replay ---- */

struct replay_row {
    const char *name;
    const char *recorded;    /* the request's "runtime" object as JSON; NULL: none */
    const char *now_version; /* pins in force now */
    const char *now_content; /* requirements file content now; NULL: not configured */
    const char *error_fmt;   /* "%s" = the current requirements file path */
};

#define REQ "requests/e0003-eval.json"
#define REC(v, f, reqs)                                                                            \
    "{\"atrex_bench_version\":" v ",\"requirements_file\":" f ",\"requirements\":" reqs "}"
#define REC_FULL REC("\"0.1.0\"", "\"/old/requirements.txt\"", "[\"torch==2.4.0\",\"numpy\"]")

static const struct replay_row replay_rows[] = {
    {"same pins", REC_FULL, "0.1.0", "torch==2.4.0  # pinned\n\nnumpy\n", NULL},
    {"nothing pinned then or now", REC("null", "null", "[]"), NULL, NULL, NULL},
    {"no runtime object, nothing now", NULL, NULL, NULL, NULL},
    {"version changed", REC_FULL, "0.2.0", "torch==2.4.0\nnumpy\n",
     REQ ": " ENVV ": the request was recorded with runtime 0.1.0 but runtime 0.2.0 is pinned "
         "now"},
    {"version now missing", REC_FULL, NULL, "torch==2.4.0\nnumpy\n",
     REQ ": " ENVV ": the request was recorded with runtime 0.1.0 but no version is pinned now"},
    {"version now pinned, recorded unpinned", REC("null", "null", "[]"), "0.1.0", NULL,
     REQ ": " ENVV ": the request was recorded without a pinned runtime but runtime 0.1.0 is "
         "pinned now; unset it to replay this request"},
    {"version pinned now, no runtime object", NULL, "0.1.0", NULL,
     REQ ": " ENVV ": the request was recorded without a pinned runtime but runtime 0.1.0 is "
         "pinned now; unset it to replay this request"},
    {"requirement changed", REC_FULL, "0.1.0", "torch==2.4.0\nnumpy==2.0\n",
     REQ ": " ENVF ": requirement 2 differs: recorded \"numpy\", now \"numpy==2.0\" (from %s)"},
    {"requirement added", REC_FULL, "0.1.0", "torch==2.4.0\nnumpy\nscipy\n",
     REQ ": " ENVF ": requirement 3 differs: recorded nothing, now \"scipy\" (from %s)"},
    {"requirement removed", REC_FULL, "0.1.0", "torch==2.4.0\n",
     REQ ": " ENVF ": requirement 2 differs: recorded \"numpy\", now nothing (from %s)"},
    {"requirements reordered", REC_FULL, "0.1.0", "numpy\ntorch==2.4.0\n",
     REQ ": " ENVF ": requirement 1 differs: recorded \"torch==2.4.0\", now \"numpy\" (from %s)"},
    {"requirements file now unset", REC_FULL, "0.1.0", NULL,
     REQ ": " ENVF ": the request was recorded with the requirements of /old/requirements.txt "
         "but no requirements file is configured now"},
    {"requirements now configured, recorded none", REC("\"0.1.0\"", "null", "[]"), "0.1.0",
     "torch\n",
     REQ ": " ENVF ": the request was recorded without requirements but %s is configured now; "
         "unset it to replay this request"},
    {"recorded requirements not strings", REC("null", "\"/r.txt\"", "[1]"), NULL, "x\n",
     REQ ": runtime.requirements: expected a list of strings; got an integer at index 0"},
    {"recorded requirements without file", REC("null", "null", "[\"x\"]"), NULL, NULL,
     REQ ": runtime.requirements: expected no requirements when requirements_file is null; "
         "got 1"},
    {"recorded unknown key", "{\"atrex_bench_version\":null,\"deps\":1}", NULL, NULL,
     REQ ": runtime.deps: unknown field (known fields: atrex_bench_version, requirements_file, "
         "requirements)"},
    {"recorded not an object", "[\"0.1.0\"]", NULL, NULL,
     REQ ": runtime: expected an object; got an array"},
};

static void check_replay_row(const struct replay_row *r, size_t i)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_runtime_pins now;
    char path[512], want[2048];
    json_t *rec = NULL;

    snprintf(path, sizeof(path), "%s/replay-%zu.txt", aka_scratch_dir(), i);
    if (r->now_content)
        write_bytes(path, r->now_content, strlen(r->now_content));
    assert_int_equal(
        aka_runtime_pins_load(r->now_version, r->now_content ? path : NULL, &now, &err), 0);
    if (r->recorded)
        assert_int_equal(aka_json_load_buf("rec", r->recorded, strlen(r->recorded), &rec, &err), 0);
    int rc = aka_runtime_pins_check_replay(&now, rec, REQ, &err);
    if (r->error_fmt) {
        snprintf(want, sizeof(want), r->error_fmt, path);
        if (rc == 0 || strcmp(err.msg, want) != 0)
            fail_msg("%s: expected error\n  %s\ngot rc %d\n  %s", r->name, want, rc, err.msg);
        assert_int_equal(err.code, AKA_EXIT_USAGE);
    } else if (rc != 0) {
        fail_msg("%s: unexpected error: %s", r->name, err.msg);
    }
    json_decref(rec);
    aka_runtime_pins_release(&now);
}

static void t_replay_table(void **state)
{
    for (size_t i = 0; i < sizeof(replay_rows) / sizeof(replay_rows[0]); i++)
        check_replay_row(&replay_rows[i], i);
}

/* What a request records is exactly what a replay reads back. */
static void t_to_json_round_trip(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_runtime_pins p;
    char path[512];
    snprintf(path, sizeof(path), "%s/rt.txt", aka_scratch_dir());
    write_bytes(path, "a==1\nb\n", 7);
    assert_int_equal(aka_runtime_pins_load("1.2.3", path, &p, &err), 0);
    json_t *j = aka_runtime_pins_to_json(&p);
    assert_string_equal(json_string_value(json_object_get(j, "atrex_bench_version")), "1.2.3");
    assert_string_equal(json_string_value(json_object_get(j, "requirements_file")), path);
    assert_int_equal(json_array_size(json_object_get(j, "requirements")), 2);
    assert_int_equal(aka_runtime_pins_check_replay(&p, j, "r.json", &err), 0);
    json_decref(j);
    aka_runtime_pins_release(&p);
}

static void t_from_env(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_runtime_pins p;
    char path[512], want[1024];
    snprintf(path, sizeof(path), "%s/env-missing.txt", aka_scratch_dir());
    setenv(ENVV, "0.3.0", 1);
    setenv(ENVF, "", 1);
    assert_int_equal(aka_runtime_pins_from_env(&p, &err), 0);
    assert_string_equal(p.bench_version, "0.3.0");
    assert_null(p.requirements_file);
    aka_runtime_pins_release(&p);
    setenv(ENVF, path, 1);
    assert_int_equal(aka_runtime_pins_from_env(&p, &err), -1);
    snprintf(want, sizeof(want), ENVF "=%s: the requirements file does not exist", path);
    assert_string_equal(err.msg, want);
    unsetenv(ENVV);
    unsetenv(ENVF);
    assert_int_equal(aka_runtime_pins_from_env(&p, &err), 0);
    assert_null(p.bench_version);
    assert_int_equal(p.requirements.n, 0);
    aka_runtime_pins_release(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_load_table),
        cmocka_unit_test(t_replay_table),
        cmocka_unit_test(t_to_json_round_trip),
        cmocka_unit_test(t_from_env),
    };
    return cmocka_run_group_tests(tests, aka_scratch_setup, aka_scratch_teardown);
}
