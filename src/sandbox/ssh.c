/*
 * ssh.c — the ssh transport: one job on a remote host, start to finish, through the
 * user's own OpenSSH client (base/proc, argv only; never a library, never a password
 * prompt: BatchMode).
 *
 *   ControlMaster (once per transport, socket in a private 0700 local directory)
 *   → probe (a fresh remote `mktemp -d`, the user, $HOME, runtime binds after
 *     `realpath -e`, the GPU's UUID and MIG mode, its device nodes: ssh_remote.c)
 *   → stage the allowlist locally, exactly as the local transport does, and send it
 *     as one tar stream (base/tarball) into `tar -x` in the remote directory
 *   → run env -i … timeout … bwrap … (ssh_remote.c) → bring the requested artifacts
 *     back as a tar stream, unpack it with base/tarball's checks, then through the
 *     same extraction rules as a local job (artifacts.c) → remove the remote
 *     directory (a failure is noted in the result and retried when the transport
 *     closes).
 *
 * Classification: whatever the remote host or the connection could not do is the
 * environment's (code 75): ssh's own exit 255, a probe, upload or download that
 * failed, a remote command that never wrote its status, a sandbox that cannot be
 * built there, a full remote disk after a failed command. A command that ran and
 * failed stays the job's ordinary result, even with exit status 255 (the status file
 * the remote wrapper writes tells the two apart).
 */
#include "sandbox/internal.h"

#include "base/fs.h"
#include "base/proc.h"
#include "base/tarball.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SSH_SETUP_TIMEOUT_S    60
#define SSH_TRANSFER_TIMEOUT_S 600
#define SSH_RUN_SLACK_S        60
#define SSH_FULL_DISK_KB       1024 /* less free space than this after a failure: disk full */

struct ssh_conn {
    const struct aka_sandbox_ssh_opts *o;
    struct strbuf dir;       /* private local directory of the ControlPath socket */
    struct strbuf sock;      /* dir/cm */
    bool master;             /* the ControlMaster is up */
    struct strvec leftovers; /* remote directories whose removal failed */
};

struct ssh_job {
    struct ssh_conn *c;
    const struct aka_sandbox_job *job;
    struct aka_sandbox_result *res;
    struct sbx_stage st;
    struct aka_ssh_remote r;
    struct strbuf cmd;     /* the remote command line of the job */
    struct strbuf back;    /* local directory the artifacts were unpacked into */
    char back_error[512];  /* why the artifacts' archive was refused as a whole */
    struct strvec skipped; /* symlinks and special files the remote host left out */
};

/* ---- one ssh call -------------------------------------------------------------------------- */

static void ssh_head(const struct ssh_conn *c, struct strvec *a)
{
    strvec_push(a, "ssh");
    strvec_pushv(a, (const char *const[]){"-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-o",
                                          "ConnectTimeout=15", "-o", "ServerAliveInterval=15", "-o",
                                          "ServerAliveCountMax=4", NULL});
    strvec_push(a, "-o");
    strvec_pushf(a, "ControlPath=%s", c->sock.buf);
}

static void first_line(const struct strbuf *text, char *out, size_t n)
{
    size_t len = strcspn(text->buf, "\n");
    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), text->buf);
}

/* A call that could not run, or that ssh itself failed (255): the environment's (75). */
static int transport_failed(const struct ssh_conn *c, const char *what,
                            const struct proc_result *pr, struct aka_err *err)
{
    char line[512];
    first_line(&pr->err, line, sizeof(line));
    /* The failure is the environment's whatever it says; the message names a full disk
     * when any line of it does (tar's first line is often only "Wrote only N bytes"). */
    if (strstr(pr->err.buf, "No space left on device") && !strstr(line, "No space left"))
        snprintf(line + strlen(line), sizeof(line) - strlen(line), "; No space left on device");
    return aka_err_set(err, AKA_EXIT_ENV, "ssh %s (GPU %d): %s failed (%s)", c->o->target,
                       c->o->gpu, what,
                       pr->timed_out ? "no answer in time"
                       : *line       ? line
                                     : "ssh exit status 255");
}

