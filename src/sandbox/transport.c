/*
 * transport.c — the transport flags (one table for every command that runs jobs)
 * and the factory that turns them into a transport.
 *
 * Parsing stores values; validation takes the environment's values for absent
 * flags, resolves which transport the flags imply and checks every combination,
 * each failure a usage error naming the flag (or variable) to change. Opening is
 * separate: a transport this build does not have yet passes validation and is then
 * refused with exit 75 — the machine lacks it, the command line was right.
 */
#include "sandbox/internal.h"

#include "base/opts.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kinds[] = {"local", "ssh", "gateway", "slurm", NULL};
static const char *const isolations[] = {"bwrap", "none", NULL};
static const char *const profiles[] = {"pre", "prod", NULL};

#define OFF(f) offsetof(struct aka_transport_opts, f)

static const struct aka_opt flags[] = {
    {.name = "--sandbox",
     .off = OFF(sandbox),
     .kind = AKA_OPT_CHOICE,
     .choices = kinds,
     .def = "local",
     .metavar = "T",
     .help = "evaluation transport"},
    {.name = "--sandbox-isolation",
     .off = OFF(isolation),
     .kind = AKA_OPT_CHOICE,
     .choices = isolations,
     .def = "bwrap",
     .metavar = "M",
     .help = "local jobs: bwrap, or none (no isolation; recorded in every result)"},
    {.name = "--sandbox-tmp",
     .off = OFF(tmp),
     .kind = AKA_OPT_STR,
     .metavar = "DIR",
     .help = "local, slurm: where job directories are created (default $TMPDIR, else /tmp; "
             "slurm: on a filesystem the nodes share at the same path)"},
    {.name = "--sandbox-ssh",
     .off = OFF(ssh),
     .kind = AKA_OPT_STR,
     .env = "ATREX_SANDBOX_SSH",
     .metavar = "USER@HOST",
     .help = "run jobs on this host over OpenSSH (implies --sandbox ssh)"},
    {.name = "--sandbox-ssh-gpu",
     .off = OFF(ssh_gpu),
     .kind = AKA_OPT_INT,
     .lo = 0,
     .hi = AKA_SBX_MAX_GPUS - 1,
     .def = "-1",
     .env = "ATREX_SANDBOX_SSH_GPU",
     .metavar = "N",
     .help = "ssh: the remote GPU index, 0..31 (required with ssh); a job of N GPUs (a "
             "distributed operator's world_size) takes N indices from it"},
    {.name = "--sandbox-ssh-runtime-bind",
     .off = OFF(ssh_runtime_binds),
     .kind = AKA_OPT_LIST,
     .env = "ATREX_SANDBOX_SSH_RUNTIME_BINDS",
     .metavar = "SRC[=DST]",
     .help = "ssh: remote runtime directory bound read-only into jobs (repeatable; the "
             "environment variable holds a JSON array)"},
    {.name = "--sandbox-ssh-init",
     .off = OFF(ssh_init),
     .kind = AKA_OPT_STR,
     .env = "ATREX_SANDBOX_SSH_INIT",
     .metavar = "CMD",
     .help = "ssh: shell command run on the remote host before each job"},
    {.name = "--sandbox-health-command",
     .off = OFF(health_command),
     .kind = AKA_OPT_STR,
     .env = "ATREX_SANDBOX_HEALTH_COMMAND",
     .metavar = "CMD",
     .help = "local, ssh, slurm: health probe (sh -c, run as a job) replacing the default GPU and "
             "runtime probes; its failure is the machine's (exit 75)"},
    {.name = "--sandbox-url",
     .off = OFF(url),
     .kind = AKA_OPT_STR,
     .env = "ATREX_SANDBOX_URL",
     .metavar = "URL",
     .help = "gateway URL, http:// or https:// (implies --sandbox gateway)"},
    {.name = "--sandbox-profile",
     .off = OFF(profile),
     .kind = AKA_OPT_CHOICE,
     .choices = profiles,
     .env = "ATREX_SANDBOX_PROFILE",
     .metavar = "P",
     .help = "gateway endpoint profile; exclusive with --sandbox-url (implies --sandbox "
             "gateway)"},
    {.name = "--sandbox-hardware",
     .off = OFF(hardware),
     .kind = AKA_OPT_STR,
     .env = "ATREX_SANDBOX_GPU",
     .metavar = "H",
     .help = "gateway: the GPU token jobs are scheduled on (default: the platform)"},
    {.name = "--slurm-partition",
     .off = OFF(slurm_partition),
     .kind = AKA_OPT_STR,
     .metavar = "P",
     .help = "slurm: partition (required with --sandbox slurm)"},
    {.name = "--slurm-account",
     .off = OFF(slurm_account),
     .kind = AKA_OPT_STR,
     .metavar = "A",
     .help = "slurm: account"},
    {.name = "--slurm-qos",
     .off = OFF(slurm_qos),
     .kind = AKA_OPT_STR,
     .metavar = "Q",
     .help = "slurm: quality of service"},
    {.name = "--slurm-time",
     .off = OFF(slurm_time),
     .kind = AKA_OPT_STR,
     .metavar = "T",
     .help = "slurm: time limit per job"},
    {.name = NULL},
};

