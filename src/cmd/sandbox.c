/*
 * sandbox.c — `aka sandbox run`: parse flags into a sandbox job (the transport
 * flags from sandbox.h's shared table), run it through the transport they open,
 * print the command's output (or the result as JSON) and exit with the command's
 * status. No logic beyond parsing and printing.
 */
#include "cmd/cmd.h"

#include "base/error.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/proc.h"
#include "sandbox/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage_text[] =
    "usage: aka sandbox run [options] -- CMD [ARG...]\n"
    "\n"
    "Run CMD as a sandbox job: a fresh job directory holding only the files you\n"
    "ship, inside Bubblewrap with every namespace unshared (no network, no host\n"
    "processes, no capabilities), a read-only system, a clean environment, and a\n"
    "wall-clock limit. Prints the command's stdout/stderr and exits with its status\n"
    "(124 when the time limit ends it).\n"
    "\n";

static const char notes_text[] =
    "\n"
    "exit status: the command's; 124 on timeout; 2 when the job is refused (bad\n"
    "path, never-shipped file, unsafe bind, an --input inside .aka/, memory/ or\n"
    ".git/); 75 when the environment cannot run it (bwrap missing or broken, GPU\n"
    "node absent, --sandbox-tmp unusable, a transport this build does not have\n"
    "yet); 130/143 on SIGINT/SIGTERM (the job's processes are ended and its\n"
    "directories removed).\n";

struct run_opts {
    struct aka_sandbox_job job;
    struct aka_transport_opts transport;
    struct strvec skipped;
    struct strvec inputs, ro_inputs, syncs, envs, binds;
    const char *kind, *artifact_dir;
    long stdout_cap, stderr_cap;
    bool json, dry_run, verbose, help;
};

static const char *const kinds[] = {"run", "profile", "check", "dev", NULL};

/* The defaults below are sandbox.h's, spelled as they are typed. */
_Static_assert(AKA_SBX_DEFAULT_TIMEOUT_S == 600, "--timeout's default");
_Static_assert(AKA_SBX_DEFAULT_OUT_CAP == 4194304, "--stdout-cap's default");
_Static_assert(AKA_SBX_DEFAULT_PIDS_MAX == 4096, "--pids-max's default");

#define OFF(f) offsetof(struct run_opts, f)

