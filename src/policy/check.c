/*
 * check.c — aka_policy_check: read one kernel source, pick the tokenizer its
 * framework needs, run the scan, check the solution.json beside it, and
 * collect the violations (deduplicated, in source order) into the report.
 */
#include "base/fs.h"
#include "base/json.h"
#include "base/strbuf.h"
#include "policy/internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SOURCE (4u << 20)

static int cmp_violation(const void *a, const void *b)
{
    const struct aka_policy_violation *x = a, *y = b;
    int f = strcmp(x->file, y->file);
    if (f)
        return f;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return x->column < y->column ? -1 : x->column > y->column;
}

/* solution.json beside the kernel: an object whose entry point and sources name only the kernel. */
static void check_solution(struct pol_ctx *c, const char *path)
{
    struct aka_err jerr = AKA_ERR_INIT;
    json_t *doc = NULL;
    const char *self = aka_basename(c->file);
    if (aka_json_load_file(path, &doc, &jerr) < 0 || !json_is_object(doc)) {
        int line = 1, col = 1;
        const char *m = strstr(jerr.msg, path);
        if (m)
            sscanf(m + strlen(path), ":%d:%d", &line, &col);
        pol_violation_at(c, "solution-json", path, line, col,
                         doc ? "solution.json: expected a JSON object" : jerr.msg);
        json_decref(doc);
        return;
    }
    const char *ep =
        json_string_value(json_object_get(json_object_get(doc, "spec"), "entry_point"));
    if (ep) {
        const char *sep = strstr(ep, "::");
        size_t n = sep ? (size_t)(sep - ep) : strlen(ep);
        if (strlen(self) != n || strncmp(ep, self, n) != 0) {
            struct strbuf m = STRBUF_INIT;
            strbuf_addf(&m, "solution.json: spec.entry_point \"%s\" is not in %s (one kernel file)",
                        ep, self);
            pol_violation_at(c, "solution-json", path, 1, 1, m.buf);
            strbuf_release(&m);
        } else if (sep && sep[2]) {
            c->entry = aka_xstrdup(sep + 2);
        }
    }
    size_t i;
    json_t *src;
    json_array_foreach(json_object_get(doc, "sources"), i, src)
    {
        const char *p = json_string_value(json_object_get(src, "path"));
        if (!p || strcmp(p, self) != 0) {
            struct strbuf m = STRBUF_INIT;
            strbuf_addf(
                &m, "solution.json: sources[%zu].path is \"%s\", expected \"%s\" (one kernel file)",
                i, p ? p : "(missing)", self);
            pol_violation_at(c, "solution-json", path, 1, 1, m.buf);
            strbuf_release(&m);
        }
    }
    json_decref(doc);
}

static bool has_ext(const char *path, const char *const *exts)
{
    const char *dot = strrchr(aka_basename(path), '.');
    for (; dot && *exts; exts++)
        if (strcmp(dot, *exts) == 0)
            return true;
    return false;
}

static int check_kind(const char *path, enum aka_policy_fw fw, struct aka_err *err)
{
    static const char *const py[] = {".py", NULL}, *const cu[] = {".cu", ".cuh", NULL},
                             *const c[] = {".c", ".h", NULL};
    const char *const *want = fw == AKA_FW_CUDA ? cu : fw == AKA_FW_NATIVE_C ? c : py;
    if (has_ext(path, want))
        return 0;
    return aka_err_set(err, AKA_EXIT_USAGE, "%s: framework %s expects a %s source (%s)", path,
                       aka_policy_framework_name(fw),
                       want == py   ? "Python"
                       : want == cu ? "CUDA"
                                    : "C",
                       want[0]);
}

static int scan(struct pol_ctx *c, const struct strbuf *src, struct aka_err *err)
{
    if (c->fw == AKA_FW_CUDA || c->fw == AKA_FW_NATIVE_C) {
        struct c_toks t = {0};
        if (pol_lex_c(c->file, src->buf, src->len, &t, err) < 0)
            return -1;
        pol_scan_c(c, &t);
        pol_c_toks_free(&t);
    } else {
        struct py_toks t = {0};
        if (pol_lex_python(c->file, src->buf, src->len, &t, err) < 0)
            return -1;
        pol_scan_python(c, &t);
        pol_py_toks_free(&t);
    }
    return 0;
}

int aka_policy_check(const char *framework, const char *path, struct aka_policy_report *report,
                     struct aka_err *err)
{
    enum aka_policy_fw fw;
    struct strbuf src = STRBUF_INIT, dir = STRBUF_INIT, sol = STRBUF_INIT;
    struct aka_policy_report rep = {0};
    struct pol_ctx c = {.file = path, .rep = &rep};
    int rc = -1;
    memset(report, 0, sizeof(*report));
    if (aka_policy_framework(framework, &fw, err) < 0 || check_kind(path, fw, err) < 0)
        return -1;
    if (!aka_is_file(path))
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: expected a readable kernel source file", path);
    if (aka_read_file(path, &src, MAX_SOURCE, err) < 0)
        goto out;
    const char *slash = strrchr(path, '/');
    if (slash)
        strbuf_add(&dir, path, slash == path ? 1 : (size_t)(slash - path));
    else
        strbuf_addstr(&dir, ".");
    c.fw = fw;
    c.dir = dir.buf;
    aka_path_join(&sol, dir.buf, "solution.json");
    if (aka_exists(sol.buf))
        check_solution(&c, sol.buf);
    if (scan(&c, &src, err) < 0) {
        aka_policy_report_free(&rep);
        goto out;
    }
    if (rep.n > 1) /* qsort wants a non-null base even for nothing to sort */
        qsort(rep.v, rep.n, sizeof(rep.v[0]), cmp_violation);
    *report = rep;
    rc = 0;
out:
    free((char *)c.entry);
    strbuf_release(&src);
    strbuf_release(&dir);
    strbuf_release(&sol);
    return rc;
}

char *aka_policy_report_json(const struct aka_policy_report *report)
{
    json_t *doc = json_object(), *arr = json_array();
    for (size_t k = 0; k < report->n; k++) {
        const struct aka_policy_violation *v = &report->v[k];
        json_array_append_new(arr, json_pack("{s:s, s:s, s:i, s:i, s:s}", "rule", v->rule, "file",
                                             v->file, "line", v->line, "column", v->column,
                                             "message", v->message));
    }
    json_object_set_new(doc, "clean", json_boolean(report->n == 0));
    json_object_set_new(doc, "violations", arr);
    char *out = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    return out;
}

void aka_policy_report_free(struct aka_policy_report *report)
{
    for (size_t k = 0; k < report->n; k++) {
        free(report->v[k].rule);
        free(report->v[k].file);
        free(report->v[k].message);
    }
    VEC_FREE(*report);
}
