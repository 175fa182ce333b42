/*
 * naming.c — workspace names and kernel file names.
 *
 * A workspace name is derived, never chosen, so that rerunning the same command
 * finds the same campaign (invariant 12 of the upstream engine): the operator,
 * framework, platform and mode are the campaign's identity.
 */
#include "bootstrap/bootstrap.h"

#include <ctype.h>
#include <string.h>

int aka_slug(const char *in, struct strbuf *out, struct aka_err *err)
{
    bool pending_sep = false;
    strbuf_reset(out);
    for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
        int ch = tolower(*p);
        if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
            if (pending_sep && out->len)
                strbuf_addch(out, '_');
            pending_sep = false;
            strbuf_addch(out, ch);
        } else {
            pending_sep = true;
        }
    }
    if (!out->len)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "'%s': expected at least one letter or digit for a workspace name", in);
    return 0;
}

int aka_workspace_name(const char *op_name, const char *framework, const char *platform,
                       bool production, struct strbuf *out, struct aka_err *err)
{
    const char *parts[] = {op_name, framework, platform};
    struct strbuf s = STRBUF_INIT;
    strbuf_reset(out);
    strbuf_addstr(out, "kernel_opt");
    for (size_t i = 0; i < 3; i++) {
        if (aka_slug(parts[i], &s, err) < 0) {
            strbuf_release(&s);
            return -1;
        }
        strbuf_addf(out, "_%s", s.buf);
    }
    if (production)
        strbuf_addstr(out, "_production");
    strbuf_release(&s);
    return 0;
}

const char *aka_kernel_file_name(const struct aka_operator *op)
{
    if (op->layout == AKA_LAYOUT_NATIVE)
        return op->native.language == AKA_LANG_CUDA ? "kernel.cu" : "kernel.c";
    return "kernel.py";
}
