/*
 * doctor.c — `aka doctor [transport flags] [--agent A] [--json]`: parse, run the checks
 * (src/doctor/), print one line per check or one JSON object.
 */
#include "doctor/doctor.h"
#include "base/error.h"
#include "base/json.h"
#include "base/opts.h"
#include "cmd/cmd.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct doctor_args {
    const char *agent;
    bool json;
};

#define OFF(f) offsetof(struct doctor_args, f)

static const char *const agents[] = {"claude", "qodercli", "codex", "pi", "builtin", NULL};

static const char usage_text[] =
    "usage: aka doctor [--sandbox ...] [--agent A] [--json]\n\n"
    "Check that a campaign can start on this host with this transport: bwrap and user\n"
    "namespaces (a sandbox job is run), git, the coding CLIs and their login (looked at on\n"
    "disk, never online), the asset tree, the GPU, its driver and MIG, the runtime pins,\n"
    "and with --sandbox-ssh the host's reachability and the tools a job needs there.\n"
    "One line per check: ok, warn or FAIL, and what to do.\n\n";
static const char notes_text[] =
    "\n--json prints {\"schema\": \"aka.doctor.v1\", \"ok\": bool, \"checks\": [{\"name\",\n"
    "\"status\", \"detail\", \"fix\"}]} instead.\n\n"
    "Exit status: 0 when a campaign can start (no FAIL), 1 otherwise, 2 usage error.\n";

static const struct aka_opt flags[] = {
    {.name = "--agent",
     .off = OFF(agent),
     .kind = AKA_OPT_CHOICE,
     .choices = agents,
     .metavar = "A",
     .help = "the coding CLI the campaign will use (default: report every one aka supports)"},
    {.name = "--json", .off = OFF(json), .kind = AKA_OPT_BOOL, .help = "print one JSON object"},
    {.name = NULL},
};

static void print_lines(const struct aka_doctor_report *r)
{
    for (size_t i = 0; i < r->checks.n; i++) {
        const struct aka_doctor_check *c = &r->checks.v[i];
        printf("%-4s  %-18s %s", aka_doctor_level_name(c->level), c->name, c->detail);
        if (c->level != AKA_DOCTOR_OK && c->fix[0])
            printf(" -- %s", c->fix);
        printf("\n");
    }
    printf("%s\n",
           aka_doctor_ok(r) ? "a campaign can start" : "a campaign cannot start (FAIL above)");
}

int cmd_doctor(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    static const struct aka_opt_doc doc = {"doctor", usage_text, notes_text};
    struct doctor_args a = {0};
    struct aka_transport_opts t;
    struct aka_err err = AKA_ERR_INIT;
    bool help = false;
    aka_transport_opts_init(&t);
    struct aka_opt_group groups[] = {
        {.table = flags, .base = &a}, aka_transport_opts_group(&t, "transport"), {0}};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups, .help = &help};
    int rc = aka_opts_parse(&c, argc, argv, 1, &err);
    if (rc == 0 && !help)
        rc = aka_transport_opts_validate(&t, NULL, &err);
    if (rc != 0 || help) {
        aka_transport_opts_release(&t);
        return rc < 0 ? aka_err_report(&err) : AKA_EXIT_OK;
    }
    struct aka_doctor_opts o = {a.agent, ctx->repo_root, &t};
    struct aka_doctor_report r;
    aka_doctor_run(&o, &r);
    if (a.json) {
        json_t *doc_json = aka_doctor_to_json(&r);
        struct strbuf sb = STRBUF_INIT;
        aka_json_dump_compact(doc_json, &sb);
        printf("%s\n", sb.buf);
        strbuf_release(&sb);
        json_decref(doc_json);
    } else {
        print_lines(&r);
    }
    rc = aka_doctor_ok(&r) ? AKA_EXIT_OK : AKA_EXIT_FAILED;
    aka_doctor_report_release(&r);
    aka_transport_opts_release(&t);
    return rc;
}
