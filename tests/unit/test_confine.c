/*
 * test_confine.c — the agent sandbox's policy (src/agents/confine.c) and the view argv
 * it is built with (src/sandbox/view.c), without running anything: what an agent CLI
 * sees (its worktree writable; the view, the asset tree's runtime/, aka and the CLI's
 * directory read-only; its own state; an empty home), the network only for LLM CLIs, a
 * protected path below a bound directory covered, a bind inside one refused, mounts in
 * parent-first order, GPU nodes only when asked for. tests/integration/agent_sandbox.sh
 * runs the real thing.
 */
#include "aka_test.h"

#include "agents/internal.h"
#include "sandbox/sandbox.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dirs[6][512]; /* worktree, view, home, workspace, extra, home/.claude */

static const char *path_of(const char *rel, char *out)
{
    snprintf(out, 512, "%s/%s", aka_scratch_dir(), rel);
    return out;
}

static int setup(void **state)
{
    static const char *const rels[] = {"wt", "wt.view", "home", "ws", "extra", "home/.claude"};
    struct aka_err err = AKA_ERR_INIT;
    if (aka_scratch_setup(state) < 0)
        return -1;
    for (int i = 0; i < 6; i++)
        if (aka_mkdir_p(path_of(rels[i], dirs[i]), 0755, &err) < 0)
            return -1;
    /* "extra" holds the workspace: a read-only bind of it must cover the workspace. */
    snprintf(dirs[3], sizeof(dirs[3]), "%s/extra/ws", aka_scratch_dir());
    if (aka_mkdir_p(dirs[3], 0755, &err) < 0)
        return -1;
    setenv("HOME", dirs[2], 1);
    return 0;
}

/* Index of the option op followed by a (and b, when given), or -1. */
static long find(const struct strvec *v, const char *op, const char *a, const char *b)
{
    for (size_t i = 0; i + 1 < v->n; i++)
        if (strcmp(v->v[i], op) == 0 && strcmp(v->v[i + 1], a) == 0 &&
            (!b || (i + 2 < v->n && strcmp(v->v[i + 2], b) == 0)))
            return (long)i;
    return -1;
}

/* Index of the first element equal to s, or -1. */
static long index_of(const struct strvec *v, const char *s)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->v[i], s) == 0)
            return (long)i;
    return -1;
}

struct run {
    struct aka_agent_confinement c;
    struct aka_agent_request req;
    const char *deny[2], *ro[2], *rw[2];
    struct strvec argv;
    struct strbuf ctl;
};

static void prepare(struct run *r, const char *backend)
{
    memset(r, 0, sizeof(*r));
    r->deny[0] = dirs[3];
    r->c = (struct aka_agent_confinement){.mode = AKA_AGENT_SANDBOX_BWRAP,
                                          .view_dir = dirs[1],
                                          .read_only = r->ro,
                                          .writable = r->rw,
                                          .deny = r->deny};
    r->req = (struct aka_agent_request){
        .backend = backend, .worktree = dirs[0], .repo_root = AKA_SOURCE_DIR, .confine = &r->c};
    strbuf_init(&r->ctl, 0);
    strvec_push(&r->argv, strcmp(backend, "builtin") == 0 ? AKA_BUILD_DIR "/aka"
                                                          : AKA_SOURCE_DIR
                              "/tests/fakes/fake-claude");
    strvec_push(&r->argv, "--print");
}

static int confine(struct run *r, struct aka_err *err)
{
    return aka_agent_confine(&r->req, NULL, &r->argv, &r->ctl, err);
}

static void finish(struct run *r)
{
    struct aka_err err = AKA_ERR_INIT;
    if (r->ctl.len)
        aka_remove_tree(r->ctl.buf, &err);
    strbuf_release(&r->ctl);
    strvec_clear(&r->argv);
}

