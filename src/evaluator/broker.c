/*
 * broker.c — the evaluations and profiles an agent asks for in a campaign whose jobs it
 * cannot run itself.
 *
 * In a campaign over ssh, Slurm or a gateway the agent still runs on the campaign's host,
 * in its sandbox, without the transport: it has no network to the GPU host and never sees
 * ~/.ssh. A GPU campaign on this host brokers too by default (optimize's --agent-eval): a
 * CUDA job nested in the agent sandbox was refused by the driver, so that sandbox binds no
 * GPU. So its `aka eval` cannot run a job itself. Instead it hands the request to the
 * supervisor through two directories of its episode view (workspace paths
 * AKA_WS_BROKER_REQUESTS and AKA_WS_BROKER_RESULTS):
 *
 *   requests/  writable by the agent: one <id>.json per evaluation, renamed into place
 *              complete; the kernel's bytes inside (base64), and only the flags an agent
 *              may choose (shapes, seeds, runs, warm-up, time budget, knobs, timed inputs);
 *   results/   read-only to the agent (the view is bound read-only and only requests/ is
 *              bound writable over it): <id>.json written by the supervisor, the outcome
 *              as `aka eval` prints it, or the error that stopped it.
 *
 * The supervisor's thread (aka_eval_broker_start) serves the requests one at a time while
 * the agent's session lasts, through the campaign's transport, on the pinned operator
 * snapshot and asset tree (the caller's `resolve` re-verifies them before every job), with
 * the campaign's framework, platform and timeout: nothing in a request names an operator,
 * a path on this host, a transport or a platform. A request is untrusted input: read
 * without following a symbolic link, size-capped, parsed field by field. Its kernel is
 * written to a directory of the supervisor's own. What comes back is only ever the agent's
 * information: the supervisor never reads a result, and promotes nothing from one (its own
 * verification evaluates the committed candidate again).
 *
 * An agent's `aka profile` travels the same way: the request adds "profile" (level, kernel
 * regex, extra metric names, exactly one shape) and the supervisor runs the job under its
 * own profiler command line (aka_eval_broker_base.profiler: the profiler found on the
 * supervisor's host, flags checked there), then returns the export's text in the result
 * ("profile_export", at most EXPORT_MAX_BYTES), which the agent's side writes into its own
 * artifact directory and summarizes as a local profile's.
 */
#include "evaluator/evaluator.h"

#include "base/base64.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/proc.h"
#include "workspace/workspace.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS           200
#define REQUEST_MAX_BYTES ((size_t)8 << 20)
#define KERNEL_MAX_BYTES  ((size_t)4 << 20)
#define MAX_SHAPE_IDS     256
#define MAX_TUNE          64
#define ID_LEN            16
#define MAX_METRICS       32
/* An ncu CSV of 200 launches at the deep level stays well under this; a larger export is
 * refused rather than cut (a cut CSV would read as a malformed one). */
#define EXPORT_MAX_BYTES ((size_t)16 << 20)

static const char *const request_keys[] = {
    "kernel_name",    "kernel_base64", "shape_ids",    "multi_seed", "timed_runs", "warmup",
    "time_budget_ms", "tune",          "timed_inputs", "timing",     "profile",    NULL};
static const char *const profile_keys[] = {"level", "kernel_regex", "metrics", NULL};
static const char *const profile_levels[] = {"survey", "sol", "deep", NULL};

/* ---- names ----------------------------------------------------------------------------------- */

/* "<16 hex digits>.json": the only request names served (temp files and anything else the
 * agent leaves in requests/ are ignored). */
static bool request_name(const char *name, char id[ID_LEN + 1])
{
    size_t n = strlen(name);
    if (n != ID_LEN + 5 || strcmp(name + ID_LEN, ".json") != 0)
        return false;
    for (size_t i = 0; i < ID_LEN; i++)
        if (!strchr("0123456789abcdef", name[i]))
            return false;
    memcpy(id, name, ID_LEN);
    id[ID_LEN] = '\0';
    return true;
}

/* A kernel file name the supervisor may write: letters, digits, '.', '_', '-', not
 * starting with a dot, at most 64 bytes (the extension tells the framework's compiler). */
