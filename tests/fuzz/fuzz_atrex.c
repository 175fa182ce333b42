/*
 * fuzz_atrex.c — libFuzzer target: the Atrex-Bench layout's JSON files.
 *
 * reference.py and input.py are fixed and valid; the input is cut at each NUL
 * byte or blank line into shapes.json, agent_problem.json, metadata.json and
 * roofline.json (absent or empty parts are absent files).
 */
#include "fuzz_opdir.h"

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
