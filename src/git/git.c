/*
 * git.c — running git for the supervisor (see git.h).
 *
 * The environment is what makes these calls reproducible: GIT_CONFIG_NOSYSTEM
 * and GIT_CONFIG_GLOBAL=/dev/null ignore host configuration (a user's
 * commit.gpgsign or core.hooksPath would otherwise change what a commit
 * does), and the identity variables make every supervisor commit attributable.
 */
#include "git/git.h"
#include "base/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounded so a wedged git (e.g. a stale lock on NFS) cannot stall a campaign forever. */
#define GIT_TIMEOUT_MS (10L * 60 * 1000)
#define GIT_OUTPUT_CAP ((size_t)256 << 20)

static const char *const git_env[] = {
    "GIT_CONFIG_NOSYSTEM=1",
    "GIT_CONFIG_GLOBAL=/dev/null",
    "GIT_TERMINAL_PROMPT=0",
    "GIT_PAGER=cat",
    "GIT_EDITOR=true",
    "GIT_AUTHOR_NAME=" AKA_GIT_NAME,
    "GIT_AUTHOR_EMAIL=" AKA_GIT_EMAIL,
    "GIT_COMMITTER_NAME=" AKA_GIT_NAME,
    "GIT_COMMITTER_EMAIL=" AKA_GIT_EMAIL,
    "LC_ALL=C",
    /* Removed: a campaign run from inside another repo's hook must not inherit it. */
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    NULL,
};

void aka_git_open(struct aka_git *g, const char *dir)
{
    g->dir = aka_xstrdup(dir);
}

void aka_git_close(struct aka_git *g)
{
    free(g->dir);
    g->dir = NULL;
}

static void describe(struct strbuf *sb, const char *const *args)
{
    strbuf_addstr(sb, "git");
    for (; *args; args++)
        strbuf_addf(sb, " %s", *args);
}

static int run_in(const char *dir, const char *const *args, struct strbuf *out, struct aka_err *err)
{
    struct strvec argv = STRVEC_INIT;
    struct proc_result res;
    struct proc_spec spec = {0};
    int rc = 0;

    strvec_push(&argv, "git");
    strvec_pushv(&argv, args);
    spec.argv = (const char *const *)argv.v;
    spec.cwd = dir;
    spec.env = git_env;
    spec.out_mode = PROC_TO_BUFFER;
    spec.err_mode = PROC_TO_BUFFER;
    spec.out_cap = GIT_OUTPUT_CAP;
    spec.err_cap = 64 * 1024;
    spec.timeout_ms = GIT_TIMEOUT_MS;
    proc_result_init(&res);
    if (proc_run(&spec, &res, err) < 0) {
        rc = -1;
    } else if (res.exit_code != 0 || res.out_truncated) {
        struct strbuf cmd = STRBUF_INIT;
        describe(&cmd, args);
        strbuf_trim(&res.err);
        rc = aka_err_set(err, AKA_EXIT_FAILED, "%s (in %s) failed with exit %d: %s", cmd.buf, dir,
                         res.exit_code, res.out_truncated ? "output too large" : res.err.buf);
        strbuf_release(&cmd);
    } else if (out) {
        strbuf_add(out, res.out.buf, res.out.len);
    }
    proc_result_release(&res);
    strvec_clear(&argv);
    return rc;
}

int aka_git_run(const struct aka_git *g, const char *const *args, struct strbuf *out,
                struct aka_err *err)
{
    return run_in(g->dir, args, out, err);
}

int aka_git_init(const char *dir, const char *branch, struct aka_err *err)
{
    struct strbuf b = STRBUF_INIT;
    strbuf_addf(&b, "--initial-branch=%s", branch);
    const char *args[] = {"init", "-q", b.buf, dir, NULL};
    int rc = run_in(".", args, NULL, err);
    strbuf_release(&b);
    return rc;
}

