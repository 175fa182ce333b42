/*
 * report.c — the doctor's report (its checks, its JSON) and the one way its checks run
 * a program (base/proc, argv only, bounded in time).
 */
#include "doctor/doctor.h"

#include "base/proc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void aka_doctor_add(struct aka_doctor_report *r, const char *name, enum aka_doctor_level level,
                    const char *fix, const char *fmt, ...)
{
    struct aka_doctor_check c;
    va_list ap;
    memset(&c, 0, sizeof(c));
    snprintf(c.name, sizeof(c.name), "%s", name);
    c.level = level;
    snprintf(c.fix, sizeof(c.fix), "%s", fix ? fix : "");
    va_start(ap, fmt);
    vsnprintf(c.detail, sizeof(c.detail), fmt, ap);
    va_end(ap);
    /* One line per check: a multi-line message keeps its first line. */
    c.detail[strcspn(c.detail, "\n")] = '\0';
    VEC_PUSH(r->checks, c);
}

int aka_doctor_exec(const char *const *argv, long timeout_s, struct strbuf *out,
                    struct strbuf *err_out)
{
    struct proc_spec spec;
    struct proc_result pr;
    struct aka_err err = AKA_ERR_INIT;
    memset(&spec, 0, sizeof(spec));
    spec.argv = argv;
    spec.new_session = true;
    spec.out_mode = out ? PROC_TO_BUFFER : PROC_NULL;
    spec.err_mode = err_out ? PROC_TO_BUFFER : PROC_NULL;
    spec.out_cap = spec.err_cap = 65536;
    spec.timeout_ms = timeout_s * 1000;
    proc_result_init(&pr);
    int rc = proc_run(&spec, &pr, &err) < 0 ? -1 : pr.exit_code;
    if (out)
        strbuf_add(out, pr.out.buf, pr.out.len);
    if (err_out && rc < 0)
        strbuf_addstr(err_out, err.msg);
    else if (err_out)
        strbuf_add(err_out, pr.err.buf, pr.err.len);
    proc_result_release(&pr);
    return rc;
}

void aka_doctor_report_release(struct aka_doctor_report *r)
{
    VEC_FREE(r->checks);
}

bool aka_doctor_ok(const struct aka_doctor_report *r)
{
    for (size_t i = 0; i < r->checks.n; i++)
        if (r->checks.v[i].level == AKA_DOCTOR_FAIL)
            return false;
    return true;
}

const char *aka_doctor_level_name(enum aka_doctor_level l)
{
    return l == AKA_DOCTOR_OK ? "ok" : l == AKA_DOCTOR_WARN ? "warn" : "FAIL";
}

json_t *aka_doctor_to_json(const struct aka_doctor_report *r)
{
    json_t *checks = json_array();
    for (size_t i = 0; i < r->checks.n; i++) {
        const struct aka_doctor_check *c = &r->checks.v[i];
        json_array_append_new(checks, json_pack("{s:s, s:s, s:s, s:s}", "name", c->name, "status",
                                                aka_doctor_level_name(c->level), "detail",
                                                c->detail, "fix", c->fix));
    }
    return json_pack("{s:s, s:b, s:o}", "schema", "aka.doctor.v1", "ok", aka_doctor_ok(r), "checks",
                     checks);
}
