/*
 * trace.c — `aka trace phase-start|phase-end PHASE` and
 * `aka trace source-read KIND REF`: the markers an agent records inside an
 * episode (DESIGN §4.5). The record goes to $ATREX_AKA_TRACE_FILE; a phase
 * marker also prints its receipt line, which is how token attribution sees
 * it in the agent's tool output. Outside a session nothing is recorded.
 */
#include "agents/agents.h"
#include "base/opts.h"
#include "cmd/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: aka trace phase-start PHASE\n"
    "       aka trace phase-end PHASE\n"
    "       aka trace source-read KIND REF\n\n"
    "Record where an episode's time and tokens go. PHASE is one of profile,\n"
    "research, planning, implementation, correctness, benchmark, recording;\n"
    "at most one phase is open at a time. KIND is one of wiki, memory,\n"
    "reference, doc, code, profile, web, paper; REF names what was read.\n\n"
    "Records are appended to $ATREX_AKA_TRACE_FILE (set by the supervisor in\n"
    "every agent session). A phase marker prints one ATREX_TRACE_EVENT= line.\n\n";
static const char notes_text[] =
    "\nExit status: 0 when recorded (or outside a session), 2 on bad arguments.\n";

static const struct aka_opt no_flags[] = {{.name = NULL}};

/* The marker the words name; code 2 when they name none. */
static int record(const struct strvec *w, const char *file, struct strbuf *receipt,
                  struct aka_err *err)
{
    const char *what = w->n ? w->v[0] : "";
    if (w->n == 2 && (strcmp(what, "phase-start") == 0 || strcmp(what, "phase-end") == 0))
        return aka_trace_phase(file, what + 6, w->v[1], receipt, err);
    if (w->n == 3 && strcmp(what, "source-read") == 0)
        return aka_trace_source_read(file, w->v[1], w->v[2], err);
    return aka_err_set(err, AKA_EXIT_USAGE,
                       "trace: expected phase-start|phase-end PHASE or "
                       "source-read KIND REF (see aka trace --help)");
}

int cmd_trace(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf receipt = STRBUF_INIT;
    struct strvec words = STRVEC_INIT;
    const char *file = getenv("ATREX_AKA_TRACE_FILE");
    struct aka_opt_group groups[] = {{.table = no_flags}, {0}};
    static const struct aka_opt_doc doc = {"trace", usage_text, notes_text};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups, .args = &words, .max_args = 3};
    (void)ctx;
    int rc = aka_opts_parse(&c, argc, argv, 1, &err);
    if (rc == 0)
        rc = record(&words, file, &receipt, &err);
    strvec_clear(&words);
    if (rc != 0) {
        strbuf_release(&receipt);
        return rc < 0 ? aka_err_report(&err) : 0;
    }
    if (receipt.len)
        printf("%s\n", receipt.buf);
    if (!file || !*file)
        fprintf(stderr, "aka trace: not in an agent session (ATREX_AKA_TRACE_FILE is unset); "
                        "nothing recorded\n");
    strbuf_release(&receipt);
    return 0;
}
