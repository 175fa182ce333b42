/*
 * fuzz_json.c — libFuzzer target: the JSON and JSON Lines loaders (base/json.h).
 *
 * Oracles beyond "no crash, no leak": a document that loads must dump (sorted,
 * compact) to bytes that load again to an equal document, and every failure
 * must come with a non-empty message and exit code 2. The same bytes are then
 * read as a JSON Lines file, whose callback must see strictly increasing line
 * numbers.
 */
#include "base/fs.h"
#include "base/json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void check_failure(const struct aka_err *err)
{
    if (err->code != AKA_EXIT_USAGE || !err->msg[0])
        abort();
}

/* Walk the typed getters over every key so their error paths run too. */
static void exercise_getters(json_t *obj)
{
    struct aka_err err = AKA_ERR_INIT;
    struct jctx c = {"fuzz", &err};
    const char *key, *s;
    const char *const allowed[] = {"a", "b", NULL};
    json_t *v, *out;
    long long i;
    double d;
    bool b;
    int idx;
    json_object_foreach(obj, key, v)
    {
        jget_str(&c, obj, "p", key, true, &s);
        jget_int(&c, obj, "p", key, true, &i);
        jget_num(&c, obj, "p", key, true, &d);
        jget_bool(&c, obj, "p", key, true, &b);
        jget_obj(&c, obj, "p", key, true, &out);
        jget_arr(&c, obj, "p", key, true, &out);
        jget_enum(&c, obj, "p", key, true, allowed, &idx);
    }
    jcheck_keys(&c, obj, "", allowed);
}

static void round_trip(json_t *j)
{
    struct strbuf sb = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    json_t *back;
    aka_json_dump_compact(j, &sb);
    if (aka_json_load_buf("round-trip", sb.buf, sb.len, &back, &err) < 0)
        abort(); /* we wrote something we cannot read */
    if (!json_equal(j, back))
        abort();
    json_decref(back);
    strbuf_release(&sb);
}

struct lines {
    size_t last;
};

static int on_line(json_t *obj, size_t lineno, void *data, struct aka_err *err)
{
    struct lines *l = data;
    if (lineno <= l->last || !json_is_object(obj))
        abort();
    l->last = lineno;
    exercise_getters(obj);
    return 0;
}

/* One scratch file per fuzzing process; plain writes, no fsync, for speed. */
static const char *scratch_path(void)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof(path), "/tmp/aka-fuzz-json.%ld.jsonl", (long)getpid());
    return path;
}

static void fuzz_jsonl(const uint8_t *data, size_t size)
{
    struct aka_err err = AKA_ERR_INIT;
    struct lines l = {0};
    FILE *f = fopen(scratch_path(), "wb");
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    if (aka_jsonl_foreach(scratch_path(), on_line, &l, &err) < 0)
        check_failure(&err);
    unlink(scratch_path());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct aka_err err = AKA_ERR_INIT;
    json_t *j;
    if (aka_json_load_buf("fuzz", (const char *)data, size, &j, &err) == 0) {
        round_trip(j);
        if (json_is_object(j))
            exercise_getters(j);
        json_decref(j);
    } else {
        check_failure(&err);
    }
    fuzz_jsonl(data, size);
    return 0;
}
