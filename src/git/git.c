/*
 * git.c — running git for the supervisor (see git.h).
 *
 * The environment and the configuration every command runs with are what make
 * these calls reproducible and safe. GIT_CONFIG_NOSYSTEM and
 * GIT_CONFIG_GLOBAL=/dev/null ignore host configuration (a user's
 * commit.gpgsign or core.hooksPath would otherwise change what a commit does),
 * and the identity variables make every supervisor commit attributable.
 *
 * The repository's own configuration (.git/config, .git/config.worktree and
 * whatever they include) is in reach of anyone who can write the repository —
 * an agent, without its sandbox — and several keys make git execute a command.
 * Each of those is overridden on every command through GIT_CONFIG_COUNT /
 * GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n (command-line configuration, which wins
 * over every file, and unlike `-c` takes any key verbatim):
 *
 *   fixed   core.hooksPath=/dev/null (every hook: pre-commit, post-commit,
 *           post-checkout, reference-transaction, post-index-change, ...),
 *           core.fsmonitor=false, core.sshCommand=false, core.askPass=,
 *           credential.helper=, core.editor=true, sequence.editor=true,
 *           core.pager=cat, diff.external=, core.attributesFile=/dev/null,
 *           core.alternateRefsCommand=, protocol.ext.allow=never,
 *           commit.gpgSign=false, tag.gpgSign=false, log.showSignature=false,
 *           gc.auto=0, maintenance.auto=false, submodule.recurse=false,
 *           core.useReplaceRefs=false (with GIT_NO_REPLACE_OBJECTS=1 and
 *           GIT_GRAFT_FILE=/dev/null: a replace ref or graft would change what a
 *           commit or blob reads as without changing its id);
 *   drivers filter.<d>.clean/smudge/process (emptied, required=false),
 *           diff.<d>.command/textconv (emptied), merge.<d>.driver (false): the
 *           names are the repository's own, read with `git config --list
 *           --name-only` before every command (an attributes file,
 *           .git/info/attributes included, selects a driver by name, no
 *           setting disables those files, and more commands than one would
 *           guess run a filter: write-tree does, for one).
 *
 * An emptied command fails closed in git ("cannot run"): it never runs
 * anything. Diffs also pass --no-ext-diff --no-textconv, and every command
 * --no-pager.
 */
#include "git/git.h"
#include "base/fs.h"
#include "base/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
    /* Objects are what they are: no refs/replace/ substitution, no grafted parents. A
     * replace ref would let anyone who can write the repository make HEAD:memory/v0.json
     * read as other bytes without changing a single commit id. */
    "GIT_NO_REPLACE_OBJECTS=1",
    "GIT_GRAFT_FILE=/dev/null",
    /* Removed: a campaign run from inside another repo's hook must not inherit it, and
     * nothing in the caller's environment may inject configuration or commands. */
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "GIT_EXEC_PATH",
    "GIT_TRACE",
    "GIT_TRACE2",
    "GIT_TRACE2_EVENT",
    "GIT_TRACE2_PERF",
    NULL,
};

/* Configuration that makes git execute something, neutralised on every command. */
static const char *const fixed_config[][2] = {
    {"core.hooksPath", "/dev/null"},
    {"core.fsmonitor", "false"},
    {"core.sshCommand", "false"},
    {"core.askPass", ""},
    {"credential.helper", ""},
    {"core.editor", "true"},
    {"sequence.editor", "true"},
    {"core.pager", "cat"},
    {"diff.external", ""},
    {"core.attributesFile", "/dev/null"},
    {"core.alternateRefsCommand", ""},
    {"protocol.ext.allow", "never"},
    {"commit.gpgSign", "false"},
    {"tag.gpgSign", "false"},
    {"log.showSignature", "false"},
    {"gc.auto", "0"},
    {"maintenance.auto", "false"},
    {"submodule.recurse", "false"},
    {"core.useReplaceRefs", "false"},
    {NULL, NULL},
};