static bool kernel_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64 || s[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", s[i]))
            return false;
    return true;
}

/* ---- the request: written by the agent's `aka eval`, read by the supervisor ------------------ */

static json_t *request_json(const struct aka_eval_request *req, const struct strbuf *kernel)
{
    struct strbuf b64 = STRBUF_INIT;
    const char *base = strrchr(req->kernel, '/');
    aka_base64_encode(kernel->buf, kernel->len, &b64);
    json_t *j =
        json_pack("{s:s, s:s, s:i, s:i, s:i, s:i}", "kernel_name", base ? base + 1 : req->kernel,
                  "kernel_base64", b64.buf, "multi_seed", req->multi_seed, "timed_runs",
                  req->timed_runs, "warmup", req->warmup, "time_budget_ms", req->time_budget_ms);
    json_object_set_new(j, "shape_ids", aka_json_string_array(req->shape_ids));
    json_object_set_new(j, "tune", aka_json_string_array(req->tune));
    if (req->timed_inputs)
        json_object_set_new(j, "timed_inputs", json_string(req->timed_inputs));
    if (req->timing)
        json_object_set_new(j, "timing", json_string(req->timing));
    if (req->profile_ask) {
        const struct aka_eval_profile_ask *a = req->profile_ask;
        json_t *p = json_pack("{s:s, s:o}", "level", a->level, "metrics",
                              aka_json_string_array(a->metrics));
        if (a->kernel_regex)
            json_object_set_new(p, "kernel_regex", json_string(a->kernel_regex));
        json_object_set_new(j, "profile", p);
    }
    strbuf_release(&b64);
    return j;
}

/* What one request asks for, parsed and bounded. */
struct wanted {
    const char *kernel_name;
    struct strbuf kernel;
    struct strvec shape_ids, tune;
    long long multi_seed, timed_runs, warmup, time_budget_ms;
    const char *timed_inputs;
    const char *timing;
    bool profile; /* a profile: level, kernel_regex (NULL: every kernel) and metrics */
    const char *level, *kernel_regex;
    struct strvec metrics;
};

static int string_list(const struct jctx *c, json_t *obj, const char *path, const char *key,
                       size_t max, struct strvec *out)
{
    json_t *arr = NULL, *v;
    size_t i;
    if (jget_arr(c, obj, path, key, false, &arr) < 0)
        return -1;
    if (arr && json_array_size(arr) > max)
        return jfail(c, key, "expected at most %zu entries; got %zu", max, json_array_size(arr));
    json_array_foreach(arr, i, v)
    {
        if (!json_is_string(v) || strlen(json_string_value(v)) > 256)
            return jfail(c, key, "expected strings of at most 256 bytes");
        strvec_push(out, json_string_value(v));
    }
    return 0;
}

static int counts(const struct jctx *c, json_t *obj, struct wanted *w)
{
    struct {
        const char *key;
        long long *at, lo, hi;
    } rows[] = {{"multi_seed", &w->multi_seed, 0, 1000},
                {"timed_runs", &w->timed_runs, -1, 100000},
                {"warmup", &w->warmup, -1, 100000},
                {"time_budget_ms", &w->time_budget_ms, -1, 3600000}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        *rows[i].at = rows[i].lo;
        if (jget_int(c, obj, "", rows[i].key, false, rows[i].at) < 0)
            return -1;
        if (*rows[i].at < rows[i].lo || *rows[i].at > rows[i].hi)
            return jfail(c, rows[i].key, "expected %lld..%lld; got %lld", rows[i].lo, rows[i].hi,
                         *rows[i].at);
    }
    return 0;
}

/* The optional "profile" object: which level, kernels and extra metrics. Its strings reach
 * the profiler's command line only through the supervisor's own checks (profile.h's
 * aka_profile_ncu_argv refuses a metric that would read as a flag). */
