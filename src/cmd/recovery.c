/*
 * recovery.c — `aka recovery status|stop|resume [WORKSPACE] [--json]`: the recovery
 * monitor of a campaign the environment stopped (recovery/recovery.h), by hand.
 * `aka recovery monitor DIR` is the monitor itself, as aka starts it (detached).
 */
#include "recovery/recovery.h"
#include "base/json.h"
#include "base/opts.h"
#include "cmd/cmd.h"
#include "report/report.h"

#include <stdio.h>
#include <string.h>

static const char usage_text[] =
    "usage: aka recovery status|stop|resume [WORKSPACE] [--json]\n\n"
    "A campaign that ends with exit 75 (the environment, not a candidate) starts a\n"
    "detached monitor that polls the health probe and re-runs the campaign's own\n"
    "command once the machine is back (docs/recovery.md).\n\n"
    "  status     the monitor's state: phase, attempts, the last probe\n"
    "  stop       stop the monitor and the optimizer it restarted; auto-recovery stays\n"
    "             disabled until `resume` (what stop-recovery.sh runs)\n"
    "  resume     enable auto-recovery again and start the monitor (what recover.sh runs)\n"
    "  WORKSPACE  the campaign workspace (default: $ATREX_AKA_WORKSPACE, else the\n"
    "             current directory when it holds .aka/campaign.json)\n";
static const char notes_text[] =
    "\nExit status: 0 on success; 1 when stop could not end everything; 2 on a usage\n"
    "error or a workspace without recovery state.\n";

struct recovery_args {
    struct strvec words; /* the action, then WORKSPACE (or the monitor's DIR) */
    bool json;
};

#define OFF(f) offsetof(struct recovery_args, f)

static const struct aka_opt flags[] = {
    {.name = "--json", .off = OFF(json), .kind = AKA_OPT_BOOL, .help = "print JSON"},
    {.name = NULL},
};

static int parse_args(int argc, char **argv, struct recovery_args *a, struct aka_err *err)
{
    static const char *const actions[] = {"status", "stop", "resume", "monitor", NULL};
    struct aka_opt_group groups[] = {{.table = flags, .base = a}, {0}};
    static const struct aka_opt_doc doc = {"recovery", usage_text, notes_text};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups, .args = &a->words, .max_args = 2};
    int rc = aka_opts_parse(&c, argc, argv, 1, err);
    if (rc != 0)
        return rc;
    if (!a->words.n || jenum_index(a->words.v[0], actions) < 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "recovery: expected status, stop or resume; got '%s'",
                           a->words.n ? a->words.v[0] : "");
    if (strcmp(a->words.v[0], "monitor") == 0 && a->words.n != 2)
        return aka_err_set(err, AKA_EXIT_USAGE, "recovery monitor: expected the state directory");
    return 0;
}

static const char * or (const char *s, const char *fallback)
{
    return s ? s : fallback;
}

static void print_status(json_t *st, bool json)
{
    if (json) {
        json_dumpf(st, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
        printf("\n");
        return;
    }
    json_t *probe = json_object_get(st, "last_probe");
    printf("phase: %s%s\nattempts: %lld\nmonitor: %s\nstate: %s\nlast probe: %s %s\n",
           or (json_string_value(json_object_get(st, "phase")), "?"),
           json_is_true(json_object_get(st, "stopped")) ? " (auto-recovery disabled)" : "",
           (long long)json_integer_value(json_object_get(st, "attempts")),
           json_is_true(json_object_get(st, "monitor_running")) ? "running" : "not running",
           json_string_value(json_object_get(st, "state_dir")),
           or (json_string_value(json_object_get(probe, "at")), "never"),
           json_is_true(json_object_get(probe, "ok")) ? "ok" : "failed");
}

static int act(const struct recovery_args *a, const char *ws, struct aka_err *err)
{
    const char *verb = a->words.v[0];
    struct strbuf dir = STRBUF_INIT;
    json_t *st = NULL;
    int rc;
    if (strcmp(verb, "stop") == 0) {
        if ((rc = aka_recovery_stop(ws, err)) == 0)
            printf("recovery stopped for %s; run recover.sh (aka recovery resume) to enable it\n",
                   ws);
    } else if (strcmp(verb, "resume") == 0) {
        if ((rc = aka_recovery_resume(ws, &dir, err)) == 0)
            printf("recovery resumed for %s (state in %s)\n", ws, dir.buf);
    } else if ((rc = aka_recovery_status(ws, &st, err)) == 0) {
        print_status(st, a->json);
    }
    json_decref(st);
    strbuf_release(&dir);
    return rc;
}

int cmd_recovery(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_err err = AKA_ERR_INIT;
    struct recovery_args a = {.words = STRVEC_INIT};
    struct strbuf ws = STRBUF_INIT;
    int rc = parse_args(argc, argv, &a, &err);
    (void)ctx;
    if (rc == 0 && strcmp(a.words.v[0], "monitor") == 0)
        rc = aka_recovery_monitor(a.words.v[1], &err);
    else if (rc == 0 &&
             aka_report_find_workspace(a.words.n > 1 ? a.words.v[1] : NULL, true, &ws, &err) < 0)
        rc = -1;
    else if (rc == 0)
        rc = act(&a, ws.buf, &err);
    strbuf_release(&ws);
    strvec_clear(&a.words);
    return rc < 0 ? aka_err_report(&err) : 0; /* 1: --help was printed */
}
