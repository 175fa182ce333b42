/*
 * test_benchmark_contract.c — one table row per DESIGN §4.3 distributed-evaluation rule.
 *
 * Each row is a metadata.json text and either the decision it must produce
 * (world_size, inspection) or the exact one-line error it must produce.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "base/json.h"
#include "contracts/benchmark.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define F           "ops/x/metadata.json"
#define D           F ": benchmark_contract.distributed_evaluation"
#define WS_WANT     "expected an integer from 2 to 65536; got "
#define DIST(inner) "{\"benchmark_contract\":{\"distributed_evaluation\":" inner "}}"
#define OK3(ws)     "{\"launcher\":\"torchrun\",\"backend\":\"nccl\",\"world_size\":" #ws "}"
#define WITH_GPUS(ws, gpus)                                                                        \
    "{\"hardware\":{\"required_gpus\":" gpus                                                       \
    "},\"benchmark_contract\":{\"distributed_evaluation\":" OK3(ws) "}}"
#define WS_ERR(got)         D ".world_size: " WS_WANT got
#define GPU_ERR(field, got) F ": hardware.required_gpus" field ": expected " got

struct row {
    const char *name;
    const char *metadata; /* NULL: no metadata at all */
    int world_size;       /* expected on success; 0 = expect the error below */
    bool inspection;
    const char *error;
};

static const struct row rows[] = {
    {"valid N=2", DIST(OK3(2)), 2, false, NULL},
    {"valid N=8", DIST(OK3(8)), 8, false, NULL},
    {"world_size 1", DIST(OK3(1)), 0, false, WS_ERR("1")},
    {"world_size 0", DIST(OK3(0)), 0, false, WS_ERR("0")},
    {"world_size -3", DIST(OK3(-3)), 0, false, WS_ERR("-3")},
    {"world_size string", DIST(OK3("4")), 0, false, WS_ERR("\"4\"")},
    {"world_size float", DIST(OK3(2.0)), 0, false, WS_ERR("2.0")},
    {"world_size bool", DIST(OK3(true)), 0, false, WS_ERR("true")},
    {"world_size null", DIST(OK3(null)), 0, false, WS_ERR("nothing (the field is missing)")},
    {"world_size huge", DIST(OK3(1000000)), 0, false, WS_ERR("1000000")},
    {"world_size missing", DIST("{\"launcher\":\"torchrun\",\"backend\":\"nccl\"}"), 0, false,
     WS_ERR("nothing (the field is missing)")},
    {"launcher wrong", DIST("{\"launcher\":\"mpirun\",\"backend\":\"nccl\",\"world_size\":2}"), 0,
     false, D ".launcher: expected \"torchrun\"; got \"mpirun\""},
    {"launcher missing", DIST("{\"backend\":\"nccl\",\"world_size\":2}"), 0, false,
     D ".launcher: expected \"torchrun\"; got nothing (the field is missing)"},
    {"backend wrong", DIST("{\"launcher\":\"torchrun\",\"backend\":\"gloo\",\"world_size\":2}"), 0,
     false, D ".backend: expected \"nccl\"; got \"gloo\""},
    {"backend not a string", DIST("{\"launcher\":\"torchrun\",\"backend\":1,\"world_size\":2}"), 0,
     false, D ".backend: expected \"nccl\"; got 1"},
    {"extra key",
     DIST("{\"launcher\":\"torchrun\",\"backend\":\"nccl\",\"world_size\":2,\"nodes\":1}"), 0,
     false, D ".nodes: expected only launcher, backend and world_size; got an unknown field"},
    /* Found by fuzzing: a key with a newline must not break the one-line error. */
    {"extra key with a newline",
     DIST("{\"launcher\":\"torchrun\",\"backend\":\"nccl\",\"world_size\":2,\"a\\nb\":1}"), 0,
     false, D ".a\\nb: expected only launcher, backend and world_size; got an unknown field"},
    {"required_gpus equal int", WITH_GPUS(2, "2"), 2, false, NULL},
    {"required_gpus equal list", WITH_GPUS(4, "[4,4]"), 4, false, NULL},
    {"required_gpus null", WITH_GPUS(2, "null"), 2, false, NULL},
    {"required_gpus int 1", WITH_GPUS(2, "1"), 0, false,
     GPU_ERR("", "2 (benchmark_contract.distributed_evaluation.world_size); got 1")},
    {"required_gpus list with 1", WITH_GPUS(2, "[2,1]"), 0, false,
     GPU_ERR("[1]", "2 (benchmark_contract.distributed_evaluation.world_size); got 1")},
    {"required_gpus disagreeing int", WITH_GPUS(2, "8"), 0, false,
     GPU_ERR("", "2 (benchmark_contract.distributed_evaluation.world_size); got 8")},
    {"required_gpus disagreeing list", WITH_GPUS(2, "[4,4]"), 0, false,
     GPU_ERR("[0]", "2 (benchmark_contract.distributed_evaluation.world_size); got 4")},
    {"required_gpus string", WITH_GPUS(2, "\"2\""), 0, false,
     GPU_ERR("", "an integer or a non-empty list of integers; got \"2\"")},
    {"required_gpus float", WITH_GPUS(2, "2.0"), 0, false,
     GPU_ERR("", "an integer or a non-empty list of integers; got 2.0")},
    {"required_gpus empty list", WITH_GPUS(2, "[]"), 0, false,
     GPU_ERR("", "an integer or a non-empty list of integers; got []")},
    {"required_gpus list of strings", WITH_GPUS(2, "[\"2\"]"), 0, false,
     GPU_ERR("[0]", "an integer; got \"2\"")},
    {"hardware not an object",
     "{\"hardware\":[2],\"benchmark_contract\":{\"distributed_evaluation\":" OK3(2) "}}", 0, false,
     F ": hardware: expected an object; got [2]"},
    {"legacy: no key, required_gpus 8", "{\"hardware\":{\"required_gpus\":8}}", 1, true, NULL},
    {"legacy: contract without the key",
     "{\"benchmark_contract\":{\"other\":1},\"hardware\":{\"required_gpus\":[2,2]}}", 1, true,
     NULL},
    {"legacy: hardware malformed is ignored", "{\"hardware\":\"8 GPUs\"}", 1, true, NULL},
    {"distributed_evaluation null", DIST("null"), 1, true, NULL},
    {"benchmark_contract null", "{\"benchmark_contract\":null}", 1, true, NULL},
    {"no metadata", NULL, 1, true, NULL},
    {"distributed_evaluation a string", DIST("\"torchrun\""), 0, false,
     D ": expected an object {launcher, backend, world_size}; got \"torchrun\""},
    {"distributed_evaluation a list", DIST("[2]"), 0, false,
     D ": expected an object {launcher, backend, world_size}; got [2]"},
    {"distributed_evaluation true", DIST("true"), 0, false,
     D ": expected an object {launcher, backend, world_size}; got true"},
    {"benchmark_contract a list", "{\"benchmark_contract\":[1]}", 0, false,
     F ": benchmark_contract: expected an object; got [1]"},
    {"benchmark_contract a string", "{\"benchmark_contract\":\"distributed\"}", 0, false,
     F ": benchmark_contract: expected an object; got \"distributed\""},
    {"metadata not an object", "[1]", 0, false, F ": expected an object; got [1]"},
    {"operator name does not grant it",
     "{\"name\":\"allreduce_distributed\",\"operator\":\"allreduce_distributed\","
     "\"hardware\":{\"required_gpus\":2},\"tags\":[\"distributed\",\"torchrun\"]}",
     1, true, NULL},
};

