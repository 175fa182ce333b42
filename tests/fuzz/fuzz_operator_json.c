/*
 * fuzz_operator_json.c — libFuzzer target: arbitrary bytes as a native operator.json.
 *
 * The bytes become <tmp>/operator.json next to a fixed reference.c, and the
 * whole loader runs on the directory (detection, reader, contract). Any crash,
 * leak or sanitizer report is a finding; a rejection is the expected outcome.
 */
#include "base/fs.h"
#include "contracts/operator.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *op_dir;

static void cleanup(void)
{
    struct aka_err err = AKA_ERR_INIT;
    aka_remove_tree(op_dir, &err);
}

static void put(const char *name, const void *bytes, size_t len)
{
    struct strbuf p = STRBUF_INIT;
    aka_path_join(&p, op_dir, name);
    /* Plain stdio, not aka_write_file_atomic: an fsync per input would cap the run rate. */
    FILE *f = fopen(p.buf, "wb");
    if (!f || (len && fwrite(bytes, 1, len, f) != len) || fclose(f) != 0)
        abort();
    strbuf_release(&p);
}

/* One temp dir for the whole run: creating one per input would dominate the time. */
static void setup(void)
{
    struct strbuf dir = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    if (aka_make_temp_dir(NULL, "aka-fuzz-native", &dir, &err) < 0)
        abort();
    op_dir = strbuf_detach(&dir, NULL);
    atexit(cleanup);
    put("reference.c", "int x;\n", 7);
    struct strbuf seeds = STRBUF_INIT;
    aka_path_join(&seeds, op_dir, "seeds"); /* so that the examples' "seeds" field resolves */
    if (aka_mkdir_p(seeds.buf, 0755, &err) < 0)
        abort();
    strbuf_release(&seeds);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct aka_operator op;
    struct aka_err err = AKA_ERR_INIT;
    if (!op_dir)
        setup();
    put("operator.json", data, size);
    if (aka_operator_load(op_dir, &op, &err) == 0) {
        json_t *j = aka_operator_to_json(&op);
        if (!j)
            abort(); /* a loaded operator must always render */
        json_decref(j);
        aka_operator_release(&op);
    } else if (err.code != AKA_EXIT_USAGE) {
        abort(); /* bad input is exit 2, never anything else */
    }
    return 0;
}
