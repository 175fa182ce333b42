/*
 * sandbox_replay.c — `aka sandbox replay FILE`: send a typed request the gateway
 * transport recorded to a gateway again, print the command's output and exit with its
 * status. The runtime pins in force must equal the recorded ones (sandbox/gateway.c).
 */
#include "cmd/cmd.h"

#include "base/error.h"
#include "base/opts.h"
#include "base/proc.h"
#include "base/vec.h"
#include "sandbox/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: aka sandbox replay [options] FILE\n"
    "\n"
    "Send a request the gateway transport recorded (FILE, under\n"
    "$ATREX_SANDBOX_REQUEST_DIR) to a gateway again and wait for its result. The\n"
    "runtime pins now in force (ATREX_SANDBOX_ATREX_BENCH_VERSION,\n"
    "ATREX_SANDBOX_REQUIREMENTS_FILE) must equal the recorded ones.\n"
    "\n";

static const char notes_text[] =
    "\n"
    "exit status: the command's; 2 for a bad FILE or pins that differ from the\n"
    "recorded ones; 75 when the gateway cannot be reached or lost the job.\n";

struct replay_opts {
    struct aka_sandbox_gateway_opts g;
    struct strvec args;
    bool json, help;
};

#define OFF(f) offsetof(struct replay_opts, f)

static const struct aka_opt flags[] = {
    {.name = "--sandbox-url",
     .off = OFF(g.url),
     .metavar = "URL",
     .help = "the gateway to send it to (default: the one it was recorded for)"},
    {.name = "--json",
     .off = OFF(json),
     .kind = AKA_OPT_BOOL,
     .help = "print the result as one JSON object"},
    {.name = NULL},
};

static int replay(struct replay_opts *o)
{
    struct aka_sandbox_result res;
    struct aka_sandbox_job job;
    struct aka_err err = AKA_ERR_INIT;
    aka_sandbox_result_init(&res);
    aka_sandbox_job_init(&job, AKA_SBX_DEV);
    int rc = proc_catch_stop_signals(&err);
    if (rc == 0)
        rc = aka_sandbox_replay(o->args.v[0], &o->g, &res, &err);
    if (rc == 0 && o->json) {
        json_t *doc = aka_sandbox_result_to_json(&job, &res);
        char *text = json_dumps(doc, JSON_COMPACT);
        printf("%s\n", text);
        free(text);
        json_decref(doc);
    } else if (rc == 0) {
        fwrite(res.out.buf, 1, res.out.len, stdout);
        fwrite(res.err.buf, 1, res.err.len, stderr);
    }
    int code = rc == 0 ? res.exit_code : aka_err_report(&err);
    aka_sandbox_result_release(&res);
    aka_sandbox_job_release(&job);
    return code;
}

int cmd_sandbox_replay(int argc, char **argv)
{
    struct replay_opts o;
    struct aka_err err = AKA_ERR_INIT;
    memset(&o, 0, sizeof(o));
    struct aka_opt_group groups[] = {{flags, &o, NULL, "options", false}, {0}};
    static const struct aka_opt_doc doc = {"sandbox replay", usage_text, notes_text};
    struct aka_opt_cmd c = {
        .doc = &doc, .groups = groups, .args = &o.args, .max_args = 1, .help = &o.help};
    int rc = aka_opts_parse(&c, argc, argv, 2, &err);
    if (rc == 0 && !o.help && o.args.n != 1)
        rc = aka_err_set(&err, AKA_EXIT_USAGE, "sandbox replay: expected one FILE");
    if (rc < 0)
        rc = aka_err_report(&err);
    else
        rc = o.help ? 0 : replay(&o);
    strvec_clear(&o.args);
    return rc;
}
