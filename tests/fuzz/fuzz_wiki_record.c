/*
 * fuzz_wiki_record.c — libFuzzer target for the wiki record loader: arbitrary
 * bytes go through the same parse-and-validate path as a record file of a
 * plugin (aka_wiki_validate_buffer), which must never crash, leak or accept a
 * record it cannot attribute. A valid result must come with no problems.
 */
#include "wiki/wiki.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct strvec problems = STRVEC_INIT;
    long n = aka_wiki_validate_buffer("fuzz.json", (const char *)data, size, &problems);
    if ((n >= 0) != (problems.n == 0))
        abort(); /* accepted with problems, or rejected without saying why */
    strvec_clear(&problems);
    return 0;
}