struct call {
    const char *what;       /* for messages: "upload", "probe" */
    const char *remote;     /* the remote shell command line */
    const char *stdin_file; /* NULL: /dev/null */
    const char *out_file;   /* NULL: stdout to the buffer */
    size_t out_cap, err_cap;
    long timeout_s;
};

/* 0 once ssh ran and was reaped (pr holds its status); -1 when it could not start. */
static int ssh_call(const struct ssh_conn *c, const struct call *k, struct proc_result *pr,
                    struct aka_err *err)
{
    struct strvec argv = STRVEC_INIT;
    struct proc_spec spec;
    ssh_head(c, &argv);
    strvec_pushv(&argv, (const char *const[]){"-o", "ControlMaster=no", "-T", NULL});
    strvec_push(&argv, c->o->target);
    strvec_push(&argv, k->remote);
    memset(&spec, 0, sizeof(spec));
    spec.argv = (const char *const *)argv.v;
    spec.new_session = true;
    spec.stdin_file = k->stdin_file;
    spec.out_mode = k->out_file ? PROC_TO_FILE : PROC_TO_BUFFER;
    spec.out_file = k->out_file;
    spec.err_mode = PROC_TO_BUFFER;
    spec.out_cap = k->out_cap;
    spec.err_cap = k->err_cap ? k->err_cap : 65536;
    spec.timeout_ms = k->timeout_s * 1000;
    proc_result_init(pr);
    int rc = proc_run(&spec, pr, err);
    strvec_clear(&argv);
    if (rc < 0 && !proc_stop_signal())
        err->code = AKA_EXIT_ENV;
    return rc;
}

/* A helper call that must succeed: anything but exit 0 is the environment's. */
static int ssh_must(const struct ssh_conn *c, const struct call *k, struct strbuf *out,
                    struct aka_err *err)
{
    struct proc_result pr;
    int rc = ssh_call(c, k, &pr, err);
    if (rc == 0 && (pr.exit_code != 0 || pr.timed_out))
        rc = transport_failed(c, k->what, &pr, err);
    if (rc == 0 && out)
        strbuf_add(out, pr.out.buf, pr.out.len);
    proc_result_release(&pr);
    return rc;
}

/* The same, keeping what the remote command said on stderr (one name a line). */
static int ssh_must_err(const struct ssh_conn *c, const struct call *k, struct strvec *lines,
                        struct aka_err *err)
{
    struct proc_result pr;
    int rc = ssh_call(c, k, &pr, err);
    if (rc == 0 && (pr.exit_code != 0 || pr.timed_out))
        rc = transport_failed(c, k->what, &pr, err);
    for (const char *p = pr.err.buf; rc == 0 && *p;) {
        size_t n = strcspn(p, "\n");
        if (n)
            strvec_pushf(lines, "%.*s", (int)n, p);
        p += n + (p[n] == '\n');
    }
    proc_result_release(&pr);
    return rc;
}

/* ---- the connection -------------------------------------------------------------------------- */

/* The socket path must fit a sockaddr_un (108 bytes): a long $TMPDIR falls back to /tmp. */
static int make_sock_dir(struct ssh_conn *c, struct aka_err *err)
{
    const char *tmp = getenv("TMPDIR");
    const char *dir = tmp && *tmp && strlen(tmp) < 64 ? tmp : "/tmp";
    if (aka_make_temp_dir(dir, "aka-cm", &c->dir, err) < 0) {
        err->code = AKA_EXIT_ENV;
        return -1;
    }
    aka_path_join(&c->sock, c->dir.buf, "cm");
    return 0;
}

/* One authenticated connection for every job: ControlPersist keeps it while idle, and
 * ends it by itself should aka die without closing it. */