static const struct aka_opt flags[] = {
    {.name = "--input",
     .off = OFF(inputs),
     .kind = AKA_OPT_LIST,
     .metavar = "PATH[=DEST]",
     .help = "ship a file, or a directory recursively (regular files only; .git, .aka, "
             "memory, credentials, ... are never shipped); DEST defaults to PATH's name, "
             "'.' = job root"},
    {.name = "--ro-input",
     .off = OFF(ro_inputs),
     .kind = AKA_OPT_LIST,
     .metavar = "PATH[=DEST]",
     .help = "the same, but immutable inside the job"},
    {.name = "--sync",
     .off = OFF(syncs),
     .kind = AKA_OPT_LIST,
     .metavar = "PATH",
     .help = "bring PATH (relative to the job dir) back after the run into --artifact-dir; "
             "'..', absolute paths and symlinks are refused"},
    {.name = "--artifact-dir",
     .off = OFF(artifact_dir),
     .metavar = "DIR",
     .help = "where --sync paths land (default: the current directory)"},
    {.name = "--env",
     .alias = "-e",
     .off = OFF(envs),
     .kind = AKA_OPT_LIST,
     .metavar = "NAME=VALUE",
     .help = "add to the job's clean environment"},
    {.name = "--timeout",
     .off = OFF(job.timeout_s),
     .kind = AKA_OPT_LONG,
     .lo = 1,
     .hi = AKA_SBX_MAX_TIMEOUT_S,
     .def = "600",
     .metavar = "S",
     .help = "wall-clock limit in seconds"},
    {.name = "--gpus",
     .off = OFF(job.gpu_count),
     .kind = AKA_OPT_INT,
     .lo = 0,
     .hi = AKA_SBX_MAX_GPUS,
     .def = "0",
     .metavar = "N",
     .help = "expose N GPUs (/dev/nvidia0..N-1 only)"},
    {.name = "--runtime-bind",
     .off = OFF(binds),
     .kind = AKA_OPT_LIST,
     .metavar = "SRC[=DST]",
     .help = "bind a host directory read-only (a Python env or toolkit outside /usr); "
             "homes, /etc, /root, credential dirs and broad roots are refused"},
    {.name = "--kind",
     .off = OFF(kind),
     .kind = AKA_OPT_CHOICE,
     .choices = kinds,
     .def = "dev",
     .metavar = "K",
     .help = "the job's kind"},
    {.name = "--stdout-cap",
     .off = OFF(stdout_cap),
     .kind = AKA_OPT_LONG,
     .lo = 1,
     .hi = 1L << 30,
     .def = "4194304",
     .metavar = "BYTES",
     .help = "stdout bytes kept"},
    {.name = "--stderr-cap",
     .off = OFF(stderr_cap),
     .kind = AKA_OPT_LONG,
     .lo = 1,
     .hi = 1L << 30,
     .def = "4194304",
     .metavar = "BYTES",
     .help = "stderr bytes kept"},
    {.name = "--pids-max",
     .off = OFF(job.pids_max),
     .kind = AKA_OPT_LONG,
     .lo = 0,
     .hi = 1 << 22,
     .def = "4096",
     .metavar = "N",
     .help = "process/thread limit through a pids cgroup when the host has one (0: none)"},
    {.name = "--json",
     .off = OFF(json),
     .kind = AKA_OPT_BOOL,
     .help = "print the result as one JSON object instead of the output"},
    {.name = "--dry-run",
     .off = OFF(dry_run),
     .kind = AKA_OPT_BOOL,
     .help = "print the bwrap command line that would run, run nothing"},
    {.name = "--verbose",
     .alias = "-v",
     .off = OFF(verbose),
     .kind = AKA_OPT_BOOL,
     .help = "also print the job's notes on stderr"},
    {.name = NULL},
};

/* Its own flags, then the transport's; the first argument that is not a flag (or
 * everything after "--") is the command. groups must have room for three. */
static void command(struct run_opts *o, struct aka_opt_group *groups, struct aka_opt_cmd *c)
{
    groups[0] = (struct aka_opt_group){flags, o, NULL, "options", false};
    groups[1] = aka_transport_opts_group(&o->transport,
                                         "transport (the same flags as aka eval and aka optimize)");
    groups[2] = (struct aka_opt_group){0};
    static const struct aka_opt_doc doc = {"sandbox run", usage_text, notes_text};
    *c = (struct aka_opt_cmd){.doc = &doc,
                              .groups = groups,
                              .args = &o->job.argv,
                              .args_end_flags = true,
                              .help = &o->help};
}

/* PATH[=DEST]: an argument naming an existing path is all PATH. */
static void split_input(const char *arg, struct strbuf *path, const char **dest)
{
    const char *eq = strchr(arg, '=');
    struct stat st;
    strbuf_reset(path);
    if (!eq || lstat(arg, &st) == 0) {
        strbuf_addstr(path, arg);
        *dest = NULL;
        return;
    }
    strbuf_add(path, arg, (size_t)(eq - arg));
    *dest = eq + 1;
}

static int add_inputs(struct run_opts *o, const struct strvec *list, bool ro, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    const char *dest;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < list->n; i++) {
        split_input(list->v[i], &path, &dest);
        rc = aka_sandbox_job_add_input(&o->job, path.buf, dest, ro, &o->skipped, err);
        if (rc < 0)
            aka_err_prefix(err, "--input %s", list->v[i]);
    }
    strbuf_release(&path);
    return rc;
}

