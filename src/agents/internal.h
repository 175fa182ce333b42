/*
 * internal.h — what the files of the agent runtime share and nobody else
 * needs: the process-guard poller, the session environment and small helpers.
 */
#ifndef AKA_AGENTS_INTERNAL_H
#define AKA_AGENTS_INTERNAL_H

#include "agents/adapters.h"
#include "workspace/workspace.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

/* ---- the process guard poller (guard.c) ----------------------------------- */

struct guard_seen {
    pid_t pid, pgid;
    unsigned long long start; /* /proc stat starttime: identity across pid reuse */
};

struct guard_snap {
    char *path;
    bool exists;
    long long size, mtime_ns, ctime_ns;
    unsigned long long ino;
};

struct aka_guard {
    pid_t root;
    struct aka_guard_config cfg;
    char self_exe[4096]; /* processes running aka itself are trusted subtrees */
    pthread_t thread;
    bool started;
    atomic_bool stop;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct {
        struct guard_snap *v;
        size_t n, alloc;
    } snaps;
    struct {
        struct guard_seen *v;
        size_t n, alloc;
    } seen;
    /* Written by the poller thread, read after aka_guard_stop(). */
    bool violated;
    pid_t violator;
    char reason[256], detail[1100];
    double origin;    /* when the violation began: seconds since boot or unix time */
    bool origin_boot; /* origin is on the boot clock (a process start) */
    double latency_ms;
};

/* Start polling the tree of `root` (a session leader) every 100 ms. */
int aka_guard_start(struct aka_guard *g, pid_t root, const char *const *env, struct aka_err *err);
/* Stop the poller (joins it). */
void aka_guard_stop(struct aka_guard *g);
/* End whatever the session left behind: every process seen (identity
 * checked) and every remaining member of the root's session. */
void aka_guard_teardown(struct aka_guard *g);
void aka_guard_release(struct aka_guard *g);

/* ---- the session environment (env.c) -------------------------------------- */

struct agent_env_in {
    const struct aka_adapter *adapter;
    const struct aka_agent_request *req;
    const char *guard_script; /* BASH_ENV */
    const char *trace_file;   /* default ATREX_AKA_TRACE_FILE */
};
/* Overrides for proc_spec.env ("NAME=VALUE" sets, "NAME" removes). */
int aka_agent_build_env(const struct agent_env_in *in, struct strvec *env, struct aka_err *err);
/* The directory of the running aka binary ("" when unknown). */
void aka_agent_self_dir(struct strbuf *out);
void aka_agent_self_exe(char *out, size_t size);

/* ---- the agent sandbox (confine.c) ----------------------------------------- */

/* Wrap argv (the CLI's command line) in the bwrap argv of req->confine's view;
 * ctl receives the private directory of the generated /etc files (the caller
 * removes it after the session). prompt_file: a brief the CLI reads by path
 * (shown read-only), or NULL. */
int aka_agent_confine(const struct aka_agent_request *req, const char *prompt_file,
                      struct strvec *argv, struct strbuf *ctl, struct aka_err *err);

/* ---- helpers (runtime.c) -------------------------------------------------- */

void aka_agent_new_uuid(char out[37]);
double aka_agent_unix_now(void);

/* ---- plan reviewers (reviewers.c, review.c) -------------------------------- */

struct aka_reviewer_info {
    const char *name;        /* codex | qoder */
    const char *backend;     /* the agent backend that runs it */
    const char *bin_var;     /* ATREX_CODEX_BIN: the CLI binary (default: the backend on PATH) */
    const char *timeout_var; /* ATREX_ASK_CODEX_TIMEOUT */
    const char *env_name;    /* CODEX in ATREX_PLAN_REVIEW_CODEX_* */
    const char *marker;      /* ASK_CODEX in ASK_CODEX_SKIPPED: / _DISABLED: */
    const char *summary;     /* the first section a review must carry */
};
const struct aka_reviewer_info *aka_reviewer_info(enum aka_reviewer r);

struct reviewer_call {
    enum aka_reviewer which;
    const char *dir;         /* the reviewer's working directory (scratch) */
    const char *prompt_file; /* the prompt */
    const char *capture;     /* the invocation's capture directory */
    long timeout_s;
    const char *repo_root;
};
/* Run it: 0 with its answer, 1 with why it failed (in failure). */
int aka_reviewer_call(const struct reviewer_call *c, struct aka_agent_result *res,
                      struct strbuf *answer, struct aka_reviewer_state *failure);
/* A fresh empty Git directory for a reviewer to run in. */
int aka_reviewer_scratch(const char *prefix, struct strbuf *dir, struct aka_err *err);
int aka_plan_reviewers_save(const char *workspace, const struct aka_plan_reviewers *pr,
                            struct aka_err *err);
/* Record a reviewer as unavailable in the campaign's cache (no-op without one). */
int aka_plan_reviewer_disable(const char *workspace, enum aka_reviewer r,
                              const struct aka_reviewer_state *why, struct aka_err *err);
int aka_reviewer_ledger_append(const char *workspace, enum aka_reviewer r, const char *purpose,
                               const struct aka_token_usage *u);
void aka_reviewer_utc_now(char *out, size_t size);

#endif