static int start_master(struct ssh_conn *c, struct aka_err *err)
{
    struct strvec argv = STRVEC_INIT;
    struct proc_spec spec;
    struct proc_result pr;
    /* ControlPersist ends an idle master (a long agent turn between two jobs): its socket
     * is then gone, and a new one is made rather than every job logging in anew. */
    if (c->master && aka_exists(c->sock.buf))
        return 0;
    c->master = false;
    if (!c->dir.len && make_sock_dir(c, err) < 0)
        return -1;
    ssh_head(c, &argv);
    strvec_pushv(&argv, (const char *const[]){"-o", "ControlMaster=yes", "-o", "ControlPersist=600",
                                              "-f", "-N", NULL});
    strvec_push(&argv, c->o->target);
    memset(&spec, 0, sizeof(spec));
    spec.argv = (const char *const *)argv.v;
    spec.new_session = true;
    spec.out_mode = PROC_NULL;
    spec.err_mode = PROC_TO_BUFFER;
    spec.err_cap = 65536;
    spec.timeout_ms = SSH_SETUP_TIMEOUT_S * 1000;
    proc_result_init(&pr);
    int rc = proc_run(&spec, &pr, err);
    if (rc < 0 && !proc_stop_signal())
        err->code = AKA_EXIT_ENV;
    if (rc == 0 && (pr.exit_code != 0 || pr.timed_out))
        rc = transport_failed(c, "connecting (ssh -o BatchMode=yes must log in without a prompt)",
                              &pr, err);
    c->master = rc == 0;
    proc_result_release(&pr);
    strvec_clear(&argv);
    return rc;
}

/* ---- prepare: probe, stage, upload ------------------------------------------------------------
 */

static int probe(struct ssh_job *sj, struct aka_err *err)
{
    struct strvec argv = STRVEC_INIT, srcs = STRVEC_INIT;
    struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, src = STRBUF_INIT, dst = STRBUF_INIT;
    const struct aka_sandbox_ssh_opts *o = sj->c->o;
    int rc = 0;
    for (size_t i = 0; o->runtime_binds && rc == 0 && i < o->runtime_binds->n; i++)
        if ((rc = aka_ssh_check_bind_spec(o->runtime_binds->v[i], &src, &dst, err)) == 0)
            strvec_push(&srcs, src.buf);
    struct aka_ssh_gpus g = {.first = o->gpu, .n = sj->job->gpu_count};
    aka_ssh_probe_argv(g, "/dev", NULL, &srcs, &argv);
    aka_shell_join((const char *const *)argv.v, argv.n, &cmd);
    struct call k = {
        .what = "probe", .remote = cmd.buf, .out_cap = 65536, .timeout_s = SSH_SETUP_TIMEOUT_S};
    if (rc == 0)
        rc = ssh_must(sj->c, &k, &out, err);
    if (rc == 0)
        rc = aka_ssh_probe_parse(out.buf, g, o->runtime_binds, &sj->r, err);
    strvec_clear(&argv);
    strvec_clear(&srcs);
    strbuf_release(&cmd);
    strbuf_release(&out);
    strbuf_release(&src);
    strbuf_release(&dst);
    return rc;
}

/* passwd/group/hosts for the remote user, whose home inside is the remote job directory. */
static int remote_etc(struct ssh_job *sj, struct aka_err *err)
{
    static const char *const names[] = {"passwd", "group", "hosts", NULL};
    struct strbuf path = STRBUF_INIT, home = STRBUF_INIT;
    for (const char *const *n = names; *n; n++) {
        aka_path_join(&path, sj->st.ctl.buf, *n);
        unlink(path.buf);
    }
    aka_path_join(&home, sj->r.dir.buf, "job");
    int rc = sbx_write_etc(sj->st.ctl.buf, sj->r.uid, sj->r.gid, home.buf, err);
    strbuf_release(&path);
    strbuf_release(&home);
    return rc;
}