static int parse_profile(const struct jctx *c, json_t *doc, struct wanted *w)
{
    json_t *p = NULL;
    int level = 0;
    if (jget_obj(c, doc, "", "profile", false, &p) < 0)
        return -1;
    if (!p)
        return 0;
    if (jcheck_keys(c, p, "profile", profile_keys) < 0 ||
        jget_enum(c, p, "profile", "level", true, profile_levels, &level) < 0 ||
        jget_str(c, p, "profile", "kernel_regex", false, &w->kernel_regex) < 0 ||
        string_list(c, p, "profile", "metrics", MAX_METRICS, &w->metrics) < 0)
        return -1;
    if (w->shape_ids.n != 1)
        return jfail(c, "shape_ids", "a profile runs one shape; expected 1 id, got %zu",
                     w->shape_ids.n);
    w->profile = true;
    w->level = profile_levels[level];
    return 0;
}

static int parse_request(const char *path, json_t *doc, struct wanted *w, struct aka_err *err)
{
    struct jctx c = {path, err};
    const char *b64 = NULL;
    int mode = 0, timing = 0;
    if (jexpect_obj(&c, doc, "") < 0 || jcheck_keys(&c, doc, "", request_keys) < 0 ||
        jget_str(&c, doc, "", "kernel_name", true, &w->kernel_name) < 0 ||
        jget_str(&c, doc, "", "kernel_base64", true, &b64) < 0 || counts(&c, doc, w) < 0 ||
        string_list(&c, doc, "", "shape_ids", MAX_SHAPE_IDS, &w->shape_ids) < 0 ||
        string_list(&c, doc, "", "tune", MAX_TUNE, &w->tune) < 0 ||
        jget_enum(&c, doc, "", "timed_inputs", false, aka_eval_timed_input_modes, &mode) < 0 ||
        jget_enum(&c, doc, "", "timing", false, aka_eval_timing_modes, &timing) < 0)
        return -1;
    w->timed_inputs = aka_eval_timed_input_modes[mode];
    w->timing = aka_eval_timing_modes[timing];
    if (!kernel_name_ok(w->kernel_name))
        return jfail(&c, "kernel_name",
                     "expected a plain file name (letters, digits, '.', '_', "
                     "'-'; at most 64 bytes)");
    if (!aka_base64_decode(b64, strlen(b64), KERNEL_MAX_BYTES, &w->kernel))
        return jfail(&c, "kernel_base64", "expected base64 of at most %zu bytes", KERNEL_MAX_BYTES);
    return parse_profile(&c, doc, w);
}

static void wanted_release(struct wanted *w)
{
    strbuf_release(&w->kernel);
    strvec_clear(&w->shape_ids);
    strvec_clear(&w->tune);
    strvec_clear(&w->metrics);
}

/* ---- the result: written by the supervisor, read by the agent's `aka eval` ------------------- */

static json_t *outcome_json(const struct aka_eval_outcome *o)
{
    /* The job's stderr as it is (the agent's `aka eval -v` escapes it line by line when
     * it prints, as for a local evaluation); invalid UTF-8 only is replaced. */
    return json_pack(
        "{s:i, s:o, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:f, s:o, s:o}", "exit_code", o->exit_code,
        "result", aka_eval_result_json(o), "kernel_sha256", o->kernel_sha256, "eval_id", o->eval_id,
        "isolation", o->isolation, "transport", o->transport, "platform", o->platform, "framework",
        o->framework ? o->framework : "", "command_exit", o->command_exit, "seconds", o->seconds,
        "log", aka_json_text(o->log.buf, o->log.len), "notes", aka_json_string_array(&o->notes));
}

static json_t *error_json(const struct aka_err *e)
{
    return json_pack("{s:{s:i, s:s}}", "error", "code", e->code, "message", e->msg);
}

static void copy_field(json_t *doc, const char *key, char *dst, size_t n)
{
    const char *s = json_string_value(json_object_get(doc, key));
    snprintf(dst, n, "%s", s ? s : "");
}

