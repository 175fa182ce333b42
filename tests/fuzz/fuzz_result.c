/*
 * fuzz_result.c — libFuzzer target: the evaluator-output parser (RESULT_JSON).
 *
 * The input is a whole stdout text. Oracle beyond "no crash, no leak": a
 * result that parses must, written back with the C writer, parse again to the
 * same document (the writer and the parser agree on every field).
 */
#include "contracts/records.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void round_trip(const struct aka_result *r)
{
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf line = STRBUF_INIT;
    struct aka_result back;

    aka_result_format_line(r, &line);
    if (aka_result_parse_output("round-trip", line.buf, line.len, &back, &err) < 0)
        abort(); /* the writer produced something the parser refuses */
    json_t *a = aka_result_to_json(r), *b = aka_result_to_json(&back);
    if (!json_equal(a, b))
        abort();
    json_decref(a);
    json_decref(b);
    aka_result_release(&back);
    strbuf_release(&line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_result r;
    if (aka_result_parse_output("fuzz", (const char *)data, size, &r, &err) == 0) {
        round_trip(&r);
        aka_result_release(&r);
    } else if (err.code != AKA_EXIT_USAGE || strchr(err.msg, '\n')) {
        abort(); /* every refusal is one line with exit code 2 */
    }
    return 0;
}
