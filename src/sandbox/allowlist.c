/*
 * allowlist.c — what may cross the sandbox boundary: safe relative paths, the
 * never-shipped rules, shipped-file checks, runtime-bind checks, and the
 * symlink-refusing open that every copy in and out goes through.
 *
 * The never-shipped lists follow upstream AKA's (anchor-sandbox.md §3.1),
 * adapted to aka's own state directories and extended with credentials: Git
 * metadata, supervisor state, canonical memory, agent session directories,
 * caches, profiler raw reports, notes, keys and tokens.
 */
#include "sandbox/internal.h"

#include "base/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Directory names never entered and never shipped, at any depth. */
static const char *const never_dirs[] = {
    ".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    /* supervisor state and canonical history: the agent must not read it back */
    ".aka", ".aka-worktrees", ".aka-environment", ".aka-plugins", "memory", ".atrex_environment",
    ".atrex_long_horizon",
    /* agent session directories and agent-side knowledge */
    ".claude", ".qoder", ".agents", ".codex", ".pi", ".humanize", "skills", "plans", "gpu-wiki",
    "reference-projects",
    /* credential stores */
    ".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".config", NULL};

/* Exact file names never shipped (credentials, supervisor-private records). */
static const char *const never_files[] = {".env",
                                          ".netrc",
                                          ".git-credentials",
                                          ".npmrc",
                                          ".pypirc",
                                          ".pgpass",
                                          "id_rsa",
                                          "id_dsa",
                                          "id_ecdsa",
                                          "id_ed25519",
                                          "authorized_keys",
                                          "known_hosts",
                                          "credentials",
                                          "credentials.json",
                                          "evaluations.jsonl",
                                          ".orchestrator_mode.json",
                                          NULL};

/* Suffixes never shipped: bytecode, raw profiler reports, notes, keys. */
static const char *const never_suffixes[] = {".pyc",  ".pyo", ".ncu-rep", ".att", ".pftrace",
                                             ".otf2", ".md",  ".pem",     ".key", ".p12",
                                             ".pfx",  ".jks", NULL};

/* Evaluator-private in generalized production mode: only injected (trusted) copies ship. */
static const char *const private_files[] = {"shapes.json", "metadata.json", "roofline.json",
                                            ".aka_private_profile_case.json", NULL};

/* Directory names that mark a secret location anywhere in an absolute path. */
static const char *const secret_dirs[] = {".ssh",    ".gnupg",          ".aws", ".azure", ".kube",
                                          ".docker", ".password-store", NULL};

static bool in_list(const char *s, size_t n, const char *const *list)
{
    for (; *list; list++)
        if (strlen(*list) == n && strncmp(s, *list, n) == 0)
            return true;
    return false;
}

static bool has_suffix(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n > k && strncmp(s + n - k, suffix, k) == 0;
}

int aka_sandbox_check_rel(const char *rel, const char *what, struct aka_err *err)
{
    if (!rel || !*rel)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: empty path", what);
    if (strlen(rel) >= PATH_MAX)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: path too long", what);
    if (rel[0] == '/')
        return aka_err_set(err, AKA_EXIT_USAGE, "%s '%s': must be relative, not absolute", what,
                           rel);
    for (const char *p = rel; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return aka_err_set(err, AKA_EXIT_USAGE, "%s: control character in path", what);
    for (const char *c = rel;;) {
        const char *slash = strchr(c, '/');
        size_t n = slash ? (size_t)(slash - c) : strlen(c);
        if (n == 0)
            return aka_err_set(err, AKA_EXIT_USAGE, "%s '%s': empty path component", what, rel);
        if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return aka_err_set(err, AKA_EXIT_USAGE, "%s '%s': '%.*s' components are not allowed",
                               what, rel, (int)n, c);
        if (!slash)
            break;
        c = slash + 1;
    }
    return 0;
}

/* Checks one component; `last` marks the file name (the only place file rules apply). */
static const char *component_rule(const char *c, size_t n, bool last, bool generalized)
{
    if (in_list(c, n, never_dirs))
        return "a never-shipped directory (VCS, supervisor state, memory, agent session or "
               "credential store)";
    if (!last)
        return NULL;
    if (in_list(c, n, never_files))
        return "a never-shipped file (credential or supervisor-private record)";
    if (n >= 5 && strncmp(c, ".env.", 5) == 0)
        return "a never-shipped file (environment secrets)";
    for (const char *const *s = never_suffixes; *s; s++)
        if (has_suffix(c, n, *s))
            return "a never-shipped file type (bytecode, raw profile, notes or key)";
    if (generalized && in_list(c, n, private_files))
        return "evaluator-private in generalized mode (only the supervisor injects it)";
    return NULL;
}

bool sbx_never_dir(const char *name)
{
    return in_list(name, strlen(name), never_dirs);
}

const char *aka_sandbox_never_shipped(const char *rel, bool generalized)
{
    for (const char *c = rel;;) {
        const char *slash = strchr(c, '/');
        size_t n = slash ? (size_t)(slash - c) : strlen(c);
        const char *why = component_rule(c, n, slash == NULL, generalized);
        if (why)
            return why;
        if (!slash)
            return NULL;
        c = slash + 1;
    }
}

const char *sbx_artifact_rule(const char *rel)
{
    for (const char *c = rel;;) {
        const char *slash = strchr(c, '/');
        size_t n = slash ? (size_t)(slash - c) : strlen(c);
        if (in_list(c, n, never_dirs))
            return "a never-shipped directory (supervisor state, memory, VCS or agent session): "
                   "a job may not plant it in the caller's tree";
        if (!slash)
            return in_list(c, n, never_files) ? "a credential or supervisor-private file name"
                                              : NULL;
        c = slash + 1;
    }
}

const char *aka_sandbox_secret_path(const char *abs_path)
{
    for (const char *c = abs_path;;) {
        const char *slash = strchr(c, '/');
        size_t n = slash ? (size_t)(slash - c) : strlen(c);
        if (in_list(c, n, secret_dirs))
            return "inside a credential directory";
        if (n && in_list(c, n, never_files) && !slash)
            return "a credential file";
        if (!slash)
            return NULL;
        c = slash + 1;
    }
}

/* Does directory dir (a prefix of a canonical path) hold .aka or .git? */
static bool workspace_or_repo(const char *dir)
{
    struct strbuf p = STRBUF_INIT;
    aka_path_join(&p, *dir ? dir : "/", ".aka");
    bool yes = aka_exists(p.buf);
    strbuf_reset(&p);
    aka_path_join(&p, *dir ? dir : "/", ".git");
    yes = yes || aka_exists(p.buf);
    strbuf_release(&p);
    return yes;
}

/* Why the component c (n bytes) under directory dir is supervisor state, or NULL. */
static const char *state_component(const char *c, size_t n, const char *dir)
{
    if (n == 4 && !strncmp(c, ".git", n))
        return "a repository's .git/";
    if (n == 4 && !strncmp(c, ".aka", n))
        return "a workspace's .aka/";
    if (n == 6 && !strncmp(c, "memory", n) && workspace_or_repo(dir))
        return "a workspace's memory/";
    return NULL;
}

const char *sbx_state_path(const char *canonical, struct strbuf *where)
{
    strbuf_reset(where);
    for (const char *c = canonical; *c;) {
        while (*c == '/')
            c++;
        size_t n = strcspn(c, "/");
        if (!n)
            break;
        const char *why = state_component(c, n, where->len ? where->buf : "/");
        strbuf_addch(where, '/');
        strbuf_add(where, c, n);
        if (why)
            return why;
        c += n;
    }
    return NULL;
}

bool sbx_path_within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return path[0] == '/';
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int sbx_check_env(const char *name_value, struct aka_err *err)
{
    const char *eq = strchr(name_value, '=');
    if (!eq || eq == name_value)
        return aka_err_set(err, AKA_EXIT_USAGE, "environment entry '%s': expected NAME=VALUE",
                           name_value);
    for (const char *p = name_value; p < eq; p++) {
        bool ok = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_' ||
                  (p > name_value && *p >= '0' && *p <= '9');
        if (!ok)
            return aka_err_set(err, AKA_EXIT_USAGE, "environment entry '%s': invalid variable name",
                               name_value);
    }
    return 0;
}

/* Canonical parent directory of src, and its last component (which must be a name). */
static int split_source(const char *src, struct strbuf *parent, const char **base,
                        struct aka_err *err)
{
    const char *slash = strrchr(src, '/');
    *base = slash ? slash + 1 : src;
    if (!**base || strcmp(*base, ".") == 0 || strcmp(*base, "..") == 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: not a file name", src);
    struct strbuf dir = STRBUF_INIT;
    if (!slash)
        strbuf_addstr(&dir, ".");
    else if (slash == src)
        strbuf_addstr(&dir, "/");
    else
        strbuf_add(&dir, src, (size_t)(slash - src));
    int rc = aka_realpath(dir.buf, parent, err);
    strbuf_release(&dir);
    return rc;
}

/* Type and size of the final component, which is never followed. */
static int check_source_node(const char *path, const char *shown, size_t max_bytes,
                             struct aka_err *err)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: %s", shown, strerror(errno));
    if (S_ISLNK(st.st_mode))
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: is a symlink; symlinks are never shipped",
                           shown);
    if (!S_ISREG(st.st_mode))
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: not a regular file", shown);
    if (max_bytes && (size_t)st.st_size > max_bytes)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: %lld bytes; the per-file input limit is %zu",
                           shown, (long long)st.st_size, max_bytes);
    return 0;
}

