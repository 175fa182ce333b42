/*
 * host.c — the doctor's checks of this host: Bubblewrap (a real sandbox job), git, the
 * coding CLIs and their credentials on disk, the asset tree, the GPU, its driver and
 * MIG, the runtime pins, and the local transport's temp directory.
 */
#include "doctor/doctor.h"

#include "base/fs.h"
#include "contracts/pins.h"
#include "platform/platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIX_BWRAP                                                                                  \
    "install bubblewrap (Debian/Ubuntu: apt install bubblewrap; Fedora/RHEL: dnf install "         \
    "bubblewrap); without it only --sandbox-isolation none runs, with no isolation"
#define FIX_USERNS                                                                                 \
    "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; Ubuntu "       \
    "24.04: kernel.apparmor_restrict_unprivileged_userns=0) or install bwrap setuid"

static void check_bwrap(struct aka_doctor_report *r)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    if (aka_sandbox_selftest(&path, &err) == 0)
        aka_doctor_add(r, "bwrap", AKA_DOCTOR_OK, NULL,
                       "%s; a sandbox job ran (user namespaces usable)", path.buf);
    else if (!path.len)
        aka_doctor_add(r, "bwrap", AKA_DOCTOR_FAIL, FIX_BWRAP,
                       "bubblewrap (bwrap) not found in PATH");
    else
        aka_doctor_add(r, "bwrap", AKA_DOCTOR_FAIL, FIX_USERNS, "%s", err.msg);
    strbuf_release(&path);
}

static void check_git(struct aka_doctor_report *r)
{
    struct strbuf out = STRBUF_INIT;
    int rc = aka_doctor_exec((const char *const[]){"git", "--version", NULL}, 20, &out, NULL);
    strbuf_trim(&out);
    if (rc == 0)
        aka_doctor_add(r, "git", AKA_DOCTOR_OK, NULL, "%s", out.buf);
    else
        aka_doctor_add(r, "git", AKA_DOCTOR_FAIL,
                       "install git (campaigns are git repositories; agents work in worktrees)",
                       "git not found in PATH (or it failed)");
    strbuf_release(&out);
}

/* The coding CLIs aka drives, and where each keeps its login (NULL: not checkable offline). */
static const struct cli {
    const char *id, *bin, *cred_file, *cred_env;
} clis[] = {
    {"claude", "claude", ".claude/.credentials.json", "ANTHROPIC_API_KEY"},
    {"codex", "codex", ".codex/auth.json", "OPENAI_API_KEY"},
    {"qodercli", "qodercli", NULL, NULL},
    {"pi", "pi", NULL, NULL},
};

static void check_login(const struct cli *c, const char *where, struct aka_doctor_report *r)
{
    struct strbuf file = STRBUF_INIT, fix = STRBUF_INIT;
    const char *home = getenv("HOME");
    const char *env = c->cred_env ? getenv(c->cred_env) : NULL;
    if (c->cred_file && home)
        aka_path_join(&file, home, c->cred_file);
    if (!c->cred_file)
        aka_doctor_add(r, c->id, AKA_DOCTOR_OK, NULL, "%s; login not checked (no offline check)",
                       where);
    else if ((env && *env) || aka_is_file(file.buf))
        aka_doctor_add(r, c->id, AKA_DOCTOR_OK, NULL,
                       "%s; credentials found (%s), not verified online", where,
                       env && *env ? c->cred_env : file.buf);
    else {
        strbuf_addf(&fix, "log in once by running %s (or set %s)", c->bin, c->cred_env);
        aka_doctor_add(r, c->id, AKA_DOCTOR_WARN, fix.buf, "%s; no credentials in ~/%s or $%s",
                       where, c->cred_file, c->cred_env);
    }
    strbuf_release(&file);
    strbuf_release(&fix);
}