static void run_row(const struct row *r)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_benchmark_contract c;
    json_t *meta = NULL;
    int rc;

    if (r->metadata)
        assert_int_equal(aka_json_load_buf(F, r->metadata, strlen(r->metadata), &meta, &err), 0);
    rc = aka_benchmark_contract_from_json(F, meta, &c, &err);
    json_decref(meta);
    if (r->error) {
        if (rc == 0 || strcmp(err.msg, r->error) != 0)
            fail_msg("%s: expected error\n  %s\ngot rc %d\n  %s", r->name, r->error, rc, err.msg);
        assert_int_equal(err.code, AKA_EXIT_USAGE);
        assert_null(strchr(err.msg, '\n')); /* one line */
        return;
    }
    if (rc != 0)
        fail_msg("%s: unexpected error: %s", r->name, err.msg);
    assert_int_equal(c.world_size, r->world_size);
    assert_int_equal(c.source_policy_inspection, r->inspection);
    assert_int_equal(c.explicit_distributed, r->world_size >= 2);
    assert_int_equal(c.has_metadata, r->metadata != NULL);
    assert_string_equal(c.launcher, r->world_size >= 2 ? "torchrun" : "");
    assert_string_equal(c.backend, r->world_size >= 2 ? "nccl" : "");
    assert_true(strlen(c.reason) > 0);
}

static void t_table(void **state)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        run_row(&rows[i]);
}

