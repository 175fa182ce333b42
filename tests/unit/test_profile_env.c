/*
 * test_profile_env.c — which directory a live profile binds into the job
 * (aka_profile_tool_dir): the profiler's own directory, symlinks resolved, or the
 * directory above it when that is a bin/ — a CUDA toolkit's bin/ncu is a launcher
 * script that finds the real tool in ../nsight-compute-<version>/, so binding bin/
 * alone gave the job a launcher that said "Nsight Compute is not installed" (seen on
 * the H200's CUDA 13.0). And the command line itself (aka_profile_ncu_argv,
 * aka_profile_command): clocks never controlled, levels and their checks, and no flag of
 * the caller's own — a brokered agent's metric or regex must not become an ncu option.
 */
#include "aka_test.h"
#include "base/fs.h"
#include "profile/profile.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A tree of ROOT: toolkit/bin/ncu, nsight/2025/ncu, and links/ncu -> toolkit/bin/ncu. */
static void make_tree(struct strbuf *root)
{
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf p = STRBUF_INIT, q = STRBUF_INIT;
    assert_int_equal(aka_make_temp_dir("/var/tmp", "aka-profenv", root, &err), 0);
    const char *dirs[] = {"toolkit/bin", "nsight/2025", "links"};
    for (size_t i = 0; i < 3; i++) {
        aka_path_join(&p, root->buf, dirs[i]);
        assert_int_equal(aka_mkdir_p(p.buf, 0755, &err), 0);
    }
    const char *tools[] = {"toolkit/bin/ncu", "nsight/2025/ncu"};
    for (size_t i = 0; i < 2; i++) {
        aka_path_join(&p, root->buf, tools[i]);
        assert_int_equal(aka_write_file_atomic(p.buf, "#!/bin/sh\n", 10, 0755, &err), 0);
    }
    aka_path_join(&p, root->buf, "toolkit/bin/ncu");
    aka_path_join(&q, root->buf, "links/ncu");
    assert_int_equal(symlink(p.buf, q.buf), 0);
    strbuf_release(&p);
    strbuf_release(&q);
}

static void expect_dir(const char *root, const char *tool, const char *want)
{
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf path = STRBUF_INIT, dir = STRBUF_INIT, expect = STRBUF_INIT;
    aka_path_join(&path, root, tool);
    aka_path_join(&expect, root, want);
    assert_int_equal(aka_profile_tool_dir(path.buf, &dir, &err), 0);
    assert_string_equal(dir.buf, expect.buf);
    strbuf_release(&path);
    strbuf_release(&dir);
    strbuf_release(&expect);
}

static void t_tool_dir(void **state)
{
    struct strbuf root = STRBUF_INIT, real = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    make_tree(&root);
    /* /var/tmp may itself be a link: compare against the resolved root */
    assert_int_equal(aka_realpath(root.buf, &real, &err), 0);
    expect_dir(real.buf, "toolkit/bin/ncu", "toolkit");     /* bin/: the toolkit above it */
    expect_dir(real.buf, "nsight/2025/ncu", "nsight/2025"); /* an install dir: itself */
    expect_dir(real.buf, "links/ncu", "toolkit");           /* a link: where it resolves */
    struct strbuf missing = STRBUF_INIT, dir = STRBUF_INIT;
    aka_path_join(&missing, real.buf, "nothing/ncu");
    assert_int_equal(aka_profile_tool_dir(missing.buf, &dir, &err), -1);
    assert_non_null(strstr(err.msg, "nothing/ncu"));
    assert_int_equal(aka_remove_tree(root.buf, &err), 0);
    strbuf_release(&missing);
    strbuf_release(&dir);
    strbuf_release(&root);
    strbuf_release(&real);
}

/* The position of want in argv, or -1. */
static int arg_at(const struct strvec *argv, const char *want)
{
    for (size_t i = 0; i < argv->n; i++)
        if (strcmp(argv->v[i], want) == 0)
            return (int)i;
    return -1;
}

