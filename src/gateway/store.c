/*
 * store.c — the gateway's job table in SQLite (WAL, synchronous NORMAL): the one
 * place a job's state lives, so a gateway killed at any moment restarts knowing
 * every job. One connection behind one mutex; every change bumps a generation and
 * broadcasts a condition that idle workers and long-polls wait on.
 *
 * The schema is upstream's local gateway table plus the request's sha256 (an
 * idempotency key reused with another body is a conflict, not the old job) and the
 * running job's process identity (pid + start time), which a restart uses to end a
 * job a killed gateway left behind before marking it failed.
 */
#include "gateway/internal.h"

#include "base/fs.h"
#include "base/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS jobs(job_id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT "
    "NOT NULL, request_json TEXT NOT NULL, request_sha256 TEXT NOT NULL, result_json TEXT, "
    "error_json TEXT, trace_id TEXT, user_name TEXT, idempotency_key TEXT, attempts INTEGER "
    "DEFAULT 0, lock_clocks INTEGER DEFAULT 0, pid INTEGER, pid_start INTEGER, worker INTEGER, "
    "created_at REAL, updated_at "
    "REAL, started_at REAL, finished_at REAL);"
    "CREATE UNIQUE INDEX IF NOT EXISTS jobs_idempotency ON jobs(kind, idempotency_key) WHERE "
    "idempotency_key IS NOT NULL;"
    "CREATE INDEX IF NOT EXISTS jobs_queue ON jobs(status, created_at);";

int64_t gw_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool gw_terminal(const char *status)
{
    return !strcmp(status, "succeeded") || !strcmp(status, "failed") ||
           !strcmp(status, "cancelled");
}

json_t *gw_error(const char *cls, const char *reason, const char *message)
{
    return json_pack("{s:s, s:s, s:s, s:{}, s:n}", "error_class", cls, "reason", reason, "message",
                     message, "details", "trace_id");
}

/* Call with the mutex held. */
static void changed(struct gw_store *st)
{
    st->gen++;
    pthread_cond_broadcast(&st->changed);
}

static int exec_sql(struct gw_store *st, const char *sql, struct aka_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    aka_err_set(err, AKA_EXIT_ENV, "jobs database: %s", msg ? msg : "error");
    sqlite3_free(msg);
    return -1;
}

static sqlite3_stmt *prep(struct gw_store *st, const char *sql)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
        fprintf(stderr, "aka gateway: sql: %s\n", sqlite3_errmsg(st->db));
        return NULL;
    }
    return s;
}

static const char *col(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? (const char *)t : NULL;
}

/* A job a killed gateway left running: end what is left of it, then say so. */
static void recover_one(struct gw_store *st, const char *id, pid_t pid, unsigned long long start,
                        struct strvec *notes)
{
    int ended = pid > 0 ? proc_end_group_if_same(pid, start, 2000) : 0;
    char msg[512];
    snprintf(msg, sizeof(msg),
             "the gateway stopped (killed or crashed) while this job was running; it was not "
             "re-run%s. Submit it again (a new idempotency key) to run it",
             ended > 0 ? " and its leftover processes were ended" : "");
    json_t *e = gw_error("interrupted", "scheduler_restarted", msg);
    char *ej = json_dumps(e, JSON_COMPACT);
    sqlite3_stmt *s = prep(st, "UPDATE jobs SET status='failed', error_json=?, updated_at=?, "
                               "finished_at=?, pid=NULL WHERE job_id=?");
    if (s) {
        sqlite3_bind_text(s, 1, ej, -1, SQLITE_TRANSIENT);
        sqlite3_bind_double(s, 2, wall_now());
        sqlite3_bind_double(s, 3, wall_now());
        sqlite3_bind_text(s, 4, id, -1, SQLITE_TRANSIENT);
        sqlite3_step(s);
        sqlite3_finalize(s);
    }
    strvec_pushf(notes,
                 "job %s was running when the gateway stopped: failed "
                 "(scheduler_restarted)%s",
                 id, ended > 0 ? ", leftover processes ended" : "");
    free(ej);
    json_decref(e);
}

static void recover(struct gw_store *st, struct strvec *notes)
{
    struct strvec ids = STRVEC_INIT;
    VEC(long long) pids = {0};
    sqlite3_stmt *s = prep(st, "SELECT job_id, pid, pid_start FROM jobs WHERE status='running'");
    while (s && sqlite3_step(s) == SQLITE_ROW) {
        strvec_push(&ids, col(s, 0));
        VEC_PUSH(pids, sqlite3_column_int64(s, 1));
        VEC_PUSH(pids, sqlite3_column_int64(s, 2));
    }
    sqlite3_finalize(s);
    for (size_t i = 0; i < ids.n; i++)
        recover_one(st, ids.v[i], (pid_t)pids.v[2 * i], (unsigned long long)pids.v[2 * i + 1],
                    notes);
    strvec_clear(&ids);
    VEC_FREE(pids);
}