static void t_llm_cli(void **state)
{
    struct run r;
    struct aka_err err = AKA_ERR_INIT;
    char cli[4096];
    (void)state;
    prepare(&r, "claude");
    assert_int_equal(confine(&r, &err), 0);
    const struct strvec *a = &r.argv;
    assert_true(find(a, "--unshare-all", "--die-with-parent", "--new-session") > 0);
    assert_true(find(a, "--cap-drop", "ALL", NULL) > 0);
    long dash = index_of(a, "--");
    assert_true(index_of(a, "--share-net") > 0 && index_of(a, "--share-net") < dash);
    assert_true(find(a, "--proc", "/proc", NULL) > 0);
    assert_true(find(a, "--bind", dirs[0], dirs[0]) > 0);                   /* worktree, writable */
    assert_true(find(a, "--ro-bind", dirs[1], dirs[1]) > 0);                /* the view */
    assert_true(find(a, "--ro-bind", AKA_SOURCE_DIR "/runtime", NULL) > 0); /* harness */
    assert_true(find(a, "--ro-bind", AKA_SOURCE_DIR "/tests/fakes", NULL) > 0); /* the CLI */
    assert_true(find(a, "--tmpfs", dirs[2], NULL) > 0);                         /* empty home */
    assert_true(find(a, "--bind-try", dirs[5], dirs[5]) > find(a, "--tmpfs", dirs[2], NULL));
    assert_int_equal(find(a, "--bind", dirs[3], NULL), -1); /* never the workspace */
    assert_int_equal(find(a, "--ro-bind", AKA_SOURCE_DIR, AKA_SOURCE_DIR), -1);
    for (size_t i = 0; i < a->n; i++)
        assert_null(strstr(a->v[i], "/dev/nvidia"));
    /* The root becomes read-only after every mount; the CLI by its real path. */
    assert_true(dash > 0 && (size_t)dash + 2 < a->n);
    assert_true(find(a, "--remount-ro", "/", NULL) > find(a, "--bind", dirs[0], NULL));
    assert_non_null(realpath(AKA_SOURCE_DIR "/tests/fakes/fake-claude", cli));
    assert_string_equal(a->v[dash + 1], cli);
    assert_string_equal(a->v[dash + 2], "--print");
    assert_true(aka_is_dir(r.ctl.buf)); /* the generated /etc, removed by the caller */
    finish(&r);
}

static void t_builtin_no_network(void **state)
{
    struct run r;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    prepare(&r, "builtin");
    assert_int_equal(confine(&r, &err), 0);
    for (size_t i = 0; i < r.argv.n; i++) {
        assert_string_not_equal(r.argv.v[i], "--share-net");
        assert_null(strstr(r.argv.v[i], ".claude")); /* no backend state */
    }
    assert_true(index_of(&r.argv, "--unshare-all") > 0);
    finish(&r);
}

/* A protected path below a bound directory is covered; a bind inside one is refused. */
static void t_protected_paths(void **state)
{
    struct run r;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    prepare(&r, "builtin");
    r.ro[0] = dirs[4]; /* extra/, which holds ws/ */
    assert_int_equal(confine(&r, &err), 0);
    long bind = find(&r.argv, "--ro-bind", dirs[4], dirs[4]);
    long cover = find(&r.argv, "--tmpfs", dirs[3], NULL);
    assert_true(bind > 0 && cover > bind);
    finish(&r);

    char inside[600];
    snprintf(inside, sizeof(inside), "%s", dirs[3]);
    prepare(&r, "builtin");
    r.rw[0] = inside;
    assert_int_equal(confine(&r, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "must never reach"));
    finish(&r);

    prepare(&r, "builtin");
    r.req.worktree = dirs[3]; /* a worktree inside the workspace: refused too */
    assert_int_equal(confine(&r, &err), -1);
    finish(&r);

    char ssh[600];
    snprintf(ssh, sizeof(ssh), "%s/.ssh", dirs[2]);
    assert_int_equal(aka_mkdir_p(ssh, 0700, &err), 0);
    prepare(&r, "builtin");
    r.ro[0] = ssh; /* a credential directory: never, whatever asks for it */
    assert_int_equal(confine(&r, &err), -1);
    assert_non_null(strstr(err.msg, "credential"));
    finish(&r);
}

static void t_gpu_only_when_asked(void **state)
{
    struct run r;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    prepare(&r, "builtin");
    r.c.gpu_count = 1;
    r.c.gpu_vendor = AKA_VENDOR_NVIDIA;
    int rc = confine(&r, &err);
    if (aka_exists("/dev/nvidiactl")) {
        assert_int_equal(rc, 0);
        assert_true(find(&r.argv, "--dev-bind", "/dev/nvidia0", NULL) > 0);
    } else {
        assert_int_equal(rc, -1); /* asked for a GPU this host does not have */
        assert_int_equal(err.code, AKA_EXIT_ENV);
    }
    finish(&r);
}

