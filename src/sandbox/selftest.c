/*
 * selftest.c — can this host build a job sandbox at all? (`aka doctor`): the very
 * path every evaluation takes, a local job around `true`, rather than guessing from
 * sysctls which differ between distributions.
 */
#include "sandbox/internal.h"

int aka_sandbox_selftest(struct strbuf *bwrap, struct aka_err *err)
{
    struct aka_sandbox_transport t;
    struct aka_sandbox_job job;
    struct aka_sandbox_result res;
    if (aka_sandbox_find_bwrap(NULL, bwrap, err) < 0) {
        strbuf_reset(bwrap); /* empty: not found (rather than found but unusable) */
        return -1;
    }
    aka_sandbox_local(&t, NULL);
    aka_sandbox_job_init(&job, AKA_SBX_DEV);
    job.detect_python = false;
    strvec_push(&job.argv, "true");
    aka_sandbox_result_init(&res);
    int rc = aka_sandbox_run(&t, &job, &res, err);
    if (rc == 0 && res.exit_code != 0)
        rc = aka_err_set(err, AKA_EXIT_ENV, "%s cannot build a sandbox: exit %d: %.300s",
                         bwrap->buf, res.exit_code, res.err.buf);
    aka_sandbox_result_release(&res);
    aka_sandbox_job_release(&job);
    return rc;
}
