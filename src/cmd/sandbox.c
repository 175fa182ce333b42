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

#include <errno.h>
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
    "\n"
    "options:\n"
    "  --input PATH[=DEST]     ship a file, or a directory recursively (regular files\n"
    "                          only; .git, .aka, memory, credentials, ... are never\n"
    "                          shipped); DEST defaults to PATH's name, '.' = job root\n"
    "  --ro-input PATH[=DEST]  the same, but immutable inside the job\n"
    "  --sync PATH             bring PATH (relative to the job dir) back after the run\n"
    "                          into --artifact-dir; '..', absolute paths and symlinks\n"
    "                          are refused\n"
    "  --artifact-dir DIR      where --sync paths land (default: the current directory)\n"
    "  -e, --env NAME=VALUE    add to the job's clean environment\n"
    "  --timeout S             wall-clock limit in seconds (default 600)\n"
    "  --gpus N                expose N GPUs (/dev/nvidia0..N-1 only; default 0)\n"
    "  --runtime-bind SRC[=DST]  bind a host directory read-only (a Python env or\n"
    "                          toolkit outside /usr); homes, /etc, /root, credential\n"
    "                          dirs and broad roots are refused\n"
    "  --kind K                run, profile, check or dev (default dev)\n"
    "  --stdout-cap BYTES      stdout bytes kept (default 4 MiB); --stderr-cap likewise\n"
    "  --pids-max N            process/thread limit through a pids cgroup when the host\n"
    "                          has one (default 4096; 0: none)\n"
    "  --json                  print the result as one JSON object instead of the output\n"
    "  --dry-run               print the bwrap command line that would run, run nothing\n"
    "  -v, --verbose           also print the job's notes on stderr\n"
    "\n"
    "exit status: the command's; 124 on timeout; 2 when the job is refused (bad\n"
    "path, never-shipped file, unsafe bind, an --input inside .aka/, memory/ or\n"
    ".git/); 75 when the environment cannot run it (bwrap missing or broken, GPU\n"
    "node absent, --sandbox-tmp unusable, a transport this build does not have\n"
    "yet); 130/143 on SIGINT/SIGTERM (the job's processes are ended and its\n"
    "directories removed).\n"
    "\n"
    "transport (the same flags as aka eval and aka optimize):\n";

struct run_opts {
    struct aka_sandbox_job job;
    struct aka_transport_opts transport;
    struct strvec skipped;
    bool json, dry_run, verbose;
};

static int parse_long(const char *flag, const char *s, long lo, long hi, long *out,
                      struct aka_err *err)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: expected an integer in %ld..%ld; got '%s'",
                           flag, lo, hi, s);
    *out = v;
    return 0;
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

static int add_input(struct run_opts *o, const char *arg, bool ro, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    const char *dest;
    split_input(arg, &path, &dest);
    int rc = aka_sandbox_job_add_input(&o->job, path.buf, dest, ro, &o->skipped, err);
    if (rc < 0)
        aka_err_prefix(err, "--input %s", arg);
    strbuf_release(&path);
    return rc;
}

/* Numeric flags; returns 1 when `flag` was one of them, -1 on a bad value, 0 otherwise. */
static int number_flag(struct aka_sandbox_job *j, const char *flag, const char *v,
                       struct aka_err *err)
{
    long n = 0;
    if (!strcmp(flag, "--timeout"))
        return parse_long(flag, v, 1, AKA_SBX_MAX_TIMEOUT_S, &j->timeout_s, err) < 0 ? -1 : 1;
    if (!strcmp(flag, "--pids-max"))
        return parse_long(flag, v, 0, 1 << 22, &j->pids_max, err) < 0 ? -1 : 1;
    if (!strcmp(flag, "--gpus")) {
        if (parse_long(flag, v, 0, AKA_SBX_MAX_GPUS, &n, err) < 0)
            return -1;
        j->gpu_count = (int)n;
        return 1;
    }
    bool out = !strcmp(flag, "--stdout-cap");
    if (!out && strcmp(flag, "--stderr-cap"))
        return 0;
    if (parse_long(flag, v, 1, 1L << 30, &n, err) < 0)
        return -1;
    *(out ? &j->stdout_cap : &j->stderr_cap) = (size_t)n;
    return 1;
}

