/*
 * drift.c — evidence the supervisor keeps but does not read, compared with what it does.
 *
 * The campaign evaluates its operator snapshot and decides from committed records; the
 * original operator directory and the working copies of memory/v<N>.json stay where an
 * agent or a person can edit them. An edit there changes nothing the supervisor decides,
 * but it is worth a line: someone tried, or someone expects the edit to matter. Each
 * distinct finding is said once per run (at the start, at each loop top and before
 * each verification), never repeated on every check.
 */
#include "optimize/internal.h"

#include <string.h>

static void warn_once(struct aka_run *r, const char *line)
{
    if (strstr(r->warned.buf ? r->warned.buf : "", line))
        return;
    strbuf_addf(&r->warned, "%s\n", line);
    aka_optimize_progress(r, "warning: %s", line);
}

const char *aka_optimize_check_drift(struct aka_run *r, struct strbuf *operator_line)
{
    struct strbuf what = STRBUF_INIT, line = STRBUF_INIT;
    strbuf_reset(operator_line);
    if (!aka_ws_operator_unchanged(r->ws.buf, r->op_dir_abs.buf, &what)) {
        strbuf_addf(operator_line,
                    "the original operator directory changed (%s); the campaign evaluates only "
                    "its V0 snapshot %s/%s",
                    what.buf, r->ws.buf, aka_ws_rel(AKA_WS_OPERATOR));
        warn_once(r, operator_line->buf);
    }
    if (!aka_ws_memory_unchanged(r->ws.buf, &what)) {
        strbuf_addf(&line, "%s; the supervisor decides from committed records only", what.buf);
        warn_once(r, line.buf);
    }
    strbuf_release(&what);
    strbuf_release(&line);
    return operator_line->buf ? operator_line->buf : "";
}