static void check_agents(const char *agent, struct aka_doctor_report *r)
{
    struct strbuf path = STRBUF_INIT, fix = STRBUF_INIT;
    if (!agent || strcmp(agent, "builtin") == 0)
        aka_doctor_add(r, "builtin", AKA_DOCTOR_OK, NULL, "the built-in tuner (part of aka)");
    for (size_t i = 0; i < sizeof(clis) / sizeof(clis[0]); i++) {
        const struct cli *c = &clis[i];
        if (agent && strcmp(agent, c->id) != 0)
            continue;
        if (aka_sandbox_find_program(c->bin, &path) == 0) {
            check_login(c, path.buf, r);
            continue;
        }
        strbuf_reset(&fix);
        strbuf_addf(&fix, "install %s, or choose another with --agent-cli (builtin needs nothing)",
                    c->bin);
        /* Named for the campaign: it cannot start without it. Otherwise only one of several. */
        aka_doctor_add(r, c->id, agent ? AKA_DOCTOR_FAIL : AKA_DOCTOR_WARN, fix.buf,
                       "%s not found in PATH", c->bin);
    }
    strbuf_release(&path);
    strbuf_release(&fix);
}

static void check_assets(const char *repo_root, struct aka_doctor_report *r)
{
    struct strbuf h = STRBUF_INIT;
    aka_path_join(&h, repo_root ? repo_root : ".", "runtime");
    if (repo_root && aka_is_dir(h.buf))
        aka_doctor_add(r, "asset tree", AKA_DOCTOR_OK, NULL, "%s", repo_root);
    else
        aka_doctor_add(r, "asset tree", AKA_DOCTOR_FAIL,
                       "pass --repo-root DIR or set ATREX_AKA_HOME to the tree holding runtime/",
                       "no runtime/ (the evaluator's assets) under %s",
                       repo_root ? repo_root : "(none)");
    strbuf_release(&h);
}

/* MIG from nvidia-smi's "index, name, driver, mig" lines. */
static void check_mig(const char *csv, struct aka_doctor_report *r)
{
    struct strbuf on = STRBUF_INIT;
    for (const char *p = csv; *p;) {
        size_t n = strcspn(p, "\n");
        if (n >= 9 && strncmp(p + n - 9, ", Enabled", 9) == 0)
            strbuf_addf(&on, "%s%d", on.len ? ", " : "", atoi(p));
        p += n + (p[n] == '\n');
    }
    if (on.len)
        aka_doctor_add(r, "MIG", AKA_DOCTOR_WARN,
                       "measure on a whole GPU: nvidia-smi -i N -mig 0 (the ssh transport "
                       "refuses a MIG GPU)",
                       "MIG enabled on GPU %s", on.buf);
    else
        aka_doctor_add(r, "MIG", AKA_DOCTOR_OK, NULL, "disabled or not supported on every GPU");
    strbuf_release(&on);
}

static void check_nvidia(const char *smi, struct aka_doctor_report *r)
{
    struct strbuf out = STRBUF_INIT, err_out = STRBUF_INIT;
    struct aka_dev_nodes nodes;
    struct aka_err err = AKA_ERR_INIT;
    int zero = 0;
    int rc = aka_doctor_exec((const char *const[]){smi,
                                                   "--query-gpu=index,name,driver_version,"
                                                   "mig.mode.current",
                                                   "--format=csv,noheader", NULL},
                             30, &out, &err_out);
    if (rc != 0) {
        aka_doctor_add(r, "GPU", AKA_DOCTOR_FAIL,
                       "check the driver: nvidia-smi must list the GPUs (reboot after a driver "
                       "update; dmesg for Xid errors)",
                       "nvidia-smi failed: %s", err_out.len ? err_out.buf : out.buf);
    } else if (aka_platform_dev_nodes(AKA_VENDOR_NVIDIA, &zero, 1, &nodes, &err) < 0 ||
               aka_platform_check_nodes(AKA_VENDOR_NVIDIA, NULL, &nodes, &err) < 0) {
        aka_doctor_add(r, "GPU", AKA_DOCTOR_FAIL,
                       "load the driver's device nodes (nvidia-modprobe)", "%s", err.msg);
    } else {
        size_t n = 0;
        for (const char *p = out.buf; *p; p++)
            n += *p == '\n';
        aka_doctor_add(r, "GPU", AKA_DOCTOR_OK, NULL, "%zu NVIDIA GPU(s): %s", n, out.buf);
        check_mig(out.buf, r);
    }
    strbuf_release(&out);
    strbuf_release(&err_out);
}