static int outcome_from_json(const char *path, json_t *doc, struct aka_eval_outcome *o,
                             struct aka_err *err)
{
    struct jctx c = {path, err};
    json_t *result = NULL, *notes = NULL, *v;
    const char *log = "", *framework = "";
    long long exit_code = 1, command_exit = 0;
    size_t i;
    if (jget_int(&c, doc, "", "exit_code", true, &exit_code) < 0 ||
        jget_obj(&c, doc, "", "result", true, &result) < 0 ||
        jget_int(&c, doc, "", "command_exit", false, &command_exit) < 0 ||
        jget_num(&c, doc, "", "seconds", false, &o->seconds) < 0 ||
        jget_str(&c, doc, "", "log", false, &log) < 0 ||
        jget_str(&c, doc, "", "framework", false, &framework) < 0 ||
        jget_arr(&c, doc, "", "notes", false, &notes) < 0 ||
        aka_result_from_json(path, result, &o->result, err) < 0)
        return -1;
    o->exit_code = (int)exit_code;
    o->command_exit = (int)command_exit;
    o->framework = aka_eval_framework(framework);
    copy_field(doc, "kernel_sha256", o->kernel_sha256, sizeof(o->kernel_sha256));
    copy_field(doc, "eval_id", o->eval_id, sizeof(o->eval_id));
    copy_field(doc, "isolation", o->isolation, sizeof(o->isolation));
    copy_field(doc, "platform", o->platform, sizeof(o->platform));
    copy_field(doc, "transport", o->transport, sizeof(o->transport));
    o->brokered = true;
    strbuf_addstr(&o->log, log);
    json_array_foreach(notes, i, v) if (json_is_string(v))
        strvec_push(&o->notes, json_string_value(v));
    return 0;
}

/* ---- the agent's side ------------------------------------------------------------------------ */

bool aka_eval_broker_present(const char *view)
{
    struct strbuf p = STRBUF_INIT;
    aka_ws_path(&p, view, AKA_WS_BROKER_REQUESTS);
    bool there = aka_is_dir(p.buf);
    strbuf_release(&p);
    return there;
}

static int post_request(const char *view, const char *id, const struct aka_eval_request *req,
                        struct aka_err *err)
{
    struct strbuf kernel = STRBUF_INIT, dst = STRBUF_INIT;
    int rc = aka_read_file(req->kernel, &kernel, KERNEL_MAX_BYTES, err);
    if (rc == 0) {
        /* Written whole under a temporary name and renamed (base/fs.c): the broker serves
         * only <id>.json, so it never reads a half-written request. */
        json_t *j = request_json(req, &kernel);
        aka_ws_path(&dst, view, AKA_WS_BROKER_REQUESTS);
        strbuf_addf(&dst, "/%s.json", id);
        rc = aka_json_write_file(dst.buf, j, err);
        json_decref(j);
    }
    strbuf_release(&kernel);
    strbuf_release(&dst);
    return rc;
}

/* A profile's export, as the supervisor's job wrote it, into the agent's artifact_dir; an
 * earlier profile's export there is removed first, so none is never read as this one's. */
static int keep_export(const char *path, json_t *doc, const struct aka_eval_request *req,
                       struct aka_err *err)
{
    struct jctx c = {path, err};
    struct strbuf dst = STRBUF_INIT;
    const char *text = NULL;
    if (!req->profile_ask || !req->artifact_dir)
        return 0;
    aka_path_join(&dst, req->artifact_dir, AKA_EVAL_PROFILE_EXPORT);
    int rc = aka_remove_tree(dst.buf, err);
    if (rc == 0)
        rc = jget_str(&c, doc, "", "profile_export", false, &text);
    if (rc == 0 && text) /* none: `aka profile` says the profiler wrote no export */
        rc = aka_mkdir_p(req->artifact_dir, 0755, err);
    if (rc == 0 && text)
        rc = aka_write_file_atomic(dst.buf, text, strlen(text), 0644, err);
    strbuf_release(&dst);
    return rc;
}

static int read_answer(const char *path, const struct aka_eval_request *req,
                       struct aka_eval_outcome *out, struct aka_err *err)
{
    json_t *doc = NULL, *e;
    if (aka_json_load_file(path, &doc, err) < 0)
        return -1;
    int rc;
    if ((e = json_object_get(doc, "error")) != NULL) {
        long long code = json_integer_value(json_object_get(e, "code"));
        const char *msg = json_string_value(json_object_get(e, "message"));
        rc = aka_err_set(err, code == AKA_EXIT_USAGE ? AKA_EXIT_USAGE : AKA_EXIT_ENV,
                         "%s (evaluated by the supervisor on the campaign's transport)",
                         msg ? msg : "no message");
    } else {
        rc = outcome_from_json(path, doc, out, err);
        if (rc == 0)
            rc = keep_export(path, doc, req, err);
    }
    json_decref(doc);
    return rc;
}