/* Driver keys (<section>.<name>.<key>) whose value is a command, and what they become. */
static const char *const driver_keys[][3] = {
    {"filter", "clean", ""}, {"filter", "smudge", ""}, {"filter", "process", ""},
    {"diff", "command", ""}, {"diff", "textconv", ""}, {"merge", "driver", "false"},
    {NULL, NULL, NULL},
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

/* Append one configuration override as GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n. */
static void add_config(struct strvec *env, size_t *n, const char *key, const char *value)
{
    strvec_pushf(env, "GIT_CONFIG_KEY_%zu=%s", *n, key);
    strvec_pushf(env, "GIT_CONFIG_VALUE_%zu=%s", *n, value);
    (*n)++;
}

/* An override for one configured key when it is a driver command (<section>.<name>.<key>). */
static void neutralise_driver(struct strvec *env, size_t *n, const char *key)
{
    const char *first = strchr(key, '.'), *last = strrchr(key, '.');
    if (!first || last == first)
        return; /* no <name>: not a driver key */
    for (size_t i = 0; driver_keys[i][0]; i++) {
        size_t sl = strlen(driver_keys[i][0]);
        if ((size_t)(first - key) != sl || strncasecmp(key, driver_keys[i][0], sl) != 0 ||
            strcasecmp(last + 1, driver_keys[i][1]) != 0)
            continue;
        add_config(env, n, key, driver_keys[i][2]);
        if (strcasecmp(driver_keys[i][0], "filter") == 0) { /* a missing filter is no error */
            struct strbuf req = STRBUF_INIT;
            strbuf_add(&req, key, (size_t)(last - key));
            strbuf_addstr(&req, ".required");
            add_config(env, n, req.buf, "false");
            strbuf_release(&req);
        }
    }
}

static int spawn(const char *dir, const char *const *argv, const char *const *env,
                 struct proc_result *res, struct aka_err *err)
{
    struct proc_spec spec = {0};
    spec.argv = argv;
    spec.cwd = dir;
    spec.env = env;
    spec.out_mode = PROC_TO_BUFFER;
    spec.err_mode = PROC_TO_BUFFER;
    spec.out_cap = GIT_OUTPUT_CAP;
    spec.err_cap = 64 * 1024;
    spec.timeout_ms = GIT_TIMEOUT_MS;
    proc_result_init(res);
    return proc_run(&spec, res, err);
}

/* The configured key names of the repository at dir (includes followed), NUL-separated. */
static void configured_keys(const char *dir, const char *const *env, struct strbuf *out)
{
    static const char *const argv[] = {"git",         "--no-pager", "config", "--list",
                                       "--name-only", "-z",         NULL};
    struct proc_result res;
    struct aka_err ignored = AKA_ERR_INIT;
    /* Reading configuration runs nothing; outside a repository it lists nothing. */
    if (spawn(dir, argv, env, &res, &ignored) == 0 && res.exit_code == 0)
        strbuf_add(out, res.out.buf, res.out.len);
    proc_result_release(&res);
}

/* git_env and the fixed overrides; n: how many overrides. */
static void fixed_env(struct strvec *env, size_t *n)
{
    *n = 0;
    strvec_pushv(env, git_env);
    for (size_t i = 0; fixed_config[i][0]; i++)
        add_config(env, n, fixed_config[i][0], fixed_config[i][1]);
}

/*
 * The directory git runs in is the repository aka means, never one above it: without a
 * ceiling, a workspace whose .git is not made yet (or was removed) inside another
 * repository - a clone's build/ directory, a user's dotfiles repo, a tree an agent can
 * write - would have git read and commit to that enclosing repository instead. The
 * parent of dir is the ceiling, so git looks for dir/.git (a worktree's .git file
 * included) and stops there.
 */
static void add_ceiling(const char *dir, struct strvec *env)
{
    struct strbuf real = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    /* A path that cannot be resolved has no repository for git to find anyway. */
    if (aka_realpath(dir, &real, &ignored) == 0) {
        char *slash = strrchr(real.buf, '/');
        if (slash && slash != real.buf) {
            *slash = '\0';
            strvec_pushf(env, "GIT_CEILING_DIRECTORIES=%s", real.buf);
        }
    }
    strbuf_release(&real);
}

/* The environment of one command: git_env plus every override (see the file comment). */
static void command_env(const char *dir, struct strvec *env)
{
    struct strvec scan = STRVEC_INIT;
    struct strbuf keys = STRBUF_INIT;
    size_t n, m;
    fixed_env(env, &n);
    fixed_env(&scan, &m); /* the scan itself runs hardened */
    add_ceiling(dir, env);
    add_ceiling(dir, &scan);
    strvec_pushf(&scan, "GIT_CONFIG_COUNT=%zu", m);
    configured_keys(dir, (const char *const *)scan.v, &keys);
    for (size_t i = 0; i < keys.len; i += strlen(keys.buf + i) + 1)
        neutralise_driver(env, &n, keys.buf + i);
    strvec_clear(&scan);
    strbuf_release(&keys);
    strvec_pushf(env, "GIT_CONFIG_COUNT=%zu", n);
}

static int run_in(const char *dir, const char *const *args, struct strbuf *out, struct aka_err *err)
{
    struct strvec argv = STRVEC_INIT, env = STRVEC_INIT;
    struct proc_result res;
    int rc = 0;

    strvec_push(&argv, "git");
    strvec_push(&argv, "--no-pager");
    strvec_pushv(&argv, args);
    command_env(dir, &env);
    if (spawn(dir, (const char *const *)argv.v, (const char *const *)env.v, &res, err) < 0) {
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
    strvec_clear(&env);
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
    const char *args[] = {"diff",          "--name-only", "-z", "--no-renames", "--no-ext-diff",
                          "--no-textconv", from,          to,   "--",           NULL};
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

int aka_git_write_tree(const struct aka_git *g, char *oid, struct aka_err *err)
{
    struct strbuf out = STRBUF_INIT;
    const char *args[] = {"write-tree", NULL};
    int rc = run_in(g->dir, args, &out, err);
    if (rc == 0)
        rc = take_oid(&out, oid, "write-tree", err);
    strbuf_release(&out);
    return rc;
}

int aka_git_commit_tree(const struct aka_git *g, const char *tree, const char *parent,
                        const char *message, char *oid, struct aka_err *err)
{
    struct strbuf out = STRBUF_INIT;
    struct strvec args = STRVEC_INIT;
    strvec_pushv(&args, (const char *const[]){"commit-tree", "--no-gpg-sign", tree, NULL});
    if (parent && *parent)
        strvec_pushv(&args, (const char *const[]){"-p", parent, NULL});
    strvec_pushv(&args, (const char *const[]){"-m", message, NULL});
    int rc = run_in(g->dir, (const char *const *)args.v, &out, err);
    if (rc == 0)
        rc = take_oid(&out, oid, "commit-tree", err);
    strvec_clear(&args);
    strbuf_release(&out);
    return rc;
}

int aka_git_update_ref(const struct aka_git *g, const char *ref, const char *new_oid,
                       const char *old_oid, struct aka_err *err)
{
    /* 40 zeros as the old value: the ref must not exist yet (a root commit). */
    static const char zeros[] = "0000000000000000000000000000000000000000";
    const char *args[] = {
        "update-ref", "-m", "aka", ref, new_oid, old_oid && *old_oid ? old_oid : zeros, NULL};
    return run_in(g->dir, args, NULL, err);
}

/* Split out at its NUL bytes into exactly n fields; false when there are not n. */
static bool split_fields(const struct strbuf *out, const char **f, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i <= out->len && k < n; i += strlen(out->buf + i) + 1)
        f[k++] = out->buf + i;
    return k == n;
}

int aka_git_commit_info(const struct aka_git *g, const char *rev, struct aka_git_commit_info *ci,
                        struct aka_err *err)
{
    struct strbuf out = STRBUF_INIT, spec = STRBUF_INIT;
    const char *f[5] = {"", "", "", "", ""};
    strbuf_addf(&spec, "%s^{commit}", rev);
    const char *args[] = {
        "log", "-1", "--no-show-signature", "--format=%H%x00%P%x00%T%x00%an%x00%s", spec.buf,
        "--",  NULL};
    int rc = run_in(g->dir, args, &out, err);
    memset(ci, 0, sizeof(*ci));
    strbuf_trim(&out);
    if (rc == 0 && !split_fields(&out, f, 5))
        rc = aka_err_set(err, AKA_EXIT_FAILED, "git log %s: unexpected output", rev);
    if (rc == 0) {
        snprintf(ci->oid, sizeof(ci->oid), "%s", f[0]);
        snprintf(ci->parent, sizeof(ci->parent), "%.40s", f[1]); /* the first parent */
        ci->parents = strlen(f[1]) == 0 ? 0 : 1 + (strchr(f[1], ' ') != NULL);
        snprintf(ci->tree, sizeof(ci->tree), "%s", f[2]);
        snprintf(ci->author, sizeof(ci->author), "%s", f[3]);
        snprintf(ci->subject, sizeof(ci->subject), "%s", f[4]);
    }
    strbuf_release(&out);
    strbuf_release(&spec);
    return rc;
}

int aka_git_first_parents(const struct aka_git *g, const char *rev, struct strvec *oids,
                          struct aka_err *err)
{
    struct strbuf out = STRBUF_INIT;
    const char *args[] = {"rev-list", "--first-parent", rev, "--", NULL};
    int rc = run_in(g->dir, args, &out, err);
    for (char *line = out.buf; rc == 0 && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (*line)
            strvec_push(oids, line);
        line = nl ? nl + 1 : line + strlen(line);
    }
    strbuf_release(&out);
    return rc;
}

int aka_git_ls_blobs(const struct aka_git *g, const char *rev, const char *dir,
                     struct strvec *names, struct strvec *oids, struct aka_err *err)
{
    struct strbuf out = STRBUF_INIT, spec = STRBUF_INIT;
    struct strvec entries = STRVEC_INIT;
    strbuf_addf(&spec, "%s/", dir);
    const char *args[] = {"ls-tree", "-z", rev, "--", spec.buf, NULL};
    int rc = run_in(g->dir, args, &out, err);
    if (rc == 0)
        split_nul(&out, &entries);
    /* "<mode> <type> <oid>\t<path>": blobs only (a directory planted there is no record). */
    for (size_t i = 0; rc == 0 && i < entries.n; i++) {
        const char *e = entries.v[i], *tab = strchr(e, '\t'), *type = strchr(e, ' ');
        if (!tab || !type || tab - type < AKA_GIT_OID_HEX + 2)
            rc = aka_err_set(err, AKA_EXIT_FAILED, "git ls-tree %s: unexpected entry \"%s\"", rev,
                             e);
        else if (strncmp(type + 1, "blob ", 5) == 0) {
            strvec_push(names, tab + 1);
            strvec_pushf(oids, "%.*s", AKA_GIT_OID_HEX, tab - AKA_GIT_OID_HEX);
        }
    }
    strvec_clear(&entries);
    strbuf_release(&out);
    strbuf_release(&spec);
    return rc;
}

int aka_git_fetch_commit(const struct aka_git *g, const char *from, const char *oid,
                         const char *ref, struct aka_err *err)
{
    struct strbuf spec = STRBUF_INIT;
    char got[AKA_GIT_OID_HEX + 1];
    strbuf_addf(&spec, "+%s:%s", oid, ref);
    /* Hooks and every command-running key are already neutralised by run_in; the fsck
     * settings are fetch's own: every object received from the agent's repository is
     * checked before it lands in the supervisor's. */
    const char *args[] = {"-c",
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
