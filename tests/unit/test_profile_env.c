/*
 * test_profile_env.c — which directory a live profile binds into the job
 * (aka_profile_tool_dir): the profiler's own directory, symlinks resolved, or the
 * directory above it when that is a bin/ — a CUDA toolkit's bin/ncu is a launcher
 * script that finds the real tool in ../nsight-compute-<version>/, so binding bin/
 * alone gave the job a launcher that said "Nsight Compute is not installed" (seen on
 * the H200's CUDA 13.0).
 */
#include "aka_test.h"
#include "base/fs.h"
#include "profile/profile.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_tool_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
