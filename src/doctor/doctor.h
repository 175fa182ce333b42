/*
 * doctor.h — `aka doctor`: can a campaign start on this host, with this transport?
 *
 * One check per line, each ok, warn or FAIL with what to do about it: Bubblewrap and
 * user namespaces (a real sandbox job is run), git, the coding CLIs and whether they
 * hold credentials (looked at on disk, never online: "not checked" where that is not
 * possible), the asset tree, the GPU and its driver (through the platform module's
 * device nodes and nvidia-smi or rocm-smi), MIG, the runtime pins, and for
 * --sandbox ssh the host's reachability and the remote tools a job needs. Only a FAIL
 * stops a campaign; a warn is something to know.
 */
#ifndef AKA_DOCTOR_DOCTOR_H
#define AKA_DOCTOR_DOCTOR_H

#include "base/error.h"
#include "base/vec.h"
#include "sandbox/sandbox.h"

#include <jansson.h>
#include <stdbool.h>

enum aka_doctor_level { AKA_DOCTOR_OK = 0, AKA_DOCTOR_WARN, AKA_DOCTOR_FAIL };

struct aka_doctor_check {
    char name[24]; /* "bwrap", "ssh reachability", ... */
    enum aka_doctor_level level;
    char detail[512]; /* what was found */
    char fix[512];    /* what to do; "" when nothing */
};

struct aka_doctor_report {
    VEC(struct aka_doctor_check) checks;
};

struct aka_doctor_opts {
    const char *agent;     /* the coding CLI a campaign would use; NULL: every one aka supports */
    const char *repo_root; /* the asset tree (runtime/, examples/) */
    const struct aka_transport_opts *transport; /* validated */
};

/* Run every check into r (initialized here); never fails: a check that cannot run says so. */
void aka_doctor_run(const struct aka_doctor_opts *o, struct aka_doctor_report *r);
void aka_doctor_report_release(struct aka_doctor_report *r);
/* No FAIL among the checks: a campaign can start. */
bool aka_doctor_ok(const struct aka_doctor_report *r);
const char *aka_doctor_level_name(enum aka_doctor_level l); /* "ok", "warn", "FAIL" */
/* {"schema": "aka.doctor.v1", "ok": bool, "checks": [{"name","status","detail","fix"}]} */
json_t *aka_doctor_to_json(const struct aka_doctor_report *r);

/* ---- pieces shared by the files of the module (report.c) ---- */
void aka_doctor_add(struct aka_doctor_report *r, const char *name, enum aka_doctor_level level,
                    const char *fix, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Run argv (PATH lookup, inherited environment, stdin /dev/null) for at most timeout_s;
 * its exit status (-1: could not start), stdout and stderr into out (either may be NULL). */
int aka_doctor_exec(const char *const *argv, long timeout_s, struct strbuf *out,
                    struct strbuf *err_out);
void aka_doctor_host_checks(const struct aka_doctor_opts *o, struct aka_doctor_report *r);
void aka_doctor_ssh_checks(const struct aka_doctor_opts *o, struct aka_doctor_report *r);

#endif
