/*
 * confine.c — the agent sandbox: what an agent CLI (or `aka tune-agent`) sees
 * of the host when the supervisor confines it (DESIGN §1 principle 8, §4.5).
 *
 * The view (a Bubblewrap sandbox built by src/sandbox/view.c) holds:
 *
 *   writable   the session's worktree (its own candidate repository) and the
 *              backend CLI's own state (~/.claude and ~/.claude.json, $CODEX_HOME
 *              or ~/.codex, ~/.qoder and ~/.qoder.json, ~/.pi) when present;
 *              an empty tmpfs at $HOME (nothing else of the home), /tmp;
 *   read-only  the campaign view the supervisor prepared (operator snapshot,
 *              campaign.json, memory copies), the asset tree's runtime/ (the
 *              harness `aka eval` needs, the guard script, prompts, skills,
 *              plugins), the aka binary and any library it loaded from outside
 *              the system directories, the Python environment evaluation jobs
 *              use, the CLI's own directory, the system;
 *   absent     everything else: the canonical workspace (.aka/, memory/, its
 *              .git with refs, config and hooks), the original operator
 *              directory, the rest of the home (~/.ssh), other processes.
 *
 * A protected path (the canonical workspace, the original operator) that lies
 * below a bound directory is covered by an empty tmpfs; a bind that lies inside
 * one is refused. The network is kept only for backends that call a hosted model
 * (not for the built-in tuner); GPU nodes only when the caller asks (the GPUs the
 * agent's `aka eval` needs). Own PID namespace, --die-with-parent and a new
 * session: nothing the agent starts outlives its session. The process guard
 * (guard.c) still watches every process inside, as a second layer.
 */
#include "agents/internal.h"
#include "base/fs.h"
#include "sandbox/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const aka_agent_sandbox_names[] = {"bwrap", "none", NULL};

/* Directories every sandbox already shows read-only (sandbox/binds.c). */
static const char *const system_dirs[] = {"/usr",   "/bin",   "/sbin",   "/lib",
                                          "/lib32", "/lib64", "/libx32", NULL};

struct confine {
    const struct aka_agent_request *req;
    const struct aka_agent_confinement *c;
    struct aka_sandbox_view view;
    struct strbuf cli;  /* the CLI resolved to its real path ("" for builtin) */
    struct strvec deny; /* the protected paths, resolved: the binds are compared resolved */
};

static bool within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool in_system(const char *path)
{
    for (const char *const *d = system_dirs; *d; d++)
        if (within(path, *d))
            return true;
    return false;
}

/*
 * Add src (resolved) in mode. A protected path below it is covered by a tmpfs; src
 * inside a protected path, or in a credential directory (~/.ssh, ~/.aws, ...) or a
 * credential file, is refused. A missing *_TRY source is skipped.
 */
static int add(struct confine *cf, enum aka_sandbox_view_mode mode, const char *src,
               const char *what, struct aka_err *err)
{
    struct strbuf real = STRBUF_INIT;
    bool optional = mode == AKA_VIEW_RO_TRY || mode == AKA_VIEW_RW_TRY;
    if (optional && !aka_exists(src))
        return 0;
    if (aka_realpath(src, &real, err) < 0) {
        strbuf_release(&real);
        return aka_err_prefix(err, "agent sandbox: %s", what);
    }
    const char *secret = aka_sandbox_secret_path(real.buf);
    int rc = secret ? aka_err_set(err, AKA_EXIT_USAGE, "agent sandbox: %s %s is %s; never bound",
                                  what, real.buf, secret)
                    : 0;
    for (size_t i = 0; rc == 0 && i < cf->deny.n; i++) {
        const char *d = cf->deny.v[i];
        if (within(real.buf, d))
            rc = aka_err_set(err, AKA_EXIT_USAGE,
                             "agent sandbox: %s %s lies inside %s, which the agent must never "
                             "reach",
                             what, real.buf, d);
        else if (within(d, real.buf))
            aka_sandbox_view_add(&cf->view, AKA_VIEW_TMPFS, NULL, d);
    }
    if (rc == 0)
        aka_sandbox_view_add(&cf->view, mode, real.buf, NULL);
    strbuf_release(&real);
    return rc;
}

/* $HOME/name ($HOME itself for ""), or "" when there is no usable home. */
static void home_path(const char *name, struct strbuf *out)
{
    const char *home = getenv("HOME");
    strbuf_reset(out);
    if (!home || home[0] != '/' || strcmp(home, "/") == 0)
        return;
    if (*name)
        aka_path_join(out, home, name);
    else
        strbuf_addstr(out, home);
}

