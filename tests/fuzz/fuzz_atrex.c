/*
 * fuzz_atrex.c — libFuzzer target: the Atrex-Bench layout's JSON files.
 *
 * reference.py and input.py are fixed and valid; the input is cut at each NUL
 * byte or blank line into shapes.json, agent_problem.json, metadata.json and
 * roofline.json (absent or empty parts are absent files).
 */
#include "base/fs.h"
#include "contracts/operator.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fuzz_part {
    const uint8_t *data;
    size_t len;
    int present;
};

/* Cut data at each NUL byte or blank line into at most n parts; later parts are absent. */
static void fuzz_split(const uint8_t *data, size_t size, struct fuzz_part *parts, size_t n)
{
    size_t start = 0, k = 0, i = 0;
    memset(parts, 0, n * sizeof(*parts));
    while (k + 1 < n && i < size) {
        int blank = data[i] == '\n' && i + 1 < size && data[i + 1] == '\n';
        if (data[i] != 0 && !blank) {
            i++;
            continue;
        }
        parts[k].data = data + start;
        parts[k].len = i - start;
        parts[k++].present = 1;
        i += blank ? 2 : 1;
        start = i;
    }
    parts[k].data = data + start;
    parts[k].len = size - start;
    parts[k].present = 1;
}

static char *fuzz_dir;

static void fuzz_cleanup(void)
{
    struct aka_err err = AKA_ERR_INIT;
    aka_remove_tree(fuzz_dir, &err);
}

static void fuzz_put(const char *name, const void *bytes, size_t len)
{
    struct strbuf p = STRBUF_INIT;
    aka_path_join(&p, fuzz_dir, name);
    /* Plain stdio, not aka_write_file_atomic: an fsync per input would cap the run rate. */
    FILE *f = fopen(p.buf, "wb");
    if (!f || (len && fwrite(bytes, 1, len, f) != len) || fclose(f) != 0)
        abort();
    strbuf_release(&p);
}

static void fuzz_drop(const char *name)
{
    struct strbuf p = STRBUF_INIT;
    aka_path_join(&p, fuzz_dir, name);
    unlink(p.buf);
    strbuf_release(&p);
}

static void fuzz_setup(const char *prefix)
{
    struct strbuf dir = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    if (aka_make_temp_dir(NULL, prefix, &dir, &err) < 0)
        abort();
    fuzz_dir = strbuf_detach(&dir, NULL);
    atexit(fuzz_cleanup);
}

/* Load the dir; a loaded operator must render, a rejection must be exit 2. */
static void fuzz_load(void)
{
    struct aka_operator op;
    struct aka_err err = AKA_ERR_INIT;
    if (aka_operator_load(fuzz_dir, &op, &err) == 0) {
        json_t *j = aka_operator_to_json(&op);
        if (!j)
            abort();
        json_decref(j);
        aka_operator_release(&op);
    } else if (err.code != AKA_EXIT_USAGE) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {"shapes.json", "agent_problem.json", "metadata.json",
                                    "roofline.json"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_part parts[4];
    if (!fuzz_dir) {
        fuzz_setup("aka-fuzz-atrex");
        fuzz_put("reference.py", "class Model(object):\n    pass\n", 30);
        fuzz_put("input.py", "def _make_inputs():\n    return {}\n", 34);
    }
    fuzz_split(data, size, parts, 4);
    for (size_t i = 0; i < 4; i++) {
        if (parts[i].present && parts[i].len) /* empty part: no such file */
            fuzz_put(names[i], parts[i].data, parts[i].len);
        else
            fuzz_drop(names[i]);
    }
    fuzz_load();
    return 0;
}