int sbx_check_file(const struct aka_sandbox_file *f, bool generalized, size_t max_bytes,
                   struct strbuf *root_out, struct strbuf *rel_out, struct aka_err *err)
{
    struct strbuf parent = STRBUF_INIT, full = STRBUF_INIT;
    const char *base, *why;
    int rc = -1;

    if (aka_sandbox_check_rel(f->dest, "destination", err) < 0)
        return -1;
    if (!f->trusted && (why = aka_sandbox_never_shipped(f->dest, generalized)))
        return aka_err_set(err, AKA_EXIT_USAGE, "destination '%s': %s", f->dest, why);
    if (!f->src || !f->root)
        return aka_err_set(err, AKA_EXIT_USAGE, "destination '%s': no source or root", f->dest);
    if (aka_realpath(f->root, root_out, err) < 0 || split_source(f->src, &parent, &base, err) < 0)
        goto out;
    if (!sbx_path_within(parent.buf, root_out->buf)) {
        aka_err_set(err, AKA_EXIT_USAGE, "%s: resolves to %s/%s, outside its root %s", f->src,
                    parent.buf, base, root_out->buf);
        goto out;
    }
    aka_path_join(&full, parent.buf, base);
    if (check_source_node(full.buf, f->src, max_bytes, err) < 0)
        goto out;
    /* The path below the root, which is what the copy opens component by component. */
    strbuf_reset(rel_out);
    if (strlen(parent.buf) > strlen(root_out->buf))
        strbuf_addf(rel_out, "%s/",
                    parent.buf + strlen(root_out->buf) + (strcmp(root_out->buf, "/") == 0 ? 0 : 1));
    strbuf_addstr(rel_out, base);
    if ((why = aka_sandbox_secret_path(full.buf)) ||
        (!f->trusted && (why = aka_sandbox_never_shipped(rel_out->buf, generalized)))) {
        aka_err_set(err, AKA_EXIT_USAGE, "%s: %s; never shipped", f->src, why);
        goto out;
    }
    rc = 0;
out:
    strbuf_release(&parent);
    strbuf_release(&full);
    return rc;
}

