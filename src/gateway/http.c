/*
 * http.c — the gateway's routes over libmicrohttpd (a thread per connection, so a
 * long-poll waits on the job table's condition without holding up anyone else).
 *
 * Routes are upstream's local gateway's (reference formats: docs/gateway.md): health,
 * env, job list, job get with long-poll, submit eval/profile/dev (and the legacy
 * /v1/evals), cancel, disassemble (501). Beyond upstream: every /v1 route needs
 * `Authorization: Bearer <token>` (401 otherwise, compared in constant time), and a
 * body over --max-request-mb is refused with 413 before it is parsed.
 */
#include "gateway/internal.h"

#include "base/fs.h"
#include "base/json.h"
#include "base/proc.h"
#include "base/sha256.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct conn {
    struct strbuf body;
    bool too_large;
};

struct reply {
    unsigned status;
    json_t *doc;      /* owned */
    const char *text; /* plain text instead (health) */
};

static struct reply err_reply(unsigned status, const char *reason, const char *msg)
{
    json_t *e = gw_error(status >= 500 ? "server" : "request", reason, msg);
    return (struct reply){status, json_pack("{s:o}", "error", e), NULL};
}

static bool authorized(struct gw_server *srv, struct MHD_Connection *c)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    const char *tok = srv->token.buf;
    size_t n = srv->token.len;
    if (!h || strncmp(h, "Bearer ", 7) != 0 || strlen(h + 7) != n)
        return false;
    return CRYPTO_memcmp(h + 7, tok, n) == 0;
}

static const char *arg(struct MHD_Connection *c, const char *key)
{
    return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
}

/* ---- jobs ---- */

static struct reply get_job(struct gw_server *srv, struct MHD_Connection *c, const char *id)
{
    const char *wait = arg(c, "wait"), *t = arg(c, "timeout");
    bool waiting = wait && (!strcmp(wait, "true") || !strcmp(wait, "1"));
    long secs = t ? strtol(t, NULL, 10) : GW_WAIT_DEFAULT_S;
    if (t && (secs < 0 || secs > 100000))
        return err_reply(400, "validation_error", "timeout: expected seconds, 0..300");
    int64_t deadline = gw_now_ms() + (secs > GW_WAIT_MAX_S ? GW_WAIT_MAX_S : secs) * 1000;
    char st[16];
    for (;;) {
        uint64_t gen = gw_store_gen(&srv->store);
        if (!gw_store_status(&srv->store, id, st))
            return err_reply(404, "job_not_found", "no such job");
        if (!waiting || gw_terminal(st) || gw_now_ms() >= deadline || srv->stopping)
            break;
        /* slices: a stopping gateway answers its long-polls within a second */
        int64_t slice = gw_now_ms() + 1000;
        gw_store_wait(&srv->store, gen, slice < deadline ? slice : deadline);
    }
    json_t *v = gw_store_view(&srv->store, id);
    return v ? (struct reply){200, v, NULL} : err_reply(404, "job_not_found", "no such job");
}

static struct reply list_jobs(struct gw_server *srv, struct MHD_Connection *c)
{
    static const char *const kinds[] = {"eval", "profile", "dev", NULL};
    static const char *const sts[] = {"queued", "running",   "succeeded",
                                      "failed", "cancelled", NULL};
    const char *kind = arg(c, "kind"), *status = arg(c, "status"), *l = arg(c, "limit");
    const char *sort = arg(c, "sort");
    long limit = l ? strtol(l, NULL, 10) : 50;
    if (kind && jenum_index(kind, kinds) < 0)
        return err_reply(400, "validation_error", "kind: expected eval, profile or dev");
    if (status && jenum_index(status, sts) < 0)
        return err_reply(400, "validation_error",
                         "status: expected queued, running, succeeded, failed or cancelled");
    if (limit < 1 || limit > 200)
        return err_reply(400, "validation_error", "limit: expected 1..200");
    if (sort && strcmp(sort, "created_at") != 0 && strcmp(sort, "-created_at") != 0)
        return err_reply(400, "validation_error", "sort: expected created_at or -created_at");
    json_t *jobs =
        gw_store_list(&srv->store, kind, status, (int)limit, sort && !strcmp(sort, "created_at"));
    return (struct reply){200, json_pack("{s:o}", "jobs", jobs), NULL};
}

static struct reply cancel_job(struct gw_server *srv, const char *id)
{
    pid_t pid = 0;
    if (gw_store_cancel(&srv->store, id, &pid) < 0)
        return err_reply(404, "job_not_found", "no such job");
    /* The whole group: bwrap leads it, and its PID namespace goes with it. */
    if (pid > 0)
        proc_kill_group(pid, 2000);
    return (struct reply){200, gw_store_view(&srv->store, id), NULL};
}