_Static_assert(sizeof(flags) / sizeof(flags[0]) <= AKA_TRANSPORT_MAX_FLAGS,
               "AKA_TRANSPORT_MAX_FLAGS is too small for the transport table");

/* The flags that choose a transport, and the transport each one implies. */
static const char *const selectors[][2] = {
    {"--sandbox-ssh", "ssh"}, {"--sandbox-url", "gateway"}, {"--sandbox-profile", "gateway"}};
#define N_SELECTORS (sizeof(selectors) / sizeof(selectors[0]))

void aka_transport_opts_init(struct aka_transport_opts *o)
{
    memset(o, 0, sizeof(*o));
    aka_opt_defaults(flags, o);
}

void aka_transport_opts_release(struct aka_transport_opts *o)
{
    struct strvec notes = STRVEC_INIT;
    /* A remote directory that could not be removed even now is the user's to know. */
    aka_sandbox_ssh_close(&o->opened, &notes);
    aka_sandbox_slurm_close(&o->opened);
    for (size_t i = 0; i < notes.n; i++)
        fprintf(stderr, "aka: warning: %s\n", notes.v[i]);
    strvec_clear(&notes);
    strvec_clear(&o->ssh_runtime_binds);
}

struct aka_opt_group aka_transport_opts_group(struct aka_transport_opts *o, const char *title)
{
    /* The environment is validation's: an episode forbids the variables that choose. */
    return (struct aka_opt_group){flags, o, o->given, title, true};
}

bool aka_transport_opt_given(const struct aka_transport_opts *o, const char *flag)
{
    return aka_opt_given(flags, o->given, flag);
}

static bool given(const struct aka_transport_opts *o, const char *flag)
{
    return aka_transport_opt_given(o, flag);
}

static const struct aka_opt *row(const char *flag)
{
    return aka_opt_find(flags, flag, strlen(flag));
}

/* A value is set when a flag or its environment variable gave it. */
static bool set(const struct aka_transport_opts *o, const char *flag)
{
    const struct aka_opt *f = row(flag);
    const char *v = *(const char *const *)((const char *)o + f->off);
    return v != NULL;
}

/*
 * The environment fills what the command line left open. A transport chosen on the
 * command line ignores the environment's choice of one (upstream: explicit flags win
 * over inherited ones); two chosen by the environment alone are a usage error.
 */
