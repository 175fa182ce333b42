/*
 * codex_ledger.c — per-call token usage of a Codex thread, read from the
 * rollout file Codex writes under $CODEX_HOME/sessions/YYYY/MM/DD/
 * rollout-<time>-<thread>.jsonl (reference §4).
 *
 * Codex's stdout only has the thread's cumulative usage, so phase attribution
 * needs the ledger: each `token_count` record holds the last call's usage and
 * the running total. Before an invocation we remember where the thread's file
 * ends (a resumed thread appends to it) and its running total there; after it
 * we read only what this invocation appended. The ledger is believed only
 * when it reconciles: totals never go down, the per-call values add up to the
 * new running total, and that total equals what stdout reported. Anything
 * else leaves the stdout-only result with a `codex_ledger_unavailable:<why>`
 * code; the ledger never overrides a number it cannot account for.
 *
 * We read the real CODEX_HOME (the thread must stay resumable), so a file is
 * only considered when it was written after the invocation started.
 */
#include "agents/adapters.h"
#include "base/fs.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define LEDGER_READ_LIMIT ((size_t)512 << 20)
#define FIND_RETRIES      20
#define FIND_RETRY_MS     50
#define META_SCAN_LINES   32
#define WALK_MAX_DEPTH    6

static const char *const usage_keys[] = {"input_tokens",        "output_tokens",
                                         "cached_input_tokens", "cache_write_input_tokens",
                                         "total_tokens",        NULL};

/* ---- finding the rollout file ------------------------------------------- */

typedef bool (*file_pred)(const char *path, const char *name, void *data);

/* Collect files under dir (recursively) for which pred holds. */
static void walk(const char *dir, int depth, file_pred pred, void *data, struct strvec *out)
{
    struct strvec names = STRVEC_INIT;
    struct aka_err err = AKA_ERR_INIT;
    if (depth > WALK_MAX_DEPTH || aka_list_dir(dir, &names, &err) < 0)
        return;
    struct strbuf path = STRBUF_INIT;
    for (size_t i = 0; i < names.n; i++) {
        strbuf_reset(&path);
        aka_path_join(&path, dir, names.v[i]);
        if (aka_is_dir(path.buf))
            walk(path.buf, depth + 1, pred, data, out);
        else if (aka_is_file(path.buf) && pred(path.buf, names.v[i], data))
            strvec_push(out, path.buf);
    }
    strbuf_release(&path);
    strvec_clear(&names);
}

