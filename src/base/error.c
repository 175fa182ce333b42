/*
 * error.c — the aka_err reporting type and the allocation wrappers.
 *
 * Allocation failure is not a recoverable condition for a supervisor that
 * keeps all of its durable state on disk: we abort loudly rather than thread
 * ENOMEM through every caller, and rely on write-ahead records for recovery.
 */
#include "base/error.h"
#include "base/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int aka_err_vset(struct aka_err *err, int code, const char *fmt, va_list ap)
{
    if (!err)
        return -1;
    err->code = code;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    return -1;
}

int aka_err_set(struct aka_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    aka_err_vset(err, code, fmt, ap);
    va_end(ap);
    return -1;
}

int aka_err_prefix(struct aka_err *err, const char *fmt, ...)
{
    char prefix[512];
    va_list ap;

    if (!err)
        return -1;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    /* Shift the old message right to make room for "prefix: ", truncating its tail. */
    size_t plen = strlen(prefix) + 2, mlen = strlen(err->msg);
    if (plen >= sizeof(err->msg))
        plen = sizeof(err->msg) - 1;
    if (plen + mlen >= sizeof(err->msg))
        mlen = sizeof(err->msg) - 1 - plen;
    memmove(err->msg + plen, err->msg, mlen);
    err->msg[plen + mlen] = '\0';
    memcpy(err->msg, prefix, plen - 2);
    memcpy(err->msg + plen - 2, ": ", 2);
    return -1;
}

void aka_err_clear(struct aka_err *err)
{
    err->code = 0;
    err->msg[0] = '\0';
}

int aka_err_report(const struct aka_err *err)
{
    /* Messages quote ids, paths and text from files an agent or a candidate wrote:
     * escaped, they can neither drive the terminal nor forge a second line. */
    struct strbuf sb = STRBUF_INIT;
    const char *msg = err->msg[0] ? err->msg : "unknown error";
    strbuf_add_escaped(&sb, msg, strlen(msg));
    fprintf(stderr, "aka: %s\n", sb.buf);
    strbuf_release(&sb);
    return err->code ? err->code : AKA_EXIT_FAILED;
}