/* The parsed values into the job (each kind of value checked by the job model). */
static int build_job(struct run_opts *o, struct aka_err *err)
{
    struct aka_sandbox_job *j = &o->job;
    if (add_inputs(o, &o->inputs, false, err) < 0 || add_inputs(o, &o->ro_inputs, true, err) < 0)
        return -1;
    for (size_t i = 0; i < o->syncs.n; i++)
        if (aka_sandbox_job_add_artifact(j, o->syncs.v[i], err) < 0)
            return -1;
    for (size_t i = 0; i < o->envs.n; i++)
        if (aka_sandbox_job_add_env(j, o->envs.v[i], err) < 0)
            return -1;
    for (size_t i = 0; i < o->binds.n; i++)
        if (aka_sandbox_job_add_bind(j, o->binds.v[i], err) < 0)
            return -1;
    aka_sandbox_kind_parse(o->kind, &j->kind); /* one of the table's choices */
    /* Run by an agent (a probe of its own): its job is nested as its `aka eval`'s are. */
    j->in_agent_sandbox = aka_sandbox_inside_agent();
    j->stdout_cap = (size_t)o->stdout_cap;
    j->stderr_cap = (size_t)o->stderr_cap;
    if (o->artifact_dir || j->artifacts.n)
        j->artifact_dir = aka_xstrdup(o->artifact_dir ? o->artifact_dir : ".");
    return 0;
}

static int parse_run(struct run_opts *o, int argc, char **argv, struct aka_err *err)
{
    struct aka_opt_group groups[3];
    struct aka_opt_cmd c;
    command(o, groups, &c);
    if (aka_opts_parse(&c, argc, argv, 2, err) < 0)
        return -1;
    if (o->help)
        return 0;
    if (!o->job.argv.n)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "sandbox run: no command given (aka sandbox run -- CMD ...)");
    if (build_job(o, err) < 0)
        return -1;
    return aka_transport_opts_validate(&o->transport, NULL, err);
}

static void print_help(FILE *out)
{
    struct run_opts o;
    struct aka_opt_group groups[3];
    struct aka_opt_cmd c;
    memset(&o, 0, sizeof(o));
    command(&o, groups, &c);
    aka_opts_print_help(&c, out);
}

static void print_notes(const struct run_opts *o, const struct aka_sandbox_result *res)
{
    const struct aka_sandbox_job *j = &o->job;
    if (res->out_truncated)
        fprintf(stderr, "aka sandbox: stdout truncated: kept %zu of %zu bytes\n", res->out.len,
                res->out_bytes);
    if (res->err_truncated)
        fprintf(stderr, "aka sandbox: stderr truncated: kept %zu of %zu bytes\n", res->err.len,
                res->err_bytes);
    if (res->timed_out)
        fprintf(stderr, "aka sandbox: timed out after %ld s\n", j->timeout_s);
    for (size_t i = 0; i < res->artifacts_refused.n; i++)
        fprintf(stderr, "aka sandbox: artifact not returned: %s\n", res->artifacts_refused.v[i]);
    if (j->isolation == AKA_SBX_NONE)
        fprintf(stderr, "aka sandbox: isolation none: the command ran without a sandbox\n");
    for (size_t i = 0; o->verbose && i < res->notes.n; i++)
        fprintf(stderr, "aka sandbox: note: %s\n", res->notes.v[i]);
}

static void print_json(const struct run_opts *o, const struct aka_sandbox_result *res)
{
    struct strbuf sb = STRBUF_INIT;
    json_t *doc = aka_sandbox_result_to_json(&o->job, res);
    aka_json_dump_compact(doc, &sb);
    printf("%s\n", sb.buf);
    json_decref(doc);
    strbuf_release(&sb);
}