/* The staged allowlist (and the generated /etc) as one tar archive next to the stage. */
static int pack(struct ssh_job *sj, struct strbuf *tar, struct aka_err *err)
{
    struct strvec files = STRVEC_INIT;
    strvec_pushv(&files, (const char *const[]){"ctl/passwd", "ctl/group", "ctl/hosts", NULL});
    for (size_t i = 0; i < sj->job->files.n; i++)
        strvec_pushf(&files, "job/%s", sj->job->files.v[i].dest);
    aka_path_join(tar, sj->st.root.buf, "upload.tar");
    int rc = aka_tar_pack(tar->buf, sj->st.root.buf, &files, err);
    if (rc < 0)
        err->code = AKA_EXIT_ENV; /* every file was checked when it was staged */
    strvec_clear(&files);
    return rc;
}

/* After a failed upload: a full remote disk, said as such (tar may only say "Wrote only N
 * of M bytes"); the failure is the environment's either way. */
static void name_full_disk(struct ssh_job *sj, struct aka_err *err)
{
    struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    long avail = -1;
    strbuf_addstr(&cmd, "df -Pk ");
    aka_shell_join((const char *const[]){sj->r.dir.buf}, 1, &cmd);
    strbuf_addstr(&cmd, " | tail -n 1");
    struct call k = {
        .what = "disk check", .remote = cmd.buf, .out_cap = 4096, .timeout_s = SSH_SETUP_TIMEOUT_S};
    if (err->code == AKA_EXIT_ENV && ssh_must(sj->c, &k, &out, &ignored) == 0 &&
        sscanf(out.buf, "%*s %*s %*s %ld", &avail) == 1 && avail < SSH_FULL_DISK_KB)
        aka_err_set(err, AKA_EXIT_ENV,
                    "ssh %s: upload failed: no space left on the remote file system of %s "
                    "(%ld KiB free)",
                    sj->c->o->target, sj->r.dir.buf, avail);
    strbuf_release(&cmd);
    strbuf_release(&out);
}

static int upload(struct ssh_job *sj, struct aka_err *err)
{
    struct strbuf tar = STRBUF_INIT, cmd = STRBUF_INIT, tmp = STRBUF_INIT, dir = STRBUF_INIT;
    int rc = pack(sj, &tar, err);
    aka_path_join(&tmp, sj->r.dir.buf, "job/tmp");
    aka_shell_join((const char *const[]){sj->r.dir.buf}, 1, &dir);
    strbuf_addstr(&cmd, "mkdir -p -m 700 ");
    aka_shell_join((const char *const[]){tmp.buf}, 1, &cmd);
    strbuf_addf(&cmd, " && tar -x -f - -C %s", dir.buf);
    struct call k = {.what = "upload",
                     .remote = cmd.buf,
                     .stdin_file = tar.buf,
                     .timeout_s = SSH_TRANSFER_TIMEOUT_S};
    if (rc == 0 && ssh_must(sj->c, &k, NULL, err) < 0) {
        name_full_disk(sj, err);
        rc = -1;
    }
    strbuf_release(&tar);
    strbuf_release(&cmd);
    strbuf_release(&tmp);
    strbuf_release(&dir);
    return rc;
}

/* cd to the job directory, run, and write the status where the job cannot reach it. */
static int job_command(struct ssh_job *sj, struct aka_err *err)
{
    struct strvec argv = STRVEC_INIT;
    struct strbuf jobdir = STRBUF_INIT, rc_file = STRBUF_INIT;
    int rc = aka_ssh_job_argv(sj->job, sj->c->o, &sj->r, &argv, err);
    aka_path_join(&jobdir, sj->r.dir.buf, "job");
    aka_path_join(&rc_file, sj->r.dir.buf, "rc");
    if (rc == 0) {
        strbuf_addstr(&sj->cmd, "cd ");
        aka_shell_join((const char *const[]){jobdir.buf}, 1, &sj->cmd);
        strbuf_addstr(&sj->cmd, " || exit 255; ");
        aka_shell_join((const char *const *)argv.v, argv.n, &sj->cmd);
        strbuf_addstr(&sj->cmd, "; s=$?; echo \"$s\" >");
        aka_shell_join((const char *const[]){rc_file.buf}, 1, &sj->cmd);
        strbuf_addstr(&sj->cmd, "; exit \"$s\"");
    }
    strvec_clear(&argv);
    strbuf_release(&jobdir);
    strbuf_release(&rc_file);
    return rc;
}

