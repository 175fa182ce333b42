/*
 * dispatch.c — `aka optimize` without --framework: one child campaign per
 * framework the target supports (DESIGN §4.1; upstream anchor-campaign §1.3).
 *
 * Each child is this same binary run as `aka optimize ... --framework F` with
 * the other flags unchanged, in its own process group, with its own workspace
 * (the workspace name includes the framework) and its output in a log file
 * next to that workspace. Children are independent: one failing never stops
 * another. The parent waits for all of them, prints one line per child and
 * exits with the worst child's status. A stop signal (Ctrl-C, SIGTERM, SIGHUP)
 * ends every process the children started, however deep — agents and
 * evaluators run in groups and sessions of their own — and the parent exits
 * 128 + the signal.
 */
#include "base/fs.h"
#include "base/opts.h"
#include "base/proc.h"
#include "base/proctree.h"
#include "bootstrap/bootstrap.h"
#include "evaluator/evaluator.h"
#include "optimize/optimize.h"
#include "platform/platform.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DISPATCH_MAX 8
/* SIGTERM → SIGKILL grace for the children's process trees on a stop signal. */
#define DISPATCH_KILL_GRACE_MS 5000

static const char *const only_c[] = {"C", NULL};
static const char *const only_cuda[] = {"Cuda", NULL};

/* Native operators have one language and run where it runs (C on the CPU, CUDA on NVIDIA);
 * Python layouts run the platform's framework set on a GPU. */
static const char *const *frameworks_for(const struct aka_operator *op,
                                         const struct aka_platform *p)
{
    bool cpu = p->vendor == AKA_VENDOR_CPU;
    if (op->layout == AKA_LAYOUT_NATIVE) {
        if (op->native.language == AKA_LANG_CUDA)
            return p->vendor == AKA_VENDOR_NVIDIA ? only_cuda : NULL;
        return cpu ? only_c : NULL;
    }
    return cpu ? NULL : aka_platform_frameworks(p);
}

int aka_optimize_frameworks(const struct aka_optimize_opts *o, struct strvec *out,
                            struct aka_err *err)
{
    struct aka_operator op;
    struct aka_platform p;
    if (aka_platform_parse(o->platform, o->arch, &p, err) < 0) {
        err->code = AKA_EXIT_USAGE;
        return -1;
    }
    if (aka_operator_load(o->op_dir, &op, err) < 0)
        return -1;
    bool cpu = p.vendor == AKA_VENDOR_CPU;
    const char *const *fws = frameworks_for(&op, &p);
    int rc = 0;
    if (!fws)
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "--framework: not given, and --platform %s has no framework for the %s "
                         "operator %s (%s)",
                         o->platform, aka_layout_name(op.layout), o->op_dir,
                         cpu ? "the CPU runs only C kernels of native operators"
                             : "native C kernels run only on --platform cpu, native CUDA only on "
                               "NVIDIA");
    for (size_t i = 0; rc == 0 && fws && fws[i]; i++)
        strvec_push(out, fws[i]);
    aka_operator_release(&op);
    return rc;
}

/* One child campaign. */
struct child {
    const char *framework;
    struct strvec argv;
    struct strbuf ws, log;
    struct proc_handle *h;
    struct proc_result res;
    bool started;
};

static int child_argv(struct child *c, const struct aka_optimize_opts *o, int argc, char **argv,
                      const char *self, const char *repo_root, struct aka_err *err)
{
    struct strbuf slug = STRBUF_INIT;
    strvec_pushv(&c->argv,
                 (const char *const[]){self, "optimize", "--repo-root", repo_root, "--", NULL});
    /* The flags the parent passes on unchanged: all but --framework (and a suffix,
     * re-made). */
    static const char *const dropped[] = {"--framework", "--workspace-suffix", NULL};
    aka_opts_argv_without(argc, argv, 1, dropped, &c->argv);
    strvec_pushv(&c->argv, (const char *const[]){"--framework", c->framework, NULL});
    int rc = 0;
    /* A given suffix would name one workspace for every child: each gets its own. */
    if (*o->workspace_suffix && (rc = aka_slug(c->framework, &slug, err)) == 0)
        strvec_pushf(&c->argv, "--workspace-suffix=%s_%s", o->workspace_suffix, slug.buf);
    strbuf_release(&slug);
    return rc;
}

