/*
 * benchmark.c — derives the two pinned decisions of DESIGN §4.3 (distributed
 * evaluation, source-policy inspection) from an operator's private metadata.
 *
 * The rules are deliberately narrow:
 *   - only benchmark_contract.distributed_evaluation can ask for more than one
 *     GPU, and only as exactly {launcher: "torchrun", backend: "nccl",
 *     world_size: N >= 2}; anything else under that key is an error, because a
 *     half-valid contract would silently run a distributed operator on one GPU
 *     (or switch off inspection for a single-GPU one);
 *   - an explicit contract must agree with every hardware.required_gpus value;
 *   - metadata without the key is single-GPU with inspection on, whatever
 *     hardware.required_gpus says (legacy metadata predates the contract and its
 *     required_gpus was advisory);
 *   - nothing here reads an operator name: names are chosen by whoever writes
 *     the operator, and a name must never be able to grant the exception.
 *
 * A JSON null under either key counts as absent, as upstream metadata uses null
 * for "not set" (and json.h treats null the same way everywhere).
 */
#include "contracts/benchmark.h"
#include "base/json.h"
#include "base/strbuf.h"
#include "contracts/records.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define DIST_PATH "benchmark_contract.distributed_evaluation"
#define WORLD_MAX 65536 /* fits an int; far above any single launcher's rank count */

/* obj.key, with null meaning absent. */
static json_t *field(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_null(v) ? NULL : v;
}

static void set_single(struct aka_benchmark_contract *out, const char *why)
{
    out->explicit_distributed = false;
    out->world_size = 1;
    out->launcher[0] = out->backend[0] = '\0';
    out->source_policy_inspection = true;
    snprintf(out->reason, sizeof(out->reason), "%s: single GPU, source-policy inspection on", why);
}

static int check_fixed_string(const struct jctx *c, json_t *dist, const char *key, const char *want)
{
    json_t *v = field(dist, key);
    char path[96], quoted[40];
    if (v && json_is_string(v) && strcmp(json_string_value(v), want) == 0)
        return 0;
    snprintf(path, sizeof(path), "%s.%s", DIST_PATH, key);
    snprintf(quoted, sizeof(quoted), "\"%s\"", want);
    return aka_record_expected(c, path, quoted, v);
}

static int check_world_size(const struct jctx *c, json_t *dist, int *out)
{
    json_t *v = field(dist, "world_size");
    /* json_is_integer excludes booleans and reals: 2.0 is not a rank count. */
    if (v && json_is_integer(v) && json_integer_value(v) >= 2 &&
        json_integer_value(v) <= WORLD_MAX) {
        *out = (int)json_integer_value(v);
        return 0;
    }
    char want[64];
    snprintf(want, sizeof(want), "an integer from 2 to %d", WORLD_MAX);
    return aka_record_expected(c, DIST_PATH ".world_size", want, v);
}

static int check_no_unknown_keys(const struct jctx *c, json_t *dist)
{
    static const char *const known[] = {"launcher", "backend", "world_size", NULL};
    const char *key;
    json_t *v;
    json_object_foreach(dist, key, v)
    {
        if (jenum_index(key, known) >= 0)
            continue;
        struct strbuf p = STRBUF_INIT;
        jpath_key(&p, DIST_PATH, key);
        jfail(c, p.buf, "expected only launcher, backend and world_size; got an unknown field");
        strbuf_release(&p);
        return -1;
    }
    return 0;
}

static int check_gpu_value(const struct jctx *c, const char *path, json_t *v, int world)
{
    char want[96];
    if (json_is_integer(v) && json_integer_value(v) == world)
        return 0;
    if (!json_is_integer(v))
        return aka_record_expected(c, path, "an integer", v);
    snprintf(want, sizeof(want), "%d (" DIST_PATH ".world_size)", world);
    return aka_record_expected(c, path, want, v);
}

/* Every hardware.required_gpus value present must equal world_size (1 included). */
static int check_required_gpus(const struct jctx *c, json_t *meta, int world)
{
    json_t *hw = field(meta, "hardware"), *gpus, *item;
    size_t i;
    if (!hw)
        return 0;
    if (!json_is_object(hw))
        return aka_record_expected(c, "hardware", "an object", hw);
    gpus = field(hw, "required_gpus");
    if (!gpus)
        return 0;
    if (json_is_integer(gpus))
        return check_gpu_value(c, "hardware.required_gpus", gpus, world);
    if (!json_is_array(gpus) || json_array_size(gpus) == 0)
        return aka_record_expected(c, "hardware.required_gpus",
                                   "an integer or a non-empty list of integers", gpus);
    json_array_foreach(gpus, i, item)
    {
        char path[64];
        snprintf(path, sizeof(path), "hardware.required_gpus[%zu]", i);
        if (check_gpu_value(c, path, item, world) < 0)
            return -1;
    }
    return 0;
}