int aka_eval_broker_call(const char *view, const struct aka_eval_request *req,
                         struct aka_eval_outcome *out, struct aka_err *err)
{
    char id[ID_LEN + 1], a[9], b[9];
    struct strbuf answer = STRBUF_INIT;
    aka_random_hex8(a);
    aka_random_hex8(b);
    snprintf(id, sizeof(id), "%s%s", a, b);
    int rc = post_request(view, id, req, err);
    aka_ws_path(&answer, view, AKA_WS_BROKER_RESULTS);
    strbuf_addf(&answer, "/%s.json", id);
    if (rc == 0)
        fprintf(stderr,
                "aka %s: %s %s handed to the supervisor (the campaign's jobs run on its "
                "transport); waiting\n",
                req->profile_ask ? "profile" : "eval", req->profile_ask ? "profile" : "evaluation",
                id);
    /* No limit of its own: the agent's session timeout ends a wait the supervisor never
     * answers, and an evaluation's length is the transport's business. The heartbeat
     * (aka_eval_heartbeat_on) says the wait goes on. */
    struct proc_beat wait;
    proc_beat_start(&wait);
    while (rc == 0 && !aka_exists(answer.buf)) {
        struct timespec ts = {0, POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
        proc_beat_tick(&wait);
    }
    if (rc == 0)
        rc = read_answer(answer.buf, req, out, err);
    strbuf_release(&answer);
    return rc;
}

/* ---- the supervisor's side ------------------------------------------------------------------- */

struct aka_eval_broker {
    pthread_t thread;
    bool started;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stop;
    char *requests, *results, *scratch;
    const struct aka_sandbox_transport *t;
    struct aka_eval_broker_base base;
    struct strvec seen; /* request ids already answered (or refused) */
};

/* "agent evaluation <id>: PASS, latency geomean 19.3 us (ssh, 4.2 s)", or FAIL, or the
 * error, for the campaign's progress output. */
static void say_served(const struct aka_eval_broker *b, const char *what, const char *id,
                       const json_t *doc)
{
    struct strbuf line = STRBUF_INIT;
    const json_t *result = json_object_get(doc, "result");
    const json_t *error = json_object_get(doc, "error");
    double geo = json_number_value(json_object_get(result, "latency_us_geomean"));
    strbuf_addf(&line, "agent %s %s: ", what, id);
    if (error)
        strbuf_addf(&line, "error: %s", json_string_value(json_object_get(error, "message")));
    else if (json_is_true(json_object_get(result, "all_pass")))
        strbuf_addf(&line, "PASS, latency geomean %.3f us", geo);
    else
        strbuf_addf(&line, "FAIL (%zu failures)",
                    json_array_size(json_object_get(result, "failures")));
    if (!error)
        strbuf_addf(&line, " (%s, %.1f s)", json_string_value(json_object_get(doc, "transport")),
                    json_number_value(json_object_get(doc, "seconds")));
    b->base.served(b->base.served_data, line.buf);
    strbuf_release(&line);
}

static void answer(struct aka_eval_broker *b, const char *what, const char *id, json_t *doc)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_err e = AKA_ERR_INIT;
    strbuf_addf(&path, "%s/%s.json", b->results, id);
    if (aka_json_write_file(path.buf, doc, &e) < 0)
        fprintf(stderr, "aka: evaluation broker: %s\n", e.msg);
    else if (b->base.served)
        say_served(b, what, id, doc);
    json_decref(doc);
    strbuf_release(&path);
}

/* The request of w as the campaign's evaluation of kernel (the operator comes later). */
static void wanted_request(const struct aka_eval_broker *b, const struct wanted *w,
                           const char *kernel, struct aka_eval_request *req)
{
    *req = b->base.req;
    req->kernel = kernel;
    req->shape_ids = &w->shape_ids;
    req->tune = &w->tune;
    req->multi_seed = (int)w->multi_seed;
    req->timed_runs = (int)w->timed_runs;
    req->warmup = (int)w->warmup;
    req->time_budget_ms = (int)w->time_budget_ms;
    req->timed_inputs = w->timed_inputs;
    req->timing = w->timing;
}

