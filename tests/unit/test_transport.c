/*
 * test_transport.c — the transport factory and the transport interface (sandbox.h):
 * the shared flag table parses every transport flag, validation resolves the
 * transport and names the flag (or environment variable) of every bad combination,
 * aka_transport_open gives the local transport, or exit 75 for an unreachable ssh host
 * and for one not built yet,
 * and aka_sandbox_run drives any transport through prepare, run, collect and cleanup.
 */
#include "aka_test.h"

#include "sandbox/sandbox.h"

#include <stdlib.h>
#include <string.h>

static const char *const env_names[] = {"ATREX_SANDBOX_SSH",
                                        "ATREX_SANDBOX_SSH_GPU",
                                        "ATREX_SANDBOX_SSH_INIT",
                                        "ATREX_SANDBOX_URL",
                                        "ATREX_SANDBOX_SSH_RUNTIME_BINDS",
                                        "ATREX_SANDBOX_HEALTH_COMMAND",
                                        "ATREX_SANDBOX_PROFILE",
                                        "ATREX_SANDBOX_GPU",
                                        NULL};

static void clear_env(void)
{
    for (int i = 0; env_names[i]; i++)
        unsetenv(env_names[i]);
}

/* Parse args (NULL-terminated, without argv[0]) into o; -1 at the first bad one. */
static int parse(struct aka_transport_opts *o, const char *const *args, struct aka_err *err)
{
    char *argv[32] = {"aka"};
    int argc = 1;
    for (; args && args[argc - 1]; argc++)
        argv[argc] = (char *)args[argc - 1];
    aka_transport_opts_init(o);
    struct aka_opt_group groups[] = {aka_transport_opts_group(o, NULL), {0}};
    static const struct aka_opt_doc doc = {"test", NULL, NULL};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups};
    return aka_opts_parse(&c, argc, argv, 1, err);
}

/* Parse, validate (platform "nvidia/h200") and open; the exit code, or 0. */
static int open_with(const char *const *args, struct aka_err *err, enum aka_transport_kind *kind)
{
    struct aka_transport_opts o;
    struct aka_sandbox_transport t;
    int rc = parse(&o, args, err) < 0 || aka_transport_opts_validate(&o, "nvidia/h200", err) < 0 ||
                     aka_transport_open(&o, &t, err) < 0
                 ? err->code
                 : 0;
    if (kind)
        *kind = o.kind;
    aka_transport_opts_release(&o);
    return rc;
}

static void test_local_by_default(void **state)
{
    (void)state;
    struct aka_transport_opts o;
    struct aka_sandbox_transport t;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf d = STRBUF_INIT;
    clear_env();
    assert_int_equal(parse(&o, NULL, &err), 0);
    assert_int_equal(aka_transport_open(&o, &t, &err), 0);
    assert_int_equal(o.kind, AKA_TRANSPORT_LOCAL);
    assert_string_equal(t.ops->name, "local");
    assert_int_equal(t.isolation, AKA_SBX_BWRAP);
    aka_transport_opts_release(&o);
    /* isolation and the job directory come from the same table */
    const char *args[] = {"--sandbox-isolation", "none", "--sandbox-tmp", aka_scratch_dir(), NULL};
    assert_int_equal(parse(&o, args, &err), 0);
    assert_int_equal(aka_transport_open(&o, &t, &err), 0);
    assert_int_equal(t.isolation, AKA_SBX_NONE);
    assert_string_equal(t.tmp_dir, aka_scratch_dir());
    aka_sandbox_transport_describe(&t, &d);
    assert_non_null(strstr(d.buf, "local, isolation none, jobs in "));
    assert_non_null(strstr(d.buf, aka_scratch_dir()));
    strbuf_release(&d);
    aka_transport_opts_release(&o);
}

struct open_case {
    const char *args[12];
    int code;                     /* exit code of parse/validate/open */
    enum aka_transport_kind kind; /* resolved transport (when validation passed) */
    const char *says;             /* the message contains this */
};

