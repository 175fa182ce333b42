/*
 * fuzz_pins.c — libFuzzer target: a requirements file → runtime pins.
 *
 * Oracles: a refused file is one line with exit code 2; accepted pins
 * replay against themselves (the parse is deterministic) and every kept
 * requirement line is non-empty, trimmed and free of comments.
 */
#include "contracts/pins.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void check_pins(const struct aka_runtime_pins *p)
{
    struct aka_err err = AKA_ERR_INIT;
    for (size_t i = 0; i < p->requirements.n; i++) {
        const char *line = p->requirements.v[i];
        size_t n = strlen(line);
        if (n == 0 || line[0] == '#' || line[0] == ' ' || line[n - 1] == ' ')
            abort();
    }
    json_t *recorded = aka_runtime_pins_to_json(p);
    if (aka_runtime_pins_check_replay(p, recorded, "request.json", &err) < 0)
        abort();
    json_decref(recorded);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    struct aka_err err = AKA_ERR_INIT;
    struct aka_runtime_pins pins;

    if (!path[0]) {
        snprintf(path, sizeof(path), "/tmp/aka-fuzz-pins-%ld.txt", (long)getpid());
    }
    /* Plain stdio: an fsync per input would make the fuzzer slower than useful. */
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    if (aka_runtime_pins_load("1.2.3", path, &pins, &err) == 0) {
        check_pins(&pins);
        aka_runtime_pins_release(&pins);
    } else if (err.code != AKA_EXIT_USAGE || strchr(err.msg, '\n')) {
        abort();
    }
    return 0;
}