static int apply_env(struct aka_transport_opts *o, struct aka_err *err)
{
    bool skip[AKA_TRANSPORT_MAX_FLAGS];
    bool chosen = o->env_cannot_choose || given(o, "--sandbox");
    memcpy(skip, o->given, sizeof(skip));
    for (size_t k = 0; k < N_SELECTORS; k++)
        chosen = chosen || given(o, selectors[k][0]);
    for (size_t k = 0; chosen && k < N_SELECTORS; k++)
        skip[row(selectors[k][0]) - flags] = true;
    if (aka_opt_apply_env(flags, o, skip, err) < 0)
        return -1;
    const char *first = NULL;
    for (size_t k = 0; !chosen && k < N_SELECTORS; k++) {
        if (!set(o, selectors[k][0]))
            continue;
        if (first)
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "%s and %s are both set; they choose different transports (give "
                               "--sandbox to choose one)",
                               row(first)->env, row(selectors[k][0])->env);
        first = selectors[k][0];
    }
    return 0;
}

/* The transport the flags imply; an explicit --sandbox must agree with it. */
static int resolve_kind(struct aka_transport_opts *o, struct aka_err *err)
{
    const char *why = NULL, *implied = NULL;
    for (size_t k = 0; k < N_SELECTORS; k++) {
        if (!set(o, selectors[k][0]))
            continue;
        if (why)
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "%s and %s are mutually exclusive (--sandbox-url, --sandbox-profile "
                               "and --sandbox-ssh each choose a transport); give at most one",
                               why, selectors[k][0]);
        why = selectors[k][0];
        implied = selectors[k][1];
    }
    if (implied && given(o, "--sandbox") && strcmp(o->sandbox, implied) != 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: requires --sandbox %s; got --sandbox %s", why,
                           implied, o->sandbox);
    if (implied)
        o->sandbox = implied;
    for (int k = 0; kinds[k]; k++)
        if (strcmp(o->sandbox, kinds[k]) == 0)
            o->kind = (enum aka_transport_kind)k;
    return 0;
}

static const char *source(const struct aka_transport_opts *o, const char *flag);

/* Is transport one of the '|'-separated names of scope? */
static bool in_scope(const char *transport, const char *scope)
{
    size_t n = strlen(transport);
    for (const char *p = scope; p; p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL)
        if (strncmp(p, transport, n) == 0 && (p[n] == '|' || p[n] == '\0'))
            return true;
    return false;
}

/* Flags typed for another transport than the one chosen. */
static int check_scope(const struct aka_transport_opts *o, struct aka_err *err)
{
    static const char *const scope[][2] = {
        {"--sandbox-isolation", "local"}, {"--sandbox-tmp", "local|slurm"},
        {"--sandbox-ssh-gpu", "ssh"},     {"--sandbox-ssh-runtime-bind", "ssh"},
        {"--sandbox-ssh-init", "ssh"},    {"--sandbox-hardware", "gateway"},
        {"--slurm-partition", "slurm"},   {"--slurm-account", "slurm"},
        {"--slurm-qos", "slurm"},         {"--slurm-time", "slurm"}};
    for (size_t k = 0; k < sizeof(scope) / sizeof(scope[0]); k++)
        if (given(o, scope[k][0]) && !in_scope(o->sandbox, scope[k][1]))
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "%s: only applies to --sandbox %s; got --sandbox %s", scope[k][0],
                               scope[k][1], o->sandbox);
    /* The probe runs as a job where jobs run: on this host or on the ssh host. */
    if (given(o, "--sandbox-health-command") && o->kind != AKA_TRANSPORT_LOCAL &&
        o->kind != AKA_TRANSPORT_SSH && o->kind != AKA_TRANSPORT_SLURM)
        return aka_err_set(
            err, AKA_EXIT_USAGE,
            "--sandbox-health-command: only applies to --sandbox local, ssh or slurm; "
            "got --sandbox %s",
            o->sandbox);
    if (o->health_command && !*o->health_command)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: expected a non-empty command",
                           source(o, "--sandbox-health-command"));
    return 0;
}

