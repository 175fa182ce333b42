/*
 * guard.c — the process guard: a thread that watches every process of an
 * agent session and ends the whole session the moment one breaks the policy
 * (reference §7.1; rules in guard_rules.c).
 *
 * Why a /proc walker here and not in base/: it is the policy's own view of a
 * process tree (parents, sessions, groups, argv, mapped libraries, ELF
 * sections), used nowhere else, and the kernel here lacks
 * /proc/<pid>/task/<tid>/children, so the tree is rebuilt from /proc/<pid>/stat
 * on every pass. base/proc.h keeps the spawning; this file only observes and
 * signals.
 *
 * Every 100 ms the poller rebuilds the tree under the session leader (plus any
 * process still in its session whose parent died) and checks each member:
 * its argv against the rules, its executable for an embedded CUDA or HIP fat
 * binary, its mappings for the CUDA driver or the ROCm runtime (HIP, ROCr);
 * and the protected gateway configuration files for any change. Subtrees of processes running aka
 * itself (`aka eval`, `aka profile`: they go through the sandbox, whose GPU
 * work is the allowed kind) are not descended. On the first violation every
 * process group of the session gets SIGTERM, then SIGKILL after 300 ms.
 */
#include "agents/internal.h"
#include "base/fs.h"
#include "base/proc.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS        100
#define TERM_GRACE_MS  300
#define DEATH_WAIT_MS  700
#define CMDLINE_MAX    (256 * 1024)
#define R_FATBIN       "CUDA program executed directly on the host"
#define R_HIP_FATBIN   "HIP program executed directly on the host"
#define R_DRIVER       "CUDA driver loaded by a process on the host"
#define R_ROCM         "ROCm runtime (HIP/HSA) loaded by a process on the host"
#define R_GATEWAY_FILE "shared gateway configuration modified"

struct pinfo {
    pid_t pid, ppid, pgid, sid;
    unsigned long long start;
    char state;
    bool member, pruned;
};

struct ptable {
    struct pinfo *v;
    size_t n, alloc;
};

/* Wall-clock seconds (also the trace's and the runtime's clock: agents/internal.h). */
double aka_agent_unix_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* ---- reading /proc -------------------------------------------------------- */

static int read_stat(pid_t pid, struct pinfo *p)
{
    struct proc_stat st;
    if (!proc_read_stat(pid, &st))
        return -1;
    p->pid = pid;
    p->ppid = st.ppid;
    p->pgid = st.pgrp;
    p->sid = st.sid;
    p->state = st.state;
    p->start = st.start;
    return 0;
}

static int by_pid(const void *a, const void *b);

static void scan_proc(struct ptable *t)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    t->n = 0;
    while (d && (de = readdir(d)) != NULL) {
        struct pinfo p;
        memset(&p, 0, sizeof(p));
        if (de->d_name[0] >= '1' && de->d_name[0] <= '9' &&
            read_stat((pid_t)atoi(de->d_name), &p) == 0 && p.state != 'Z' && p.state != 'X')
            VEC_PUSH(*t, p);
    }
    if (d)
        closedir(d);
    if (t->n)
        qsort(t->v, t->n, sizeof(*t->v), by_pid);
}

/* argv of pid (NUL-separated in /proc/<pid>/cmdline) into a strvec. */
static int read_argv(pid_t pid, struct strvec *argv)
{
    char path[64];
    struct strbuf raw = STRBUF_INIT;
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    char chunk[8192];
    ssize_t n;
    while (fd >= 0 && raw.len < CMDLINE_MAX && (n = read(fd, chunk, sizeof(chunk))) > 0)
        strbuf_add(&raw, chunk, (size_t)n);
    if (fd >= 0)
        close(fd);
    for (size_t i = 0; i < raw.len; i += strlen(raw.buf + i) + 1)
        strvec_push(argv, raw.buf + i);
    strbuf_release(&raw);
    return argv->n ? 0 : -1;
}

/* The section an embedded GPU fat binary lives in: ".nv_fatbin" / "__nv_relfatbin"
 * (what nvcc links in), ".hip_fatbin" (hipcc, amdclang -x hip). */
static const char *fatbin_reason(const char *section)
{
    if (strcmp(section, ".nv_fatbin") == 0 || strcmp(section, "__nv_relfatbin") == 0)
        return R_FATBIN;
    if (strcmp(section, ".hip_fatbin") == 0)
        return R_HIP_FATBIN;
    return NULL;
}