static const struct open_case open_cases[] = {
    /* default flags are valid on every transport; a host that does not resolve (ssh, a
     * gateway) and the transports not built yet are 75; a profile without its URL is 2 */
    {{"--sandbox-ssh", "u@h", "--sandbox-ssh-gpu", "0"}, 75, AKA_TRANSPORT_SSH, "connecting"},
    {{"--sandbox", "ssh", "--sandbox-ssh=u@h", "--sandbox-ssh-gpu=31", "--sandbox-ssh-runtime-bind",
      "/opt/conda=/py", "--sandbox-ssh-init", "true", "--sandbox-health-command", "nvidia-smi"},
     75,
     AKA_TRANSPORT_SSH,
     "u@h (GPU 31)"},
    {{"--sandbox-url", "https://gw"}, 75, AKA_TRANSPORT_GATEWAY, "gateway https://gw: GET /v1/env"},
    {{"--sandbox-profile", "prod", "--sandbox-hardware", "H20"},
     2,
     AKA_TRANSPORT_GATEWAY,
     "ATREX_SANDBOX_PROFILE_PROD_URL"},
    {{"--sandbox", "slurm", "--slurm-partition", "gpu", "--slurm-time", "1:00"},
     0,
     AKA_TRANSPORT_SLURM,
     ""},
    {{"--sandbox", "slurm", "--slurm-partition", "gpu", "--sandbox-tmp", "/nonexistent/aka-tmp"},
     75,
     AKA_TRANSPORT_SLURM,
     "/nonexistent/aka-tmp"},
    /* combinations and values: usage errors naming the flag */
    {{"--sandbox-ssh-gpu", "0"}, 2, AKA_TRANSPORT_LOCAL, "--sandbox-ssh-gpu: only applies"},
    {{"--sandbox-ssh", "h", "--sandbox-ssh-gpu", "x"}, 2, AKA_TRANSPORT_LOCAL, "--sandbox-ssh-gpu"},
    {{"--sandbox-ssh", "h", "--sandbox-ssh-gpu", "-1"}, 2, AKA_TRANSPORT_LOCAL, "[0, 31]"},
    {{"--sandbox-ssh", "h"}, 2, AKA_TRANSPORT_SSH, "--sandbox-ssh-gpu: required"},
    {{"--sandbox-ssh", "a b", "--sandbox-ssh-gpu", "0"}, 2, AKA_TRANSPORT_SSH, "whitespace"},
    {{"--sandbox-ssh", "h", "--sandbox-ssh-gpu", "0", "--sandbox-ssh-runtime-bind", "/a=rel"},
     2,
     AKA_TRANSPORT_SSH,
     "--sandbox-ssh-runtime-bind"},
    {{"--sandbox-ssh", "h", "--sandbox-ssh-gpu", "0", "--sandbox-ssh-runtime-bind", "/a/../etc"},
     2,
     AKA_TRANSPORT_SSH,
     "--sandbox-ssh-runtime-bind"},
    {{"--sandbox", "local", "--sandbox-url", "https://gw"},
     2,
     AKA_TRANSPORT_LOCAL,
     "--sandbox-url"},
    {{"--sandbox-url", "https://gw", "--sandbox-ssh", "h"}, 2, AKA_TRANSPORT_LOCAL, "exclusive"},
    {{"--sandbox-url", "ftp://gw"}, 2, AKA_TRANSPORT_GATEWAY, "http:// or https://"},
    {{"--sandbox", "gateway"}, 2, AKA_TRANSPORT_GATEWAY, "--sandbox-url URL or --sandbox-profile"},
    {{"--sandbox-profile", "dev"}, 2, AKA_TRANSPORT_LOCAL, "--sandbox-profile"},
    {{"--sandbox-isolation", "none", "--sandbox", "slurm", "--slurm-partition", "p"},
     2,
     AKA_TRANSPORT_SLURM,
     "--sandbox-isolation: only applies to --sandbox local"},
    {{"--slurm-qos", "q"}, 2, AKA_TRANSPORT_LOCAL, "--slurm-qos: only applies"},
    {{"--sandbox", "slurm"}, 2, AKA_TRANSPORT_SLURM, "--slurm-partition"},
    {{"--sandbox-tmp", "/nonexistent/aka-tmp"}, 75, AKA_TRANSPORT_LOCAL, "/nonexistent/aka-tmp"},
    /* the health probe runs where jobs run: local or ssh (docs/recovery.md) */
    {{"--sandbox-health-command", "test -e /tmp"}, 0, AKA_TRANSPORT_LOCAL, ""},
    {{"--sandbox-health-command", ""}, 2, AKA_TRANSPORT_LOCAL, "expected a non-empty command"},
    {{"--sandbox-url", "https://gw", "--sandbox-health-command", "x"},
     2,
     AKA_TRANSPORT_GATEWAY,
     "--sandbox-health-command: only applies to --sandbox local, ssh or slurm"},
};