static void path_in_tmp(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", aka_scratch_dir(), name);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void t_load_missing_file(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_benchmark_contract c;
    char p[512];
    path_in_tmp(p, sizeof(p), "absent.json");
    assert_int_equal(aka_benchmark_contract_load(p, &c, &err), 0);
    assert_false(c.has_metadata);
    assert_int_equal(c.world_size, 1);
    assert_true(c.source_policy_inspection);
    assert_non_null(strstr(c.reason, "no metadata file"));
}

static void t_load_file(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_benchmark_contract c;
    char p[512], want[768];
    path_in_tmp(p, sizeof(p), "metadata.json");
    write_text(p, DIST(OK3(2)));
    assert_int_equal(aka_benchmark_contract_load(p, &c, &err), 0);
    assert_int_equal(c.world_size, 2);
    assert_false(c.source_policy_inspection);
    /* The reason (pinned in campaign.json, compared on every start) names the file without
     * its directory: a copied or moved workspace is the same campaign. */
    assert_int_equal(strncmp(c.reason, "metadata.json declares", 22), 0);
    write_text(p, "{\"hardware\":{\"required_gpus\":1}}");
    assert_int_equal(aka_benchmark_contract_load(p, &c, &err), 0);
    assert_int_equal(strncmp(c.reason, "metadata.json has no", 20), 0);
    write_text(p, DIST(OK3(1)));
    assert_int_equal(aka_benchmark_contract_load(p, &c, &err), -1);
    snprintf(want, sizeof(want), "%s: benchmark_contract.distributed_evaluation.world_size: %s1", p,
             WS_WANT);
    assert_string_equal(err.msg, want);
    /* A directory where the file should be is an error, not "no metadata". */
    path_in_tmp(p, sizeof(p), "dir.json");
    mkdir(p, 0755);
    assert_int_equal(aka_benchmark_contract_load(p, &c, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "dir.json"));
    /* Invalid JSON names the file, line and column. */
    path_in_tmp(p, sizeof(p), "bad.json");
    write_text(p, "{\n  \"benchmark_contract\": {,\n}");
    assert_int_equal(aka_benchmark_contract_load(p, &c, &err), -1);
    assert_non_null(strstr(err.msg, "bad.json:2:"));
}

static void t_pinned_round_trip(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_benchmark_contract a, b;
    json_t *meta = NULL, *pinned;
    assert_int_equal(aka_json_load_buf(F, DIST(OK3(4)), strlen(DIST(OK3(4))), &meta, &err), 0);
    assert_int_equal(aka_benchmark_contract_from_json(F, meta, &a, &err), 0);
    pinned = aka_benchmark_contract_to_json(&a);
    assert_int_equal(aka_benchmark_contract_from_pinned("campaign.json", "contracts.benchmark",
                                                        pinned, &b, &err),
                     0);
    assert_int_equal(aka_benchmark_contract_check_same(&a, &b, "resume", &err), 0);
    /* A pinned object edited into an inconsistent decision is refused. */
    json_object_set_new(pinned, "source_policy_inspection", json_true());
    assert_int_equal(aka_benchmark_contract_from_pinned("campaign.json", "contracts.benchmark",
                                                        pinned, &b, &err),
                     -1);
    assert_non_null(strstr(err.msg, "campaign.json: contracts.benchmark: expected"));
    json_decref(pinned);
    json_decref(meta);
}

static void t_check_same_differs(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_benchmark_contract a, b;
    json_t *meta = NULL;
    assert_int_equal(aka_json_load_buf(F, DIST(OK3(2)), strlen(DIST(OK3(2))), &meta, &err), 0);
    assert_int_equal(aka_benchmark_contract_from_json(F, meta, &a, &err), 0);
    assert_int_equal(aka_benchmark_contract_from_json(F, NULL, &b, &err), 0);
    assert_int_equal(aka_benchmark_contract_check_same(&a, &b, "memory/v0 metadata.json", &err),
                     -1);
    assert_string_equal(err.msg, "memory/v0 metadata.json: the benchmark contract changed since "
                                 "the campaign pinned it: pinned torchrun/nccl on 2 GPUs, "
                                 "source-policy inspection off; now single GPU (world_size 1), "
                                 "source-policy inspection on");
    json_decref(meta);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_table),
        cmocka_unit_test(t_load_missing_file),
        cmocka_unit_test(t_load_file),
        cmocka_unit_test(t_pinned_round_trip),
        cmocka_unit_test(t_check_same_differs),
    };
    return cmocka_run_group_tests(tests, aka_scratch_setup, aka_scratch_teardown);
}