/* Does the executable carry an embedded GPU fat binary? The reason, or NULL. */
static const char *exe_fatbin(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf64_Ehdr eh;
    const char *found = NULL;
    if (fd < 0)
        return NULL;
    if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
        memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
        eh.e_shentsize == sizeof(Elf64_Shdr) && eh.e_shnum > 0 && eh.e_shnum < 4096 &&
        eh.e_shstrndx < eh.e_shnum) {
        Elf64_Shdr *sh = aka_xcalloc(eh.e_shnum, sizeof(*sh));
        size_t bytes = (size_t)eh.e_shnum * sizeof(*sh);
        if (pread(fd, sh, bytes, (off_t)eh.e_shoff) == (ssize_t)bytes &&
            sh[eh.e_shstrndx].sh_size < (1u << 20)) {
            size_t n = sh[eh.e_shstrndx].sh_size;
            char *names = aka_xcalloc(n + 1, 1);
            if (pread(fd, names, n, (off_t)sh[eh.e_shstrndx].sh_offset) == (ssize_t)n)
                for (int i = 0; i < eh.e_shnum && !found; i++)
                    found = sh[i].sh_name < n ? fatbin_reason(names + sh[i].sh_name) : NULL;
            free(names);
        }
        free(sh);
    }
    close(fd);
    return found;
}

/* The GPU runtime a chunk of /proc/<pid>/maps names, or NULL. libcuda is the
 * driver (loaded when CUDA initializes). On ROCm the HIP runtime and ROCr
 * (the HSA runtime under it) are what any HIP program, or the ROCm build of
 * torch, maps to reach the GPU: there is no separate lazily loaded driver
 * library, so mapping either one counts as GPU use on the host. */
static const char *gpu_library(const char *text)
{
    if (strstr(text, "/libcuda.so"))
        return R_DRIVER;
    if (strstr(text, "/libamdhip64.so") || strstr(text, "/libhsa-runtime64.so"))
        return R_ROCM;
    return NULL;
}

/* Has the process mapped a GPU driver or runtime? The reason, or NULL. */
static const char *maps_gpu_runtime(pid_t pid)
{
    char path[64], chunk[65536 + 32];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    const char *found = NULL;
    size_t keep = 0;
    ssize_t n;
    /* Read in chunks, keeping a short tail so a name split across reads is still seen. */
    while (fd >= 0 && !found && (n = read(fd, chunk + keep, sizeof(chunk) - keep - 1)) > 0) {
        size_t len = keep + (size_t)n;
        chunk[len] = '\0';
        found = gpu_library(chunk);
        keep = len < 24 ? len : 24;
        memmove(chunk, chunk + len - keep, keep);
    }
    if (fd >= 0)
        close(fd);
    return found;
}

/* ---- the session's tree --------------------------------------------------- */

