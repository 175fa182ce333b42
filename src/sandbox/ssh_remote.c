/*
 * ssh_remote.c — the pure pieces of the ssh transport: the probe that runs on the
 * remote host before each job, the parsing of what it says, the remote command
 * line of a job (env -i, timeout, bwrap), the runtime-bind checks and POSIX shell
 * quoting. Nothing here connects anywhere, so every rule is testable without ssh
 * (tests/unit/test_ssh.c runs the probe against a fake /dev).
 *
 * The remote host is the user's, reached with the user's credentials; what it
 * reports is trusted only as far as the rules below check it again: a runtime bind
 * is refused by the sensitive-path rules once as written and once more after the
 * remote `realpath -e` (a symlink cannot smuggle ~/.ssh in), and GPUs are exposed
 * only by the device nodes of the assigned indices (a job of N GPUs, a distributed
 * operator's pinned world_size, takes N consecutive indices from --sandbox-ssh-gpu).
 */
#include "sandbox/internal.h"

#include "base/fs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shell: make the job directory first (its path is the first thing reported), then
 * describe the host. $1 the job's GPU indices, space-separated ("": none), $2 /dev,
 * $3 parent of the job directory ("" : $TMPDIR, else /tmp), then the bind sources. */
static const char probe_script[] =
    "set -u\n"
    "gpus=$1 dev=$2 tmp=$3\n"
    "shift 3\n"
    "for t in bwrap tar timeout env mktemp realpath; do\n"
    "  command -v \"$t\" >/dev/null 2>&1 || printf 'missing %s\\n' \"$t\"\n"
    "done\n"
    "[ -n \"$tmp\" ] || tmp=${TMPDIR:-/tmp}\n"
    "d=$(mktemp -d \"$tmp/aka-ssh.XXXXXXXXXX\") || exit 3\n"
    "printf 'dir %s\\n' \"$d\"\n"
    "printf 'id %s %s\\n' \"$(id -u)\" \"$(id -g)\"\n"
    "printf 'home %s\\n' \"${HOME:-}\"\n"
    "for b in \"$@\"; do\n"
    "  if r=$(realpath -e -- \"$b\" 2>/dev/null) && [ -d \"$r\" ]; then\n"
    "    printf 'bind %s\\n' \"$r\"\n"
    "  else printf 'nobind -\\n'; fi\n"
    "done\n"
    "[ -n \"$gpus\" ] || exit 0\n"
    "for g in $gpus; do\n"
    "  if q=$(nvidia-smi --query-gpu=uuid,mig.mode.current -i \"$g\" --format=csv,noheader "
    "2>&1); then\n"
    "    printf 'gpu %s %s\\n' \"$g\" \"$q\"\n"
    "  else printf 'gpufail %s %s\\n' \"$g\" \"$(printf '%s' \"$q\" | head -n 1)\"; fi\n"
    "done\n"
    "for n in \"$dev\"/nvidia*; do [ -e \"$n\" ] && printf 'dev %s\\n' \"${n##*/}\"; done\n"
    "exit 0\n";

void aka_ssh_remote_init(struct aka_ssh_remote *r)
{
    memset(r, 0, sizeof(*r));
    strbuf_init(&r->dir, 0);
    strbuf_init(&r->home, 0);
}

void aka_ssh_remote_release(struct aka_ssh_remote *r)
{
    strbuf_release(&r->dir);
    strbuf_release(&r->home);
    strvec_clear(&r->gpu_uuids);
    strvec_clear(&r->dev_nodes);
    strvec_clear(&r->bind_src);
    strvec_clear(&r->bind_dst);
    strvec_clear(&r->missing);
}