static void trace_id(struct MHD_Connection *c, char out[160])
{
    const char *t = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Trace-Id");
    char a[9], b[9];
    if (t && *t && strlen(t) <= 128) {
        snprintf(out, 160, "%s", t);
        return;
    }
    aka_random_hex8(a);
    aka_random_hex8(b);
    snprintf(out, 160, "req-%s%.4s", a, b);
}

static struct reply submit(struct gw_server *srv, struct MHD_Connection *c, const char *kind,
                           const struct strbuf *raw)
{
    const struct aka_gateway_opts *o = srv->o;
    struct gw_limits lim = {srv->n_workers ? (int)srv->workers[0].n_gpus : 0, o->max_output,
                            &o->aliases, o->bench_version};
    json_error_t je;
    char msg[1200], id[32], sha[AKA_SHA256_HEX_LEN + 1], trace[160];
    json_t *body = json_loadb(raw->buf, raw->len, JSON_REJECT_DUPLICATES, &je);
    if (!body) {
        snprintf(msg, sizeof(msg), "request body: invalid JSON at line %d column %d: %s", je.line,
                 je.column, je.text);
        return err_reply(400, "invalid_json", msg);
    }
    int http = gw_request_check(kind, body, &lim, msg, sizeof(msg));
    if (http) {
        json_decref(body);
        return err_reply((unsigned)http, http == 413 ? "request_too_large" : "validation_error",
                         msg);
    }
    /* The same request is the same JSON, whatever its key order or spacing. */
    char *canon = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
    aka_sha256_hex(canon, strlen(canon), sha);
    free(canon);
    trace_id(c, trace);
    json_t *key = json_object_get(body, "idempotency_key"), *au = json_object_get(body, "author");
    struct gw_new_job nj = {kind,
                            raw->buf,
                            sha,
                            json_string_value(key),
                            json_string_value(au),
                            trace,
                            json_is_true(json_object_get(body, "lock_clocks"))};
    enum gw_submit how;
    struct aka_err err = AKA_ERR_INIT;
    int rc = gw_store_submit(&srv->store, &nj, id, &how, &err);
    json_decref(body);
    if (rc < 0)
        return err_reply(500, "store_failed", err.msg);
    if (how == GW_SUBMIT_CONFLICT)
        return err_reply(409, "idempotency_conflict",
                         "idempotency_key: already used by another request with a different "
                         "body");
    json_t *v = gw_store_view(&srv->store, id);
    json_t *acc =
        json_pack("{s:s, s:s, s:O, s:O}", "job_id", id, "kind", kind, "status",
                  json_object_get(v, "status"), "trace_id", json_object_get(v, "trace_id"));
    json_decref(v);
    return (struct reply){202, acc, NULL};
}

/* ---- env and routing ---- */

static json_t *env_doc(struct gw_server *srv)
{
    const struct aka_gateway_opts *o = srv->o;
    return json_pack("{s:s, s:s?, s:o, s:n, s:i, s:i, s:s, s:s?, s:s, s:s}", "gpu", "local",
                     "vendor", o->gpus.n ? "nvidia" : NULL, "aliases",
                     aka_json_string_array(&o->aliases), "gpu_model", "workers", srv->n_workers,
                     "gpus_per_worker", srv->n_workers ? (int)srv->workers[0].n_gpus : 0,
                     "isolation", o->isolation_none ? "none" : "bwrap", "atrex_bench_version",
                     o->bench_version, "source", "declared", "server", GW_SERVER_HEADER);
}

/* url is prefix + one path segment (the job id): into id. */
static bool tail_id(const char *url, const char *prefix, char id[64])
{
    size_t n = strlen(prefix);
    const char *rest = url + n;
    if (strncmp(url, prefix, n) != 0 || !*rest || strchr(rest, '/') || strlen(rest) >= 64)
        return false;
    snprintf(id, 64, "%s", rest);
    return true;
}

static struct reply route_v1(struct gw_server *srv, struct MHD_Connection *c, const char *m,
                             const char *url, const struct strbuf *body)
{
    char id[64];
    bool get = !strcmp(m, "GET"), post = !strcmp(m, "POST");
    if (get && !strcmp(url, "/v1/env"))
        return (struct reply){200, json_pack("{s:[o]}", "env", env_doc(srv)), NULL};
    if (get && !strcmp(url, "/v1/env/local"))
        return (struct reply){200, env_doc(srv), NULL};
    if (get && !strcmp(url, "/v1/jobs"))
        return list_jobs(srv, c);
    if (post && (!strcmp(url, "/v1/jobs/eval") || !strcmp(url, "/v1/evals")))
        return submit(srv, c, "eval", body);
    if (post && !strcmp(url, "/v1/jobs/profile"))
        return submit(srv, c, "profile", body);
    if (post && !strcmp(url, "/v1/jobs/dev"))
        return submit(srv, c, "dev", body);
    if (post && !strcmp(url, "/v1/jobs/disassemble"))
        return err_reply(501, "kind_not_supported", "disassemble jobs are not supported");
    if (post && sscanf(url, "/v1/jobs/%63[^/]/cancel", id) == 1 &&
        strlen(url) == strlen("/v1/jobs//cancel") + strlen(id))
        return cancel_job(srv, id);
    if (get && (tail_id(url, "/v1/jobs/", id) || tail_id(url, "/v1/evals/", id)))
        return get_job(srv, c, id);
    if (!strncmp(url, "/v1/env/", 8) && get)
        return err_reply(404, "env_not_found", "only /v1/env/local exists");
    return err_reply(404, "route_not_found", "no such route");
}

