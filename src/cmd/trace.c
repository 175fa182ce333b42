/*
 * trace.c — `aka trace phase-start|phase-end PHASE` and
 * `aka trace source-read KIND REF`: the markers an agent records inside an
 * episode (DESIGN §4.5). The record goes to $ATREX_AKA_TRACE_FILE; a phase
 * marker also prints its receipt line, which is how token attribution sees
 * it in the agent's tool output. Outside a session nothing is recorded.
 */
#include "agents/agents.h"
#include "cmd/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: aka trace phase-start PHASE\n"
                 "       aka trace phase-end PHASE\n"
                 "       aka trace source-read KIND REF\n\n"
                 "Record where an episode's time and tokens go. PHASE is one of profile,\n"
                 "research, planning, implementation, correctness, benchmark, recording;\n"
                 "at most one phase is open at a time. KIND is one of wiki, memory,\n"
                 "reference, doc, code, profile, web, paper; REF names what was read.\n\n"
                 "Records are appended to $ATREX_AKA_TRACE_FILE (set by the supervisor in\n"
                 "every agent session). A phase marker prints one ATREX_TRACE_EVENT= line.\n"
                 "Exit status: 0 when recorded (or outside a session), 2 on bad arguments.\n");
}

int cmd_trace(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf receipt = STRBUF_INIT;
    const char *file = getenv("ATREX_AKA_TRACE_FILE");
    int rc;
    (void)ctx;
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc == 3 && (strcmp(argv[1], "phase-start") == 0 || strcmp(argv[1], "phase-end") == 0))
        rc = aka_trace_phase(file, argv[1] + 6, argv[2], &receipt, &err);
    else if (argc == 4 && strcmp(argv[1], "source-read") == 0)
        rc = aka_trace_source_read(file, argv[2], argv[3], &err);
    else
        rc = aka_err_set(&err, AKA_EXIT_USAGE,
                         "trace: expected phase-start|phase-end PHASE or "
                         "source-read KIND REF (see aka trace --help)");
    if (rc < 0) {
        strbuf_release(&receipt);
        return aka_err_report(&err);
    }
    if (receipt.len)
        printf("%s\n", receipt.buf);
    if (!file || !*file)
        fprintf(stderr, "aka trace: not in an agent session (ATREX_AKA_TRACE_FILE is unset); "
                        "nothing recorded\n");
    strbuf_release(&receipt);
    return 0;
}