void aka_ssh_probe_argv(struct aka_ssh_gpus g, const char *dev_root, const char *tmp,
                        const struct strvec *bind_srcs, struct strvec *argv)
{
    struct strbuf list = STRBUF_INIT;
    for (int i = 0; i < g.n; i++)
        strbuf_addf(&list, "%s%d", i ? " " : "", g.first + i);
    strvec_push(argv, "sh");
    strvec_push(argv, "-c");
    strvec_push(argv, probe_script);
    strvec_push(argv, "aka-probe");
    strvec_push(argv, list.buf);
    strbuf_release(&list);
    strvec_push(argv, dev_root ? dev_root : "/dev");
    strvec_push(argv, tmp ? tmp : "");
    for (size_t i = 0; bind_srcs && i < bind_srcs->n; i++)
        strvec_push(argv, bind_srcs->v[i]);
}

/* ---- quoting ----------------------------------------------------------------------------- */

static bool shell_safe(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-", *s))
            return false;
    return true;
}

void aka_shell_join(const char *const *words, size_t n, struct strbuf *out)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            strbuf_addch(out, ' ');
        if (shell_safe(words[i])) {
            strbuf_addstr(out, words[i]);
            continue;
        }
        /* Inside single quotes nothing is special but the quote itself. */
        strbuf_addch(out, '\'');
        for (const char *p = words[i]; *p; p++)
            if (*p == '\'')
                strbuf_addstr(out, "'\\''");
            else
                strbuf_addch(out, *p);
        strbuf_addch(out, '\'');
    }
}

/* ---- runtime binds ----------------------------------------------------------------------- */

int aka_ssh_check_bind_spec(const char *spec, struct strbuf *src, struct strbuf *dst,
                            struct aka_err *err)
{
    const char *eq = strchr(spec, '=');
    strbuf_reset(src);
    strbuf_reset(dst);
    if (eq)
        strbuf_add(src, spec, (size_t)(eq - spec));
    else
        strbuf_addstr(src, spec);
    strbuf_addstr(dst, eq ? eq + 1 : spec);
    /* As written first: "/", "/etc" or "~/.ssh" never reach the remote host at all. */
    if (aka_sandbox_check_bind(src->buf, dst->buf, NULL, err) < 0)
        return aka_err_prefix(err, "--sandbox-ssh-runtime-bind %s", spec);
    return 0;
}

/* ---- the probe's answer ------------------------------------------------------------------ */

static int parse_id(const char *v, struct aka_ssh_remote *r)
{
    char *end;
    unsigned long u = strtoul(v, &end, 10);
    if (end == v || *end != ' ')
        return -1;
    const char *g = end + 1;
    unsigned long gid = strtoul(g, &end, 10);
    if (end == g || *end)
        return -1;
    r->uid = (unsigned)u;
    r->gid = (unsigned)gid;
    return 0;
}

static bool uuid_shape(const char *s, size_t n)
{
    if (n < 5 || strncmp(s, "GPU-", 4) != 0)
        return false;
    for (size_t i = 4; i < n; i++)
        if (!strchr("0123456789abcdefABCDEF-", s[i]))
            return false;
    return true;
}

/* The probe's "<index> <rest>": the index must be the next GPU the job asked for (the
 * answers come in order), so a stray or repeated line cannot stand in for a GPU. */
static const char *gpu_answer(const char *v, struct aka_ssh_gpus g, const struct aka_ssh_remote *r,
                              int *gpu)
{
    char *end;
    long idx = strtol(v, &end, 10);
    *gpu = g.first + (int)r->gpu_uuids.n;
    return end != v && *end == ' ' && (int)r->gpu_uuids.n < g.n && idx == *gpu ? end + 1 : NULL;
}