static void test_open_cases(void **state)
{
    (void)state;
    clear_env();
    for (size_t i = 0; i < sizeof(open_cases) / sizeof(open_cases[0]); i++) {
        const struct open_case *c = &open_cases[i];
        struct aka_err err = AKA_ERR_INIT;
        enum aka_transport_kind kind = AKA_TRANSPORT_LOCAL;
        int code = open_with(c->args, &err, &kind);
        if (code != c->code || !strstr(err.msg, c->says))
            fail_msg("case %zu (%s): exit %d, expected %d; message '%s' lacks '%s'", i, c->args[0],
                     code, c->code, err.msg, c->says);
        if (code == 75 || c->kind != AKA_TRANSPORT_LOCAL)
            assert_int_equal(kind, c->kind);
    }
}

/* The gateway's GPU token: --sandbox-hardware, else the platform; neither is a usage error. */
static void test_gateway_needs_hardware(void **state)
{
    (void)state;
    struct aka_transport_opts o;
    struct aka_err err = AKA_ERR_INIT;
    const char *args[] = {"--sandbox-url", "http://gw", NULL};
    clear_env();
    assert_int_equal(parse(&o, args, &err), 0);
    assert_int_equal(aka_transport_opts_validate(&o, NULL, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "--sandbox-hardware"));
    aka_transport_opts_release(&o);
}

static void test_environment(void **state)
{
    (void)state;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_transport_opts o;
    enum aka_transport_kind kind;
    clear_env();
    setenv("ATREX_SANDBOX_SSH", "envhost", 1);
    setenv("ATREX_SANDBOX_SSH_GPU", "4", 1);
    setenv("ATREX_SANDBOX_SSH_RUNTIME_BINDS", "[\"/opt/a\", \"/opt/b=/b\"]", 1);
    assert_int_equal(parse(&o, NULL, &err), 0);
    assert_int_equal(aka_transport_opts_validate(&o, NULL, &err), 0);
    assert_int_equal(o.kind, AKA_TRANSPORT_SSH);
    assert_string_equal(o.ssh, "envhost");
    assert_int_equal(o.ssh_gpu, 4);
    assert_int_equal(o.ssh_runtime_binds.n, 2);
    assert_string_equal(o.ssh_runtime_binds.v[1], "/opt/b=/b");
    aka_transport_opts_release(&o);
    /* a flag wins over its variable */
    const char *gpu[] = {"--sandbox-ssh-gpu", "7", NULL};
    assert_int_equal(open_with(gpu, &err, &kind), 75);
    assert_non_null(strstr(err.msg, "envhost (GPU 7)"));
    /* a transport chosen on the command line ignores the environment's choice */
    const char *local[] = {"--sandbox", "local", NULL};
    assert_int_equal(open_with(local, &err, &kind), 0);
    assert_int_equal(kind, AKA_TRANSPORT_LOCAL);
    /* a caller that knows the transport (an episode) ignores the variables' choice */
    assert_int_equal(parse(&o, NULL, &err), 0);
    o.env_cannot_choose = true;
    assert_int_equal(aka_transport_opts_validate(&o, NULL, &err), 0);
    assert_int_equal(o.kind, AKA_TRANSPORT_LOCAL);
    aka_transport_opts_release(&o);
    /* bad values name the variable */
    setenv("ATREX_SANDBOX_SSH_GPU", "four", 1);
    assert_int_equal(open_with(NULL, &err, &kind), 2);
    assert_non_null(strstr(err.msg, "ATREX_SANDBOX_SSH_GPU"));
    setenv("ATREX_SANDBOX_SSH_GPU", "4", 1);
    setenv("ATREX_SANDBOX_SSH_RUNTIME_BINDS", "/opt/a", 1);
    assert_int_equal(open_with(NULL, &err, &kind), 2);
    assert_non_null(strstr(err.msg, "ATREX_SANDBOX_SSH_RUNTIME_BINDS"));
    unsetenv("ATREX_SANDBOX_SSH_RUNTIME_BINDS");
    /* two transports chosen by the environment alone */
    setenv("ATREX_SANDBOX_URL", "https://gw", 1);
    assert_int_equal(open_with(NULL, &err, &kind), 2);
    assert_non_null(strstr(err.msg, "ATREX_SANDBOX_SSH and ATREX_SANDBOX_URL"));
    clear_env();
}

/* ---- the interface: aka_sandbox_run drives any transport ---------------------------------- */

struct fake {
    int fail_prepare; /* 0 ok, 1 fail before state, 2 fail after state */
    int fail_run;
    char calls[64];
};

