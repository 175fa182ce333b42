/*
 * remote.c — the doctor's checks of an ssh transport's host: reachable with a key and no
 * prompt (BatchMode, a 5 s connect timeout), and holding what a job needs there: bwrap
 * that can build a sandbox (user namespaces), tar, mktemp, realpath, timeout, env, and
 * nvidia-smi with the assigned GPU not in MIG mode.
 */
#include "doctor/doctor.h"

#include <stdio.h>
#include <string.h>

/* Prints "have T" / "missing T" per tool, "userns ok|fail", then the GPU's line. */
static const char tools_script[] =
    "for t in bwrap tar mktemp realpath timeout env nvidia-smi; do\n"
    "  if command -v \"$t\" >/dev/null 2>&1; then echo \"have $t\"; else echo \"missing $t\"; fi\n"
    "done\n"
    "if bwrap --unshare-all --ro-bind / / true 2>/dev/null; then echo 'userns ok';\n"
    "else echo 'userns fail'; fi\n"
    "command -v nvidia-smi >/dev/null 2>&1 || exit 0\n"
    "printf 'gpu %s\\n' \"$(nvidia-smi --query-gpu=uuid,mig.mode.current -i \"$1\" "
    "--format=csv,noheader 2>&1 | head -n 1)\"\n";

static void ssh_argv(const struct aka_transport_opts *t, struct strvec *a)
{
    strvec_pushv(a, (const char *const[]){"ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5",
                                          "-o", "LogLevel=ERROR", "-T", t->ssh, NULL});
}

static void tool_line(const char *line, const struct aka_transport_opts *t,
                      struct aka_doctor_report *r)
{
    char name[40];
    snprintf(name, sizeof(name), "remote %s", strchr(line, ' ') + 1);
    bool have = strncmp(line, "have ", 5) == 0;
    if (strcmp(name, "remote nvidia-smi") == 0)
        aka_doctor_add(r, name, have ? AKA_DOCTOR_OK : AKA_DOCTOR_WARN,
                       have ? NULL : "install the NVIDIA driver there for GPU jobs",
                       have ? "found on %s" : "not found on %s: only CPU jobs run there", t->ssh);
    else
        aka_doctor_add(r, name, have ? AKA_DOCTOR_OK : AKA_DOCTOR_FAIL,
                       have ? NULL : "install it on the remote host (bubblewrap, coreutils, tar)",
                       have ? "found on %s" : "not found on %s", t->ssh);
}

static void gpu_line(const char *v, const struct aka_transport_opts *t, struct aka_doctor_report *r)
{
    bool mig = strstr(v, ", Enabled") != NULL;
    if (strncmp(v, "GPU-", 4) != 0)
        aka_doctor_add(r, "remote GPU", AKA_DOCTOR_FAIL,
                       "choose an index nvidia-smi lists on that host (--sandbox-ssh-gpu)",
                       "GPU %d on %s: %s", t->ssh_gpu, t->ssh, v);
    else
        aka_doctor_add(r, "remote GPU", mig ? AKA_DOCTOR_FAIL : AKA_DOCTOR_OK,
                       mig ? "disable MIG (nvidia-smi -i N -mig 0) or choose another GPU" : NULL,
                       "GPU %d on %s: %s%s", t->ssh_gpu, t->ssh, v,
                       mig ? " (MIG enabled: jobs are refused)" : "");
}

static void parse_tools(const char *out, const struct aka_transport_opts *t,
                        struct aka_doctor_report *r)
{
    struct strbuf line = STRBUF_INIT;
    for (const char *p = out; *p;) {
        size_t n = strcspn(p, "\n");
        strbuf_reset(&line);
        strbuf_add(&line, p, n);
        if (strncmp(line.buf, "have ", 5) == 0 || strncmp(line.buf, "missing ", 8) == 0)
            tool_line(line.buf, t, r);
        else if (strcmp(line.buf, "userns fail") == 0)
            aka_doctor_add(r, "remote sandbox", AKA_DOCTOR_FAIL,
                           "allow unprivileged user namespaces on the remote host, or install "
                           "bwrap setuid there",
                           "bwrap on %s cannot build a sandbox", t->ssh);
        else if (strcmp(line.buf, "userns ok") == 0)
            aka_doctor_add(r, "remote sandbox", AKA_DOCTOR_OK, NULL, "bwrap on %s builds a sandbox",
                           t->ssh);
        else if (strncmp(line.buf, "gpu ", 4) == 0)
            gpu_line(line.buf + 4, t, r);
        p += n + (p[n] == '\n');
    }
    strbuf_release(&line);
}

void aka_doctor_ssh_checks(const struct aka_doctor_opts *o, struct aka_doctor_report *r)
{
    const struct aka_transport_opts *t = o->transport;
    struct strvec argv = STRVEC_INIT;
    struct strbuf out = STRBUF_INIT, err_out = STRBUF_INIT, cmd = STRBUF_INIT;
    ssh_argv(t, &argv);
    strvec_push(&argv, "true");
    int rc = aka_doctor_exec((const char *const *)argv.v, 30, &out, &err_out);
    strbuf_trim(&err_out);
    if (rc != 0) {
        aka_doctor_add(r, "ssh reachability", AKA_DOCTOR_FAIL,
                       "make `ssh -o BatchMode=yes HOST true` work: sshd running there, your key "
                       "in its authorized_keys (ssh-copy-id), its host key accepted once",
                       "cannot reach %s: %s", t->ssh, err_out.len ? err_out.buf : "ssh failed");
        aka_doctor_add(r, "remote tools", AKA_DOCTOR_WARN, "fix the reachability first",
                       "not checked (%s unreachable)", t->ssh);
    } else {
        aka_doctor_add(r, "ssh reachability", AKA_DOCTOR_OK, NULL,
                       "%s answers (key login, no prompt)", t->ssh);
        strvec_clear(&argv);
        ssh_argv(t, &argv);
        strvec_pushv(&argv, (const char *const[]){"sh", "-c", NULL});
        strbuf_reset(&out);
        strbuf_addf(&cmd, "%d", t->ssh_gpu);
        struct strbuf remote = STRBUF_INIT;
        aka_shell_join((const char *const[]){"sh", "-c", tools_script, "aka-doctor", cmd.buf}, 5,
                       &remote);
        strvec_clear(&argv);
        ssh_argv(t, &argv);
        strvec_push(&argv, remote.buf);
        if (aka_doctor_exec((const char *const *)argv.v, 60, &out, NULL) == 0)
            parse_tools(out.buf, t, r);
        else
            aka_doctor_add(r, "remote tools", AKA_DOCTOR_FAIL, "check the remote shell",
                           "the remote check did not run on %s", t->ssh);
        strbuf_release(&remote);
    }
    strvec_clear(&argv);
    strbuf_release(&out);
    strbuf_release(&err_out);
    strbuf_release(&cmd);
}