int gw_store_open(struct gw_store *st, const char *path, struct strvec *notes, struct aka_err *err)
{
    memset(st, 0, sizeof(*st));
    pthread_mutex_init(&st->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&st->changed, &ca);
    pthread_condattr_destroy(&ca);
    if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK)
        return aka_err_set(err, AKA_EXIT_ENV, "%s: cannot open: %s", path,
                           st->db ? sqlite3_errmsg(st->db) : "out of memory");
    sqlite3_busy_timeout(st->db, 5000);
    if (exec_sql(st, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", err) < 0 ||
        exec_sql(st, schema, err) < 0)
        return aka_err_prefix(err, "%s", path);
    chmod(path, 0600);
    recover(st, notes);
    return 0;
}

void gw_store_close(struct gw_store *st)
{
    if (st->db)
        sqlite3_close(st->db);
    st->db = NULL;
}

static void new_id(const char *kind, char id[32])
{
    char a[9], b[9];
    aka_random_hex8(a);
    aka_random_hex8(b);
    const char *p = !strcmp(kind, "eval") ? "ev" : !strcmp(kind, "profile") ? "pf" : "dv";
    snprintf(id, 32, "%s_%s%.4s", p, a, b);
}

/* The job holding (kind, key): its id and body hash; 1 found, 0 not. */
static int find_key(struct gw_store *st, const char *kind, const char *key, char id[32],
                    char sha[72])
{
    sqlite3_stmt *s = prep(st, "SELECT job_id, request_sha256 FROM jobs WHERE kind=? AND "
                               "idempotency_key=?");
    int found = 0;
    if (!s)
        return 0;
    sqlite3_bind_text(s, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, key, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW) {
        snprintf(id, 32, "%s", col(s, 0));
        snprintf(sha, 72, "%s", col(s, 1));
        found = 1;
    }
    sqlite3_finalize(s);
    return found;
}

static int insert(struct gw_store *st, const struct gw_new_job *nj, const char *id,
                  struct aka_err *err)
{
    sqlite3_stmt *s = prep(st, "INSERT INTO jobs(job_id, kind, status, request_json, "
                               "request_sha256, trace_id, user_name, idempotency_key, "
                               "created_at, updated_at, lock_clocks) "
                               "VALUES(?,?,'queued',?,?,?,?,?,?,?,?)");
    if (!s)
        return aka_err_set(err, AKA_EXIT_ENV, "jobs database: %s", sqlite3_errmsg(st->db));
    double now = wall_now();
    sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, nj->kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, nj->body, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 4, nj->body_sha256, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 5, nj->trace_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 6, nj->user, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 7, nj->idempotency_key, -1, SQLITE_STATIC);
    sqlite3_bind_double(s, 8, now);
    sqlite3_bind_double(s, 9, now);
    sqlite3_bind_int(s, 10, nj->lock_clocks);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return aka_err_set(err, AKA_EXIT_ENV, "jobs database: insert: %s", sqlite3_errmsg(st->db));
    return 0;
}

int gw_store_submit(struct gw_store *st, const struct gw_new_job *nj, char id[32],
                    enum gw_submit *out, struct aka_err *err)
{
    char sha[72];
    int rc = 0;
    pthread_mutex_lock(&st->mu);
    if (nj->idempotency_key && find_key(st, nj->kind, nj->idempotency_key, id, sha)) {
        *out = strcmp(sha, nj->body_sha256) == 0 ? GW_SUBMIT_SAME : GW_SUBMIT_CONFLICT;
    } else {
        new_id(nj->kind, id);
        *out = GW_SUBMIT_NEW;
        rc = insert(st, nj, id, err);
        if (rc == 0)
            changed(st);
    }
    pthread_mutex_unlock(&st->mu);
    return rc;
}

