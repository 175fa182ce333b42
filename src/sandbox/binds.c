/*
 * binds.c — what the command sees of the host: the clean environment, the
 * read-only system mounts, the generated /etc files, GPU device nodes, runtime
 * binds (a Python prefix outside /usr, caller-given toolkits), and the bwrap
 * argv that puts it all together.
 *
 * The view is: /usr and the /bin,/lib.. links read-only; a handful of /etc
 * files the dynamic linker and compilers need (no /etc at large: no shadow, no
 * ssh config, no host accounts); fresh /proc, /dev, /dev/shm and /tmp; the job
 * directory, the only writable host path; no network, no host PIDs, no IPC,
 * and no capabilities. The head, the system part and the fresh mounts are
 * shared with the agent sandbox's view (view.c): one builder of bwrap argv.
 */
#include "sandbox/internal.h"

#include "base/fs.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Top-level system directories: bound read-only, or recreated as the same symlink
 * on merged-/usr hosts (where /bin is a link to usr/bin). */
static const char *const sys_dirs[] = {"/bin",   "/sbin",   "/lib", "/lib32",
                                       "/lib64", "/libx32", NULL};
/* The /etc pieces jobs need: dynamic linker cache and config, Debian's alternatives
 * (cc, c++, python links), and the time zone. Absent ones are skipped. */
static const char *const etc_files[] = {"/etc/ld.so.cache",  "/etc/ld.so.conf", "/etc/ld.so.conf.d",
                                        "/etc/alternatives", "/etc/localtime",  NULL};
/* With the network kept (an LLM CLI talks to its API): name resolution and the TLS
 * trust store, nothing else of /etc. */
static const char *const net_etc_files[] = {
    "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf",        "/etc/ssl",
    "/etc/pki",         "/etc/services",      "/etc/protocols", "/etc/ca-certificates", NULL};

static void env_set(struct strvec *env, const char *name_value)
{
    size_t n = (size_t)(strchr(name_value, '=') - name_value) + 1;
    for (size_t i = 0; i < env->n; i++)
        if (strncmp(env->v[i], name_value, n) == 0) {
            free(env->v[i]);
            env->v[i] = aka_xstrdup(name_value);
            return;
        }
    strvec_push(env, name_value);
}

void sbx_job_env(const struct aka_sandbox_job *job, const char *jobdir, const char *python_prefix,
                 struct strvec *env)
{
    if (python_prefix && *python_prefix)
        strvec_pushf(env, "PATH=%s/bin:%s", python_prefix, SBX_PATH);
    else
        strvec_push(env, "PATH=" SBX_PATH);
    strvec_pushf(env, "HOME=%s", jobdir);
    strvec_pushf(env, "TMPDIR=%s/tmp", jobdir);
    strvec_push(env, "LANG=C.UTF-8");
    for (size_t i = 0; i < job->env.n; i++)
        env_set(env, job->env.v[i]);
}

int sbx_find_in_path(const char *name, const char *path_list, struct strbuf *out)
{
    struct stat st;
    if (strchr(name, '/')) {
        strbuf_reset(out);
        strbuf_addstr(out, name);
        return stat(name, &st) == 0 && S_ISREG(st.st_mode) && access(name, X_OK) == 0 ? 0 : -1;
    }
    for (const char *p = path_list ? path_list : ""; *p;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        strbuf_reset(out);
        strbuf_add(out, n ? p : ".", n ? n : 1); /* an empty entry means the cwd */
        strbuf_addf(out, "/%s", name);
        if (stat(out->buf, &st) == 0 && S_ISREG(st.st_mode) && access(out->buf, X_OK) == 0)
            return 0;
        if (!colon)
            break;
        p = colon + 1;
    }
    return -1;
}

static void parent_dir(const char *path, struct strbuf *out)
{
    const char *slash = strrchr(path, '/');
    strbuf_reset(out);
    strbuf_add(out, path, slash && slash != path ? (size_t)(slash - path) : 1);
}

void sbx_python_prefix(const struct aka_sandbox_job *job, struct strbuf *prefix,
                       struct strvec *notes)
{
    struct strbuf found = STRBUF_INIT, dir = STRBUF_INIT, real = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;