/* Confine a builtin agent with an executable stub bin/name first in PATH (bin is made). */
static int confine_with_program(struct run *r, const char *bin, const char *name,
                                struct aka_err *err)
{
    char exe[1200], path[1200];
    const char *saved = getenv("PATH");
    char *old = saved ? strdup(saved) : NULL;
    snprintf(exe, sizeof(exe), "%s/%s", bin, name);
    assert_int_equal(aka_mkdir_p(bin, 0755, err), 0);
    assert_int_equal(aka_write_file_atomic(exe, "#!/bin/sh\n", 10, 0755, err), 0);
    snprintf(path, sizeof(path), "%s:/usr/bin:/bin", bin);
    setenv("PATH", path, 1);
    prepare(r, "builtin");
    int rc = confine(r, err);
    setenv("PATH", old ? old : "/usr/bin:/bin", 1);
    free(old);
    return rc;
}

/* python3 on PATH from a virtual environment: the agent's `aka eval` needs that prefix. */
static void t_python_prefix(void **state)
{
    struct run r;
    struct aka_err err = AKA_ERR_INIT;
    char venv[512], bin[600];
    (void)state;
    /* Not under /tmp: a job's /tmp is its own tmpfs, so a prefix there is never bound
     * (and a build directory may itself be under /tmp: a checkout there). */
    const char *base = strncmp(AKA_BUILD_DIR, "/tmp/", 5) == 0 ? "/var/tmp" : AKA_BUILD_DIR;
    snprintf(venv, sizeof(venv), "%s/test-confine-venv-%ld", base, (long)getpid());
    snprintf(bin, sizeof(bin), "%s/bin", venv);
    assert_int_equal(confine_with_program(&r, bin, "python3", &err), 0);
    assert_true(find(&r.argv, "--ro-bind", venv, venv) > 0);
    finish(&r);
    aka_remove_tree(venv, &err);
}

/* bwrap found in PATH outside the system directories: bound read-only, so that the
 * agent's own `aka eval` can sandbox its jobs with it; a system bwrap is not bound again. */
static void t_bwrap_outside_system(void **state)
{
    struct run r;
    struct aka_err err = AKA_ERR_INIT;
    char dir[512], bwrap[600];
    (void)state;
    snprintf(dir, sizeof(dir), "%s/test-confine-bwrap-%ld", AKA_BUILD_DIR, (long)getpid());
    snprintf(bwrap, sizeof(bwrap), "%s/bwrap", dir);
    assert_int_equal(confine_with_program(&r, dir, "bwrap", &err), 0);
    assert_true(find(&r.argv, "--ro-bind", bwrap, bwrap) > 0);
    finish(&r);
    aka_remove_tree(dir, &err);

    prepare(&r, "builtin"); /* the system's bwrap (or none here): no bind of its own */
    int rc = confine(&r, &err);
    for (size_t i = 0; rc == 0 && i < r.argv.n; i++)
        assert_null(strstr(r.argv.v[i], "test-confine-bwrap"));
    finish(&r);
}

/* The view argv on its own: parents first, a relative path refused. */
static void t_view_order(void **state)
{
    struct aka_sandbox_view v;
    struct strvec argv = STRVEC_INIT;
    struct aka_err err = AKA_ERR_INIT;
    const char *cmd[] = {"true", NULL};
    (void)state;
    aka_sandbox_view_init(&v);
    aka_sandbox_view_add(&v, AKA_VIEW_RW, "/x/home/.cfg", NULL);
    aka_sandbox_view_add(&v, AKA_VIEW_TMPFS, NULL, "/x/home");
    aka_sandbox_view_add(&v, AKA_VIEW_RO, "/x/a", "/y/a");
    assert_int_equal(aka_sandbox_view_argv(&v, "bwrap", "/C", cmd, &argv, &err), 0);
    assert_true(find(&argv, "--tmpfs", "/x/home", NULL) <
                find(&argv, "--bind", "/x/home/.cfg", "/x/home/.cfg"));
    assert_true(find(&argv, "--ro-bind", "/x/a", "/y/a") > 0);
    assert_int_equal(index_of(&argv, "--share-net"), -1);
    assert_string_equal(argv.v[argv.n - 1], "true");
    strvec_clear(&argv);
    aka_sandbox_view_add(&v, AKA_VIEW_RO, "/z", "relative");
    assert_int_equal(aka_sandbox_view_argv(&v, "bwrap", "/C", cmd, &argv, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    strvec_clear(&argv);
    aka_sandbox_view_release(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_llm_cli),
        cmocka_unit_test(t_builtin_no_network),
        cmocka_unit_test(t_protected_paths),
        cmocka_unit_test(t_gpu_only_when_asked),
        cmocka_unit_test(t_python_prefix),
        cmocka_unit_test(t_view_order),
        cmocka_unit_test(t_bwrap_outside_system),
    };
    return cmocka_run_group_tests(tests, setup, aka_scratch_teardown);
}