int gw_store_claim(struct gw_store *st, int w, struct gw_claim *c)
{
    int got = 0;
    pthread_mutex_lock(&st->mu);
    sqlite3_stmt *s = prep(st, "SELECT job_id, kind, request_json FROM jobs WHERE "
                               "status='queued' ORDER BY created_at, rowid LIMIT 1");
    if (s && sqlite3_step(s) == SQLITE_ROW) {
        snprintf(c->id, sizeof(c->id), "%s", col(s, 0));
        snprintf(c->kind, sizeof(c->kind), "%s", col(s, 1));
        c->body = aka_xstrdup(col(s, 2));
        got = 1;
    }
    sqlite3_finalize(s);
    if (got) {
        s = prep(st, "UPDATE jobs SET status='running', attempts=attempts+1, worker=?, "
                     "started_at=?, updated_at=? WHERE job_id=?");
        double now = wall_now();
        sqlite3_bind_int(s, 1, w);
        sqlite3_bind_double(s, 2, now);
        sqlite3_bind_double(s, 3, now);
        sqlite3_bind_text(s, 4, c->id, -1, SQLITE_STATIC);
        sqlite3_step(s);
        sqlite3_finalize(s);
        changed(st);
    }
    pthread_mutex_unlock(&st->mu);
    return got;
}

static bool is_running(struct gw_store *st, const char *id)
{
    sqlite3_stmt *s = prep(st, "SELECT status FROM jobs WHERE job_id=?");
    bool running = false;
    sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW)
        running = !strcmp(col(s, 0), "running");
    sqlite3_finalize(s);
    return running;
}

bool gw_store_set_pid(struct gw_store *st, const char *id, pid_t pid, unsigned long long start)
{
    pthread_mutex_lock(&st->mu);
    sqlite3_stmt *s = prep(st, "UPDATE jobs SET pid=?, pid_start=? WHERE job_id=?");
    sqlite3_bind_int64(s, 1, pid);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)start);
    sqlite3_bind_text(s, 3, id, -1, SQLITE_STATIC);
    sqlite3_step(s);
    sqlite3_finalize(s);
    bool running = is_running(st, id);
    pthread_mutex_unlock(&st->mu);
    return running;
}

static void bind_json(sqlite3_stmt *s, int i, json_t *v)
{
    if (!v) {
        sqlite3_bind_null(s, i);
        return;
    }
    char *t = json_dumps(v, JSON_COMPACT);
    sqlite3_bind_text(s, i, t, -1, free);
}

void gw_store_finish(struct gw_store *st, const char *id, const char *status, json_t *result,
                     json_t *error)
{
    pthread_mutex_lock(&st->mu);
    /* A cancelled job keeps its status; what it printed before it ended still comes back. */
    sqlite3_stmt *s = prep(st, "UPDATE jobs SET status=CASE WHEN status='running' THEN ? ELSE "
                               "status END, result_json=?, error_json=CASE WHEN "
                               "status='running' THEN ? ELSE error_json END, pid=NULL, "
                               "updated_at=?, finished_at=? WHERE job_id=?");
    double now = wall_now();
    sqlite3_bind_text(s, 1, status, -1, SQLITE_STATIC);
    bind_json(s, 2, result);
    bind_json(s, 3, error);
    sqlite3_bind_double(s, 4, now);
    sqlite3_bind_double(s, 5, now);
    sqlite3_bind_text(s, 6, id, -1, SQLITE_STATIC);
    sqlite3_step(s);
    sqlite3_finalize(s);
    changed(st);
    pthread_mutex_unlock(&st->mu);
}

int gw_store_cancel(struct gw_store *st, const char *id, pid_t *pid)
{
    int rc = -1;
    *pid = 0;
    pthread_mutex_lock(&st->mu);
    sqlite3_stmt *s = prep(st, "SELECT status, pid FROM jobs WHERE job_id=?");
    sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
    bool live = false;
    if (sqlite3_step(s) == SQLITE_ROW) {
        rc = 0;
        live = !gw_terminal(col(s, 0));
        if (!strcmp(col(s, 0), "running"))
            *pid = (pid_t)sqlite3_column_int64(s, 1);
    }
    sqlite3_finalize(s);
    if (live) {
        json_t *e = gw_error("cancelled", "cancelled", "cancelled by a client");
        s = prep(st, "UPDATE jobs SET status='cancelled', error_json=?, updated_at=?, "
                     "finished_at=? WHERE job_id=?");
        bind_json(s, 1, e);
        sqlite3_bind_double(s, 2, wall_now());
        sqlite3_bind_double(s, 3, wall_now());
        sqlite3_bind_text(s, 4, id, -1, SQLITE_STATIC);
        sqlite3_step(s);
        sqlite3_finalize(s);
        json_decref(e);
        changed(st);
    }
    pthread_mutex_unlock(&st->mu);
    return rc;
}

#define VIEW_COLS                                                                                  \
    "job_id, kind, status, result_json, error_json, trace_id, created_at, updated_at, "            \
    "started_at, finished_at, attempts, idempotency_key, user_name, lock_clocks"

