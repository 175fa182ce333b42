/*
 * serve.c — `aka gateway serve` from start to stop: the state directory (0700), the
 * bearer token (read, or created 0600 at the first start), the scheduler lock (one
 * gateway per state directory), the job table (with the recovery of jobs a killed
 * gateway left running), the workers and the listener; then wait for SIGINT/SIGTERM.
 */
#include "gateway/internal.h"

#include "base/fs.h"
#include "base/lock.h"
#include "base/proc.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

void aka_gateway_default_state(struct strbuf *out)
{
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        strbuf_addf(out, "%s/aka/gateway", xdg);
    else
        strbuf_addf(out, "%s/.local/state/aka/gateway", home && *home ? home : "/tmp");
}

static bool loopback(const char *host)
{
    return !strcmp(host, "localhost") || !strcmp(host, "::1") || !strncmp(host, "127.", 4);
}

int aka_gateway_check(const struct aka_gateway_opts *o, struct aka_err *err)
{
    if (!loopback(o->host) && !o->allow_remote)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--listen %s: not a loopback address; the gateway runs other people's "
                           "code, so listening beyond this host needs --allow-remote",
                           o->host);
    if (o->workers < 1 || o->workers > AKA_GW_MAX_WORKERS)
        return aka_err_set(err, AKA_EXIT_USAGE, "--workers: expected 1..%d; got %d",
                           AKA_GW_MAX_WORKERS, o->workers);
    if (o->gpus.n % (size_t)o->workers != 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--gpus: %zu GPUs cannot be split evenly over %d workers", o->gpus.n,
                           o->workers);
    for (size_t i = 0; i < o->gpus.n; i++) {
        char *end;
        long g = strtol(o->gpus.v[i], &end, 10);
        if (!*o->gpus.v[i] || *end || g < 0 || g >= AKA_SBX_MAX_GPUS)
            return aka_err_set(err, AKA_EXIT_USAGE, "--gpus: expected GPU indices 0..%d; got '%s'",
                               AKA_SBX_MAX_GPUS - 1, o->gpus.v[i]);
    }
    return 0;
}

/* 32 random bytes as hex, written 0600 (O_EXCL) at the first start. */
static int create_token(const char *path, struct strbuf *tok, struct aka_err *err)
{
    unsigned char raw[32];
    if (RAND_bytes(raw, sizeof(raw)) != 1)
        return aka_err_set(err, AKA_EXIT_ENV, "cannot draw random bytes for the token");
    for (size_t i = 0; i < sizeof(raw); i++)
        strbuf_addf(tok, "%02x", raw[i]);
    strbuf_addch(tok, '\n');
    int rc = aka_write_file_plain(path, tok->buf, tok->len, 0600, err);
    strbuf_trim(tok);
    return rc;
}

static int load_token(const char *path, struct strbuf *tok, struct aka_err *err)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return create_token(path, tok, err);
    if (!S_ISREG(st.st_mode))
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: the token file is not a regular file", path);
    if (st.st_mode & 077)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: the token file is readable by others (mode %03o); chmod 600 it",
                           path, (unsigned)(st.st_mode & 0777));
    if (aka_read_file(path, tok, 4096, err) < 0)
        return -1;
    strbuf_trim(tok);
    if (tok->len < 16)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: expected a token of at least 16 characters",
                           path);
    return 0;
}

/* Directories of a previous run (a killed gateway's job and staging directories) go. */
static int prepare_dirs(struct gw_server *srv, struct aka_err *err)
{
    struct strbuf work = STRBUF_INIT;
    if (srv->o->work_dir)
        strbuf_addstr(&work, srv->o->work_dir);
    else
        aka_path_join(&work, srv->state.buf, "work");
    aka_path_join(&srv->jobs_dir, work.buf, "jobs");
    aka_path_join(&srv->work_dir, work.buf, "stage");
    aka_remove_tree(srv->jobs_dir.buf, NULL);
    aka_remove_tree(srv->work_dir.buf, NULL);
    int rc = aka_mkdir_p(srv->jobs_dir.buf, 0700, err) < 0 ||
                     aka_mkdir_p(srv->work_dir.buf, 0700, err) < 0
                 ? -1
                 : 0;
    if (rc == 0)
        chmod(work.buf, 0700);
    strbuf_release(&work);
    return rc;
}