static int by_pid(const void *a, const void *b)
{
    const struct pinfo *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The table is sorted by pid (scan_proc), so lookups are binary searches. */
static struct pinfo *find_pid(struct ptable *t, pid_t pid)
{
    struct pinfo key = {.pid = pid};
    return t->n ? bsearch(&key, t->v, t->n, sizeof(*t->v), by_pid) : NULL;
}

static bool runs_self(const struct aka_guard *g, pid_t pid)
{
    char path[64], exe[4096];
    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(path, exe, sizeof(exe) - 1);
    if (n <= 0 || !g->self_exe[0])
        return false;
    exe[n] = '\0';
    return strcmp(exe, g->self_exe) == 0;
}

/* Is any ancestor of p (below the root) a pruned aka process? */
static bool under_pruned(struct ptable *t, const struct pinfo *p, pid_t root)
{
    for (int hops = 0; p && p->pid != root && hops < 64; hops++) {
        if (p->pruned)
            return true;
        p = find_pid(t, p->ppid);
    }
    return false;
}

/* Mark the root's descendants and its orphaned session members. */
static void mark_members(struct aka_guard *g, struct ptable *t)
{
    struct pinfo *root = find_pid(t, g->root);
    if (root)
        root->member = true;
    for (bool grew = true; grew;) { /* breadth by repeated passes: the table is small */
        grew = false;
        for (size_t i = 0; i < t->n; i++) {
            struct pinfo *p = &t->v[i], *parent = find_pid(t, p->ppid);
            if (p->member || !parent || !parent->member || parent->pruned)
                continue;
            p->member = grew = true;
            p->pruned = runs_self(g, p->pid);
        }
    }
    for (size_t i = 0; i < t->n; i++) {
        struct pinfo *p = &t->v[i];
        if (!p->member && p->sid == g->root && !under_pruned(t, find_pid(t, p->ppid), g->root))
            p->member = true;
    }
}

static void remember(struct aka_guard *g, const struct pinfo *p)
{
    for (size_t i = 0; i < g->seen.n; i++)
        if (g->seen.v[i].pid == p->pid && g->seen.v[i].start == p->start)
            return;
    struct guard_seen s = {p->pid, p->pgid, p->start};
    VEC_PUSH(g->seen, s);
}

static void record(struct aka_guard *g, pid_t pid, const char *reason, const struct strvec *argv)
{
    g->violated = true;
    g->violator = pid;
    snprintf(g->reason, sizeof(g->reason), "%s", reason);
    struct strbuf line = STRBUF_INIT;
    for (size_t i = 0; argv && i < argv->n; i++)
        strbuf_addf(&line, "%s%s", i ? " " : "", argv->v[i]);
    snprintf(g->detail, sizeof(g->detail), "pid=%d: %s: %.1000s", (int)pid, reason, line.buf);
    strbuf_release(&line);
}

/* Check one member; true when it violates the policy. */
static bool check_member(struct aka_guard *g, const struct pinfo *p)
{
    struct strvec argv = STRVEC_INIT;
    const char *why = NULL;
    if (read_argv(p->pid, &argv) == 0)
        why = aka_guard_check_argv((const char *const *)argv.v, argv.n, &g->cfg);
    if (!why && !p->pruned)
        why = exe_fatbin(p->pid);
    if (!why && !p->pruned && !aka_guard_gpu_query_tool((const char *const *)argv.v, argv.n))
        why = maps_gpu_runtime(p->pid);
    if (why)
        record(g, p->pid, why, &argv);
    strvec_clear(&argv);
    return why != NULL;
}

/* ---- gateway configuration snapshots --------------------------------------- */

static void snap_take(struct guard_snap *s)
{
    struct stat st;
    s->exists = stat(s->path, &st) == 0;
    s->size = s->exists ? (long long)st.st_size : -1;
    s->mtime_ns = s->exists ? (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec : 0;
    s->ctime_ns = s->exists ? (long long)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec : 0;
    s->ino = s->exists ? (unsigned long long)st.st_ino : 0;
}

/* A changed protected file: its path, and when it changed (unix seconds). */
static const char *snap_changed(struct aka_guard *g, double *when)
{
    for (size_t i = 0; i < g->snaps.n; i++) {
        struct guard_snap now = {.path = g->snaps.v[i].path}, *was = &g->snaps.v[i];
        snap_take(&now);
        if (now.exists != was->exists || now.size != was->size || now.mtime_ns != was->mtime_ns ||
            now.ctime_ns != was->ctime_ns || now.ino != was->ino) {
            *when = now.exists ? (double)now.ctime_ns / 1e9 : aka_agent_unix_now();
            return was->path;
        }
    }
    return NULL;
}

/* ---- ending the session ----------------------------------------------------- */

static bool alive(pid_t pid, unsigned long long start)
{
    struct pinfo p;
    return read_stat(pid, &p) == 0 && p.start == start && p.state != 'Z' && p.state != 'X';
}

static void signal_groups(const struct aka_guard *g, int sig)
{
    pid_t self = getpgrp();
    for (size_t i = 0; i < g->seen.n; i++) {
        const struct guard_seen *s = &g->seen.v[i];
        if (!alive(s->pid, s->start))
            continue;
        if (s->pgid > 1 && s->pgid != self)
            kill(-s->pgid, sig);
        kill(s->pid, sig); /* also when it left its group for one we must not signal */
    }
}

static bool any_alive(const struct aka_guard *g)
{
    for (size_t i = 0; i < g->seen.n; i++)
        if (alive(g->seen.v[i].pid, g->seen.v[i].start))
            return true;
    return false;
}

/* SIGTERM every group seen, SIGKILL after a short grace, wait for the end. */
static void kill_seen(struct aka_guard *g)
{
    signal_groups(g, SIGTERM);
    for (int ms = 0; ms < TERM_GRACE_MS && any_alive(g); ms += 10)
        sleep_ms(10);
    signal_groups(g, SIGKILL);
    for (int ms = 0; ms < DEATH_WAIT_MS && any_alive(g); ms += 10)
        sleep_ms(10);
}

/* ---- the poller ------------------------------------------------------------ */

/* One pass: true when a violation was found (and recorded). */
static bool poll_once(struct aka_guard *g, struct ptable *t)
{
    double changed_at = 0;
    const char *file = snap_changed(g, &changed_at);
    scan_proc(t);
    mark_members(g, t);
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].member)
            remember(g, &t->v[i]);
    if (file) {
        struct strvec what = STRVEC_INIT;
        strvec_push(&what, file);
        record(g, 0, R_GATEWAY_FILE, &what);
        strvec_clear(&what);
        g->origin = changed_at; /* the change, on the wall clock */
        g->origin_boot = false;
        return true;
    }
    for (size_t i = 0; i < t->n; i++) {
        const struct pinfo *p = &t->v[i];
        if (p->member && check_member(g, p)) {
            /* The offender's start, in seconds since boot (stat's clock). */
            g->origin = (double)p->start / (double)sysconf(_SC_CLK_TCK);
            g->origin_boot = true;
            return true;
        }
    }
    return false;
}