/* "<index> GPU-<uuid>, <MIG mode>" as the probe prints nvidia-smi's answer. */
static int parse_gpu(const char *line, struct aka_ssh_gpus g, struct aka_ssh_remote *r,
                     struct aka_err *err)
{
    int gpu;
    const char *v = gpu_answer(line, g, r, &gpu);
    if (!v)
        return aka_err_set(err, AKA_EXIT_ENV, "remote probe: unexpected GPU line 'gpu %s'", line);
    const char *comma = strchr(v, ',');
    const char *mode = comma ? comma + 1 + strspn(comma + 1, " ") : "";
    if (!comma || !uuid_shape(v, (size_t)(comma - v)))
        return aka_err_set(err, AKA_EXIT_ENV,
                           "remote nvidia-smi: GPU %d: expected 'GPU-<uuid>, <MIG mode>'; got '%s'",
                           gpu, v);
    char *uuid = aka_xstrndup(v, (size_t)(comma - v));
    strvec_push(&r->gpu_uuids, uuid);
    free(uuid);
    r->mig = strcmp(mode, "Enabled") == 0;
    if (r->mig)
        return aka_err_set(err, AKA_EXIT_ENV,
                           "remote GPU %d has MIG enabled: refused (a MIG slice is not the GPU "
                           "the campaign measures, and its device nodes are shared); disable MIG "
                           "(nvidia-smi -i %d -mig 0) or choose another --sandbox-ssh-gpu",
                           gpu, gpu);
    if (strcmp(mode, "Disabled") != 0 && strcmp(mode, "[N/A]") != 0 && strcmp(mode, "N/A") != 0)
        return aka_err_set(err, AKA_EXIT_ENV,
                           "remote nvidia-smi: GPU %d: unknown MIG mode '%s' (expected Enabled, "
                           "Disabled or [N/A]); refused",
                           gpu, mode);
    return 0;
}

/* One resolved bind: the rules again on the real path, with the remote $HOME protected. */
static int take_bind(const char *resolved, const char *spec, struct aka_ssh_remote *r,
                     struct aka_err *err)
{
    struct strbuf src = STRBUF_INIT, dst = STRBUF_INIT;
    struct strvec deny = STRVEC_INIT;
    int rc = aka_ssh_check_bind_spec(spec, &src, &dst, err);
    if (r->home.len && strcmp(r->home.buf, "/") != 0)
        strvec_push(&deny, r->home.buf);
    if (rc == 0 && !resolved)
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "--sandbox-ssh-runtime-bind %s: %s is not a directory on the remote host",
                         spec, src.buf);
    if (rc == 0 && aka_sandbox_check_bind(resolved, dst.buf, &deny, err) < 0)
        rc = aka_err_prefix(err, "--sandbox-ssh-runtime-bind %s resolves on the remote host to %s",
                            spec, resolved);
    if (rc == 0) {
        strvec_push(&r->bind_src, resolved);
        strvec_push(&r->bind_dst, dst.buf);
    }
    strbuf_release(&src);
    strbuf_release(&dst);
    strvec_clear(&deny);
    return rc;
}

static int parse_line(const char *key, const char *v, struct aka_ssh_gpus g,
                      const struct strvec *specs, struct aka_ssh_remote *r, struct aka_err *err)
{
    size_t nb = r->bind_src.n;
    if (strcmp(key, "missing") == 0)
        strvec_push(&r->missing, v);
    else if (strcmp(key, "dir") == 0 && v[0] == '/' && !r->dir.len)
        strbuf_addstr(&r->dir, v);
    else if (strcmp(key, "id") == 0 && parse_id(v, r) == 0)
        return 0;
    else if (strcmp(key, "home") == 0)
        strbuf_addstr(&r->home, v);
    else if ((strcmp(key, "bind") == 0 || strcmp(key, "nobind") == 0) && specs && nb < specs->n)
        return take_bind(key[0] == 'b' ? v : NULL, specs->v[nb], r, err);
    else if (strcmp(key, "gpu") == 0)
        return parse_gpu(v, g, r, err);
    else if (strcmp(key, "gpufail") == 0)
        return aka_err_set(err, AKA_EXIT_ENV, "remote nvidia-smi cannot query GPU %s",
                           *v ? v : "(no output)");
    else if (strcmp(key, "dev") == 0)
        strvec_push(&r->dev_nodes, v);
    else
        return aka_err_set(err, AKA_EXIT_ENV, "remote probe: unexpected line '%s %s'", key, v);
    return 0;
}

