/*
 * fuzz_sol.c — libFuzzer target: the SOL-ExecBench layout.
 *
 * The input is cut at the first NUL byte or blank line: the part before is
 * definition.json, the part after is workload.jsonl (a third part, when
 * present, becomes solution.json).
 */
#include "fuzz_opdir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_part parts[3];
    if (!fuzz_dir)
        fuzz_setup("aka-fuzz-sol");
    fuzz_split(data, size, parts, 3);
    fuzz_put("definition.json", parts[0].data, parts[0].len);
    fuzz_put("workload.jsonl", parts[1].data, parts[1].len);
    if (parts[2].present)
        fuzz_put("solution.json", parts[2].data, parts[2].len);
    else
        fuzz_drop("solution.json");
    fuzz_load();
    return 0;
}
