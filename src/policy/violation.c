/*
 * violation.c — how a scan reports: one violation (rule, file, line, column, message)
 * into the report, a repeat at the same place dropped, and the one question the
 * Python scan asks of the kernel's directory (is a module name a file beside it).
 * A leaf of the module: the scanners and check.c call it, it calls none of them.
 */
#include "base/fs.h"
#include "base/strbuf.h"
#include "policy/internal.h"

#include <stdarg.h>
#include <string.h>

void pol_violation_at(struct pol_ctx *c, const char *rule, const char *file, int line, int col,
                      const char *msg)
{
    for (size_t k = 0; k < c->rep->n; k++) {
        const struct aka_policy_violation *v = &c->rep->v[k];
        if (v->line == line && v->column == col && strcmp(v->rule, rule) == 0 &&
            strcmp(v->file, file) == 0)
            return;
    }
    struct aka_policy_violation v = {aka_xstrdup(rule), aka_xstrdup(file), line, col,
                                     aka_xstrdup(msg)};
    VEC_PUSH(*c->rep, v);
}

void pol_violation(struct pol_ctx *c, const char *rule, int line, int col, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    pol_violation_at(c, rule, c->file, line, col, sb.buf);
    strbuf_release(&sb);
}

void pol_violation_row(struct pol_ctx *c, const struct pol_rule *r, int line, int col,
                       const char *what)
{
    pol_violation(c, r->id, line, col, "%s: %s", r->why, what);
}

bool pol_sibling_module(const struct pol_ctx *c, const char *module)
{
    struct strbuf p = STRBUF_INIT;
    bool hit = false;
    const char *self = aka_basename(c->file);
    size_t n = strlen(module);
    if (strncmp(self, module, n) == 0 && strcmp(self + n, ".py") == 0)
        return false;
    strbuf_addf(&p, "%s/%s.py", c->dir, module);
    hit = aka_exists(p.buf);
    strbuf_reset(&p);
    strbuf_addf(&p, "%s/%s/__init__.py", c->dir, module);
    hit |= aka_exists(p.buf);
    strbuf_reset(&p);
    strbuf_addf(&p, "%s/%s.so", c->dir, module);
    hit |= aka_exists(p.buf);
    strbuf_release(&p);
    return hit;
}