/* The bwrap command line for a placeholder job directory (nothing is created). */
static int dry_run(struct run_opts *o, struct aka_err *err)
{
    struct strvec argv = STRVEC_INIT, notes = STRVEC_INIT;
    struct aka_sandbox_transport t;
    if (aka_transport_open(&o->transport, &t, err) < 0)
        return aka_err_report(err);
    o->job.isolation = t.isolation;
    if (aka_sandbox_job_validate(&o->job, err) < 0 ||
        aka_sandbox_bwrap_argv(&o->job, "bwrap", "<jobdir>", "<ctl>", &argv, &notes, err) < 0) {
        strvec_clear(&argv);
        strvec_clear(&notes);
        return aka_err_report(err);
    }
    for (size_t i = 0; i < argv.n; i++)
        printf("%s%s", i ? " " : "", argv.v[i]);
    printf("\n");
    for (size_t i = 0; i < notes.n; i++)
        fprintf(stderr, "aka sandbox: note: %s\n", notes.v[i]);
    strvec_clear(&argv);
    strvec_clear(&notes);
    return 0;
}

static int run_job(struct run_opts *o)
{
    struct aka_sandbox_transport t;
    struct aka_sandbox_result res;
    struct aka_err err = AKA_ERR_INIT;
    /* No transport, no job and no result: the error alone, also with --json. */
    if (aka_transport_open(&o->transport, &t, &err) < 0)
        return aka_err_report(&err);
    o->job.isolation = t.isolation;
    aka_sandbox_result_init(&res);
    struct strbuf where = STRBUF_INIT;
    aka_sandbox_transport_describe(&t, &where);
    strvec_pushf(&res.notes, "transport: %s", where.buf);
    strbuf_release(&where);
    /* Ctrl-C or SIGTERM ends the job's processes and removes its directories. */
    int rc = proc_catch_stop_signals(&err);
    if (rc == 0)
        rc = aka_sandbox_run(&t, &o->job, &res, &err);
    for (size_t i = 0; i < o->skipped.n; i++)
        strvec_pushf(&res.notes, "not shipped: %s", o->skipped.v[i]);
    if (o->json) {
        print_json(o, &res);
    } else if (rc == 0) {
        fwrite(res.out.buf, 1, res.out.len, stdout);
        fflush(stdout);
        fwrite(res.err.buf, 1, res.err.len, stderr);
        print_notes(o, &res);
    }
    int code = rc == 0 ? res.exit_code : o->json ? err.code : aka_err_report(&err);
    if (rc == 0 && proc_check_stop(&err) < 0) /* the signal came after the job */
        code = o->json ? err.code : aka_err_report(&err);
    aka_sandbox_result_release(&res);
    return code;
}

static void release(struct run_opts *o)
{
    aka_sandbox_job_release(&o->job);
    aka_transport_opts_release(&o->transport);
    strvec_clear(&o->skipped);
    strvec_clear(&o->inputs);
    strvec_clear(&o->ro_inputs);
    strvec_clear(&o->syncs);
    strvec_clear(&o->envs);
    strvec_clear(&o->binds);
}

static int cmd_sandbox_run(int argc, char **argv)
{
    struct run_opts o;
    struct aka_err err = AKA_ERR_INIT;
    int rc;
    memset(&o, 0, sizeof(o));
    aka_sandbox_job_init(&o.job, AKA_SBX_DEV);
    aka_transport_opts_init(&o.transport);
    if (parse_run(&o, argc, argv, &err) < 0)
        rc = aka_err_report(&err);
    else if (o.help)
        rc = 0; /* the help is printed */
    else
        rc = o.dry_run ? dry_run(&o, &err) : run_job(&o);
    release(&o);
    return rc;
}

int cmd_sandbox(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    static const char *const subs[] = {"run", "replay", NULL};
    struct aka_err err = AKA_ERR_INIT;
    (void)ctx;
    if (argc >= 2 &&
        (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
        print_help(stdout);
        return 0;
    }
    int sub = aka_opts_subcommand("sandbox", subs, argc, argv, &err);
    if (sub < 0)
        return aka_err_report(&err);
    return sub == 1 ? cmd_sandbox_replay(argc, argv) : cmd_sandbox_run(argc, argv);
}