static int child_plan(struct child *c, const struct aka_optimize_opts *o, const char *op_name,
                      struct aka_err *err)
{
    struct aka_optimize_opts co = *o;
    struct strbuf suffix = STRBUF_INIT, slug = STRBUF_INIT;
    co.framework = c->framework;
    int rc = 0;
    if (*o->workspace_suffix && (rc = aka_slug(c->framework, &slug, err)) == 0) {
        strbuf_addf(&suffix, "%s_%s", o->workspace_suffix, slug.buf);
        co.workspace_suffix = suffix.buf;
    }
    if (rc == 0)
        rc = aka_optimize_workspace_path(&co, op_name, &c->ws, err);
    strbuf_addf(&c->log, "%s.log", c->ws.buf);
    strbuf_release(&suffix);
    strbuf_release(&slug);
    return rc;
}

static int child_start(struct child *c, struct aka_err *err)
{
    struct strbuf parent = STRBUF_INIT;
    const char *slash = strrchr(c->log.buf, '/');
    strbuf_add(&parent, c->log.buf, slash ? (size_t)(slash - c->log.buf) : 0);
    struct proc_spec spec = {
        .argv = (const char *const *)c->argv.v,
        .out_mode = PROC_TO_FILE,
        .err_mode = PROC_TO_FILE,
        .out_file = c->log.buf,
        .err_file = c->log.buf,
    };
    int rc = parent.len ? aka_mkdir_p(parent.buf, 0755, err) : 0;
    if (rc == 0)
        rc = proc_start(&spec, &c->h, err);
    c->started = rc == 0;
    strbuf_release(&parent);
    return rc;
}

/* The waiter: reaps the children in order while the main thread watches for signals. */
struct waiter {
    struct child *kids;
    size_t n;
    atomic_bool done;
};

static void *wait_all(void *data)
{
    struct waiter *w = data;
    for (size_t i = 0; i < w->n; i++) {
        struct aka_err ignored = AKA_ERR_INIT;
        if (w->kids[i].started && proc_wait(w->kids[i].h, &w->kids[i].res, &ignored) < 0 &&
            w->kids[i].res.exit_code == 0)
            w->kids[i].res.exit_code = AKA_EXIT_ENV;
    }
    atomic_store(&w->done, true);
    return NULL;
}

/* True when the line at p (up to end) starts with prefix. */
static bool starts(const char *p, const char *end, const char *prefix)
{
    size_t n = strlen(prefix);
    return (size_t)(end - p) >= n && memcmp(p, prefix, n) == 0;
}

/*
 * The child's outcome in its log: its last "campaign stopped: ..." or "aka: <error>"
 * line, else its last line. The log interleaves stdout and stderr as they were
 * read, so the outcome line is not always the last one.
 */
static void outcome_line(const char *log, struct strbuf *out)
{
    struct strbuf text = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    const char *best = NULL, *best_end = NULL, *last = NULL, *last_end = NULL;
    strbuf_reset(out);
    if (aka_read_file(log, &text, 1 << 24, &ignored) == 0) {
        for (const char *p = text.buf, *end; p < text.buf + text.len; p = end + 1) {
            end = memchr(p, '\n', (size_t)(text.buf + text.len - p));
            end = end ? end : text.buf + text.len;
            if (end == p)
                continue;
            last = p;
            last_end = end;
            if (starts(p, end, "campaign stopped: ") || starts(p, end, "aka: ")) {
                best = p;
                best_end = end;
            }
        }
    }
    if (!best) {
        best = last;
        best_end = last_end;
    }
    if (best)
        strbuf_add(out, best, (size_t)(best_end - best));
    strbuf_release(&text);
}

static int report(struct child *kids, size_t n, FILE *progress)
{
    struct strbuf line = STRBUF_INIT, shown = STRBUF_INIT;
    int worst = 0;
    for (size_t i = 0; i < n; i++) {
        int code = kids[i].started ? kids[i].res.exit_code : AKA_EXIT_ENV;
        outcome_line(kids[i].log.buf, &line);
        strbuf_reset(&shown);
        strbuf_add_escaped(&shown, line.buf, line.len); /* a child's log is not ours to trust */
        fprintf(progress, "aka optimize: dispatch: %s: exit %d: %s (log %s)\n", kids[i].framework,
                code, shown.len ? shown.buf : "no output", kids[i].log.buf);
        /* Worst = the highest status: every failure code is above 0 (DESIGN §4.9). */
        if (code > worst)
            worst = code;
    }
    fflush(progress);
    strbuf_release(&line);
    strbuf_release(&shown);
    return worst;
}