/* A profile: the supervisor's own profiler command line (never one from the request), one
 * seed, one warm-up and one timed run, the export into export_dir. */
static int profile_request(const struct aka_eval_broker *b, const struct wanted *w,
                           struct strvec *argv, struct strbuf *tool_dir, const char *export_dir,
                           struct aka_eval_request *req, struct aka_err *e)
{
    struct aka_eval_profile_ask ask = {w->level, w->kernel_regex, &w->metrics};
    if (!b->base.profiler)
        return aka_err_set(e, AKA_EXIT_ENV, "profile: this campaign's supervisor does not profile");
    if (b->base.profiler(b->base.profiler_data, &ask, argv, tool_dir, e) < 0)
        return -1;
    req->profiler = argv;
    req->profiler_dir = tool_dir->buf;
    req->artifact_dir = export_dir;
    req->multi_seed = req->timed_runs = req->warmup = 1;
    return 0;
}

/* The profile job's export into the answer; none when the profiler wrote none. */
static int attach_export(json_t *doc, const char *export_dir, struct aka_err *e)
{
    struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
    int rc = 0;
    aka_path_join(&path, export_dir, AKA_EVAL_PROFILE_EXPORT);
    if (aka_exists(path.buf))
        rc = aka_read_plain_file(path.buf, &text, EXPORT_MAX_BYTES, e);
    if (rc == 0 && text.len)
        json_object_set_new(doc, "profile_export", aka_json_text(text.buf, text.len));
    strbuf_release(&path);
    strbuf_release(&text);
    return rc;
}

static json_t *evaluate_wanted(struct aka_eval_broker *b, const char *id, struct wanted *w)
{
    struct strbuf dir = STRBUF_INIT, kernel = STRBUF_INIT, export = STRBUF_INIT;
    struct strbuf op_dir = STRBUF_INIT, tool_dir = STRBUF_INIT;
    struct strvec profiler = STRVEC_INIT;
    struct aka_eval_outcome out;
    struct aka_eval_request req;
    struct aka_err e = AKA_ERR_INIT;
    json_t *doc = NULL;
    aka_eval_outcome_init(&out);
    strbuf_addf(&dir, "%s/%s", b->scratch, id);
    aka_path_join(&kernel, dir.buf, w->kernel_name);
    strbuf_addf(&export, "%s/%s.export", b->scratch, id); /* beside: any kernel name is free */
    wanted_request(b, w, kernel.buf, &req);
    int rc = aka_mkdir_p(dir.buf, 0700, &e);
    if (rc == 0)
        rc = aka_write_file_atomic(kernel.buf, w->kernel.buf, w->kernel.len, 0644, &e);
    if (rc == 0 && w->profile)
        rc = profile_request(b, w, &profiler, &tool_dir, export.buf, &req, &e);
    if (rc == 0)
        rc = b->base.resolve(b->base.resolve_data, &op_dir, &e);
    req.op_dir = op_dir.buf;
    if (rc == 0)
        rc = aka_evaluate(b->t, &req, &out, &e);
    if (rc == 0)
        doc = outcome_json(&out);
    if (doc && w->profile && attach_export(doc, export.buf, &e) < 0) {
        json_decref(doc);
        doc = NULL;
    }
    aka_eval_outcome_release(&out);
    strbuf_release(&dir);
    strbuf_release(&kernel);
    strbuf_release(&export);
    strbuf_release(&op_dir);
    strbuf_release(&tool_dir);
    strvec_clear(&profiler);
    return doc ? doc : error_json(&e);
}

static void serve_one(struct aka_eval_broker *b, const char *name, const char *id)
{
    struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
    struct aka_err e = AKA_ERR_INIT;
    struct wanted w = {.kernel = STRBUF_INIT,
                       .shape_ids = STRVEC_INIT,
                       .tune = STRVEC_INIT,
                       .metrics = STRVEC_INIT};
    json_t *doc = NULL, *reply = NULL;
    strvec_push(&b->seen, id);
    strbuf_addf(&path, "%s/%s", b->requests, name);
    if (aka_read_plain_file(path.buf, &text, REQUEST_MAX_BYTES, &e) == 0 &&
        aka_json_load_buf(path.buf, text.buf, text.len, &doc, &e) == 0 &&
        parse_request(path.buf, doc, &w, &e) == 0)
        reply = evaluate_wanted(b, id, &w);
    answer(b, w.profile ? "profile" : "evaluation", id, reply ? reply : error_json(&e));
    json_decref(doc);
    wanted_release(&w);
    strbuf_release(&path);
    strbuf_release(&text);
}