static double mtime_of(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return -1;
    return (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9;
}

static bool name_has_thread(const char *path, const char *name, void *data)
{
    const char *thread = data;
    size_t n = strlen(name), t = strlen(thread);
    (void)path;
    return strncmp(name, "rollout-", 8) == 0 && n > t + 6 && strcmp(name + n - 6, ".jsonl") == 0 &&
           strncmp(name + n - 6 - t, thread, t) == 0;
}

/* The newest rollout of a thread, or "" (retried while Codex flushes it). */
static void find_by_thread(const char *home, const char *thread, bool retry, char *out, size_t size)
{
    struct strbuf dir = STRBUF_INIT;
    aka_path_join(&dir, home, "sessions");
    out[0] = '\0';
    for (int attempt = 0; attempt < (retry ? FIND_RETRIES : 1) && !out[0]; attempt++) {
        struct strvec found = STRVEC_INIT;
        walk(dir.buf, 0, name_has_thread, (void *)thread, &found);
        double best = -1;
        for (size_t i = 0; i < found.n; i++)
            if (mtime_of(found.v[i]) > best) {
                best = mtime_of(found.v[i]);
                snprintf(out, size, "%s", found.v[i]);
            }
        strvec_clear(&found);
        if (!out[0] && retry)
            nanosleep(&(struct timespec){0, FIND_RETRY_MS * 1000000L}, NULL);
    }
    strbuf_release(&dir);
}

struct meta_match {
    const char *cwd; /* realpath of the worktree */
    double since;
    struct strvec ids; /* thread ids of the matching files, parallel to the output */
};

/* A rollout written since the invocation started whose session_meta names our cwd. */
static bool meta_matches(const char *path, const char *name, void *data)
{
    struct meta_match *m = data;
    if (strncmp(name, "rollout-", 8) != 0 || mtime_of(path) + 1.0 < m->since)
        return false;
    FILE *f = fopen(path, "re");
    char *line = NULL;
    size_t cap = 0;
    bool hit = false;
    for (int i = 0; f && !hit && i < META_SCAN_LINES && getline(&line, &cap, f) > 0; i++) {
        json_t *o = json_loads(line, 0, NULL), *p = json_object_get(o, "payload");
        const char *type = json_string_value(json_object_get(o, "type"));
        const char *id = json_string_value(json_object_get(p, "id"));
        const char *cwd = json_string_value(json_object_get(p, "cwd"));
        struct strbuf real = STRBUF_INIT;
        struct aka_err err = AKA_ERR_INIT;
        if (type && strcmp(type, "session_meta") == 0 && id && cwd &&
            aka_realpath(cwd, &real, &err) == 0 && strcmp(real.buf, m->cwd) == 0) {
            strvec_push(&m->ids, id);
            hit = true;
        }
        strbuf_release(&real);
        json_decref(o);
    }
    free(line);
    if (f)
        fclose(f);
    return hit;
}

static int find_by_cwd(struct aka_codex_ledger *l, const char *worktree, struct aka_agent_stream *s)
{
    struct strbuf dir = STRBUF_INIT, real = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct meta_match m = {.since = l->since, .ids = STRVEC_INIT};
    struct strvec found = STRVEC_INIT;
    int rc = -1;
    if (aka_realpath(worktree, &real, &err) == 0) {
        m.cwd = real.buf;
        aka_path_join(&dir, l->home, "sessions");
        walk(dir.buf, 0, meta_matches, &m, &found);
    }
    if (found.n == 1 && strlen(m.ids.v[0]) < sizeof(s->session_id)) {
        snprintf(l->path, sizeof(l->path), "%s", found.v[0]);
        snprintf(s->session_id, sizeof(s->session_id), "%s", m.ids.v[0]);
        rc = 0;
    }
    strvec_clear(&found);
    strvec_clear(&m.ids);
    strbuf_release(&dir);
    strbuf_release(&real);
    return rc;
}

/* ---- reading records ------------------------------------------------------ */

/* All five keys as non-negative integers, mapped onto our usage. */
static int ledger_usage(const json_t *obj, struct aka_token_usage *u)
{
    long long v[5];
    for (int i = 0; usage_keys[i]; i++) {
        json_t *x = json_object_get(obj, usage_keys[i]);
        if (!json_is_integer(x) || json_integer_value(x) < 0)
            return -1;
        v[i] = json_integer_value(x);
    }
    *u = (struct aka_token_usage){v[0], v[1], v[2], v[3], v[4], AKA_TOKENS_EXACT};
    return 0;
}

static bool str_eq(const json_t *v, const char *want)
{
    return json_is_string(v) && strcmp(json_string_value(v), want) == 0;
}

/* A token_count record's info, or NULL (info may be null before the first call). */
static json_t *token_info(const json_t *rec)
{
    json_t *p = json_object_get(rec, "payload");
    if (!str_eq(json_object_get(rec, "type"), "event_msg") ||
        !str_eq(json_object_get(p, "type"), "token_count"))
        return NULL;
    json_t *info = json_object_get(p, "info");
    return json_is_object(info) ? info : NULL;
}

static bool is_tool_output(const json_t *rec)
{
    json_t *t = json_object_get(json_object_get(rec, "payload"), "type");
    return str_eq(json_object_get(rec, "type"), "response_item") &&
           (str_eq(t, "custom_tool_call_output") || str_eq(t, "function_call_output"));
}

/* The running total at the end of the first `len` bytes of the file. */
static void cumulative_before(const char *text, size_t len, struct aka_token_usage *out)
{
    aka_token_usage_zero(out);
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        json_t *rec = json_loadb(p, n, 0, NULL);
        struct aka_token_usage u;
        json_t *info = token_info(rec);
        if (info && ledger_usage(json_object_get(info, "total_token_usage"), &u) == 0)
            *out = u;
        json_decref(rec);
        p += n + (nl ? 1 : 0);
    }
}

void aka_codex_ledger_prepare(struct aka_codex_ledger *l, const char *codex_home,
                              const char *resume_thread, double since)
{
    memset(l, 0, sizeof(*l));
    snprintf(l->home, sizeof(l->home), "%s", codex_home ? codex_home : "");
    aka_token_usage_zero(&l->cumulative);
    l->since = since;
    if (!resume_thread || !codex_home)
        return;
    find_by_thread(codex_home, resume_thread, false, l->path, sizeof(l->path));
    struct strbuf text = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    if (l->path[0] && aka_read_file(l->path, &text, LEDGER_READ_LIMIT, &err) == 0) {
        l->offset = (long long)text.len;
        cumulative_before(text.buf, text.len, &l->cumulative);
        l->resumed_from_file = true;
    } else {
        l->path[0] = '\0';
    }
    strbuf_release(&text);
}

struct ledger_read {
    struct aka_token_usage running; /* the thread's cumulative usage so far */
    struct aka_token_usage sum;     /* this invocation's per-call deltas */
    size_t deltas;
    struct aka_agent_stream out, pending; /* new events; markers awaiting the next call */
    const char *why;
};

static void flush_pending(struct ledger_read *r)
{
    for (size_t i = 0; i < r->pending.events.n; i++)
        VEC_PUSH(r->out.events, r->pending.events.v[i]);
    r->pending.events.n = 0;
}

static int take_token_count(struct ledger_read *r, const json_t *info)
{
    struct aka_token_usage last, total;
    if (ledger_usage(json_object_get(info, "last_token_usage"), &last) < 0 ||
        ledger_usage(json_object_get(info, "total_token_usage"), &total) < 0)
        return r->why = "token_count_missing_key", -1;
    if (last.total <= 0)
        return r->why = "token_count_empty_call", -1;
    if (total.total < r->running.total)
        return r->why = "cumulative_decreased", -1;
    if (total.total > r->running.total) { /* an equal total is a repeated record */
        aka_agent_stream_push_usage(&r->out, AKA_EV_USAGE_DELTA, &last);
        aka_token_usage_add(&r->sum, &last);
        r->running = total;
        r->deltas++;
    }
    flush_pending(r); /* a marker belongs after the call that printed it */
    return 0;
}

