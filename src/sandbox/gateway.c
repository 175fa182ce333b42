/*
 * gateway.c — the gateway transport: a job goes to `aka gateway serve` (or a gateway
 * with the same routes) as one typed request over HTTP (libcurl), and its result comes
 * back from a long-poll.
 *
 *   prepare  the request: kind, num_gpus, command, environment, limits, every shipped
 *            file (base64) and the runtime pins (ATREX_SANDBOX_ATREX_BENCH_VERSION,
 *            ATREX_SANDBOX_REQUIREMENTS_FILE); recorded 0600 so that `aka sandbox
 *            replay FILE` can send it again
 *   run      POST /v1/jobs/{eval,profile,dev} with an idempotency key, then
 *            GET /v1/jobs/{id}?wait=true until the job ends; a stop signal cancels it
 *   collect  the artifacts the result carries, through the local transport's checks
 *
 * What is the machine's and what is the candidate's stay apart (DESIGN §4.9): a refused
 * connection, a timeout, a 5xx, a job the gateway lost in a restart are retried a
 * bounded number of times (the same idempotency key, so a retried submit never runs a
 * job twice) and then fail with code 75; a request the gateway refuses (4xx) is code 2;
 * only a job that ran has a result, and only its exit status speaks about the candidate.
 */
#include "sandbox/internal.h"

#include "base/base64.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/proc.h"
#include "contracts/pins.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GW_ATTEMPTS    5  /* per HTTP request, for connection failures and 5xx */
#define GW_RESUBMITS   2  /* jobs the gateway lost (restarted, stopped) */
#define GW_POLL_S      30 /* one long-poll */
#define GW_QUEUE_GRACE 14400

struct gw_call {
    const struct aka_sandbox_gateway_opts *o;
    const struct aka_sandbox_job *job; /* NULL for a replay */
    struct aka_sandbox_result *res;
    CURL *curl;
    struct curl_slist *headers;
    json_t *body;  /* the request */
    json_t *final; /* the ended job's view */
    char route[32];
    char job_id[64];
    struct strbuf record;  /* the recorded request's path */
    struct strbuf tmp;     /* where artifacts land before the checks */
    struct proc_beat wait; /* the job's wait, for the heartbeat */
    bool waiting;          /* wait_done is long-polling */
};

/* ---- HTTP ---- */

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    strbuf_add(arg, p, size * n);
    return size * n;
}

/* A stop signal ends a transfer in progress (a long-poll may last GW_POLL_S). libcurl calls
 * this about once a second while a transfer waits, which also keeps the heartbeat going
 * through a long-poll. */
static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    struct gw_call *g = arg;
    (void)a, (void)b, (void)c, (void)d;
    if (g->waiting)
        proc_beat_tick(&g->wait);
    return proc_stop_signal() != 0;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (!proc_stop_signal() && nanosleep(&ts, &ts) != 0)
        ;
}