static int f_prepare(const struct aka_sandbox_transport *t, const struct aka_sandbox_job *job,
                     struct aka_sandbox_result *res, void **state, struct aka_err *err)
{
    struct fake *f = t->ctx;
    (void)job;
    (void)res;
    strcat(f->calls, "p");
    if (f->fail_prepare == 1)
        return aka_err_set(err, AKA_EXIT_ENV, "no machine");
    *state = f;
    return f->fail_prepare ? aka_err_set(err, AKA_EXIT_USAGE, "refused") : 0;
}

static int f_run(void *state, struct aka_err *err)
{
    struct fake *f = state;
    strcat(f->calls, "r");
    return f->fail_run ? aka_err_set(err, AKA_EXIT_ENV, "lost the host") : 0;
}

static void f_collect(void *state)
{
    strcat(((struct fake *)state)->calls, "c");
}

static void f_cleanup(void *state)
{
    strcat(((struct fake *)state)->calls, "x");
}

static void f_describe(const struct aka_sandbox_transport *t, struct strbuf *out)
{
    (void)t;
    strbuf_addstr(out, "fake");
}

static const struct aka_sandbox_transport_ops fake_ops = {"fake",    f_prepare,  f_run, f_collect,
                                                          f_cleanup, f_describe, NULL};

static const char *drive(struct fake *f, int *rc, enum aka_sandbox_status *status)
{
    struct aka_sandbox_transport t = {&fake_ops, f, AKA_SBX_BWRAP, NULL, NULL};
    struct aka_sandbox_job job;
    struct aka_sandbox_result res;
    struct aka_err err = AKA_ERR_INIT;
    aka_sandbox_job_init(&job, AKA_SBX_DEV);
    strvec_push(&job.argv, "true");
    aka_sandbox_result_init(&res);
    *rc = aka_sandbox_run(&t, &job, &res, &err);
    *status = res.status;
    assert_string_equal(res.transport, "fake");
    aka_sandbox_result_release(&res);
    aka_sandbox_job_release(&job);
    return f->calls;
}

static void test_interface_order(void **state)
{
    (void)state;
    int rc;
    enum aka_sandbox_status st;
    struct fake ok = {0, 0, ""}, no_state = {1, 0, ""}, refused = {2, 0, ""}, lost = {0, 1, ""};
    assert_string_equal(drive(&ok, &rc, &st), "prcx");
    assert_int_equal(rc, 0);
    assert_int_equal(st, AKA_SBX_COMPLETED);
    /* nothing to clean up when prepare kept no state */
    assert_string_equal(drive(&no_state, &rc, &st), "p");
    assert_int_equal(st, AKA_SBX_ENV_FAILED);
    /* cleanup after any failure once there is state; nothing is collected */
    assert_string_equal(drive(&refused, &rc, &st), "px");
    assert_int_equal(st, AKA_SBX_REFUSED);
    assert_string_equal(drive(&lost, &rc, &st), "prx");
    assert_int_equal(rc, -1);
    assert_int_equal(st, AKA_SBX_ENV_FAILED);
}

/* The local transport opened by the factory runs a job end to end (isolation none, so
 * that the test does not depend on bubblewrap). */
static void test_local_runs_a_job(void **state)
{
    (void)state;
    struct aka_transport_opts o;
    struct aka_sandbox_transport t;
    struct aka_sandbox_job job;
    struct aka_sandbox_result res;
    struct aka_err err = AKA_ERR_INIT;
    const char *args[] = {"--sandbox-isolation", "none", "--sandbox-tmp", aka_scratch_dir(), NULL};
    clear_env();
    assert_int_equal(parse(&o, args, &err), 0);
    assert_int_equal(aka_transport_open(&o, &t, &err), 0);
    aka_sandbox_job_init(&job, AKA_SBX_DEV);
    job.isolation = t.isolation;
    strvec_push(&job.argv, "sh");
    strvec_push(&job.argv, "-c");
    strvec_push(&job.argv, "echo ran; exit 3");
    aka_sandbox_result_init(&res);
    assert_int_equal(aka_sandbox_run(&t, &job, &res, &err), 0);
    assert_int_equal(res.exit_code, 3);
    assert_string_equal(res.out.buf, "ran\n");
    assert_string_equal(res.transport, "local");
    assert_string_equal(res.isolation, "none");
    aka_sandbox_result_release(&res);
    aka_sandbox_job_release(&job);
    aka_transport_opts_release(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local_by_default),       cmocka_unit_test(test_open_cases),
        cmocka_unit_test(test_gateway_needs_hardware), cmocka_unit_test(test_environment),
        cmocka_unit_test(test_interface_order),        cmocka_unit_test(test_local_runs_a_job),
    };
    return cmocka_run_group_tests(tests, aka_scratch_setup, aka_scratch_teardown);
}
