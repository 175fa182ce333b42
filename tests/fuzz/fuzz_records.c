/*
 * fuzz_records.c — libFuzzer target: the file loaders of records.h (and the
 * requirements-file reader of pins.h) on a real temporary file.
 *
 * The first byte picks the loader; the rest is the file's content:
 *   0 memory/v3.json   1 journal.json   2 handoff.json   3 requirements.txt
 * Oracles: what loads must write back and load again unchanged.
 */
#include "base/fs.h"
#include "contracts/pins.h"
#include "contracts/records.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static char *fuzz_dir;
static struct aka_err last_err; /* the loader's refusal, if any */

static void fuzz_cleanup(void)
{
    struct aka_err err = AKA_ERR_INIT;
    aka_remove_tree(fuzz_dir, &err);
}

static const char *fuzz_path(const char *name, struct strbuf *sb)
{
    if (!fuzz_dir) {
        struct strbuf d = STRBUF_INIT;
        struct aka_err err = AKA_ERR_INIT;
        if (aka_make_temp_dir(NULL, "aka-fuzz-records", &d, &err) < 0)
            abort();
        fuzz_dir = strbuf_detach(&d, NULL);
        atexit(fuzz_cleanup);
    }
    aka_path_join(sb, fuzz_dir, name);
    return sb->buf;
}

static void put(const char *path, const uint8_t *data, size_t size)
{
    struct aka_err err = AKA_ERR_INIT;
    if (aka_write_file_atomic(path, data, size, 0644, &err) < 0)
        abort();
}

static void fuzz_memory(const char *path)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_memory_record r, back;
    if (aka_memory_load(path, &r, &last_err) < 0)
        return;
    if (aka_memory_write(fuzz_dir, r.json, &err) < 0 || aka_memory_load(path, &back, &err) < 0 ||
        !json_equal(r.json, back.json))
        abort();
    aka_memory_release(&back);
    aka_memory_release(&r);
}

static void fuzz_journal(const char *path)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_journal j, back;
    if (aka_journal_load(path, &j, &last_err) < 0)
        return;
    if (aka_json_write_file(path, j.json, &err) < 0 || aka_journal_load(path, &back, &err) < 0 ||
        back.state != j.state || back.experiment_count != j.experiment_count)
        abort();
    aka_journal_release(&back);
    aka_journal_release(&j);
}

static void fuzz_handoff(const char *path)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_handoff h, back;
    if (aka_handoff_load(path, &h, &last_err) < 0)
        return;
    json_t *doc = aka_handoff_to_json(&h);
    if (aka_handoff_from_json("again", doc, &back, &err) < 0 || memcmp(&h, &back, sizeof(h)))
        abort();
    json_decref(doc);
}

static void fuzz_requirements(const char *path)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_runtime_pins p;
    if (aka_runtime_pins_load("1.0", path, &p, &last_err) < 0)
        return;
    json_t *rec = aka_runtime_pins_to_json(&p);
    if (aka_runtime_pins_check_replay(&p, rec, "request.json", &err) < 0)
        abort(); /* replaying with the same pins must always succeed */
    json_decref(rec);
    aka_runtime_pins_release(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"v3.json", "journal.json", "handoff.json",
                                        "requirements.txt"};
    struct strbuf sb = STRBUF_INIT;
    if (size < 1)
        return 0;
    int which = data[0] % 4;
    const char *path = fuzz_path(names[which], &sb);
    put(path, data + 1, size - 1);
    if (which == 0)
        fuzz_memory(path);
    else if (which == 1)
        fuzz_journal(path);
    else if (which == 2)
        fuzz_handoff(path);
    else
        fuzz_requirements(path);
    if (last_err.code && (last_err.code != AKA_EXIT_USAGE || strchr(last_err.msg, '\n')))
        abort(); /* every refusal is one line with exit code 2 */
    memset(&last_err, 0, sizeof(last_err));
    strbuf_release(&sb);
    return 0;
}