/* Flags that take a value; returns 1 when `flag` was one of them. */
static int value_flag(struct run_opts *o, const char *flag, const char *v, struct aka_err *err)
{
    struct aka_sandbox_job *j = &o->job;
    if (!strcmp(flag, "--input") || !strcmp(flag, "--ro-input"))
        return add_input(o, v, !strcmp(flag, "--ro-input"), err) < 0 ? -1 : 1;
    if (!strcmp(flag, "--sync"))
        return aka_sandbox_job_add_artifact(j, v, err) < 0 ? -1 : 1;
    if (!strcmp(flag, "-e") || !strcmp(flag, "--env"))
        return aka_sandbox_job_add_env(j, v, err) < 0 ? -1 : 1;
    if (!strcmp(flag, "--runtime-bind"))
        return aka_sandbox_job_add_bind(j, v, err) < 0 ? -1 : 1;
    if (!strcmp(flag, "--kind"))
        return aka_sandbox_kind_parse(v, &j->kind) == 0
                   ? 1
                   : aka_err_set(err, AKA_EXIT_USAGE,
                                 "--kind: expected run, profile, check or dev; got '%s'", v);
    if (!strcmp(flag, "--artifact-dir")) {
        free(j->artifact_dir);
        j->artifact_dir = aka_xstrdup(v);
        return 1;
    }
    return number_flag(j, flag, v, err);
}

static bool bool_flag(struct run_opts *o, const char *flag)
{
    if (!strcmp(flag, "--json"))
        return (o->json = true);
    if (!strcmp(flag, "--dry-run"))
        return (o->dry_run = true);
    if (!strcmp(flag, "-v") || !strcmp(flag, "--verbose"))
        return (o->verbose = true);
    return false;
}

/* Split "--flag=value"; returns the value or NULL. */
static const char *inline_value(const char *arg, struct strbuf *flag)
{
    const char *eq = arg[0] == '-' && arg[1] == '-' ? strchr(arg, '=') : NULL;
    strbuf_reset(flag);
    strbuf_add(flag, arg, eq ? (size_t)(eq - arg) : strlen(arg));
    return eq ? eq + 1 : NULL;
}

static int parse_one(struct run_opts *o, int argc, char **argv, int *i, struct aka_err *err)
{
    int rc = aka_transport_opts_parse_one(&o->transport, argc, argv, i, err);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    struct strbuf flag = STRBUF_INIT;
    const char *v = inline_value(argv[*i], &flag);
    if (!v && bool_flag(o, flag.buf))
        goto out;
    if (!v && *i + 1 < argc)
        v = argv[++*i];
    rc = v ? value_flag(o, flag.buf, v, err) : 0;
    if (rc == 0)
        rc = aka_err_set(err, AKA_EXIT_USAGE, "unknown option or missing value: '%s'", flag.buf);
    rc = rc < 0 ? -1 : 0;
out:
    strbuf_release(&flag);
    return rc;
}

static int parse_run(struct run_opts *o, int argc, char **argv, struct aka_err *err)
{
    int i = 2;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (argv[i][0] != '-')
            break;
        if (parse_one(o, argc, argv, &i, err) < 0)
            return -1;
    }
    for (; i < argc; i++)
        strvec_push(&o->job.argv, argv[i]);
    if (!o->job.argv.n)
        return aka_err_set(err, AKA_EXIT_USAGE, "no command given (aka sandbox run -- CMD ...)");
    if (o->job.artifacts.n && !o->job.artifact_dir)
        o->job.artifact_dir = aka_xstrdup(".");
    return aka_transport_opts_validate(&o->transport, NULL, err);
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

static int cmd_sandbox_run(int argc, char **argv)
{
    struct run_opts o;
    struct aka_err err = AKA_ERR_INIT;
    int rc;
    memset(&o, 0, sizeof(o));
    aka_sandbox_job_init(&o.job, AKA_SBX_DEV);
    aka_transport_opts_init(&o.transport);
    for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage_text, stdout);
            aka_transport_opts_print_help(stdout);
            aka_sandbox_job_release(&o.job);
            return 0;
        }
    if (parse_run(&o, argc, argv, &err) < 0) {
        rc = aka_err_report(&err);
        fputs("(see 'aka sandbox run --help')\n", stderr);
    } else {
        rc = o.dry_run ? dry_run(&o, &err) : run_job(&o);
    }
    aka_sandbox_job_release(&o.job);
    aka_transport_opts_release(&o.transport);
    strvec_clear(&o.skipped);
    return rc;
}

int cmd_sandbox(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    (void)ctx;
    if (argc >= 2 && strcmp(argv[1], "run") == 0)
        return cmd_sandbox_run(argc, argv);
    if (argc >= 2 &&
        (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
        fputs(usage_text, stdout);
        return 0;
    }
    fputs(usage_text, stderr);
    if (argc >= 2)
        fprintf(stderr, "\naka sandbox: unknown subcommand '%s'\n", argv[1]);
    return AKA_EXIT_USAGE;
}