/* What must be there once the whole answer is read. */
static int check_complete(const struct aka_ssh_remote *r, struct aka_ssh_gpus g,
                          const struct strvec *specs, struct aka_err *err)
{
    if (r->missing.n) {
        struct strbuf list = STRBUF_INIT;
        aka_shell_join((const char *const *)r->missing.v, r->missing.n, &list);
        aka_err_set(err, AKA_EXIT_ENV,
                    "the remote host lacks %s (install bubblewrap and coreutils/tar there)",
                    list.buf);
        strbuf_release(&list);
        return -1;
    }
    if (!r->dir.len || (specs && r->bind_src.n != specs->n))
        return aka_err_set(err, AKA_EXIT_ENV, "remote probe: incomplete answer (no %s)",
                           r->dir.len ? "answer for every runtime bind" : "job directory");
    if ((int)r->gpu_uuids.n < g.n)
        return aka_err_set(err, AKA_EXIT_ENV, "remote nvidia-smi said nothing about GPU %d",
                           g.first + (int)r->gpu_uuids.n);
    return 0;
}

int aka_ssh_probe_parse(const char *text, struct aka_ssh_gpus g, const struct strvec *bind_specs,
                        struct aka_ssh_remote *r, struct aka_err *err)
{
    struct strbuf key = STRBUF_INIT, val = STRBUF_INIT;
    int rc = 0;
    for (const char *p = text; rc == 0 && *p;) {
        size_t n = strcspn(p, "\n"), k = strcspn(p, " \n");
        strbuf_reset(&key);
        strbuf_reset(&val);
        strbuf_add(&key, p, k);
        if (k < n)
            strbuf_add(&val, p + k + 1, n - k - 1);
        rc = parse_line(key.buf, val.buf, g, bind_specs, r, err);
        p += n + (p[n] == '\n');
    }
    strbuf_release(&key);
    strbuf_release(&val);
    return rc < 0 ? -1 : check_complete(r, g, bind_specs, err);
}

/* ---- the job's remote command line --------------------------------------------------------- */

static void push3(struct strvec *a, const char *op, const char *src, const char *dst)
{
    strvec_push(a, op);
    strvec_push(a, src);
    strvec_push(a, dst);
}

/* The assigned GPUs' own nodes and NVIDIA's shared ones, as the remote /dev has them. */
static int add_gpus(const struct aka_sandbox_job *job, const struct aka_sandbox_ssh_opts *o,
                    const struct aka_ssh_remote *r, struct strvec *a, struct aka_err *err)
{
    struct aka_dev_nodes nodes;
    struct strbuf path = STRBUF_INIT;
    int ids[AKA_SBX_MAX_GPUS];
    for (int i = 0; i < job->gpu_count; i++)
        ids[i] = o->gpu + i;
    if (aka_platform_dev_nodes(AKA_VENDOR_NVIDIA, ids, (size_t)job->gpu_count, &nodes, err) < 0)
        return -1;
    for (size_t i = 0; i < nodes.n; i++) {
        bool present = strvec_find(&r->dev_nodes, nodes.v[i].name) >= 0;
        if (!present && nodes.v[i].required) {
            strbuf_release(&path);
            return aka_err_set(err, AKA_EXIT_ENV, "the remote host has no /dev/%s (GPUs %d..%d)",
                               nodes.v[i].name, o->gpu, o->gpu + job->gpu_count - 1);
        }
        if (!present)
            continue;
        aka_path_join(&path, "/dev", nodes.v[i].name);
        push3(a, "--dev-bind", path.buf, path.buf);
    }
    strbuf_release(&path);
    /* The driver's user-space libraries read PCI topology from sysfs. */
    push3(a, "--ro-bind", "/sys", "/sys");
    return 0;
}