/* The backend CLI's own state, writable (sessions, credentials, settings it saves). */
static int add_backend_state(struct confine *cf, struct aka_err *err)
{
    static const struct {
        const char *backend, *home_names[3];
    } table[] = {
        {"claude", {".claude", ".claude.json", NULL}},
        {"qodercli", {".qoder", ".qoder.json", NULL}},
        {"codex", {".codex", NULL, NULL}},
        {"pi", {".pi", NULL, NULL}},
    };
    struct strbuf p = STRBUF_INIT;
    int rc = 0;
    const char *codex_home = aka_agent_env_lookup(cf->req->env, "CODEX_HOME");
    for (size_t i = 0; rc == 0 && i < sizeof(table) / sizeof(table[0]); i++) {
        if (strcmp(table[i].backend, cf->req->backend) != 0)
            continue;
        for (const char *const *n = table[i].home_names; rc == 0 && *n; n++) {
            bool codex = strcmp(*n, ".codex") == 0 && codex_home && *codex_home;
            strbuf_reset(&p);
            if (codex)
                strbuf_addstr(&p, codex_home);
            else
                home_path(*n, &p);
            if (p.len)
                rc = add(cf, AKA_VIEW_RW_TRY, p.buf, "the backend's state", err);
        }
    }
    strbuf_release(&p);
    return rc;
}

/* The CLI by its real path (argv[0] inside), its directory read-only unless system. */
static int add_cli(struct confine *cf, const char *argv0, struct aka_err *err)
{
    struct strbuf found = STRBUF_INIT, dir = STRBUF_INIT;
    int rc = aka_sandbox_find_program(argv0, &found) < 0
                 ? aka_err_set(err, AKA_EXIT_ENV, "agent sandbox: the CLI %s was not found", argv0)
                 : aka_realpath(found.buf, &cf->cli, err);
    if (rc == 0) {
        const char *slash = strrchr(cf->cli.buf, '/');
        strbuf_add(&dir, cf->cli.buf, (size_t)(slash - cf->cli.buf));
        if (!in_system(dir.buf))
            rc = add(cf, AKA_VIEW_RO, dir.buf, "the agent CLI's directory", err);
    }
    strbuf_release(&found);
    strbuf_release(&dir);
    return rc;
}

/* The aka binary and the libraries it loaded from outside the system directories; the
 * Python environment the evaluation jobs use (the agent's `aka eval` needs it too). */
static int add_self(struct confine *cf, struct aka_err *err)
{
    char exe[4096];
    struct strvec libs = STRVEC_INIT;
    struct strbuf python = STRBUF_INIT;
    aka_agent_self_exe(exe, sizeof(exe));
    aka_sandbox_python_prefix(&python);
    int rc = exe[0] ? add(cf, AKA_VIEW_RO, exe, "the aka binary", err) : 0;
    if (rc == 0 && python.len)
        rc = add(cf, AKA_VIEW_RO, python.buf, "the Python environment", err);
    strbuf_release(&python);
    aka_sandbox_mapped_files(&libs);
    for (size_t i = 0; rc == 0 && i < libs.n; i++)
        if (!in_system(libs.v[i]) && strcmp(libs.v[i], exe) != 0)
            rc = add(cf, AKA_VIEW_RO, libs.v[i], "a library of aka", err);
    strvec_clear(&libs);
    return rc;
}

static int add_operator_paths(struct confine *cf, struct aka_err *err)
{
    int rc = 0;
    for (const char *const *p = cf->c->read_only; rc == 0 && p && *p; p++)
        rc = add(cf, AKA_VIEW_RO, *p, "--agent-read-only-path", err);
    for (const char *const *p = cf->c->writable; rc == 0 && p && *p; p++)
        rc = add(cf, AKA_VIEW_RW, *p, "--agent-writable-path", err);
    return rc;
}

/*
 * The bwrap the agent is confined with, when it lies outside the system directories (a
 * user's own build, a module tree, a carried binary): the agent's own `aka eval` sandboxes
 * its jobs with the bwrap it finds in PATH, and without this bind it finds none and every
 * evaluation exits 75 (every GPU trial of the 2026-12-06 campaigns did). The agent gains
 * nothing a system bwrap would not give it.
 */
static int add_bwrap(struct confine *cf, const char *bwrap, struct aka_err *err)
{
    struct strbuf real = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    const char *path = aka_realpath(bwrap, &real, &ignored) == 0 ? real.buf : bwrap;
    int rc = in_system(path) ? 0 : add(cf, AKA_VIEW_RO, bwrap, "bwrap", err);
    strbuf_release(&real);
    return rc;
}

