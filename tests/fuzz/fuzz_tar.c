/*
 * fuzz_tar.c — libFuzzer target: unpacking hostile tar archives (base/tarball.h).
 *
 * Each input is written to a scratch file and unpacked into a fresh directory
 * inside a per-process scratch area, which is then removed. Oracles beyond
 * "no crash, no leak": a failure carries a message and an exit code from
 * DESIGN §4.9, and after removing the destination the scratch area holds only
 * the input file — anything else was written outside dest.
 */
#include "base/fs.h"
#include "base/tarball.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct strbuf area = STRBUF_INIT, tar = STRBUF_INIT;

static void cleanup(void)
{
    struct aka_err err = AKA_ERR_INIT;
    aka_remove_tree(area.buf, &err);
}

static void setup_once(void)
{
    struct aka_err err = AKA_ERR_INIT;
    if (area.len)
        return;
    if (aka_make_temp_dir(NULL, "aka-fuzz-tar", &area, &err) < 0)
        abort();
    aka_path_join(&tar, area.buf, "in.tar");
    atexit(cleanup); /* libFuzzer ends with exit() after -max_total_time */
}

static void write_input(const uint8_t *data, size_t size)
{
    FILE *f = fopen(tar.buf, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size))
        abort();
    fclose(f);
}

/* After dest is gone, only in.tar may remain in the area. */
static void check_nothing_escaped(void)
{
    struct strvec names = STRVEC_INIT;
    struct aka_err err = AKA_ERR_INIT;
    if (aka_list_dir(area.buf, &names, &err) < 0)
        abort();
    if (names.n != 1 || strcmp(names.v[0], "in.tar") != 0)
        abort();
    strvec_clear(&names);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct strbuf dest = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    setup_once();
    write_input(data, size);
    if (aka_make_temp_dir(area.buf, "dest", &dest, &err) < 0)
        abort();
    if (aka_tar_unpack(tar.buf, dest.buf, (size_t)1 << 20, &err) < 0) {
        int c = err.code;
        if (!err.msg[0] || (c != AKA_EXIT_USAGE && c != AKA_EXIT_ENV && c != AKA_EXIT_FAILED))
            abort();
    }
    if (aka_remove_tree(dest.buf, &err) < 0)
        abort();
    check_nothing_escaped();
    strbuf_release(&dest);
    return 0;
}