static int prepare(struct ssh_job *sj, struct aka_err *err)
{
    const struct aka_sandbox_job *job = sj->job;
    if (sbx_ssh_check_job(job, sj->c->o, err) < 0) /* before anything is sent */
        return -1;
    for (size_t i = 0; i < job->binds.n; i++)
        strvec_pushf(&sj->res->notes,
                     "this host's runtime bind %s is not used on %s (give "
                     "--sandbox-ssh-runtime-bind for the remote host's own)",
                     job->binds.v[i].src, sj->c->o->target);
    if (proc_check_stop(err) < 0 || start_master(sj->c, err) < 0 || probe(sj, err) < 0)
        return -1;
    if (sbx_stage_create(&sj->st, sj->c->o->tmp_dir, err) < 0 ||
        sbx_stage_copy_inputs(job, &sj->st, err) < 0 || remote_etc(sj, err) < 0)
        return -1;
    return job_command(sj, err) < 0 ? -1 : upload(sj, err);
}

/* ---- run ---------------------------------------------------------------------------------------
 */

static void take_result(struct aka_sandbox_result *res, struct proc_result *pr, long limit_s)
{
    sbx_take_proc_result(res, pr);
    /* The process here is the local ssh client: its signal is not the job's, and the job's
     * time limit is timeout(1) on the remote host: 124, or 137 once its SIGKILL was needed. */
    res->term_signal = 0;
    res->timed_out = pr->exit_code == 124 || (pr->exit_code == 137 && pr->wall_seconds >= limit_s);
}

/* After a failed command: did it end by itself (its status file), and is the disk full? */
static int after_failure(struct ssh_job *sj, struct aka_err *err)
{
    struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, q = STRBUF_INIT;
    aka_shell_join((const char *const[]){sj->r.dir.buf}, 1, &q);
    strbuf_addf(&cmd, "printf 'rc %%s\\n' \"$(cat %s/rc 2>/dev/null)\"; df -Pk %s | tail -n 1",
                q.buf, q.buf);
    struct call k = {.what = "status check",
                     .remote = cmd.buf,
                     .out_cap = 4096,
                     .timeout_s = SSH_SETUP_TIMEOUT_S};
    int rc = ssh_must(sj->c, &k, &out, err);
    long avail = -1;
    const char *df = strchr(out.buf, '\n');
    if (df && sscanf(df + 1, "%*s %*s %*s %ld", &avail) != 1)
        avail = -1;
    /* A full disk first: the wrapper could not even write the status file then. */
    if (rc == 0 && avail >= 0 && avail < SSH_FULL_DISK_KB)
        rc = aka_err_set(err, AKA_EXIT_ENV,
                         "ssh %s: no space left on the remote file system of %s (%ld KiB free)",
                         sj->c->o->target, sj->r.dir.buf, avail);
    int status = -1;
    if (rc == 0 && (sscanf(out.buf, "rc %d", &status) != 1 || status != sj->res->exit_code))
        /* No status (still running, or ended with its shell), or another one than ssh
         * passed on: ssh's own status (255, a lost connection), never the command's. */
        rc =
            aka_err_set(err, AKA_EXIT_ENV,
                        "ssh %s: the connection ended before the remote command did (ssh "
                        "status %d; the command's: %s)",
                        sj->c->o->target, sj->res->exit_code, status >= 0 ? "another" : "none yet");
    strbuf_release(&cmd);
    strbuf_release(&out);
    strbuf_release(&q);
    return rc;
}

/* bwrap's own "bwrap: ..." with status 1: the same sandbox around `true` tells whether the
 * remote host cannot build it (75) or the command failed on its own. */