/* Read one line of output into oid, checking it is a full object id. */
static int take_oid(struct strbuf *out, char *oid, const char *what, struct aka_err *err)
{
    strbuf_trim(out);
    if (out->len != AKA_GIT_OID_HEX || strspn(out->buf, "0123456789abcdef") != out->len)
        return aka_err_set(err, AKA_EXIT_FAILED, "git: %s: expected an object id; got \"%s\"", what,
                           out->buf);
    memcpy(oid, out->buf, AKA_GIT_OID_HEX + 1);
    return 0;
}

int aka_git_rev_parse(const struct aka_git *g, const char *rev, char *oid, struct aka_err *err)
{
    struct strbuf out = STRBUF_INIT, spec = STRBUF_INIT;
    strbuf_addf(&spec, "%s^{commit}", rev);
    const char *args[] = {"rev-parse", "--verify", "--quiet", spec.buf, NULL};
    int rc = run_in(g->dir, args, &out, err);
    if (rc == 0)
        rc = take_oid(&out, oid, rev, err);
    strbuf_release(&out);
    strbuf_release(&spec);
    return rc;
}

int aka_git_add(const struct aka_git *g, const char *const *paths, struct aka_err *err)
{
    struct strvec args = STRVEC_INIT;
    strvec_pushv(&args, (const char *const[]){"add", "-A", "--", NULL});
    if (paths)
        strvec_pushv(&args, paths);
    else
        strvec_push(&args, ".");
    int rc = run_in(g->dir, (const char *const *)args.v, NULL, err);
    strvec_clear(&args);
    return rc;
}

int aka_git_commit(const struct aka_git *g, const char *message, char *oid, struct aka_err *err)
{
    /* --no-verify: hooks in a candidate's tree must never run on the supervisor. */
    const char *args[] = {"commit", "-q", "--no-verify", "--no-gpg-sign", "-m", message, NULL};
    if (run_in(g->dir, args, NULL, err) < 0)
        return -1;
    return oid ? aka_git_rev_parse(g, "HEAD", oid, err) : 0;
}

int aka_git_is_clean(const struct aka_git *g, bool *clean, struct aka_err *err)
{
    struct strbuf out = STRBUF_INIT;
    const char *args[] = {"status", "--porcelain", "--untracked-files=all", NULL};
    int rc = run_in(g->dir, args, &out, err);
    *clean = rc == 0 && out.len == 0;
    strbuf_release(&out);
    return rc;
}

/* Split NUL-separated output (from -z) into names. */
static void split_nul(const struct strbuf *out, struct strvec *names)
{
    for (size_t i = 0; i < out->len;) {
        size_t n = strlen(out->buf + i);
        if (n)
            strvec_push(names, out->buf + i);
        i += n + 1;
    }
}

int aka_git_diff_names(const struct aka_git *g, const char *from, const char *to,
                       struct strvec *names, struct aka_err *err)
{
    struct strbuf out = STRBUF_INIT;
    /* -z: paths verbatim (no quoting of odd names); --no-renames: a rename is two paths. */
    const char *args[] = {"diff", "--name-only", "-z", "--no-renames", from, to, "--", NULL};
    int rc = run_in(g->dir, args, &out, err);
    if (rc == 0)
        split_nul(&out, names);
    strbuf_release(&out);
    return rc;
}

int aka_git_show_blob(const struct aka_git *g, const char *rev, const char *path,
                      struct strbuf *out, struct aka_err *err)
{
    struct strbuf spec = STRBUF_INIT;
    strbuf_addf(&spec, "%s:%s", rev, path);
    const char *args[] = {"cat-file", "blob", spec.buf, NULL};
    int rc = run_in(g->dir, args, out, err);
    strbuf_release(&spec);
    return rc;
}

int aka_git_worktree_add(const struct aka_git *g, const char *path, const char *branch,
                         const char *base, struct aka_err *err)
{
    const char *args[] = {"worktree", "add", "-q", "-b", branch, path, base, NULL};
    return run_in(g->dir, args, NULL, err);
}

int aka_git_worktree_remove(const struct aka_git *g, const char *path, struct aka_err *err)
{
    const char *args[] = {"worktree", "remove", "--force", path, NULL};
    return run_in(g->dir, args, NULL, err);
}