static int take_record(struct ledger_read *r, const char *line, size_t n)
{
    json_t *rec = json_loadb(line, n, 0, NULL);
    int rc = 0;
    if (!json_is_object(rec))
        rc = (r->why = "malformed_line", -1);
    else if (is_tool_output(rec))
        aka_agent_stream_scan_receipts(&r->pending,
                                       json_object_get(json_object_get(rec, "payload"), "output"));
    else if (token_info(rec))
        rc = take_token_count(r, token_info(rec));
    json_decref(rec);
    return rc;
}

static int read_new(struct ledger_read *r, const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    if (len == 0)
        return r->why = "nothing_new", -1;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        const char *q = p;
        while (q < p + n && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q < p + n && take_record(r, p, n) < 0)
            return -1;
        p += n + (nl ? 1 : 0);
    }
    flush_pending(r);
    return r->deltas ? 0 : (r->why = "no_new_usage", -1);
}

static bool same(long long a, long long b)
{
    return a < 0 || b < 0 || a == b;
}

/* prev + deltas == running, and running agrees with stdout's cumulative. */
static int reconcile(struct ledger_read *r, const struct aka_token_usage *prev,
                     const struct aka_token_usage *stdout_total)
{
    const struct aka_token_usage *a = prev, *d = &r->sum, *c = &r->running;
    if (a->input + d->input != c->input || a->output + d->output != c->output ||
        a->cache_read + d->cache_read != c->cache_read ||
        a->cache_write + d->cache_write != c->cache_write || a->total + d->total != c->total)
        return r->why = "deltas_do_not_reconcile", -1;
    if (stdout_total->total < 0)
        return 0;
    if (!same(c->input, stdout_total->input) || !same(c->output, stdout_total->output) ||
        !same(c->cache_read, stdout_total->cache_read) || c->total != stdout_total->total)
        return r->why = "stdout_mismatch", -1;
    return 0;
}

static int locate(struct aka_codex_ledger *l, const char *worktree, struct aka_agent_stream *s)
{
    if (l->path[0])
        return 0;
    if (!l->home[0])
        return -1;
    if (s->session_id[0]) {
        find_by_thread(l->home, s->session_id, true, l->path, sizeof(l->path));
        return l->path[0] ? 0 : -1;
    }
    return find_by_cwd(l, worktree, s);
}

/* Replace s's events with the ledger's, with this invocation's sum as terminal. */
static void adopt(struct aka_agent_stream *s, struct ledger_read *r)
{
    bool stdout_terminal = s->terminal.total >= 0;
    VEC_FREE(s->events);
    s->events = r->out.events;
    memset(&r->out.events, 0, sizeof(r->out.events));
    s->terminal = r->sum;
    if (!stdout_terminal) {
        s->terminal.measurement = AKA_TOKENS_PARTIAL;
        for (size_t i = 0; i < s->events.n; i++)
            if (s->events.v[i].kind == AKA_EV_USAGE_DELTA)
                s->events.v[i].usage.measurement = AKA_TOKENS_PARTIAL;
        aka_agent_stream_observe(s, "codex_stdout_terminal_unavailable");
    }
    aka_agent_stream_push_usage(s, AKA_EV_TERMINAL_USAGE, &s->terminal);
    s->usage_delta_capable = s->usage_delta_observed = true;
}

int aka_codex_ledger_apply(struct aka_codex_ledger *l, const char *worktree,
                           struct aka_agent_stream *s)
{
    struct ledger_read r;
    struct strbuf text = STRBUF_INIT, code = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    memset(&r, 0, sizeof(r));
    aka_agent_stream_init(&r.out);
    aka_agent_stream_init(&r.pending);
    r.running = l->cumulative;
    aka_token_usage_zero(&r.sum);
    int rc = -1;
    if (locate(l, worktree, s) < 0)
        r.why = "rollout_not_found";
    else if (aka_read_file(l->path, &text, LEDGER_READ_LIMIT, &err) < 0)
        r.why = "rollout_unreadable";
    else if ((long long)text.len < l->offset)
        r.why = "rollout_truncated";
    else if (read_new(&r, text.buf + l->offset, text.len - (size_t)l->offset) == 0 &&
             reconcile(&r, &l->cumulative, &s->terminal) == 0)
        rc = 0;
    if (rc == 0) {
        l->offset = (long long)text.len;
        l->cumulative = r.running;
        adopt(s, &r);
    } else {
        strbuf_addf(&code, "codex_ledger_unavailable:%s", r.why);
        aka_agent_stream_observe(s, code.buf);
    }
    aka_agent_stream_release(&r.out);
    aka_agent_stream_release(&r.pending);
    strbuf_release(&text);
    strbuf_release(&code);
    return rc;
}
