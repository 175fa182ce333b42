/*
 * pids.c — the pids cgroup that bounds how many processes and threads a job can
 * create, so a fork bomb hits EAGAIN instead of the host's pid_max.
 *
 * Why a cgroup: aka usually runs as root, and the kernel never applies
 * RLIMIT_NPROC to root, so a resource limit cannot stop a fork bomb. The PID
 * namespace already guarantees that everything the job started dies with it;
 * the cgroup limits how much it can start before that. It is best effort: when
 * the host has no writable pids controller the job still runs (the result says
 * "pids_limit": "none").
 *
 * The job is moved into the cgroup right after it is started, before bwrap has
 * finished building the sandbox; anything the first process already forked is
 * moved too, by walking /proc/<pid>/task/<pid>/children.
 */
#include "sandbox/internal.h"

#include "base/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void sbx_cgroup_init(struct sbx_cgroup *cg)
{
    strbuf_init(&cg->dir, 0);
    strbuf_init(&cg->procs, 0);
}

static int write_text(const char *dir, const char *file, const char *text)
{
    struct strbuf path = STRBUF_INIT;
    aka_path_join(&path, dir, file);
    int fd = open(path.buf, O_WRONLY | O_CLOEXEC), rc = -1;
    if (fd >= 0) {
        rc = write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -1;
        close(fd);
    }
    strbuf_release(&path);
    return rc;
}

/* Our own pids cgroup directory (v1 pids hierarchy, else v2 with pids enabled). */
static bool find_parent(struct strbuf *out)
{
    struct strbuf self = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    bool found = false;
    if (aka_read_file("/proc/self/cgroup", &self, 1 << 16, &err) < 0)
        return false;
    for (char *line = self.buf; line && *line && !found;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *v1 = strstr(line, ":pids:");
        if (v1 && aka_is_dir("/sys/fs/cgroup/pids")) {
            strbuf_reset(out);
            strbuf_addf(out, "/sys/fs/cgroup/pids%s", v1 + 6);
            found = true;
        } else if (strncmp(line, "0::", 3) == 0 &&
                   aka_exists("/sys/fs/cgroup/cgroup.controllers")) {
            strbuf_reset(out);
            strbuf_addf(out, "/sys/fs/cgroup%s", line + 3);
            /* v2: children only get pids.max when the parent delegates the controller. */
            write_text(out->buf, "cgroup.subtree_control", "+pids");
            found = true;
        }
        line = nl ? nl + 1 : NULL;
    }
    strbuf_release(&self);
    return found;
}

/*
 * Remove empty job cgroups whose aka process is gone (aka was killed before it
 * could clean up; bwrap --die-with-parent already ended their jobs). The name
 * ends in "-<aka pid>"; rmdir only ever succeeds on an empty cgroup.
 */
static void collect_stale(const char *parent)
{
    struct strvec names = STRVEC_INIT;
    struct strbuf path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    if (aka_list_dir(parent, &names, &err) < 0)
        return;
    for (size_t i = 0; i < names.n; i++) {
        const char *dash = strrchr(names.v[i], '-');
        if (strncmp(names.v[i], "aka-sbx.", 8) != 0 || !dash)
            continue;
        strbuf_reset(&path);
        strbuf_addf(&path, "/proc/%s", dash + 1);
        if (atol(dash + 1) <= 0 || aka_exists(path.buf))
            continue;
        aka_path_join(&path, parent, names.v[i]);
        rmdir(path.buf);
    }
    strvec_clear(&names);
    strbuf_release(&path);
}

bool sbx_cgroup_create(struct sbx_cgroup *cg, const char *name, long pids_max)
{
    struct strbuf parent = STRBUF_INIT, limit = STRBUF_INIT;
    bool ok = false;
    if (pids_max <= 0 || !find_parent(&parent))
        goto out;
    collect_stale(parent.buf);
    strbuf_reset(&cg->dir);
    strbuf_addf(&cg->dir, "%s/%s-%ld", parent.buf, name, (long)getpid());
    if (mkdir(cg->dir.buf, 0755) < 0)
        goto out;
    strbuf_addf(&limit, "%ld", pids_max);
    if (write_text(cg->dir.buf, "pids.max", limit.buf) == 0)
        ok = true;
    else
        rmdir(cg->dir.buf);
out:
    if (!ok)
        strbuf_reset(&cg->dir);
    strbuf_reset(&cg->procs);
    if (ok)
        aka_path_join(&cg->procs, cg->dir.buf, "cgroup.procs");
    strbuf_release(&parent);
    strbuf_release(&limit);
    return ok;
}

static void adopt_tree(struct sbx_cgroup *cg, long pid, int depth)
{
    struct strbuf text = STRBUF_INIT, path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    strbuf_addf(&text, "%ld", pid);
    /* Move first, then list: a child forked after the move is already inside. */
    write_text(cg->dir.buf, "cgroup.procs", text.buf);
    strbuf_reset(&text);
    strbuf_addf(&path, "/proc/%ld/task/%ld/children", pid, pid);
    if (depth < 16 && aka_read_file(path.buf, &text, 1 << 20, &err) == 0) {
        char *p = text.buf, *end;
        for (long child; (child = strtol(p, &end, 10)) > 0; p = end)
            adopt_tree(cg, child, depth + 1);
    }
    strbuf_release(&text);
    strbuf_release(&path);
}

void sbx_cgroup_adopt(struct sbx_cgroup *cg, pid_t pid)
{
    if (cg->dir.len && pid > 0)
        adopt_tree(cg, (long)pid, 0);
}

static bool cgroup_empty(const char *dir)
{
    struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&path, dir, "cgroup.procs");
    bool empty = aka_read_file(path.buf, &text, 1 << 20, &err) < 0 || text.len == 0;
    strbuf_release(&path);
    strbuf_release(&text);
    return empty;
}

void sbx_cgroup_destroy(struct sbx_cgroup *cg, struct strvec *notes)
{
    struct timespec tick = {0, 5 * 1000 * 1000};
    if (!cg->dir.len)
        goto out;
    /* After a timeout the namespace's processes are killed asynchronously; give
     * the kernel a bounded moment to reap them before removing the cgroup. */
    for (int i = 0; i < 1000 && !cgroup_empty(cg->dir.buf); i++)
        nanosleep(&tick, NULL);
    for (int i = 0; i < 200 && rmdir(cg->dir.buf) < 0 && errno == EBUSY; i++)
        nanosleep(&tick, NULL);
    if (aka_exists(cg->dir.buf) && notes)
        strvec_pushf(notes, "pids cgroup %s still has processes; left in place", cg->dir.buf);
out:
    strbuf_release(&cg->dir);
    strbuf_release(&cg->procs);
}