static void split_gpus(struct gw_server *srv)
{
    const struct aka_gateway_opts *o = srv->o;
    size_t per = o->gpus.n / (size_t)o->workers;
    srv->n_workers = o->workers;
    for (int w = 0; w < o->workers; w++) {
        srv->workers[w].n_gpus = per;
        for (size_t i = 0; i < per; i++)
            srv->workers[w].gpus[i] = atoi(o->gpus.v[(size_t)w * per + i]);
    }
}

static int open_state(struct gw_server *srv, struct aka_lock *lk, struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT;
    struct strvec notes = STRVEC_INIT;
    int rc = aka_mkdir_p(srv->state.buf, 0700, err);
    if (rc == 0) {
        chmod(srv->state.buf, 0700);
        aka_path_join(&p, srv->state.buf, ".scheduler.lock");
        rc = aka_lock_acquire(lk, p.buf, false, err);
    }
    strbuf_reset(&p);
    if (srv->o->token_file)
        strbuf_addstr(&p, srv->o->token_file);
    else
        aka_path_join(&p, srv->state.buf, "token");
    if (rc == 0)
        rc = load_token(p.buf, &srv->token, err);
    strbuf_reset(&p);
    aka_path_join(&p, srv->state.buf, "jobs.db");
    if (rc == 0)
        rc = gw_store_open(&srv->store, p.buf, &notes, err);
    for (size_t i = 0; i < notes.n; i++)
        fprintf(stderr, "aka gateway: %s\n", notes.v[i]);
    if (rc == 0)
        rc = prepare_dirs(srv, err);
    strbuf_release(&p);
    strvec_clear(&notes);
    return rc;
}

/* Where the gateway listens, for clients and tests that asked for any port. */
static void write_listen(struct gw_server *srv)
{
    struct strbuf p = STRBUF_INIT, text = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&p, srv->state.buf, "listen");
    strbuf_addf(&text, "http://%s%s%s:%d\n", strchr(srv->o->host, ':') ? "[" : "", srv->o->host,
                strchr(srv->o->host, ':') ? "]" : "", srv->port);
    aka_write_file_atomic(p.buf, text.buf, text.len, 0600, &err);
    fprintf(stderr, "aka gateway: listening on %.*s (state %s, %d worker%s, isolation %s)\n",
            (int)text.len - 1, text.buf, srv->state.buf, srv->n_workers,
            srv->n_workers == 1 ? "" : "s", srv->o->isolation_none ? "none" : "bwrap");
    strbuf_release(&p);
    strbuf_release(&text);
}

static void wait_for_stop(void)
{
    struct timespec ts = {0, 100 * 1000000L};
    while (!proc_stop_signal())
        nanosleep(&ts, NULL);
}

int aka_gateway_serve(const struct aka_gateway_opts *o, struct aka_err *err)
{
    struct gw_server *srv = aka_xcalloc(1, sizeof(*srv));
    struct aka_lock lk = AKA_LOCK_INIT;
    srv->o = o;
    /* The WAL and lock files hold request bodies and pids: nobody else's to read. */
    umask(077);
    strbuf_init(&srv->state, 0);
    if (o->state_dir)
        strbuf_addstr(&srv->state, o->state_dir);
    else
        aka_gateway_default_state(&srv->state);
    split_gpus(srv);
    int rc = aka_gateway_check(o, err);
    if (rc == 0)
        rc = proc_catch_stop_signals(err);
    if (rc == 0)
        rc = open_state(srv, &lk, err);
    if (rc == 0)
        rc = gw_workers_start(srv, err);
    if (rc == 0)
        rc = gw_http_start(srv, err);
    if (rc == 0) {
        write_listen(srv);
        wait_for_stop();
        fprintf(stderr, "aka gateway: stopping (signal %d)\n", proc_stop_signal());
    }
    srv->stopping = 1;
    gw_http_stop(srv);
    gw_workers_join(srv);
    gw_store_close(&srv->store);
    aka_lock_release(&lk);
    strbuf_release(&srv->state);
    strbuf_release(&srv->jobs_dir);
    strbuf_release(&srv->work_dir);
    strbuf_release(&srv->token);
    free(srv);
    return rc;
}