static struct reply route(struct gw_server *srv, struct MHD_Connection *c, const char *m,
                          const char *url, struct conn *cn)
{
    if (!strcmp(m, "GET") && (!strcmp(url, "/healthz") || !strcmp(url, "/status.taobao")))
        return (struct reply){200, NULL, "ok"};
    if (strncmp(url, "/v1/", 4) != 0)
        return err_reply(404, "route_not_found", "no such route");
    if (!authorized(srv, c))
        return err_reply(401, "unauthorized",
                         "missing or wrong bearer token (Authorization: Bearer <token from the "
                         "gateway's token file>)");
    if (cn->too_large) {
        char msg[160];
        snprintf(msg, sizeof(msg), "request body: larger than the gateway's limit of %zu bytes",
                 srv->o->max_request);
        return err_reply(413, "request_too_large", msg);
    }
    return route_v1(srv, c, m, url, &cn->body);
}

static enum MHD_Result send_reply(struct MHD_Connection *c, struct reply r)
{
    struct strbuf sb = STRBUF_INIT;
    if (r.doc) {
        aka_json_dump_compact(r.doc, &sb);
        json_decref(r.doc);
    } else {
        strbuf_addstr(&sb, r.text);
    }
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(sb.len, sb.buf, MHD_RESPMEM_MUST_COPY);
    strbuf_release(&sb);
    MHD_add_response_header(resp, "Content-Type",
                            r.doc || !r.text ? "application/json" : "text/plain");
    MHD_add_response_header(resp, "Server", GW_SERVER_HEADER);
    if (r.status == 401)
        MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
    enum MHD_Result rc = MHD_queue_response(c, r.status, resp);
    MHD_destroy_response(resp);
    return rc;
}

/* Takes the body in pieces; a body over the limit is drained, not kept. */
static void take(struct gw_server *srv, struct conn *cn, const char *data, size_t n)
{
    if (cn->too_large || cn->body.len + n > srv->o->max_request) {
        cn->too_large = true;
        strbuf_release(&cn->body);
        return;
    }
    strbuf_add(&cn->body, data, n);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *data,
                               size_t *size, void **con_cls)
{
    struct gw_server *srv = cls;
    struct conn *cn = *con_cls;
    (void)version;
    if (!cn) {
        cn = aka_xcalloc(1, sizeof(*cn));
        strbuf_init(&cn->body, 0);
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        cn->too_large = cl && strtoull(cl, NULL, 10) > srv->o->max_request;
        *con_cls = cn;
        return MHD_YES;
    }
    if (*size) {
        take(srv, cn, data, *size);
        *size = 0;
        return MHD_YES;
    }
    return send_reply(c, route(srv, c, method, url, cn));
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    struct conn *cn = *con_cls;
    (void)cls, (void)c, (void)toe;
    if (cn) {
        strbuf_release(&cn->body);
        free(cn);
    }
    *con_cls = NULL;
}

/* host as a socket address (IPv4 or IPv6 literal, or localhost). */
static int address(const char *host, int port, struct sockaddr_storage *ss, bool *v6)
{
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    memset(ss, 0, sizeof(*ss));
    *v6 = false;
    if (!strcmp(host, "localhost"))
        host = "127.0.0.1";
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        return 0;
    }
    if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *v6 = true;
        return 0;
    }
    return -1;
}

int gw_http_start(struct gw_server *srv, struct aka_err *err)
{
    struct sockaddr_storage ss;
    bool v6;
    if (address(srv->o->host, srv->o->port, &ss, &v6) < 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "--listen: '%s' is not an IP address",
                           srv->o->host);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_ERROR_LOG | (v6 ? MHD_USE_IPv6 : 0);
    srv->mhd = MHD_start_daemon(
        flags, (uint16_t)srv->o->port, NULL, NULL, handler, srv, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)&ss, MHD_OPTION_NOTIFY_COMPLETED, completed, srv,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(GW_WAIT_MAX_S + 60), MHD_OPTION_END);
    if (!srv->mhd)
        return aka_err_set(err, AKA_EXIT_ENV, "cannot listen on %s port %d (in use?)", srv->o->host,
                           srv->o->port);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->mhd, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info ? info->port : srv->o->port;
    return 0;
}

void gw_http_stop(struct gw_server *srv)
{
    if (srv->mhd)
        MHD_stop_daemon(srv->mhd);
    srv->mhd = NULL;
}