static json_t *parsed_or_null(const char *text)
{
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    return v ? v : json_null();
}

static json_t *real_or_null(sqlite3_stmt *s, int i)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL ? json_null()
                                                    : json_real(sqlite3_column_double(s, i));
}

static json_t *str_or_null(const char *t)
{
    return t ? json_string(t) : json_null();
}

/* Upstream's job envelope, from one row of VIEW_COLS. */
static json_t *row_view(sqlite3_stmt *s)
{
    json_t *v = json_object();
    json_object_set_new(v, "job_id", json_string(col(s, 0)));
    json_object_set_new(v, "kind", json_string(col(s, 1)));
    json_object_set_new(v, "status", json_string(col(s, 2)));
    json_object_set_new(v, "mode", json_string("full"));
    json_object_set_new(v, "lock_clocks", json_boolean(sqlite3_column_int(s, 13)));
    json_object_set_new(v, "mode_enforced", json_false());
    json_object_set_new(v, "result", parsed_or_null(col(s, 3)));
    json_object_set_new(v, "error", parsed_or_null(col(s, 4)));
    json_object_set_new(v, "trace_id", str_or_null(col(s, 5)));
    json_object_set_new(v, "created_at", real_or_null(s, 6));
    json_object_set_new(v, "updated_at", real_or_null(s, 7));
    json_object_set_new(v, "started_at", real_or_null(s, 8));
    json_object_set_new(v, "finished_at", real_or_null(s, 9));
    json_object_set_new(v, "attempts", json_integer(sqlite3_column_int(s, 10)));
    json_object_set_new(v, "idempotency_key", str_or_null(col(s, 11)));
    json_object_set_new(v, "user", str_or_null(col(s, 12)));
    return v;
}

int gw_store_status(struct gw_store *st, const char *id, char status[16])
{
    int found = 0;
    pthread_mutex_lock(&st->mu);
    sqlite3_stmt *s = prep(st, "SELECT status FROM jobs WHERE job_id=?");
    sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW) {
        snprintf(status, 16, "%s", col(s, 0));
        found = 1;
    }
    sqlite3_finalize(s);
    pthread_mutex_unlock(&st->mu);
    return found;
}

json_t *gw_store_view(struct gw_store *st, const char *id)
{
    json_t *v = NULL;
    pthread_mutex_lock(&st->mu);
    sqlite3_stmt *s = prep(st, "SELECT " VIEW_COLS " FROM jobs WHERE job_id=?");
    sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW)
        v = row_view(s);
    sqlite3_finalize(s);
    pthread_mutex_unlock(&st->mu);
    return v;
}

json_t *gw_store_list(struct gw_store *st, const char *kind, const char *status, int limit,
                      bool ascending)
{
    json_t *a = json_array();
    pthread_mutex_lock(&st->mu);
    sqlite3_stmt *s = prep(st, ascending ? "SELECT " VIEW_COLS " FROM jobs WHERE (?1 IS NULL OR "
                                           "kind=?1) AND (?2 IS NULL OR status=?2) ORDER BY "
                                           "created_at, rowid LIMIT ?3"
                                         : "SELECT " VIEW_COLS " FROM jobs WHERE (?1 IS NULL OR "
                                           "kind=?1) AND (?2 IS NULL OR status=?2) ORDER BY "
                                           "created_at DESC, rowid DESC LIMIT ?3");
    sqlite3_bind_text(s, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, status, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 3, limit);
    while (sqlite3_step(s) == SQLITE_ROW) {
        json_t *v = row_view(s);
        json_object_del(v, "result"); /* lists stay small: GET the job for its result */
        json_array_append_new(a, v);
    }
    sqlite3_finalize(s);
    pthread_mutex_unlock(&st->mu);
    return a;
}

uint64_t gw_store_gen(struct gw_store *st)
{
    pthread_mutex_lock(&st->mu);
    uint64_t g = st->gen;
    pthread_mutex_unlock(&st->mu);
    return g;
}

void gw_store_wait(struct gw_store *st, uint64_t gen, int64_t deadline_ms)
{
    struct timespec ts = {(time_t)(deadline_ms / 1000), (long)(deadline_ms % 1000) * 1000000};
    pthread_mutex_lock(&st->mu);
    while (st->gen == gen && gw_now_ms() < deadline_ms)
        if (pthread_cond_timedwait(&st->changed, &st->mu, &ts) != 0)
            break;
    pthread_mutex_unlock(&st->mu);
}