/* Where a value came from, for messages: the flag, else its environment variable. */
static const char *source(const struct aka_transport_opts *o, const char *flag)
{
    return given(o, flag) ? flag : row(flag)->env;
}

static bool has_space(const char *s)
{
    for (; *s; s++)
        if (isspace((unsigned char)*s) || iscntrl((unsigned char)*s))
            return true;
    return false;
}

/* SRC[=DST] on the remote host: both absolute, no "..", no whitespace. */
static int check_runtime_bind(const struct aka_transport_opts *o, const char *spec,
                              struct aka_err *err)
{
    const char *eq = strchr(spec, '='), *dst = eq ? eq + 1 : spec;
    bool ok = spec[0] == '/' && dst[0] == '/' && !has_space(spec) && !strstr(spec, "/..") &&
              (!eq || eq > spec + 1);
    if (!ok)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: expected SRC[=DST] with absolute paths (no whitespace, no '..'); "
                           "got '%s'",
                           source(o, "--sandbox-ssh-runtime-bind"), spec);
    return 0;
}

static int check_ssh(const struct aka_transport_opts *o, struct aka_err *err)
{
    const char *t = o->ssh, *src = source(o, "--sandbox-ssh");
    if (!t || !*t)
        return aka_err_set(err, AKA_EXIT_USAGE, "--sandbox ssh: needs --sandbox-ssh USER@HOST");
    if (has_space(t))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: expected USER@HOST without whitespace; got '%s'", src, t);
    if (t[0] == '-')
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: a host may not start with '-'; got '%s'", src,
                           t);
    if (o->ssh_gpu < 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--sandbox-ssh-gpu: required with --sandbox-ssh %s (or set %s)", t,
                           row("--sandbox-ssh-gpu")->env);
    for (size_t i = 0; i < o->ssh_runtime_binds.n; i++)
        if (check_runtime_bind(o, o->ssh_runtime_binds.v[i], err) < 0)
            return -1;
    return 0;
}

/* The gateway schedules on a GPU token: --sandbox-hardware, else the platform evaluated. */
static int check_gateway(struct aka_transport_opts *o, const char *platform, struct aka_err *err)
{
    if (!o->url && !o->profile)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--sandbox gateway: needs --sandbox-url URL or --sandbox-profile P");
    if (!o->hardware && !platform)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--sandbox gateway: needs --sandbox-hardware H (the GPU token)");
    if (!o->hardware)
        o->hardware = platform;
    if (o->url && strncmp(o->url, "http://", 7) != 0 && strncmp(o->url, "https://", 8) != 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: expected an http:// or https:// URL; got '%s'",
                           source(o, "--sandbox-url"), o->url);
    if (o->hardware && (!*o->hardware || has_space(o->hardware)))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: expected a GPU token without whitespace; got '%s'",
                           source(o, "--sandbox-hardware"), o->hardware);
    return 0;
}

int aka_transport_opts_validate(struct aka_transport_opts *o, const char *platform,
                                struct aka_err *err)
{
    if (apply_env(o, err) < 0 || resolve_kind(o, err) < 0 || check_scope(o, err) < 0)
        return -1;
    if ((o->kind == AKA_TRANSPORT_LOCAL || o->kind == AKA_TRANSPORT_SLURM) && o->tmp && !*o->tmp)
        return aka_err_set(err, AKA_EXIT_USAGE, "--sandbox-tmp: expected a directory; got ''");
    if (o->kind == AKA_TRANSPORT_SSH && check_ssh(o, err) < 0)
        return -1;
    if (o->kind == AKA_TRANSPORT_GATEWAY && check_gateway(o, platform, err) < 0)
        return -1;
    if (o->kind == AKA_TRANSPORT_SLURM && (!o->slurm_partition || !*o->slurm_partition))
        return aka_err_set(err, AKA_EXIT_USAGE, "--sandbox slurm: needs --slurm-partition P");
    o->validated = true;
    return 0;
}