    strbuf_reset(prefix);
    if (!job->detect_python || sbx_find_in_path("python3", getenv("PATH"), &found) < 0 ||
        sbx_path_within(found.buf, "/usr") || sbx_path_within(found.buf, "/bin"))
        goto out;
    /* <prefix>/bin/python3: a venv, conda env or interpreter build outside /usr. */
    parent_dir(found.buf, &real);
    parent_dir(real.buf, &dir);
    if (aka_realpath(dir.buf, &real, &err) < 0 ||
        aka_sandbox_check_bind(real.buf, real.buf, &job->deny_paths, &err) < 0) {
        if (notes)
            strvec_pushf(notes,
                         "python3 on PATH is %s; its prefix is not bound (%s): inside the "
                         "sandbox python3 is the system one from " SBX_PATH,
                         found.buf, err.msg);
        goto out;
    }
    strbuf_addstr(prefix, real.buf);
out:
    strbuf_release(&found);
    strbuf_release(&dir);
    strbuf_release(&real);
}

int sbx_gpu_ids(const struct aka_sandbox_job *job, int *ids, size_t *n, struct aka_err *err)
{
    if (job->gpu_count < 0 || job->gpu_count > AKA_SBX_MAX_GPUS)
        return aka_err_set(err, AKA_EXIT_USAGE, "gpu count %d out of range", job->gpu_count);
    *n = (size_t)job->gpu_count;
    for (size_t i = 0; i < *n; i++)
        ids[i] = job->n_gpu_ids ? job->gpu_ids[i] : (int)i;
    return 0;
}

/* ---- bwrap argv ---- */

static void push3(struct strvec *a, const char *op, const char *src, const char *dst)
{
    strvec_push(a, op);
    strvec_push(a, src);
    strvec_push(a, dst);
}

/* passwd, group and hosts as the job sees them: the files written into ctl, read-only. */
static void bind_generated_etc(struct strvec *a, const char *ctl)
{
    static const char *const generated[] = {"passwd", "group", "hosts", NULL};
    struct strbuf path = STRBUF_INIT;
    for (const char *const *g = generated; *g; g++) {
        aka_path_join(&path, ctl, *g);
        strvec_push(a, "--ro-bind");
        strvec_push(a, path.buf);
        strvec_pushf(a, "/etc/%s", *g);
    }
    strbuf_release(&path);
}

void sbx_add_system(struct strvec *a, const char *ctl, bool net)
{
    char target[PATH_MAX];
    struct stat st;

    push3(a, "--ro-bind", "/usr", "/usr");
    for (const char *const *d = sys_dirs; *d; d++) {
        if (lstat(*d, &st) < 0)
            continue;
        ssize_t n = S_ISLNK(st.st_mode) ? readlink(*d, target, sizeof(target) - 1) : -1;
        if (n > 0) {
            target[n] = '\0';
            push3(a, "--symlink", target, *d);
        } else if (S_ISDIR(st.st_mode)) {
            push3(a, "--ro-bind", *d, *d);
        }
    }
    for (const char *const *f = etc_files; *f; f++)
        push3(a, "--ro-bind-try", *f, *f);
    for (const char *const *f = net_etc_files; net && *f; f++)
        push3(a, "--ro-bind-try", *f, *f);
    bind_generated_etc(a, ctl);
}

/* Another host's system, whose layout is not known here: every top-level directory
 * bound when present (bwrap resolves a merged-/usr link such as /bin -> usr/bin itself). */
void sbx_add_system_remote(struct strvec *a, const char *ctl)
{
    push3(a, "--ro-bind", "/usr", "/usr");
    for (const char *const *d = sys_dirs; *d; d++)
        push3(a, "--ro-bind-try", *d, *d);
    for (const char *const *f = etc_files; *f; f++)
        push3(a, "--ro-bind-try", *f, *f);
    bind_generated_etc(a, ctl);
}

/* The device nodes of the job's GPUs, as its platform names them. */
static int job_nodes(const struct aka_sandbox_job *job, struct aka_dev_nodes *nodes,
                     struct aka_err *err)
{
    int ids[AKA_SBX_MAX_GPUS] = {0}; /* zeroed: gcc -O2 cannot see that sbx_gpu_ids fills n */
    size_t n = 0;
    if (sbx_gpu_ids(job, ids, &n, err) < 0)
        return -1;
    return aka_platform_dev_nodes(job->gpu_vendor, ids, n, nodes, err);
}