/* env -i NAME=VALUE... timeout -k 5 T: a clean environment and a limit the remote host keeps. */
static void add_env_timeout(const struct aka_sandbox_job *job, const struct aka_ssh_remote *r,
                            const char *jobdir, struct strvec *a)
{
    struct strvec env = STRVEC_INIT;
    sbx_job_env(job, jobdir, NULL, &env);
    strvec_push(a, "env");
    strvec_push(a, "-i");
    for (size_t i = 0; i < env.n; i++)
        strvec_push(a, env.v[i]);
    if (r->gpu_uuids.n) { /* by UUID: the remote's own numbering never matters inside */
        struct strbuf list = STRBUF_INIT;
        for (size_t i = 0; i < r->gpu_uuids.n; i++)
            strbuf_addf(&list, "%s%s", i ? "," : "", r->gpu_uuids.v[i]);
        strvec_pushf(a, "CUDA_VISIBLE_DEVICES=%s", list.buf);
        strbuf_release(&list);
    }
    strvec_clear(&env);
    strvec_pushv(a, (const char *const[]){"timeout", "-k", "5", NULL});
    strvec_pushf(a, "%ld", job->timeout_s);
}

/* The init command runs in the job's own shell inside the sandbox (a module load, a venv
 * activation), so what it sets is what the job sees; when it fails the job does not run. */
static void add_init(const char *init, struct strvec *a)
{
    if (!init || !*init)
        return;
    strvec_pushv(a, (const char *const[]){"/bin/sh", "-c", NULL});
    strvec_pushf(a, "set -e\n%s\nset +e\nexec \"$@\"", init);
    strvec_push(a, "aka-init");
}

int sbx_ssh_check_job(const struct aka_sandbox_job *job, const struct aka_sandbox_ssh_opts *o,
                      struct aka_err *err)
{
    if (job->isolation != AKA_SBX_BWRAP)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--sandbox ssh runs every job under the remote host's bwrap; "
                           "isolation none is local only");
    if (job->gpu_count > 0 && o->gpu + job->gpu_count > AKA_SBX_MAX_GPUS)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "a job of %d GPUs takes the remote indices %d..%d from "
                           "--sandbox-ssh-gpu %d; the highest index is %d",
                           job->gpu_count, o->gpu, o->gpu + job->gpu_count - 1, o->gpu,
                           AKA_SBX_MAX_GPUS - 1);
    if (job->gpu_count > 0 && job->gpu_vendor != AKA_VENDOR_NVIDIA)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--sandbox ssh exposes NVIDIA GPUs only (by nvidia-smi's UUID); this "
                           "job asks for a %s GPU",
                           aka_vendor_label(job->gpu_vendor));
    return 0;
}

int aka_ssh_job_argv(const struct aka_sandbox_job *job, const struct aka_sandbox_ssh_opts *o,
                     const struct aka_ssh_remote *r, struct strvec *a, struct aka_err *err)
{
    struct strbuf jobdir = STRBUF_INIT, ctl = STRBUF_INIT;
    int rc = 0;
    if (sbx_ssh_check_job(job, o, err) < 0)
        return -1;
    aka_path_join(&jobdir, r->dir.buf, "job");
    aka_path_join(&ctl, r->dir.buf, "ctl");
    add_env_timeout(job, r, jobdir.buf, a);
    sbx_bwrap_head(a, "bwrap", false, -1, false);
    sbx_add_system_remote(a, ctl.buf);
    sbx_add_fresh(a, false);
    if (job->gpu_count > 0)
        rc = add_gpus(job, o, r, a, err);
    for (size_t i = 0; rc == 0 && i < r->bind_src.n; i++)
        push3(a, "--ro-bind", r->bind_src.v[i], r->bind_dst.v[i]);
    if (rc == 0) {
        sbx_add_jobdir(job, jobdir.buf, a);
        strvec_push(a, "--");
        add_init(o->init, a);
        for (size_t i = 0; i < job->argv.n; i++)
            strvec_push(a, job->argv.v[i]);
    }
    strbuf_release(&jobdir);
    strbuf_release(&ctl);
    return rc;
}