static bool seen(const struct aka_eval_broker *b, const char *id)
{
    for (size_t i = 0; i < b->seen.n; i++)
        if (strcmp(b->seen.v[i], id) == 0)
            return true;
    return false;
}

static bool stopping(struct aka_eval_broker *b)
{
    pthread_mutex_lock(&b->lock);
    bool stop = b->stop;
    pthread_mutex_unlock(&b->lock);
    return stop;
}

/* Serve every request not answered yet; false once stop is asked. */
static bool serve_pending(struct aka_eval_broker *b)
{
    struct strvec names = STRVEC_INIT;
    struct aka_err e = AKA_ERR_INIT;
    char id[ID_LEN + 1];
    if (aka_list_dir(b->requests, &names, &e) == 0)
        for (size_t i = 0; i < names.n && !stopping(b); i++)
            if (request_name(names.v[i], id) && !seen(b, id))
                serve_one(b, names.v[i], id);
    strvec_clear(&names);
    return !stopping(b);
}

static void *broker_main(void *arg)
{
    struct aka_eval_broker *b = arg;
    while (serve_pending(b)) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += POLL_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L)
            until.tv_sec++, until.tv_nsec -= 1000000000L;
        pthread_mutex_lock(&b->lock);
        if (!b->stop)
            pthread_cond_timedwait(&b->wake, &b->lock, &until);
        pthread_mutex_unlock(&b->lock);
    }
    return NULL;
}

static int make_dirs(struct aka_eval_broker *b, const char *view, struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT;
    aka_ws_path(&p, view, AKA_WS_BROKER_REQUESTS);
    b->requests = strbuf_detach(&p, NULL);
    aka_ws_path(&p, view, AKA_WS_BROKER_RESULTS);
    b->results = strbuf_detach(&p, NULL);
    if (aka_mkdir_p(b->requests, 0755, err) < 0 || aka_mkdir_p(b->results, 0755, err) < 0)
        return -1;
    /* The kernels of requests: the supervisor's own directory, never the agent's. */
    if (aka_make_temp_dir(NULL, "aka-broker-", &p, err) < 0)
        return -1;
    b->scratch = strbuf_detach(&p, NULL);
    return 0;
}

int aka_eval_broker_start(struct aka_eval_broker **out, const char *view,
                          const struct aka_sandbox_transport *t,
                          const struct aka_eval_broker_base *base, struct aka_err *err)
{
    struct aka_eval_broker *b = calloc(1, sizeof(*b));
    if (!b)
        return aka_err_set(err, AKA_EXIT_ENV, "out of memory starting the evaluation broker");
    b->t = t;
    b->base = *base;
    b->seen = (struct strvec)STRVEC_INIT;
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->wake, NULL);
    int rc = make_dirs(b, view, err);
    if (rc == 0 && pthread_create(&b->thread, NULL, broker_main, b) != 0)
        rc = aka_err_set(err, AKA_EXIT_ENV, "cannot start the evaluation broker's thread");
    b->started = rc == 0;
    if (rc < 0) {
        aka_eval_broker_stop(b);
        return -1;
    }
    *out = b;
    return 0;
}

void aka_eval_broker_stop(struct aka_eval_broker *b)
{
    struct aka_err ignored = AKA_ERR_INIT;
    if (!b)
        return;
    pthread_mutex_lock(&b->lock);
    b->stop = true;
    pthread_cond_signal(&b->wake);
    pthread_mutex_unlock(&b->lock);
    if (b->started) /* an evaluation in progress is finished first */
        pthread_join(b->thread, NULL);
    if (b->scratch)
        aka_remove_tree(b->scratch, &ignored);
    pthread_mutex_destroy(&b->lock);
    pthread_cond_destroy(&b->wake);
    strvec_clear(&b->seen);
    free(b->requests);
    free(b->results);
    free(b->scratch);
    free(b);
}