static int build_view(struct confine *cf, const char *argv0, const char *prompt_file,
                      const char *bwrap, struct aka_err *err)
{
    const struct aka_agent_request *req = cf->req;
    struct strbuf p = STRBUF_INIT;
    const char *root = req->repo_root ? req->repo_root : getenv("ATREX_AKA_HOME");
    cf->view.share_net = strcmp(req->backend, "builtin") != 0; /* no model API to call */
    cf->view.gpu_count = cf->c->gpu_count;
    cf->view.gpu_vendor = cf->c->gpu_vendor;
    home_path("", &p);
    if (p.len)
        aka_sandbox_view_add(&cf->view, AKA_VIEW_TMPFS, NULL, p.buf);
    int rc = add(cf, AKA_VIEW_RW, req->worktree, "the worktree", err);
    if (rc == 0 && cf->c->view_dir)
        rc = add(cf, AKA_VIEW_RO, cf->c->view_dir, "the campaign view", err);
    aka_path_join(&p, root ? root : "", "runtime");
    if (rc == 0)
        rc = add(cf, AKA_VIEW_RO, p.buf, "the asset tree's runtime/", err);
    if (rc == 0)
        rc = add_self(cf, err);
    if (rc == 0)
        rc = add_bwrap(cf, bwrap, err);
    if (rc == 0 && strcmp(req->backend, "builtin") != 0)
        rc = add_cli(cf, argv0, err);
    if (rc == 0 && prompt_file && !within(prompt_file, req->worktree))
        rc = add(cf, AKA_VIEW_RO, prompt_file, "the brief", err);
    if (rc == 0)
        rc = add_backend_state(cf, err) < 0 ? -1 : add_operator_paths(cf, err);
    strbuf_release(&p);
    return rc;
}

/* The protected paths as the binds will be compared: resolved when they exist. */
static void resolve_deny(struct confine *cf)
{
    struct strbuf real = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    for (const char *const *d = cf->c->deny; d && *d; d++)
        strvec_push(&cf->deny, aka_realpath(*d, &real, &ignored) == 0 ? real.buf : *d);
    strbuf_release(&real);
}

int aka_agent_confine(const struct aka_agent_request *req, const char *prompt_file,
                      struct strvec *argv, struct strbuf *ctl, struct aka_err *err)
{
    struct confine cf = {.req = req, .c = req->confine, .cli = STRBUF_INIT, .deny = STRVEC_INIT};
    struct strbuf bwrap = STRBUF_INIT, home = STRBUF_INIT, wt = STRBUF_INIT;
    struct strvec wrapped = STRVEC_INIT;
    aka_sandbox_view_init(&cf.view);
    resolve_deny(&cf);
    /* The working directory inside is the worktree's resolved path (where it is bound). */
    if (aka_realpath(req->worktree, &wt, err) < 0)
        strbuf_addstr(&wt, req->worktree);
    cf.view.chdir = aka_xstrdup(wt.buf);
    int rc = aka_sandbox_find_bwrap(cf.c->bwrap, &bwrap, err) < 0
                 ? aka_err_prefix(err, "--agent-sandbox bwrap (pass --agent-sandbox none to run "
                                       "the agent unconfined, which is unsafe)")
                 : build_view(&cf, argv->v[0], prompt_file, bwrap.buf, err);
    home_path("", &home);
    if (rc == 0)
        rc = aka_make_temp_dir(NULL, "aka-agent", ctl, err) < 0
                 ? -1
                 : aka_sandbox_view_etc(ctl->buf, home.buf, err);
    if (rc == 0 && cf.cli.len) { /* by its real path: PATH inside lacks the host's home dirs */
        free(argv->v[0]);
        argv->v[0] = aka_xstrdup(cf.cli.buf);
    }
    if (rc == 0)
        rc = aka_sandbox_view_argv(&cf.view, bwrap.buf, ctl->buf, (const char *const *)argv->v,
                                   &wrapped, err);
    if (rc == 0) {
        strvec_clear(argv);
        *argv = wrapped;
    } else {
        strvec_clear(&wrapped);
    }
    aka_sandbox_view_release(&cf.view);
    strvec_clear(&cf.deny);
    strbuf_release(&wt);
    strbuf_release(&cf.cli);
    strbuf_release(&bwrap);
    strbuf_release(&home);
    return rc;
}