static int check_sandbox(struct ssh_job *sj, struct aka_err *err)
{
    const struct aka_sandbox_result *res = sj->res;
    if (res->timed_out || res->exit_code != 1 || strncmp(res->err.buf, "bwrap: ", 7) != 0)
        return 0;
    struct strbuf cmd = STRBUF_INIT;
    const char *sep = strstr(sj->cmd.buf, " -- ");
    /* Everything up to the job's command, then `true`; the status file is not written. */
    strbuf_add(&cmd, sj->cmd.buf, sep ? (size_t)(sep - sj->cmd.buf) : 0);
    strbuf_addstr(&cmd, " -- true");
    struct call k = {.what = "sandbox check",
                     .remote = cmd.buf,
                     .out_cap = 4096,
                     .timeout_s = SSH_SETUP_TIMEOUT_S};
    int rc = sep ? ssh_must(sj->c, &k, NULL, err) : 0;
    if (rc < 0) {
        char line[512];
        first_line(&res->err, line, sizeof(line));
        rc = aka_err_set(err, AKA_EXIT_ENV, "ssh %s: the sandbox could not be built there (%s)",
                         sj->c->o->target, line);
    }
    strbuf_release(&cmd);
    return rc;
}

/* The requested artifacts that exist, as a tar stream into a local file, then unpacked. */
static int download(struct ssh_job *sj, bool command_ok, struct aka_err *err)
{
    struct strbuf cmd = STRBUF_INIT, jobdir = STRBUF_INIT, tar = STRBUF_INIT;
    struct aka_err dl = AKA_ERR_INIT;
    const struct aka_sandbox_job *job = sj->job;
    aka_path_join(&jobdir, sj->r.dir.buf, "job");
    strbuf_addstr(&cmd, "cd ");
    aka_shell_join((const char *const[]){jobdir.buf}, 1, &cmd);
    strbuf_addstr(&cmd, " || exit 1; for a in ");
    aka_shell_join((const char *const *)job->artifacts.v, job->artifacts.n, &cmd);
    /* Regular files and directories only, never through a symlink (find does not follow
     * one); the rest is named on stderr and refused here. */
    strbuf_addstr(&cmd, "; do [ -e \"$a\" ] || [ -L \"$a\" ] || continue; "
                        "find \"$a\" ! -type f ! -type d -print >&2; "
                        "find \"$a\" \\( -type f -o -type d \\) -print0; "
                        "done | tar -c -f - --null --no-recursion -T -");
    aka_path_join(&tar, sj->st.root.buf, "back.tar");
    aka_path_join(&sj->back, sj->st.root.buf, "back");
    struct call k = {.what = "artifact download",
                     .remote = cmd.buf,
                     .out_file = tar.buf,
                     .out_cap = job->max_artifact_total + ((size_t)1 << 20),
                     .timeout_s = SSH_TRANSFER_TIMEOUT_S};
    int rc = ssh_must_err(sj->c, &k, &sj->skipped, &dl);
    if (rc == 0 && aka_mkdir_p(sj->back.buf, 0700, &dl) == 0 &&
        aka_tar_unpack(tar.buf, sj->back.buf, job->max_artifact_total, &dl) < 0)
        snprintf(sj->back_error, sizeof(sj->back_error), "%s", dl.msg); /* the archive's fault */
    else if (rc < 0 && command_ok)
        rc = aka_err_set(err, dl.code ? dl.code : AKA_EXIT_ENV, "%s", dl.msg);
    else if (rc < 0)
        snprintf(sj->back_error, sizeof(sj->back_error), "%s", dl.msg);
    strbuf_release(&cmd);
    strbuf_release(&jobdir);
    strbuf_release(&tar);
    return rc < 0 && command_ok ? -1 : 0;
}

static int run_job(struct ssh_job *sj, struct aka_err *err)
{
    struct proc_result pr;
    const struct aka_sandbox_job *job = sj->job;
    struct call k = {.what = "job",
                     .remote = sj->cmd.buf,
                     .out_cap = job->stdout_cap,
                     .err_cap = job->stderr_cap,
                     .timeout_s = job->timeout_s + SSH_RUN_SLACK_S};
    if (ssh_call(sj->c, &k, &pr, err) < 0) {
        proc_result_release(&pr);
        return -1;
    }
    bool local_timeout = pr.timed_out;
    take_result(sj->res, &pr, job->timeout_s);
    proc_result_release(&pr);
    if (local_timeout)
        return aka_err_set(err, AKA_EXIT_ENV,
                           "ssh %s: no answer within %ld s (the remote limit is %ld s)",
                           sj->c->o->target, job->timeout_s + SSH_RUN_SLACK_S, job->timeout_s);
    if (sj->res->exit_code != 0 && after_failure(sj, err) < 0)
        return -1;
    if (check_sandbox(sj, err) < 0)
        return -1;
    return job->artifacts.n ? download(sj, sj->res->exit_code == 0, err) : 0;
}