int sbx_check_gpus(const struct aka_sandbox_job *job, struct aka_err *err)
{
    struct aka_dev_nodes nodes;
    if (job_nodes(job, &nodes, err) < 0)
        return -1;
    return aka_platform_check_nodes(job->gpu_vendor, job->dev_root, &nodes, err);
}

/* Exactly the assigned GPUs' nodes and their vendor's shared ones: no other GPU is visible. */
int sbx_add_gpus(const struct aka_sandbox_job *job, struct strvec *a, struct aka_err *err)
{
    struct aka_dev_nodes nodes;
    struct strbuf host = STRBUF_INIT, inside = STRBUF_INIT;

    if (sbx_check_gpus(job, err) < 0 || job_nodes(job, &nodes, err) < 0)
        return -1;
    if (nodes.n == 0)
        return 0;
    for (size_t i = 0; i < nodes.n; i++) {
        aka_path_join(&host, job->dev_root ? job->dev_root : "/dev", nodes.v[i].name);
        aka_path_join(&inside, "/dev", nodes.v[i].name);
        push3(a, nodes.v[i].required ? "--dev-bind" : "--dev-bind-try", host.buf, inside.buf);
    }
    strbuf_release(&host);
    strbuf_release(&inside);
    /* The driver's user-space libraries read PCI topology from sysfs. */
    push3(a, "--ro-bind", "/sys", "/sys");
    return 0;
}

static int add_runtime_binds(const struct aka_sandbox_job *job, const char *python_prefix,
                             struct strvec *a, struct aka_err *err)
{
    struct strbuf real = STRBUF_INIT;
    if (python_prefix && *python_prefix)
        push3(a, "--ro-bind", python_prefix, python_prefix);
    for (size_t i = 0; i < job->binds.n; i++) {
        /* Bind what the check saw: the resolved source, never the given path again. */
        if (aka_realpath(job->binds.v[i].src, &real, err) < 0 ||
            aka_sandbox_check_bind(real.buf, job->binds.v[i].dest, &job->deny_paths, err) < 0) {
            strbuf_release(&real);
            return -1;
        }
        push3(a, "--ro-bind", real.buf, job->binds.v[i].dest);
    }
    strbuf_release(&real);
    return 0;
}

void sbx_add_jobdir(const struct aka_sandbox_job *job, const char *jobdir, struct strvec *a)
{
    struct strbuf path = STRBUF_INIT;
    push3(a, "--bind", jobdir, jobdir);
    /* Read-only inputs get their own read-only mount on top of the writable job dir:
     * the command can neither write them nor unlink or rename them (a mount point). */
    for (size_t i = 0; i < job->files.n; i++) {
        if (!job->files.v[i].read_only)
            continue;
        aka_path_join(&path, jobdir, job->files.v[i].dest);
        push3(a, "--ro-bind", path.buf, path.buf);
    }
    /* Last mount step: the sandbox's own root (a tmpfs bwrap built) becomes read-only,
     * so the job dir, /tmp and /dev/shm are the only writable places left. */
    strvec_push(a, "--remount-ro");
    strvec_push(a, "/");
    strvec_push(a, "--chdir");
    strvec_push(a, jobdir);
    strbuf_release(&path);
}

void sbx_bwrap_head(struct strvec *a, const char *bwrap, bool net, long uid, bool share_pid)
{
    static const char *const head[] = {
        /* every namespace (user, pid, net, ipc, uts, cgroup); die with aka; no terminal
         * (TIOCSTI); no capabilities — as root, bwrap would otherwise keep them inside
         * its user namespace and a job could remount /usr read-write. */
        "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop",
        "ALL",           "--hostname",        SBX_HOSTNAME,    NULL};
    /* The same but the PID namespace (--unshare-all less --unshare-pid): see sbx_parent_proc. */
    static const char *const head_shared_pid[] = {
        "--unshare-user-try", "--unshare-ipc",        "--unshare-net",
        "--unshare-uts",      "--unshare-cgroup-try", "--die-with-parent",
        "--new-session",      "--cap-drop",           "ALL",
        "--hostname",         SBX_HOSTNAME,           NULL};
    strvec_push(a, bwrap);
    strvec_pushv(a, share_pid ? head_shared_pid : head);
    if (net)
        strvec_push(a, "--share-net");
    if (uid >= 0) { /* the same number as user and group */
        strvec_push(a, "--uid");
        strvec_pushf(a, "%ld", uid);
        strvec_push(a, "--gid");
        strvec_pushf(a, "%ld", uid);
    }
}