static void check_gpu(struct aka_doctor_report *r)
{
    struct strbuf path = STRBUF_INIT, out = STRBUF_INIT;
    if (aka_sandbox_find_program("nvidia-smi", &path) == 0)
        check_nvidia(path.buf, r);
    else if (aka_sandbox_find_program("rocm-smi", &path) == 0) {
        int rc = aka_doctor_exec((const char *const[]){path.buf, "--showproductname", NULL}, 30,
                                 &out, NULL);
        aka_doctor_add(r, "GPU", rc == 0 ? AKA_DOCTOR_OK : AKA_DOCTOR_FAIL,
                       rc == 0 ? NULL : "check the ROCm driver: rocm-smi must list the GPUs",
                       "AMD GPU(s) (%s: %s)", path.buf, rc == 0 ? "answers" : "failed");
    } else
        aka_doctor_add(r, "GPU", AKA_DOCTOR_WARN,
                       "install the GPU driver (nvidia-smi or rocm-smi), or run --platform cpu "
                       "campaigns only",
                       "no nvidia-smi or rocm-smi in PATH: only --platform cpu runs here");
    strbuf_release(&path);
    strbuf_release(&out);
}

static void check_pins(struct aka_doctor_report *r)
{
    struct aka_runtime_pins pins;
    struct aka_err err = AKA_ERR_INIT;
    memset(&pins, 0, sizeof(pins));
    if (aka_runtime_pins_from_env(&pins, &err) < 0)
        aka_doctor_add(r, "runtime pins", AKA_DOCTOR_FAIL,
                       "fix or unset " AKA_ENV_REQUIREMENTS_FILE " / " AKA_ENV_BENCH_VERSION, "%s",
                       err.msg);
    else if (!pins.bench_version && !pins.requirements_file)
        aka_doctor_add(r, "runtime pins", AKA_DOCTOR_OK, NULL,
                       "not pinned (" AKA_ENV_BENCH_VERSION ", " AKA_ENV_REQUIREMENTS_FILE
                       " unset)");
    else
        aka_doctor_add(r, "runtime pins", AKA_DOCTOR_OK, NULL,
                       "bench version %s, %zu requirement(s) from %s",
                       pins.bench_version ? pins.bench_version : "(none)", pins.requirements.n,
                       pins.requirements_file ? pins.requirements_file : "(no file)");
    aka_runtime_pins_release(&pins);
}

void aka_doctor_host_checks(const struct aka_doctor_opts *o, struct aka_doctor_report *r)
{
    struct aka_err err = AKA_ERR_INIT;
    check_bwrap(r);
    check_git(r);
    check_agents(o->agent, r);
    check_assets(o->repo_root, r);
    check_gpu(r);
    check_pins(r);
    if (o->transport->kind != AKA_TRANSPORT_LOCAL)
        return;
    if (aka_sandbox_check_tmp(o->transport->tmp, &err) < 0)
        aka_doctor_add(r, "job directories", AKA_DOCTOR_FAIL,
                       "give --sandbox-tmp DIR on a writable, exec-allowed file system", "%s",
                       err.msg);
    else
        aka_doctor_add(r, "job directories", AKA_DOCTOR_OK, NULL, "%s",
                       o->transport->tmp ? o->transport->tmp : "$TMPDIR or /tmp");
}