/* ---- cleanup ------------------------------------------------------------------------------------
 */

static int remove_remote(const struct ssh_conn *c, const char *dir, struct aka_err *err)
{
    struct strbuf q = STRBUF_INIT, cmd = STRBUF_INIT;
    aka_shell_join((const char *const[]){dir}, 1, &q);
    /* A job may leave directories without write permission. */
    strbuf_addf(&cmd, "chmod -R u+rwx %s 2>/dev/null; rm -rf -- %s; test ! -e %s", q.buf, q.buf,
                q.buf);
    struct call k = {.what = "removing the job directory",
                     .remote = cmd.buf,
                     .out_cap = 4096,
                     .timeout_s = SSH_SETUP_TIMEOUT_S};
    int rc = ssh_must(c, &k, NULL, err);
    strbuf_release(&q);
    strbuf_release(&cmd);
    return rc;
}

/* ---- the transport interface --------------------------------------------------------------------
 */

static int ssh_prepare(const struct aka_sandbox_transport *t, const struct aka_sandbox_job *job,
                       struct aka_sandbox_result *res, void **state, struct aka_err *err)
{
    struct ssh_job *sj = aka_xcalloc(1, sizeof(*sj));
    sj->c = t->ctx;
    sj->job = job;
    sj->res = res;
    sbx_stage_init(&sj->st);
    aka_ssh_remote_init(&sj->r);
    strbuf_init(&sj->cmd, 0);
    strbuf_init(&sj->back, 0);
    *state = sj;
    return prepare(sj, err);
}

static int ssh_run(void *state, struct aka_err *err)
{
    return run_job(state, err);
}

/* What was left out remotely is refused as a local job's would be, not as missing. */
static void refuse_skipped(struct ssh_job *sj)
{
    struct strvec kept = STRVEC_INIT, *refused = &sj->res->artifacts_refused;
    struct strbuf missing = STRBUF_INIT;
    for (size_t i = 0; i < refused->n; i++) {
        bool was_skipped = false;
        for (size_t k = 0; k < sj->skipped.n && !was_skipped; k++) {
            strbuf_reset(&missing);
            strbuf_addf(&missing, "%s: does not exist", sj->skipped.v[k]);
            was_skipped = strcmp(refused->v[i], missing.buf) == 0;
        }
        if (!was_skipped)
            strvec_push(&kept, refused->v[i]);
    }
    for (size_t k = 0; k < sj->skipped.n; k++)
        strvec_pushf(&kept, "%s: a symlink or special file (never followed)", sj->skipped.v[k]);
    strvec_clear(refused);
    *refused = kept;
    strbuf_release(&missing);
}

static void ssh_collect(void *state)
{
    struct ssh_job *sj = state;
    if (!sj->job->artifacts.n)
        return;
    if (!sj->back_error[0]) {
        sbx_collect_artifacts(sj->job, sj->back.buf, sj->res);
        refuse_skipped(sj);
        return;
    }
    for (size_t i = 0; i < sj->job->artifacts.n; i++)
        strvec_pushf(&sj->res->artifacts_refused, "%s: %s", sj->job->artifacts.v[i],
                     sj->back_error);
}

