/*
 * gateway.c — `aka gateway serve`: parse the flags into gateway options and serve
 * (the gateway module does the rest). No logic beyond parsing and printing.
 */
#include "cmd/cmd.h"

#include "base/error.h"
#include "base/opts.h"
#include "gateway/gateway.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: aka gateway serve [options]\n"
    "\n"
    "Serve sandbox jobs over HTTP (routes compatible with upstream's local gateway):\n"
    "clients submit eval, profile and dev jobs (aka ... --sandbox gateway --sandbox-url\n"
    "URL), FIFO workers run each through the local Bubblewrap sandbox on their own\n"
    "GPUs, and jobs persist in SQLite across restarts. Every /v1 route needs the bearer\n"
    "token (created 0600 in the state directory at the first start). See docs/gateway.md.\n"
    "\n";

static const char notes_text[] =
    "\n"
    "exit status: 0 after SIGINT/SIGTERM (running jobs fail with reason\n"
    "scheduler_stopped; queued jobs stay queued); 2 for a bad flag, a non-loopback\n"
    "--listen without --allow-remote, or a token file others can read; 75 when the\n"
    "state directory is held by another gateway or the address cannot be bound.\n";

struct serve_opts {
    struct aka_gateway_opts g;
    const char *listen, *gpus, *isolation;
    long request_mb, output_mb;
    bool help;
};

static const char *const isolations[] = {"bwrap", "none", NULL};

#define OFF(f) offsetof(struct serve_opts, f)

static const struct aka_opt flags[] = {
    {.name = "--listen",
     .off = OFF(listen),
     .def = "127.0.0.1:8000",
     .metavar = "HOST:PORT",
     .help = "address to listen on (port 0: any free port, written to STATE/listen)"},
    {.name = "--state-dir",
     .off = OFF(g.state_dir),
     .metavar = "DIR",
     .help = "jobs.db, token, job directories (default $XDG_STATE_HOME/aka/gateway)"},
    {.name = "--work-dir",
     .off = OFF(g.work_dir),
     .metavar = "DIR",
     .help = "job inputs and sandbox stages (its jobs/ and stage/ are emptied at start; "
             "default STATE/work; a tmpfs is faster)"},
    {.name = "--token-file",
     .off = OFF(g.token_file),
     .metavar = "FILE",
     .help = "the bearer token (created 0600 when missing; default STATE/token)"},
    {.name = "--workers",
     .off = OFF(g.workers),
     .kind = AKA_OPT_INT,
     .lo = 1,
     .hi = AKA_GW_MAX_WORKERS,
     .def = "1",
     .metavar = "N",
     .help = "FIFO workers, each running one job at a time"},
    {.name = "--gpus",
     .off = OFF(gpus),
     .metavar = "LIST",
     .help = "GPU indices split evenly over the workers, e.g. 0,1,2,3 (default: none, CPU "
             "jobs only)"},
    {.name = "--gpu-alias",
     .off = OFF(g.aliases),
     .kind = AKA_OPT_LIST,
     .metavar = "NAME",
     .help = "a GPU token accepted in spec.target_hardware besides 'local'"},
    {.name = "--max-request-mb",
     .off = OFF(request_mb),
     .kind = AKA_OPT_LONG,
     .lo = 1,
     .hi = 4096,
     .def = "32",
     .metavar = "MB",
     .help = "largest request body (413 beyond)"},
    {.name = "--max-output-mb",
     .off = OFF(output_mb),
     .kind = AKA_OPT_LONG,
     .lo = 1,
     .hi = 4096,
     .def = "32",
     .metavar = "MB",
     .help = "stdout + stderr + artifacts one job may bring back"},
    {.name = "--allow-remote",
     .off = OFF(g.allow_remote),
     .kind = AKA_OPT_BOOL,
     .help = "listen on a non-loopback address"},
    {.name = "--atrex-bench-version",
     .off = OFF(g.bench_version),
     .metavar = "V",
     .help = "the evaluator runtime this gateway serves: requests pinning another are refused"},
    {.name = "--sandbox-isolation",
     .off = OFF(isolation),
     .kind = AKA_OPT_CHOICE,
     .choices = isolations,
     .def = "bwrap",
     .metavar = "M",
     .help = "bwrap, or none (no isolation; recorded in every result)"},
    {.name = NULL},
};

/* HOST:PORT or [V6]:PORT. */
static int split_listen(struct serve_opts *o, char *host, size_t n, struct aka_err *err)
{
    const char *s = o->listen, *colon = strrchr(s, ':');
    char *end;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;
    if (!colon || colon == s || !colon[1] || *end || port < 0 || port > 65535)
        return aka_err_set(err, AKA_EXIT_USAGE, "--listen: expected HOST:PORT; got '%s'", s);
    size_t len = (size_t)(colon - s);
    if (s[0] == '[' && colon[-1] == ']') {
        s++;
        len -= 2;
    }
    if (len >= n)
        return aka_err_set(err, AKA_EXIT_USAGE, "--listen: host too long");
    snprintf(host, n, "%.*s", (int)len, s);
    o->g.host = host;
    o->g.port = (int)port;
    return 0;
}

static void split_gpus(const char *list, struct strvec *out)
{
    const char *p = list;
    while (p && *p) {
        size_t n = strcspn(p, ",");
        char *one = aka_xstrndup(p, n);
        strvec_push(out, one);
        free(one);
        p += n + (p[n] == ',');
    }
}

static int cmd_serve(int argc, char **argv)
{
    struct serve_opts o;
    struct aka_err err = AKA_ERR_INIT;
    char host[256];
    memset(&o, 0, sizeof(o));
    struct aka_opt_group groups[] = {{flags, &o, NULL, "options", false}, {0}};
    static const struct aka_opt_doc doc = {"gateway serve", usage_text, notes_text};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups, .help = &o.help};
    int rc = aka_opts_parse(&c, argc, argv, 2, &err);
    if (rc == 0 && !o.help && split_listen(&o, host, sizeof(host), &err) == 0) {
        split_gpus(o.gpus, &o.g.gpus);
        o.g.max_request = (size_t)o.request_mb << 20;
        o.g.max_output = (size_t)o.output_mb << 20;
        o.g.isolation_none = !strcmp(o.isolation, "none");
        rc = aka_gateway_serve(&o.g, &err) < 0 ? aka_err_report(&err) : 0;
    } else {
        rc = rc < 0 || !o.help ? aka_err_report(&err) : 0;
    }
    strvec_clear(&o.g.gpus);
    strvec_clear(&o.g.aliases);
    return rc;
}

int cmd_gateway(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    static const char *const subs[] = {"serve", NULL};
    struct aka_err err = AKA_ERR_INIT;
    (void)ctx;
    if (aka_opts_subcommand("gateway", subs, argc, argv, &err) < 0)
        return aka_err_report(&err);
    return cmd_serve(argc, argv);
}
