/*
 * fuzz_opdir.h — shared by the operator-layout fuzz targets: split one fuzz
 * input into several files of a scratch operator directory, load it, and
 * check that a refusal is a clean usage error. Static functions: each target
 * is its own program.
 */
#ifndef AKA_FUZZ_OPDIR_H
#define AKA_FUZZ_OPDIR_H

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

#endif