static void expect_refused(const char *level, const char *regex, const char *metric,
                           const char *needle)
{
    struct aka_err err = AKA_ERR_INIT;
    struct strvec argv = STRVEC_INIT, metrics = STRVEC_INIT;
    if (metric)
        strvec_push(&metrics, metric);
    assert_int_equal(aka_profile_ncu_argv(level, regex, &metrics, &argv, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    if (!strstr(err.msg, needle))
        fail_msg("expected '%s' in '%s'", needle, err.msg);
    strvec_clear(&argv);
    strvec_clear(&metrics);
}

static void t_ncu_argv(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct strvec argv = STRVEC_INIT, metrics = STRVEC_INIT;
    (void)state;
    strvec_push(&metrics, "dram__bytes.sum,lts__t_bytes.sum");
    assert_int_equal(aka_profile_ncu_argv("survey", "rope", &metrics, &argv, &err), 0);
    int clock = arg_at(&argv, "--clock-control");
    assert_true(clock > 0);
    assert_string_equal(argv.v[clock + 1], "none"); /* aka never changes clocks */
    int name = arg_at(&argv, "--kernel-name");
    assert_true(name > 0);
    assert_string_equal(argv.v[name + 1], "regex:rope");
    assert_string_equal(argv.v[argv.n - 2], "--metrics"); /* the caller's metric is a value */
    assert_string_equal(argv.v[argv.n - 1], "dram__bytes.sum,lts__t_bytes.sum");
    assert_int_equal(arg_at(&argv, "--set"), -1); /* survey: durations only */
    strvec_clear(&argv);
    assert_int_equal(aka_profile_ncu_argv("deep", "k", NULL, &argv, &err), 0);
    assert_true(arg_at(&argv, "full") > 0);
    expect_refused("max", NULL, NULL, "survey, sol or deep");
    expect_refused("deep", NULL, NULL, "--kernel-regex");
    expect_refused("sol", NULL, "--export=/tmp/x", "--metric");
    expect_refused("sol", NULL, "dram bytes", "--metric");
    expect_refused("sol", NULL, "", "--metric");
    expect_refused("sol", "a\n--export", NULL, "--kernel-regex");
    strvec_clear(&argv);
    strvec_clear(&metrics);
}

/* The whole command: cpu has no profiler (2); no ncu on PATH (75); an ncu on PATH is used by
 * its absolute path where the GPU's nodes exist, and without them is 75 again. */
static void t_command(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf root = STRBUF_INIT, path = STRBUF_INIT, dir = STRBUF_INIT;
    struct strvec argv = STRVEC_INIT;
    char *saved = aka_xstrdup(getenv("PATH") ? getenv("PATH") : "");
    (void)state;
    assert_int_equal(aka_profile_command("cpu", "sol", NULL, NULL, &argv, &dir, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    make_tree(&root);
    setenv("PATH", root.buf, 1); /* nothing named ncu directly in it */
    strvec_clear(&argv);
    assert_int_equal(aka_profile_command("nvidia/h200", "sol", NULL, NULL, &argv, &dir, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_ENV);
    assert_non_null(strstr(err.msg, "ncu not found"));
    aka_path_join(&path, root.buf, "toolkit/bin");
    setenv("PATH", path.buf, 1);
    strvec_clear(&argv);
    int rc = aka_profile_command("nvidia/h200", "sol", NULL, NULL, &argv, &dir, &err);
    if (access("/dev/nvidiactl", F_OK) == 0) { /* a GPU host */
        assert_int_equal(rc, 0);
        aka_path_join(&path, root.buf, "toolkit/bin/ncu");
        assert_non_null(strstr(argv.v[0], "/toolkit/bin/ncu"));
        assert_non_null(strstr(dir.buf, "/toolkit"));
    } else {
        assert_int_equal(rc, -1);
        assert_int_equal(err.code, AKA_EXIT_ENV);
    }
    setenv("PATH", saved, 1);
    free(saved);
    assert_int_equal(aka_remove_tree(root.buf, &err), 0);
    strbuf_release(&root);
    strbuf_release(&path);
    strbuf_release(&dir);
    strvec_clear(&argv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_tool_dir),
        cmocka_unit_test(t_ncu_argv),
        cmocka_unit_test(t_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