/* Watch for a stop signal until the waiter is done; the signal's number or 0. */
static int supervise(struct waiter *w, FILE *progress)
{
    while (!atomic_load(&w->done)) {
        int sig = proc_stop_signal_wait(200);
        if (!sig)
            continue;
        fprintf(progress, "aka optimize: dispatch: %s: stopping every child campaign\n",
                strsignal(sig));
        fflush(progress);
        size_t left = proc_end_descendants(getpid(), DISPATCH_KILL_GRACE_MS);
        if (left)
            fprintf(progress, "aka optimize: dispatch: %zu processes survived SIGKILL\n", left);
        return sig;
    }
    return 0;
}

static int run_children(struct child *kids, size_t n, FILE *progress, struct aka_err *err)
{
    struct waiter w = {.kids = kids, .n = n};
    pthread_t t;
    atomic_init(&w.done, false);
    for (size_t i = 0; i < n; i++) {
        struct aka_err e = AKA_ERR_INIT;
        fprintf(progress, "aka optimize: dispatch: %s -> %s (log %s)\n", kids[i].framework,
                kids[i].ws.buf, kids[i].log.buf);
        if (child_start(&kids[i], &e) < 0) /* a child that cannot start fails alone */
            fprintf(progress, "aka optimize: dispatch: %s: not started: %s\n", kids[i].framework,
                    e.msg);
    }
    fflush(progress);
    if (pthread_create(&t, NULL, wait_all, &w) != 0) {
        proc_end_descendants(getpid(), DISPATCH_KILL_GRACE_MS);
        wait_all(&w);
        return aka_err_set(err, AKA_EXIT_ENV, "dispatch: cannot start the waiter thread");
    }
    int sig = supervise(&w, progress);
    pthread_join(t, NULL);
    int worst = report(kids, n, progress);
    if (sig)
        return aka_err_set(err, sig == SIGINT ? AKA_EXIT_INTERRUPTED : 128 + sig,
                           "interrupted by %s: every child campaign was stopped", strsignal(sig));
    if (worst)
        return aka_err_set(err, worst, "dispatch: at least one child campaign failed (above)");
    return 0;
}

static void children_release(struct child *kids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        strvec_clear(&kids[i].argv);
        strbuf_release(&kids[i].ws);
        strbuf_release(&kids[i].log);
        if (kids[i].started)
            proc_result_release(&kids[i].res);
    }
}

static int op_name_of(const char *op_dir, struct strbuf *name, struct aka_err *err)
{
    struct aka_operator op;
    if (aka_operator_load(op_dir, &op, err) < 0)
        return -1;
    strbuf_addstr(name, op.name);
    aka_operator_release(&op);
    return 0;
}

int aka_optimize_dispatch(const struct aka_optimize_opts *o, int argc, char **argv,
                          const char *repo_root, FILE *progress, struct aka_err *err)
{
    struct strvec fws = STRVEC_INIT;
    struct strbuf self = STRBUF_INIT, name = STRBUF_INIT;
    struct child kids[DISPATCH_MAX];
    size_t n = 0;
    memset(kids, 0, sizeof(kids));
    /* The same binary runs the children: never a name looked up in PATH. */
    int rc = aka_optimize_frameworks(o, &fws, err) < 0 || op_name_of(o->op_dir, &name, err) < 0 ||
                     aka_realpath("/proc/self/exe", &self, err) < 0
                 ? -1
                 : 0;
    for (; rc == 0 && n < fws.n && n < DISPATCH_MAX; n++) {
        kids[n] = (struct child){.framework = fws.v[n], .ws = STRBUF_INIT, .log = STRBUF_INIT};
        proc_result_init(&kids[n].res);
        rc = child_plan(&kids[n], o, name.buf, err) < 0 ||
                     child_argv(&kids[n], o, argc, argv, self.buf, repo_root, err) < 0
                 ? -1
                 : 0;
    }
    /* Signals first, so that no stop signal can arrive between a start and its watch. */
    if (rc == 0)
        rc = proc_stop_signals_block(err);
    if (rc == 0) {
        if (!proc_become_subreaper())
            fprintf(progress, "aka optimize: dispatch: no child subreaper: descendants orphaned "
                              "by a dying child may escape a stop signal\n");
        rc = run_children(kids, n, progress, err);
    }
    children_release(kids, n);
    strvec_clear(&fws);
    strbuf_release(&self);
    strbuf_release(&name);
    return rc;
}