/* A mountinfo line (ID PARENT MAJ:MIN ROOT MOUNTPOINT ...) whose mount point is below /proc. */
static bool mounted_in_proc(const char *line)
{
    for (int field = 0; field < 4; field++) {
        line = strchr(line, ' ');
        if (!line)
            return false;
        line++;
    }
    return strncmp(line, "/proc/", 6) == 0;
}

/*
 * Is the /proc we see covered in part (a mount below /proc)? bwrap covers a few
 * /proc directories when it runs as root, and the kernel then refuses a fresh
 * proc mount in a nested user namespace (it would reveal what the cover hides).
 */
static bool proc_covered(void)
{
    struct strbuf info = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    bool covered = false;
    if (aka_read_file("/proc/self/mountinfo", &info, (size_t)1 << 20, &ignored) == 0)
        for (const char *line = info.buf; line && *line && !covered;) {
            covered = mounted_in_proc(line);
            line = strchr(line, '\n');
            line = line ? line + 1 : NULL;
        }
    strbuf_release(&info);
    return covered;
}

bool sbx_parent_proc(bool in_agent_sandbox)
{
    return in_agent_sandbox && proc_covered();
}

void sbx_add_fresh(struct strvec *a, bool parent_proc)
{
    static const char *const fresh[] = {"--dev",   "/dev", "--tmpfs", "/dev/shm",
                                        "--tmpfs", "/tmp", NULL};
    if (parent_proc)
        push3(a, "--ro-bind", "/proc", "/proc");
    else
        strvec_pushv(a, (const char *const[]){"--proc", "/proc", NULL});
    strvec_pushv(a, fresh);
}

long sbx_outer_id(const char *map, long id)
{
    /* Lines of "INSIDE OUTSIDE COUNT" (user_namespaces(7)). */
    for (const char *line = map; line && *line;) {
        long inside, outside, count;
        if (sscanf(line, "%ld %ld %ld", &inside, &outside, &count) == 3 && id >= inside &&
            id - inside < count)
            return outside + (id - inside);
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    return -1;
}

long sbx_nested_uid(bool in_agent_sandbox)
{
    struct strbuf map = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    long me = (long)geteuid(), outside = -1;
    if (in_agent_sandbox && aka_read_file("/proc/self/uid_map", &map, 1 << 16, &ignored) == 0)
        outside = sbx_outer_id(map.buf, me);
    strbuf_release(&map);
    return outside >= 0 && outside != me ? outside : -1;
}

int sbx_bwrap_argv(const struct aka_sandbox_job *job, const char *bwrap, const char *jobdir,
                   const char *ctl, const char *python_prefix, struct strvec *a,
                   struct aka_err *err)
{
    bool parent_proc = sbx_parent_proc(job->in_agent_sandbox);
    sbx_bwrap_head(a, bwrap, false, sbx_nested_uid(job->in_agent_sandbox), parent_proc);
    sbx_add_system(a, ctl, false);
    sbx_add_fresh(a, parent_proc);
    if (sbx_add_gpus(job, a, err) < 0 || add_runtime_binds(job, python_prefix, a, err) < 0)
        return -1;
    sbx_add_jobdir(job, jobdir, a);
    strvec_push(a, "--");
    for (size_t i = 0; i < job->argv.n; i++)
        strvec_push(a, job->argv.v[i]);
    return 0;
}

int aka_sandbox_bwrap_argv(const struct aka_sandbox_job *job, const char *bwrap, const char *jobdir,
                           const char *ctl_dir, struct strvec *argv, struct strvec *notes,
                           struct aka_err *err)
{
    struct strbuf prefix = STRBUF_INIT;
    sbx_python_prefix(job, &prefix, notes);
    int rc = sbx_bwrap_argv(job, bwrap, jobdir, ctl_dir, prefix.buf, argv, err);
    strbuf_release(&prefix);
    return rc;
}