/* Open (creating when asked) one directory component below cur, never through a symlink. */
static int step_dir(int cur, const char *comp, bool create)
{
    /* O_NOFOLLOW makes a symlinked component fail with ELOOP (or ENOTDIR). */
    int next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT && create && (mkdirat(cur, comp, 0755) == 0 || errno == EEXIST))
        next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return next;
}

/* Walk the first `ncomp` components of the mutable path p below dirfd; the fd of the
 * directory reached (a dup of dirfd when ncomp is 0), or -1 with errno. */
static int walk_components(int dirfd, char *p, size_t ncomp, bool create, char **rest)
{
    int cur = dup(dirfd);
    for (size_t i = 0; cur >= 0 && i < ncomp; i++) {
        char *slash = strchr(p, '/');
        if (slash)
            *slash = '\0';
        int next = step_dir(cur, p, create);
        int e = errno;
        close(cur);
        errno = e;
        cur = next;
        p = slash ? slash + 1 : p + strlen(p);
    }
    *rest = p;
    return cur;
}

static size_t count_components(const char *rel)
{
    size_t n = 1;
    for (; *rel; rel++)
        n += *rel == '/';
    return n;
}

int sbx_open_beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
    char *copy = aka_xstrdup(rel), *last;
    int cur = walk_components(dirfd, copy, count_components(rel) - 1, flags & O_CREAT, &last);
    int fd = cur < 0 ? -1 : openat(cur, last, flags | O_NOFOLLOW | O_CLOEXEC, mode);
    int e = errno;
    if (cur >= 0)
        close(cur);
    free(copy);
    errno = e;
    return fd;
}

int sbx_mkdir_beneath(int dirfd, const char *rel)
{
    char *copy = aka_xstrdup(rel), *rest;
    int fd = walk_components(dirfd, copy, *rel ? count_components(rel) : 0, true, &rest);
    int e = errno;
    free(copy);
    errno = e;
    return fd;
}

/* ---- runtime binds ---- */

static const char *const broad_roots[] = {"/",      "/bin",   "/boot", "/home", "/lib",  "/lib32",
                                          "/lib64", "/media", "/mnt",  "/opt",  "/sbin", "/srv",
                                          "/tmp",   "/usr",   "/var",  NULL};