int aka_git_current_branch(const struct aka_git *g, struct strbuf *out, struct aka_err *err)
{
    const char *args[] = {"symbolic-ref", "--short", "-q", "HEAD", NULL};
    strbuf_reset(out);
    if (run_in(g->dir, args, out, err) < 0)
        return aka_err_set(err, AKA_EXIT_FAILED, "%s: HEAD is detached; expected a branch", g->dir);
    strbuf_trim(out);
    return 0;
}

int aka_git_merge_squash(const struct aka_git *g, const char *rev, struct aka_err *err)
{
    const char *args[] = {"merge", "-q", "--squash", "--no-commit", rev, NULL};
    return run_in(g->dir, args, NULL, err);
}

int aka_git_reset_hard(const struct aka_git *g, const char *rev, struct aka_err *err)
{
    const char *args[] = {"reset", "-q", "--hard", rev, NULL};
    return run_in(g->dir, args, NULL, err);
}

int aka_git_is_ancestor(const struct aka_git *g, const char *ancestor, const char *rev, bool *yes,
                        struct aka_err *err)
{
    /* merge-base --is-ancestor answers with its exit code: 0 yes, 1 no, else error. */
    const char *args[] = {"merge-base", "--is-ancestor", ancestor, rev, NULL};
    struct aka_err ignored = AKA_ERR_INIT;
    if (run_in(g->dir, args, NULL, &ignored) == 0) {
        *yes = true;
        return 0;
    }
    char oid[AKA_GIT_OID_HEX + 1];
    if (aka_git_rev_parse(g, ancestor, oid, err) < 0 || aka_git_rev_parse(g, rev, oid, err) < 0)
        return -1;
    *yes = false;
    return 0;
}

int aka_git_fetch_commit(const struct aka_git *g, const char *from, const char *oid,
                         const char *ref, struct aka_err *err)
{
    struct strbuf spec = STRBUF_INIT;
    char got[AKA_GIT_OID_HEX + 1];
    strbuf_addf(&spec, "+%s:%s", oid, ref);
    const char *args[] = {"-c",
                          "core.hooksPath=/dev/null",
                          "-c",
                          "fetch.fsckObjects=true",
                          "-c",
                          "transfer.fsckObjects=true",
                          "fetch",
                          "-q",
                          "--no-tags",
                          "--no-recurse-submodules",
                          "--no-write-fetch-head",
                          from,
                          spec.buf,
                          NULL};
    int rc = run_in(g->dir, args, NULL, err);
    if (rc == 0)
        rc = aka_git_rev_parse(g, ref, got, err);
    if (rc == 0 && strcmp(got, oid) != 0)
        rc = aka_err_set(err, AKA_EXIT_FAILED, "git: fetched %s as %s; expected %s", ref, got, oid);
    strbuf_release(&spec);
    return rc;
}

int aka_git_remote_head(const struct aka_git *g, const char *from, struct strbuf *branch, char *oid,
                        struct aka_err *err)
{
    struct strbuf out = STRBUF_INIT, line = STRBUF_INIT;
    const char *args[] = {"ls-remote", "--symref", from, "HEAD", NULL};
    int rc = run_in(g->dir, args, &out, err);
    strbuf_reset(branch);
    oid[0] = '\0';
    for (const char *p = out.buf; rc == 0 && p && *p;) {
        const char *nl = strchr(p, '\n'), *tab;
        strbuf_reset(&line);
        strbuf_add(&line, p, nl ? (size_t)(nl - p) : strlen(p));
        tab = strchr(line.buf, '\t');
        if (strncmp(line.buf, "ref: refs/heads/", 16) == 0 && tab)
            strbuf_add(branch, line.buf + 16, (size_t)(tab - line.buf) - 16);
        else if (tab && tab - line.buf == AKA_GIT_OID_HEX)
            snprintf(oid, AKA_GIT_OID_HEX + 1, "%s", line.buf);
        p = nl ? nl + 1 : NULL;
    }
    if (rc == 0 && !oid[0])
        rc = aka_err_set(err, AKA_EXIT_FAILED, "git: %s has no HEAD commit", from);
    strbuf_release(&out);
    strbuf_release(&line);
    return rc;
}