/* One request; 0 with *status and body, -1 with a transport-level error in err. */
static int http_once(struct gw_call *g, const char *method, const char *path, const char *data,
                     long wait_s, long *status, struct strbuf *out, struct aka_err *err)
{
    struct strbuf url = STRBUF_INIT;
    size_t n = strlen(g->o->url);
    strbuf_addf(&url, "%.*s%s", (int)(n && g->o->url[n - 1] == '/' ? n - 1 : n), g->o->url, path);
    strbuf_reset(out);
    curl_easy_setopt(g->curl, CURLOPT_URL, url.buf);
    curl_easy_setopt(g->curl, CURLOPT_HTTPHEADER, g->headers);
    curl_easy_setopt(g->curl, CURLOPT_POST, !strcmp(method, "POST") ? 1L : 0L);
    curl_easy_setopt(g->curl, CURLOPT_HTTPGET, !strcmp(method, "GET") ? 1L : 0L);
    if (data) {
        curl_easy_setopt(g->curl, CURLOPT_POSTFIELDS, data);
        curl_easy_setopt(g->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(data));
    }
    curl_easy_setopt(g->curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(g->curl, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(g->curl, CURLOPT_TIMEOUT, wait_s + 60);
    CURLcode rc = curl_easy_perform(g->curl);
    strbuf_release(&url);
    if (rc == CURLE_ABORTED_BY_CALLBACK)
        return proc_check_stop(err);
    if (rc != CURLE_OK)
        return aka_err_set(err, AKA_EXIT_ENV, "gateway %s: %s %s: %s", g->o->url, method, path,
                           curl_easy_strerror(rc));
    curl_easy_getinfo(g->curl, CURLINFO_RESPONSE_CODE, status);
    return 0;
}

/* The gateway's message for a refused request. */
static void server_message(const struct strbuf *body, char *out, size_t n)
{
    json_t *doc = json_loadb(body->buf, body->len, 0, NULL);
    const char *m = json_string_value(json_object_get(json_object_get(doc, "error"), "message"));
    snprintf(out, n, "%.*s", (int)(n - 1), m ? m : body->buf);
    json_decref(doc);
}

/*
 * A request with bounded retries of what is the infrastructure's: connection failures,
 * timeouts, 5xx. 2xx: 0 with the parsed reply; 4xx: code 2 (401/403: 75, the token);
 * retries spent: 75. A stop signal: 128+signal.
 */
static int http(struct gw_call *g, const char *method, const char *path, const char *data,
                long wait_s, json_t **reply, struct aka_err *err)
{
    struct strbuf out = STRBUF_INIT;
    char msg[1024];
    long status = 0;
    int rc = -1;
    for (int attempt = 0; attempt < GW_ATTEMPTS; attempt++) {
        if (attempt)
            sleep_s(0.25 * (1 << (attempt - 1)));
        if (proc_check_stop(err) < 0)
            break;
        aka_err_clear(err);
        rc = http_once(g, method, path, data, wait_s, &status, &out, err);
        if (rc < 0 && err->code != AKA_EXIT_ENV)
            break; /* a stop signal */
        if (rc == 0 && status >= 500)
            rc = aka_err_set(err, AKA_EXIT_ENV, "gateway %s: %s %s: HTTP %ld", g->o->url, method,
                             path, status);
        if (rc == 0)
            break;
    }
    if (rc == 0 && status >= 400) {
        server_message(&out, msg, sizeof(msg));
        rc = aka_err_set(err, status == 401 || status == 403 ? AKA_EXIT_ENV : AKA_EXIT_USAGE,
                         "gateway %s: %s %s: HTTP %ld: %s", g->o->url, method, path, status, msg);
    }
    if (rc == 0 && !(*reply = json_loadb(out.buf, out.len, 0, NULL)))
        rc = aka_err_set(err, AKA_EXIT_ENV, "gateway %s: %s %s: the reply is not JSON", g->o->url,
                         method, path);
    strbuf_release(&out);
    return rc;
}

/* ---- the request ---- */

static const char *route_of(enum aka_sandbox_kind k)
{
    return k == AKA_SBX_RUN       ? "/v1/jobs/eval"
           : k == AKA_SBX_PROFILE ? "/v1/jobs/profile"
                                  : "/v1/jobs/dev";
}

static int files_json(const struct aka_sandbox_job *job, json_t *files, struct aka_err *err)
{
    struct strbuf data = STRBUF_INIT, b64 = STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < job->files.n; i++) {
        const struct aka_sandbox_file *f = &job->files.v[i];
        strbuf_reset(&data);
        strbuf_reset(&b64);
        rc = aka_read_file(f->src, &data, job->max_input_bytes, err);
        if (rc < 0)
            break;
        aka_base64_encode(data.buf, data.len, &b64);
        json_array_append_new(files, json_pack("{s:s, s:s%, s:b, s:b}", "path", f->dest,
                                               "content_b64", b64.buf, b64.len, "read_only",
                                               f->read_only, "trusted", f->trusted));
    }
    strbuf_release(&data);
    strbuf_release(&b64);
    return rc;
}

static json_t *job_json(const struct aka_sandbox_job *job)
{
    json_t *binds = json_array();
    for (size_t i = 0; i < job->binds.n; i++)
        json_array_append_new(binds,
                              json_sprintf("%s=%s", job->binds.v[i].src, job->binds.v[i].dest));
    return json_pack("{s:s, s:o, s:o, s:[], s:o, s:I, s:I, s:I, s:I, s:b, s:o}", "kind",
                     aka_sandbox_kind_name(job->kind), "argv", aka_json_string_array(&job->argv),
                     "env", aka_json_string_array(&job->env), "files", "artifacts",
                     aka_json_string_array(&job->artifacts), "timeout_s",
                     (json_int_t)job->timeout_s, "stdout_cap", (json_int_t)job->stdout_cap,
                     "stderr_cap", (json_int_t)job->stderr_cap, "pids_max",
                     (json_int_t)job->pids_max, "generalized", job->generalized, "binds", binds);
}

static void new_key(json_t *body)
{
    char a[9], b[9];
    aka_random_hex8(a);
    aka_random_hex8(b);
    json_object_set_new(body, "idempotency_key", json_sprintf("aka-%s%s", a, b));
}

static int build_body(struct gw_call *g, struct aka_err *err)
{
    const struct aka_sandbox_job *job = g->job;
    struct aka_runtime_pins pins = {0};
    if (aka_runtime_pins_from_env(&pins, err) < 0)
        return -1;
    json_t *j = job_json(job);
    g->body = json_pack(
        "{s:s, s:s, s:{s:[s], s:i}, s:o, s:o, s:b}", "name", aka_sandbox_kind_name(job->kind),
        "author", "aka", "spec", "target_hardware", g->o->hardware, "num_gpus", job->gpu_count,
        "job", j, "runtime", aka_runtime_pins_to_json(&pins), "lock_clocks", g->o->lock_clocks);
    aka_runtime_pins_release(&pins);
    new_key(g->body);
    snprintf(g->route, sizeof(g->route), "%s", route_of(job->kind));
    return files_json(job, json_object_get(j, "files"), err);
}

/* The request, 0600, where `aka sandbox replay` finds it. Best effort: a note says where. */
static void record(struct gw_call *g)
{
    struct aka_err err = AKA_ERR_INIT;
    const char *dir = g->o->record_dir;
    const char *key = json_string_value(json_object_get(g->body, "idempotency_key"));
    json_t *rec = json_pack("{s:s, s:s, s:s, s:O}", "schema", "aka.gateway.request.v1", "url",
                            g->o->url, "route", g->route, "body", g->body);
    strbuf_reset(&g->record);
    strbuf_addf(&g->record, "%s/%s.json", dir, key);
    if (aka_mkdir_p(dir, 0700, &err) == 0 && aka_json_write_file(g->record.buf, rec, &err) == 0) {
        chmod(g->record.buf, 0600);
        strvec_pushf(&g->res->notes, "gateway request recorded: %s (aka sandbox replay)",
                     g->record.buf);
    } else {
        strvec_pushf(&g->res->notes, "gateway request not recorded: %s", err.msg);
    }
    json_decref(rec);
}

/* ---- submit, wait, cancel ---- */

static void cancel(struct gw_call *g)
{
    struct strbuf path = STRBUF_INIT, out = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    long status = 0;
    /* Not through http(): the stop signal that brought us here would abort it. */
    strbuf_addf(&path, "/v1/jobs/%s/cancel", g->job_id);
    curl_easy_setopt(g->curl, CURLOPT_NOPROGRESS, 1L);
    if (http_once(g, "POST", path.buf, "{}", 10, &status, &out, &err) < 0 || status != 200)
        fprintf(stderr, "aka: gateway job %s may still be running: cancel failed (%s)\n", g->job_id,
                err.msg[0] ? err.msg : "HTTP error");
    curl_easy_setopt(g->curl, CURLOPT_NOPROGRESS, 0L);
    strbuf_release(&path);
    strbuf_release(&out);
}

static int submit(struct gw_call *g, struct aka_err *err)
{
    json_t *reply = NULL;
    char *data = json_dumps(g->body, JSON_COMPACT);
    /* A submit is not aborted by a stop signal: the job may be accepted with its reply
     * still on the way, and only a job whose id came back can be cancelled. */
    curl_easy_setopt(g->curl, CURLOPT_NOPROGRESS, 1L);
    int rc = http(g, "POST", g->route, data, 60, &reply, err);
    curl_easy_setopt(g->curl, CURLOPT_NOPROGRESS, 0L);
    free(data);
    const char *id = json_string_value(json_object_get(reply, "job_id"));
    if (rc == 0 && (!id || strlen(id) >= sizeof(g->job_id) || strchr(id, '/')))
        rc = aka_err_set(err, AKA_EXIT_ENV, "gateway %s: the submit reply has no usable job_id",
                         g->o->url);
    if (rc == 0)
        snprintf(g->job_id, sizeof(g->job_id), "%s", id);
    json_decref(reply);
    if (rc == 0 && proc_check_stop(err) < 0) {
        cancel(g);
        rc = -1;
    }
    return rc;
}

/* Long-poll until the job ends; its view into g->final. */
static int wait_done(struct gw_call *g, long budget_s, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    time_t end = time(NULL) + budget_s;
    int rc = 0;
    strbuf_addf(&path, "/v1/jobs/%s?wait=true&timeout=%d", g->job_id, GW_POLL_S);
    proc_beat_start(&g->wait);
    g->waiting = true;
    while (rc == 0 && !g->final) {
        json_t *v = NULL;
        rc = http(g, "GET", path.buf, NULL, GW_POLL_S, &v, err);
        const char *st = json_string_value(json_object_get(v, "status"));
        if (rc == 0 && st &&
            (!strcmp(st, "succeeded") || !strcmp(st, "failed") || !strcmp(st, "cancelled")))
            g->final = json_incref(v);
        else if (rc == 0 && time(NULL) > end)
            rc = aka_err_set(err, AKA_EXIT_ENV,
                             "gateway %s: job %s did not end within %ld s (queue and run)",
                             g->o->url, g->job_id, budget_s);
        json_decref(v);
        proc_beat_tick(&g->wait);
    }
    g->waiting = false;
    if (rc < 0 && g->job_id[0])
        cancel(g);
    strbuf_release(&path);
    return rc;
}

/* ---- the ended job into the result ---- */

static void take_text(json_t *r, const char *key, struct strbuf *out)
{
    const char *s = json_string_value(json_object_get(r, key));
    strbuf_reset(out);
    if (s)
        strbuf_addstr(out, s);
}

static long long int_of(json_t *r, const char *key)
{
    return json_integer_value(json_object_get(r, key));
}

static void fill_result(struct gw_call *g, json_t *r)
{
    struct aka_sandbox_result *res = g->res;
    json_t *v;
    size_t i;
    res->exit_code = (int)int_of(r, "exit_code");
    res->term_signal = (int)int_of(r, "signal");
    res->timed_out = json_is_true(json_object_get(r, "timed_out"));
    take_text(r, "stdout", &res->out);
    take_text(r, "stderr", &res->err);
    res->out_bytes = (size_t)int_of(r, "stdout_bytes");
    res->err_bytes = (size_t)int_of(r, "stderr_bytes");
    res->out_truncated = json_is_true(json_object_get(r, "stdout_truncated"));
    res->err_truncated = json_is_true(json_object_get(r, "stderr_truncated"));
    json_array_foreach(json_object_get(r, "notes"), i, v)
        strvec_pushf(&res->notes, "gateway: %s", json_string_value(v));
    json_array_foreach(json_object_get(r, "artifacts_refused"), i, v)
        strvec_push(&res->artifacts_refused, json_string_value(v));
    const char *iso = json_string_value(json_object_get(r, "isolation"));
    /* the gateway's isolation, not the one asked for: a result run without says so */
    if (iso)
        snprintf(res->isolation, sizeof(res->isolation), "%s", iso);
    const char *pl = json_string_value(json_object_get(r, "pids_limit"));
    snprintf(res->pids_limit, sizeof(res->pids_limit), "%s", pl ? pl : "none");
    res->wall_seconds =
        json_number_value(json_object_get(json_object_get(r, "timing"), "wall_seconds"));
    strvec_pushf(&res->notes, "gateway job %s", g->job_id);
}

/* A job the gateway lost (restart, stop) or that someone cancelled: not the candidate's. */
static bool lost(json_t *error)
{
    const char *cls = json_string_value(json_object_get(error, "error_class"));
    return cls && !strcmp(cls, "interrupted");
}

/* What the ended job means: 0 (it ran; res filled), retry (1), or an error. */
static int outcome(struct gw_call *g, struct aka_err *err)
{
    json_t *r = json_object_get(g->final, "result"), *e = json_object_get(g->final, "error");
    const char *st = json_string_value(json_object_get(g->final, "status"));
    const char *rs = json_string_value(json_object_get(r, "status"));
    const char *cls = json_string_value(json_object_get(e, "error_class"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    if (strcmp(st, "cancelled") != 0 && rs && !strcmp(rs, "completed")) {
        fill_result(g, r);
        return 0;
    }
    if (lost(e))
        return 1;
    int code = cls && !strcmp(cls, "invalid_request") ? AKA_EXIT_USAGE : AKA_EXIT_ENV;
    return aka_err_set(err, code, "gateway %s: job %s %s: %s", g->o->url, g->job_id, st,
                       msg ? msg : "no result");
}

/* Submit and wait, resubmitting (a new key) a job the gateway lost, a bounded number of
 * times. */
static int exchange(struct gw_call *g, long budget_s, struct aka_err *err)
{
    for (int round = 0; round <= GW_RESUBMITS; round++) {
        if (round) {
            strvec_pushf(&g->res->notes, "gateway job %s was lost (%s); submitted again", g->job_id,
                         "the gateway restarted or stopped");
            new_key(g->body);
        }
        json_decref(g->final);
        g->final = NULL;
        g->job_id[0] = '\0';
        if (submit(g, err) < 0 || wait_done(g, budget_s, err) < 0)
            return -1;
        int rc = outcome(g, err);
        if (rc <= 0)
            return rc;
    }
    return aka_err_set(err, AKA_EXIT_ENV,
                       "gateway %s: job %s was lost %d times (the gateway keeps restarting); "
                       "not the candidate's failure",
                       g->o->url, g->job_id, GW_RESUBMITS + 1);
}

/* ---- artifacts ---- */

static int write_artifact(int dirfd, const char *rel, const char *b64, size_t *budget)
{
    struct strbuf data = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    char *parent = aka_xstrdup(rel), *slash = strrchr(parent, '/');
    int rc = aka_sandbox_check_rel(rel, "artifact", &err) == 0 &&
                     aka_base64_decode(b64, strlen(b64), *budget, &data)
                 ? 0
                 : -1;
    int pfd = -1, fd = -1;
    if (rc == 0 && slash) {
        *slash = '\0';
        pfd = sbx_mkdir_beneath(dirfd, parent);
        rc = pfd < 0 ? -1 : 0;
    }
    if (rc == 0)
        fd = sbx_open_beneath(dirfd, rel, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || aka_write_all(fd, data.buf, data.len) < 0)
        rc = -1;
    *budget -= rc == 0 ? data.len : 0;
    if (fd >= 0)
        close(fd);
    if (pfd >= 0)
        close(pfd);
    free(parent);
    strbuf_release(&data);
    return rc;
}

/* The result's files land in a private directory, then go through the local transport's
 * artifact checks (traversal, symlinks, never-returned names, sizes) like any job's. */
static void gw_collect(void *state)
{
    struct gw_call *g = state;
    json_t *files = json_object_get(json_object_get(g->final, "result"), "files"), *f;
    struct aka_err err = AKA_ERR_INIT;
    size_t i, budget = g->job->max_artifact_total;
    if (!g->job->artifact_dir || !g->job->artifacts.n ||
        aka_make_temp_dir(g->o->tmp_dir, "aka-gateway", &g->tmp, &err) < 0)
        return;
    int dirfd = open(g->tmp.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    json_array_foreach(files, i, f)
    {
        const char *rel = json_string_value(json_object_get(f, "path"));
        const char *b64 = json_string_value(json_object_get(f, "content_b64"));
        if (dirfd < 0 || !rel || !b64 || write_artifact(dirfd, rel, b64, &budget) < 0)
            strvec_pushf(&g->res->artifacts_refused,
                         "%s: not written (unsafe path, bad "
                         "encoding or over the size limit)",
                         rel ? rel : "?");
    }
    if (dirfd >= 0)
        close(dirfd);
    sbx_collect_artifacts(g->job, g->tmp.buf, g->res);
}

/* ---- the call: connection and token ---- */

/* The bearer token: $AGATE_TOKEN (upstream's name), else the file $ATREX_SANDBOX_TOKEN_FILE. */
static int token(struct strbuf *out, struct aka_err *err)
{
    const char *t = getenv("AGATE_TOKEN"), *file = getenv("ATREX_SANDBOX_TOKEN_FILE");
    if (t && *t) {
        strbuf_addstr(out, t);
        return 0;
    }
    if (!file || !*file)
        return 0; /* none: a gateway that needs one answers 401 */
    if (aka_read_file(file, out, 4096, err) < 0)
        return aka_err_prefix(err, "ATREX_SANDBOX_TOKEN_FILE");
    strbuf_trim(out);
    return 0;
}

static int call_init(struct gw_call *g, const struct aka_sandbox_gateway_opts *o,
                     struct aka_sandbox_result *res, struct aka_err *err)
{
    struct strbuf tok = STRBUF_INIT, h = STRBUF_INIT;
    memset(g, 0, sizeof(*g));
    g->o = o;
    g->res = res;
    strbuf_init(&g->record, 0);
    strbuf_init(&g->tmp, 0);
    if (token(&tok, err) < 0)
        return -1;
    if (!(g->curl = curl_easy_init()))
        return aka_err_set(err, AKA_EXIT_ENV, "libcurl could not start");
    if (tok.len) {
        strbuf_addf(&h, "Authorization: Bearer %s", tok.buf);
        g->headers = curl_slist_append(g->headers, h.buf);
    }
    g->headers = curl_slist_append(g->headers, "Content-Type: application/json");
    g->headers = curl_slist_append(g->headers, "Expect:");
    curl_easy_setopt(g->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(g->curl, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(g->curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(g->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(g->curl, CURLOPT_XFERINFODATA, g);
    curl_easy_setopt(g->curl, CURLOPT_PROTOCOLS_STR, "http,https");
    strbuf_release(&tok);
    strbuf_release(&h);
    return 0;
}

static void call_release(struct gw_call *g)
{
    if (g->curl)
        curl_easy_cleanup(g->curl);
    curl_slist_free_all(g->headers);
    json_decref(g->body);
    json_decref(g->final);
    if (g->tmp.len)
        aka_remove_tree(g->tmp.buf, NULL);
    strbuf_release(&g->tmp);
    strbuf_release(&g->record);
}

/* ---- the transport steps ---- */

static int gw_prepare(const struct aka_sandbox_transport *t, const struct aka_sandbox_job *job,
                      struct aka_sandbox_result *res, void **state, struct aka_err *err)
{
    struct gw_call *g = aka_xmalloc(sizeof(*g));
    int rc = call_init(g, t->ctx, res, err);
    *state = g;
    g->job = job;
    if (rc == 0 && proc_check_stop(err) == 0 && build_body(g, err) == 0) {
        record(g);
        return 0;
    }
    return -1;
}

static int gw_run(void *state, struct aka_err *err)
{
    struct gw_call *g = state;
    return exchange(g, g->job->timeout_s + GW_QUEUE_GRACE, err);
}

static void gw_cleanup(void *state)
{
    call_release(state);
    free(state);
}

static void gw_describe(const struct aka_sandbox_transport *t, struct strbuf *out)
{
    const struct aka_sandbox_gateway_opts *o = t->ctx;
    strbuf_addf(out, "gateway %s, hardware %s", o->url, o->hardware);
}

static const struct aka_sandbox_transport_ops gateway_ops = {
    .name = "gateway",
    .prepare = gw_prepare,
    .run = gw_run,
    .collect = gw_collect,
    .cleanup = gw_cleanup,
    .describe = gw_describe,
};

/* $XDG_STATE_HOME/aka/gateway-requests, else ~/.local/state/...; $ATREX_SANDBOX_REQUEST_DIR
 * wins. */
static void record_dir(char *out, size_t n)
{
    const char *d = getenv("ATREX_SANDBOX_REQUEST_DIR"), *x = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    if (d && *d)
        snprintf(out, n, "%s", d);
    else if (x && *x)
        snprintf(out, n, "%s/aka/gateway-requests", x);
    else
        snprintf(out, n, "%s/.local/state/aka/gateway-requests", home && *home ? home : "/tmp");
}

/* --sandbox-profile P: the URL of that endpoint from $ATREX_SANDBOX_PROFILE_<P>_URL. */
static int resolve_url(struct aka_sandbox_gateway_opts *o, struct aka_err *err)
{
    char var[96];
    if (o->url)
        return 0;
    snprintf(var, sizeof(var), "ATREX_SANDBOX_PROFILE_%s_URL", o->profile);
    for (char *p = var; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    const char *u = getenv(var);
    if (!u || (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--sandbox-profile %s: set %s to the http(s):// URL of that gateway",
                           o->profile, var);
    o->url = u;
    return 0;
}

/* Before anything is written: the gateway answers and takes the token (GET /v1/env). */
static int probe(const struct aka_sandbox_gateway_opts *o, struct aka_err *err)
{
    struct aka_sandbox_result scratch;
    struct gw_call g;
    json_t *env = NULL;
    aka_sandbox_result_init(&scratch);
    int rc = call_init(&g, o, &scratch, err);
    if (rc == 0)
        rc = http(&g, "GET", "/v1/env", NULL, 10, &env, err);
    if (rc < 0 && err->code == AKA_EXIT_USAGE)
        err->code = AKA_EXIT_ENV; /* a gateway without our routes: the machine, not the flags */
    json_decref(env);
    call_release(&g);
    aka_sandbox_result_release(&scratch);
    return rc;
}

int aka_sandbox_gateway(struct aka_sandbox_transport *t, struct aka_sandbox_gateway_opts *o,
                        struct aka_err *err)
{
    if (resolve_url(o, err) < 0)
        return -1;
    const char *lock = getenv("ATREX_SANDBOX_LOCK_CLOCKS");
    o->lock_clocks = lock && !strcmp(lock, "1");
    record_dir(o->record_dir, sizeof(o->record_dir));
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (probe(o, err) < 0)
        return -1;
    memset(t, 0, sizeof(*t));
    t->ops = &gateway_ops;
    t->ctx = o;
    t->isolation = AKA_SBX_BWRAP; /* the gateway's to enforce; results say what it did */
    return 0;
}

/* ---- replay ---- */

static int load_record(const char *file, json_t **rec, struct aka_err *err)
{
    if (aka_json_load_file(file, rec, err) < 0)
        return -1;
    const char *schema = json_string_value(json_object_get(*rec, "schema"));
    const char *route = json_string_value(json_object_get(*rec, "route"));
    if (!schema || strcmp(schema, "aka.gateway.request.v1") != 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: schema: expected \"aka.gateway.request.v1\" (a request recorded "
                           "by the gateway transport)",
                           file);
    if (!route || strncmp(route, "/v1/jobs/", 9) != 0 || strlen(route) >= 32 ||
        !json_is_object(json_object_get(*rec, "body")))
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: route, body: expected a recorded request",
                           file);
    return 0;
}

static int check_pins(const char *file, json_t *body, struct aka_err *err)
{
    struct aka_runtime_pins now = {0};
    if (aka_runtime_pins_from_env(&now, err) < 0)
        return -1;
    int rc = aka_runtime_pins_check_replay(&now, json_object_get(body, "runtime"), file, err);
    aka_runtime_pins_release(&now);
    return rc;
}

int aka_sandbox_replay(const char *file, struct aka_sandbox_gateway_opts *o,
                       struct aka_sandbox_result *res, struct aka_err *err)
{
    json_t *rec = NULL;
    struct gw_call g;
    int rc = load_record(file, &rec, err);
    if (rc == 0)
        rc = check_pins(file, json_object_get(rec, "body"), err);
    if (rc < 0) {
        json_decref(rec);
        return -1;
    }
    if (!o->url && !o->profile)
        o->url = json_string_value(json_object_get(rec, "url"));
    if (aka_sandbox_gateway(&(struct aka_sandbox_transport){0}, o, err) < 0 ||
        call_init(&g, o, res, err) < 0) {
        json_decref(rec);
        return -1;
    }
    snprintf(res->transport, sizeof(res->transport), "gateway");
    snprintf(g.route, sizeof(g.route), "%s", json_string_value(json_object_get(rec, "route")));
    g.body = json_deep_copy(json_object_get(rec, "body"));
    new_key(g.body); /* a replay is a new run, not a resubmission of the recorded one */
    long timeout =
        (long)json_integer_value(json_object_get(json_object_get(g.body, "job"), "timeout_s"));
    rc = exchange(&g, (timeout > 0 ? timeout : AKA_SBX_DEFAULT_TIMEOUT_S) + GW_QUEUE_GRACE, err);
    res->status = rc == 0 ? AKA_SBX_COMPLETED : res->status;
    call_release(&g);
    json_decref(rec);
    return rc;
}