const char *aka_transport_kind_name(enum aka_transport_kind k)
{
    return kinds[k];
}

/* Where a remote transport would have sent the job, as validated. */
static void remote_target(const struct aka_transport_opts *o, struct strbuf *out)
{
    if (o->kind == AKA_TRANSPORT_GATEWAY && o->url)
        strbuf_addf(out, "%s, hardware %s", o->url, o->hardware);
    else if (o->kind == AKA_TRANSPORT_GATEWAY)
        strbuf_addf(out, "profile %s, hardware %s", o->profile, o->hardware);
    else
        strbuf_addf(out, "partition %s", o->slurm_partition);
}

/* The ssh transport; its connection is made by the first job and closed by release. */
static int open_ssh(struct aka_transport_opts *o, struct aka_sandbox_transport *t,
                    struct aka_err *err)
{
    o->ssh_opts = (struct aka_sandbox_ssh_opts){.target = o->ssh,
                                                .gpu = o->ssh_gpu,
                                                .init = o->ssh_init,
                                                .runtime_binds = &o->ssh_runtime_binds,
                                                .tmp_dir = NULL};
    aka_sandbox_ssh_close(&o->opened, NULL);
    if (aka_sandbox_ssh(&o->opened, &o->ssh_opts, err) < 0)
        return -1;
    *t = o->opened;
    return 0;
}

/* The slurm transport (slurm.c); its job directories go to --sandbox-tmp, which the nodes
 * must share at the same path. */
static int open_slurm(struct aka_transport_opts *o, struct aka_sandbox_transport *t,
                      struct aka_err *err)
{
    if (aka_sandbox_check_tmp(o->tmp, err) < 0)
        return -1;
    o->slurm_opts = (struct aka_sandbox_slurm_opts){.partition = o->slurm_partition,
                                                    .account = o->slurm_account,
                                                    .qos = o->slurm_qos,
                                                    .time = o->slurm_time,
                                                    .tmp_dir = o->tmp};
    aka_sandbox_slurm_close(&o->opened);
    aka_sandbox_slurm(&o->opened, &o->slurm_opts);
    o->opened.health_command = o->health_command;
    *t = o->opened;
    return 0;
}

int aka_transport_open(struct aka_transport_opts *o, struct aka_sandbox_transport *t,
                       struct aka_err *err)
{
    static const char *const issue[] = {NULL, NULL, "issue 13", "issue 13"};
    if (!o->validated && aka_transport_opts_validate(o, NULL, err) < 0)
        return -1;
    if (o->kind == AKA_TRANSPORT_SSH)
        return open_ssh(o, t, err);
    if (o->kind == AKA_TRANSPORT_GATEWAY) {
        o->gateway_opts = (struct aka_sandbox_gateway_opts){
            .url = o->url, .profile = o->profile, .hardware = o->hardware, .tmp_dir = o->tmp};
        return aka_sandbox_gateway(t, &o->gateway_opts, err);
    }
    if (o->kind == AKA_TRANSPORT_SLURM)
        return open_slurm(o, t, err);
    if (o->kind != AKA_TRANSPORT_LOCAL) {
        struct strbuf where = STRBUF_INIT;
        remote_target(o, &where);
        aka_err_set(err, AKA_EXIT_ENV,
                    "the %s transport is not built yet (%s): nothing was sent (%s). Run on "
                    "this host with --sandbox local",
                    kinds[o->kind], issue[o->kind], where.buf);
        strbuf_release(&where);
        return -1;
    }
    if (aka_sandbox_check_tmp(o->tmp, err) < 0)
        return -1;
    o->local.tmp_dir = o->tmp;
    aka_sandbox_local(t, &o->local);
    t->isolation = strcmp(o->isolation, "none") == 0 ? AKA_SBX_NONE : AKA_SBX_BWRAP;
    t->health_command = o->health_command;
    return 0;
}