static const char *const system_trees[] = {
    "/dev",     "/etc",     "/proc",    "/root",      "/sys",      "/boot", "/run",
    "/var/lib", "/var/log", "/var/run", "/var/spool", "/var/mail", NULL};
static const char *const reserved_dests[] = {"/",     "/bin",   "/dev",   "/etc",  "/home",
                                             "/lib",  "/lib32", "/lib64", "/proc", "/root",
                                             "/sbin", "/sys",   "/tmp",   "/usr",  NULL};
static const char *const reserved_dest_trees[] = {"/bin",   "/dev",   "/etc",  "/lib",
                                                  "/lib32", "/lib64", "/proc", "/sbin",
                                                  "/sys",   "/tmp",   "/usr",  NULL};

static bool equals_any(const char *p, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(p, *list) == 0)
            return true;
    return false;
}

static bool within_any(const char *p, const char *const *list)
{
    for (; *list; list++)
        if (sbx_path_within(p, *list))
            return true;
    return false;
}

/* Python environments are the one thing worth binding from a home directory. */
static bool python_env_shape(const char *p)
{
    static const char *const names[] = {".venv",      "venv",       "miniconda3", "anaconda3",
                                        "miniforge3", "mambaforge", NULL};
    const char *base = aka_basename(p);
    if (equals_any(base, names))
        return true;
    /* .../envs/NAME (conda) and .../.pyenv/versions/NAME (pyenv) */
    size_t blen = strlen(base), plen = strlen(p);
    if (plen <= blen + 1)
        return false;
    struct strbuf parent = STRBUF_INIT;
    strbuf_add(&parent, p, plen - blen - 1);
    const char *pb = aka_basename(parent.buf);
    bool ok = strcmp(pb, "envs") == 0 || has_suffix(parent.buf, parent.len, "/.pyenv/versions");
    strbuf_release(&parent);
    return ok;
}

static int check_bind_src(const char *src, const struct strvec *deny, struct aka_err *err)
{
    const char *home = getenv("HOME"), *why;
    if (equals_any(src, broad_roots))
        return aka_err_set(err, AKA_EXIT_USAGE, "runtime bind %s: too broad a directory", src);
    if (within_any(src, system_trees))
        return aka_err_set(err, AKA_EXIT_USAGE, "runtime bind %s: inside a system tree", src);
    if ((why = aka_sandbox_secret_path(src)))
        return aka_err_set(err, AKA_EXIT_USAGE, "runtime bind %s: %s", src, why);
    bool in_home = sbx_path_within(src, "/home") ||
                   (home && home[0] == '/' && strcmp(home, "/") && sbx_path_within(src, home));
    if (in_home && !python_env_shape(src))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "runtime bind %s: inside a home directory (only a Python "
                           "environment such as .venv, envs/NAME or .pyenv/versions/NAME is)",
                           src);
    if (home && home[0] == '/' && sbx_path_within(home, src))
        return aka_err_set(err, AKA_EXIT_USAGE, "runtime bind %s: contains $HOME (%s)", src, home);
    for (size_t i = 0; deny && i < deny->n; i++)
        if (sbx_path_within(src, deny->v[i]) || sbx_path_within(deny->v[i], src))
            return aka_err_set(err, AKA_EXIT_USAGE, "runtime bind %s: overlaps protected %s", src,
                               deny->v[i]);
    return 0;
}

int aka_sandbox_check_bind(const char *resolved_src, const char *dest,
                           const struct strvec *deny_paths, struct aka_err *err)
{
    if (!resolved_src || resolved_src[0] != '/' || !dest || dest[0] != '/')
        return aka_err_set(err, AKA_EXIT_USAGE, "runtime bind: paths must be absolute");
    if (check_bind_src(resolved_src, deny_paths, err) < 0)
        return -1;
    if (strcmp(dest, "/") == 0 || aka_sandbox_check_rel(dest + 1, "runtime bind target", err) < 0)
        return strcmp(dest, "/") == 0
                   ? aka_err_set(err, AKA_EXIT_USAGE, "runtime bind target /: reserved")
                   : -1;
    if (equals_any(dest, reserved_dests) || within_any(dest, reserved_dest_trees))
        return aka_err_set(err, AKA_EXIT_USAGE, "runtime bind target %s: reserved by the sandbox",
                           dest);
    return 0;
}

int aka_sandbox_check_bind_source(const char *resolved_src, const struct strvec *deny_paths,
                                  struct aka_err *err)
{
    if (!resolved_src || resolved_src[0] != '/')
        return aka_err_set(err, AKA_EXIT_USAGE, "runtime bind: paths must be absolute");
    return check_bind_src(resolved_src, deny_paths, err);
}