/* From the offending process's start (or the file change) to the session's end. */
static void finish_latency(struct aka_guard *g)
{
    double now = g->origin_boot ? now_clock(CLOCK_BOOTTIME) : aka_agent_unix_now();
    g->latency_ms = (now - g->origin) * 1000.0;
}

static void *poller(void *arg)
{
    struct aka_guard *g = arg;
    struct ptable t = {0};
    while (!atomic_load(&g->stop)) {
        if (poll_once(g, &t)) {
            kill_seen(g);
            finish_latency(g);
            break;
        }
        pthread_mutex_lock(&g->lock);
        if (!atomic_load(&g->stop)) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += POLL_MS * 1000000L;
            until.tv_sec += until.tv_nsec / 1000000000L;
            until.tv_nsec %= 1000000000L;
            pthread_cond_timedwait(&g->wake, &g->lock, &until);
        }
        pthread_mutex_unlock(&g->lock);
    }
    VEC_FREE(t);
    return NULL;
}

int aka_guard_start(struct aka_guard *g, pid_t root, const char *const *env, struct aka_err *err)
{
    memset(g, 0, sizeof(*g));
    g->root = root;
    g->latency_ms = -1;
    aka_guard_config_init(&g->cfg, env);
    aka_agent_self_exe(g->self_exe, sizeof(g->self_exe));
    for (size_t i = 0; i < g->cfg.config_files.n; i++) {
        struct guard_snap s = {.path = aka_xstrdup(g->cfg.config_files.v[i])};
        snap_take(&s);
        VEC_PUSH(g->snaps, s);
    }
    atomic_init(&g->stop, false);
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->wake, NULL);
    int e = pthread_create(&g->thread, NULL, poller, g);
    if (e != 0)
        return aka_err_set(err, AKA_EXIT_ENV, "process guard: cannot start its thread: %s",
                           strerror(e));
    g->started = true;
    return 0;
}

void aka_guard_stop(struct aka_guard *g)
{
    if (!g->started)
        return;
    pthread_mutex_lock(&g->lock);
    atomic_store(&g->stop, true);
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->lock);
    pthread_join(g->thread, NULL);
    g->started = false;
}

void aka_guard_teardown(struct aka_guard *g)
{
    struct ptable t = {0};
    scan_proc(&t); /* strays still in the session that no pass saw yet */
    for (size_t i = 0; i < t.n; i++)
        if (t.v[i].sid == g->root && t.v[i].pid != g->root)
            remember(g, &t.v[i]);
    VEC_FREE(t);
    if (any_alive(g))
        kill_seen(g);
}

void aka_guard_release(struct aka_guard *g)
{
    aka_guard_stop(g);
    for (size_t i = 0; i < g->snaps.n; i++)
        free(g->snaps.v[i].path);
    VEC_FREE(g->snaps);
    VEC_FREE(g->seen);
    aka_guard_config_release(&g->cfg);
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->wake);
}