/* The metadata file as the reason names it: its name only. The reason is pinned in
 * campaign.json and compared on every start, and a directory in it would make a workspace
 * that was moved or copied (tests copy one campaign per case) a different campaign. */
static const char *file_name(const char *file)
{
    const char *slash = strrchr(file, '/');
    return slash ? slash + 1 : file;
}

static int parse_distributed(const struct jctx *c, json_t *meta, json_t *dist,
                             struct aka_benchmark_contract *out)
{
    int world = 0;
    if (!json_is_object(dist))
        return aka_record_expected(c, DIST_PATH, "an object {launcher, backend, world_size}", dist);
    if (check_fixed_string(c, dist, "launcher", "torchrun") < 0 ||
        check_fixed_string(c, dist, "backend", "nccl") < 0 ||
        check_world_size(c, dist, &world) < 0 || check_no_unknown_keys(c, dist) < 0 ||
        check_required_gpus(c, meta, world) < 0)
        return -1;
    out->explicit_distributed = true;
    out->world_size = world;
    snprintf(out->launcher, sizeof(out->launcher), "torchrun");
    snprintf(out->backend, sizeof(out->backend), "nccl");
    /* The exception: the policy tokenizer cannot judge rank-collective code fairly.
     * Correctness, probes, verification and immutable inputs all stay on. */
    out->source_policy_inspection = false;
    snprintf(out->reason, sizeof(out->reason),
             "%s declares " DIST_PATH " torchrun/nccl with world_size %d: "
             "%d GPUs, source-policy inspection off",
             file_name(c->file), world, world);
    return 0;
}

static int benchmark_contract_from_json_impl(const char *file, json_t *metadata,
                                             struct aka_benchmark_contract *out,
                                             struct aka_err *err)
{
    struct jctx c = {file, err};
    json_t *bc, *dist;
    char why[192];

    memset(out, 0, sizeof(*out));
    if (!metadata) {
        set_single(out, "no metadata file");
        return 0;
    }
    out->has_metadata = true;
    if (!json_is_object(metadata))
        return aka_record_expected(&c, "", "an object", metadata);
    bc = field(metadata, "benchmark_contract");
    if (bc && !json_is_object(bc))
        return aka_record_expected(&c, "benchmark_contract", "an object", bc);
    dist = bc ? field(bc, "distributed_evaluation") : NULL;
    if (dist)
        return parse_distributed(&c, metadata, dist, out);
    snprintf(why, sizeof(why), "%s has no " DIST_PATH, file_name(file));
    set_single(out, why);
    return 0;
}

static int benchmark_contract_load_impl(const char *metadata_path,
                                        struct aka_benchmark_contract *out, struct aka_err *err)
{
    struct stat st;
    json_t *meta = NULL;
    int rc;

    /* Only "does not exist" means "no metadata"; an unreadable or odd file is an error. */
    if (lstat(metadata_path, &st) < 0 && errno == ENOENT)
        return aka_benchmark_contract_from_json(metadata_path, NULL, out, err);
    if (aka_json_load_file(metadata_path, &meta, err) < 0) {
        memset(out, 0, sizeof(*out));
        return -1;
    }
    rc = aka_benchmark_contract_from_json(metadata_path, meta, out, err);
    json_decref(meta);
    return rc;
}

json_t *aka_benchmark_contract_to_json(const struct aka_benchmark_contract *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "world_size", json_integer(c->world_size));
    json_object_set_new(o, "launcher", c->launcher[0] ? json_string(c->launcher) : json_null());
    json_object_set_new(o, "backend", c->backend[0] ? json_string(c->backend) : json_null());
    json_object_set_new(o, "explicit", json_boolean(c->explicit_distributed));
    json_object_set_new(o, "source_policy_inspection", json_boolean(c->source_policy_inspection));
    json_object_set_new(o, "reason", json_string(c->reason));
    return o;
}

/* The two decisions must be self-consistent: either single GPU with inspection,
 * or an explicit torchrun/nccl contract on >= 2 GPUs without it. */
static int check_pinned_shape(const struct jctx *c, const char *path,
                              const struct aka_benchmark_contract *out)
{
    bool dist_ok = out->explicit_distributed && out->world_size >= 2 &&
                   strcmp(out->launcher, "torchrun") == 0 && strcmp(out->backend, "nccl") == 0 &&
                   !out->source_policy_inspection;
    bool single_ok = !out->explicit_distributed && out->world_size == 1 && !out->launcher[0] &&
                     !out->backend[0] && out->source_policy_inspection;
    if (dist_ok || single_ok)
        return 0;
    return jfail(c, path,
                 "expected a single-GPU decision with inspection on, or torchrun/nccl on >= 2 "
                 "GPUs with inspection off; got world_size %d, launcher \"%s\", backend \"%s\", "
                 "inspection %s",
                 out->world_size, out->launcher, out->backend,
                 out->source_policy_inspection ? "on" : "off");
}