static void ssh_cleanup(void *state)
{
    struct ssh_job *sj = state;
    struct aka_err err = AKA_ERR_INIT;
    if (sj->r.dir.len && remove_remote(sj->c, sj->r.dir.buf, &err) < 0) {
        strvec_pushf(&sj->res->notes,
                     "remote job directory %s:%s not removed (%s); retried when the transport "
                     "closes",
                     sj->c->o->target, sj->r.dir.buf, err.msg);
        strvec_push(&sj->c->leftovers, sj->r.dir.buf);
    }
    sbx_stage_remove(&sj->st, &sj->res->notes);
    aka_ssh_remote_release(&sj->r);
    strbuf_release(&sj->cmd);
    strbuf_release(&sj->back);
    strvec_clear(&sj->skipped);
    free(sj);
}

static void ssh_describe(const struct aka_sandbox_transport *t, struct strbuf *out)
{
    const struct ssh_conn *c = t->ctx;
    strbuf_addf(out, "ssh %s, GPUs from index %d, remote bwrap", c->o->target, c->o->gpu);
}

static const struct aka_sandbox_transport_ops ssh_ops = {
    .name = "ssh",
    .prepare = ssh_prepare,
    .run = ssh_run,
    .collect = ssh_collect,
    .cleanup = ssh_cleanup,
    .describe = ssh_describe,
    /* The probe is an ordinary job of this transport: it runs on the remote host, under
     * the same Bubblewrap, on the same GPU (health.c). */
    .probe_health = sbx_probe_job,
};

int aka_sandbox_ssh(struct aka_sandbox_transport *t, const struct aka_sandbox_ssh_opts *opts,
                    struct aka_err *err)
{
    struct strbuf src = STRBUF_INIT, dst = STRBUF_INIT;
    for (size_t i = 0; opts->runtime_binds && i < opts->runtime_binds->n; i++)
        if (aka_ssh_check_bind_spec(opts->runtime_binds->v[i], &src, &dst, err) < 0) {
            strbuf_release(&src);
            strbuf_release(&dst);
            return -1;
        }
    strbuf_release(&src);
    strbuf_release(&dst);
    struct ssh_conn *c = aka_xcalloc(1, sizeof(*c));
    c->o = opts;
    strbuf_init(&c->dir, 0);
    strbuf_init(&c->sock, 0);
    t->ops = &ssh_ops;
    t->ctx = c;
    t->isolation = AKA_SBX_BWRAP;
    t->tmp_dir = opts->tmp_dir;
    /* Connect now: a host that cannot be reached is known before anything is written. */
    if (start_master(c, err) < 0) {
        aka_sandbox_ssh_close(t, NULL);
        return -1;
    }
    return 0;
}

static void stop_master(struct ssh_conn *c)
{
    struct strvec argv = STRVEC_INIT;
    struct proc_spec spec;
    struct proc_result pr;
    struct aka_err ignored = AKA_ERR_INIT;
    ssh_head(c, &argv);
    strvec_pushv(&argv, (const char *const[]){"-O", "exit", c->o->target, NULL});
    memset(&spec, 0, sizeof(spec));
    spec.argv = (const char *const *)argv.v;
    spec.out_mode = spec.err_mode = PROC_NULL;
    spec.timeout_ms = 15000;
    proc_result_init(&pr);
    proc_run(&spec, &pr, &ignored);
    proc_result_release(&pr);
    strvec_clear(&argv);
}

void aka_sandbox_ssh_close(struct aka_sandbox_transport *t, struct strvec *notes)
{
    struct ssh_conn *c = t->ops == &ssh_ops ? t->ctx : NULL;
    struct aka_err err = AKA_ERR_INIT;
    if (!c)
        return;
    for (size_t i = 0; i < c->leftovers.n; i++) {
        aka_err_clear(&err);
        if (c->master && remove_remote(c, c->leftovers.v[i], &err) < 0 && notes)
            strvec_pushf(notes, "remote job directory %s:%s left behind (%s)", c->o->target,
                         c->leftovers.v[i], err.msg);
    }
    if (c->master)
        stop_master(c);
    if (c->dir.len)
        aka_remove_tree(c->dir.buf, &err);
    strvec_clear(&c->leftovers);
    strbuf_release(&c->dir);
    strbuf_release(&c->sock);
    free(c);
    t->ctx = NULL;
    t->ops = NULL;
}