static int copy_opt_string(const struct jctx *c, json_t *o, const char *path, const char *key,
                           char *dst, size_t size)
{
    const char *s = NULL;
    if (jget_str(c, o, path, key, false, &s) < 0)
        return -1;
    snprintf(dst, size, "%s", s ? s : "");
    return 0;
}

static int benchmark_contract_from_pinned_impl(const char *file, const char *path, json_t *pinned,
                                               struct aka_benchmark_contract *out,
                                               struct aka_err *err)
{
    static const char *const keys[] = {
        "world_size", "launcher", "backend", "explicit", "source_policy_inspection",
        "reason",     NULL};
    struct jctx c = {file, err};
    long long world = 0;
    const char *reason = NULL;

    memset(out, 0, sizeof(*out));
    if (jexpect_obj(&c, pinned, path) < 0 || jcheck_keys(&c, pinned, path, keys) < 0 ||
        jget_int(&c, pinned, path, "world_size", true, &world) < 0 ||
        copy_opt_string(&c, pinned, path, "launcher", out->launcher, sizeof(out->launcher)) < 0 ||
        copy_opt_string(&c, pinned, path, "backend", out->backend, sizeof(out->backend)) < 0 ||
        jget_bool(&c, pinned, path, "explicit", true, &out->explicit_distributed) < 0 ||
        jget_bool(&c, pinned, path, "source_policy_inspection", true,
                  &out->source_policy_inspection) < 0 ||
        jget_str(&c, pinned, path, "reason", false, &reason) < 0)
        return -1;
    out->world_size = world > WORLD_MAX || world < 0 ? -1 : (int)world;
    /* has_metadata is not part of the pinned form (and check_same ignores it). */
    snprintf(out->reason, sizeof(out->reason), "%s", reason ? reason : "");
    return check_pinned_shape(&c, path, out);
}

static void summarize(const struct aka_benchmark_contract *c, char *buf, size_t size)
{
    if (c->explicit_distributed)
        snprintf(buf, size, "%s/%s on %d GPUs, source-policy inspection %s", c->launcher,
                 c->backend, c->world_size, c->source_policy_inspection ? "on" : "off");
    else
        snprintf(buf, size, "single GPU (world_size %d), source-policy inspection %s",
                 c->world_size, c->source_policy_inspection ? "on" : "off");
}

static int benchmark_contract_check_same_impl(const struct aka_benchmark_contract *pinned,
                                              const struct aka_benchmark_contract *now,
                                              const char *where, struct aka_err *err)
{
    char a[160], b[160];
    if (pinned->explicit_distributed == now->explicit_distributed &&
        pinned->world_size == now->world_size && strcmp(pinned->launcher, now->launcher) == 0 &&
        strcmp(pinned->backend, now->backend) == 0 &&
        pinned->source_policy_inspection == now->source_policy_inspection)
        return 0;
    summarize(pinned, a, sizeof(a));
    summarize(now, b, sizeof(b));
    return aka_err_set(err, AKA_EXIT_USAGE,
                       "%s: the benchmark contract changed since the campaign pinned it: "
                       "pinned %s; now %s",
                       where, a, b);
}

/* ---- public entry points: every error leaves here as one line ---- */

int aka_benchmark_contract_from_json(const char *file, json_t *metadata,
                                     struct aka_benchmark_contract *out, struct aka_err *err)
{
    return aka_record_one_line(benchmark_contract_from_json_impl(file, metadata, out, err), err);
}

int aka_benchmark_contract_load(const char *metadata_path, struct aka_benchmark_contract *out,
                                struct aka_err *err)
{
    return aka_record_one_line(benchmark_contract_load_impl(metadata_path, out, err), err);
}

int aka_benchmark_contract_from_pinned(const char *file, const char *path, json_t *pinned,
                                       struct aka_benchmark_contract *out, struct aka_err *err)
{
    return aka_record_one_line(benchmark_contract_from_pinned_impl(file, path, pinned, out, err),
                               err);
}

int aka_benchmark_contract_check_same(const struct aka_benchmark_contract *pinned,
                                      const struct aka_benchmark_contract *now, const char *where,
                                      struct aka_err *err)
{
    return aka_record_one_line(benchmark_contract_check_same_impl(pinned, now, where, err), err);
}
