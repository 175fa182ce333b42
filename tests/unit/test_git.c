/*
 * test_git.c — the git wrapper against the real git binary in temp repositories.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "git/git.h"

#include <stdlib.h>
#include <string.h>

struct repo {
    struct strbuf dir;
    struct aka_git git;
};

static void write_file(const char *dir, const char *name, const char *text)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&p, dir, name);
    assert_int_equal(aka_write_file_atomic(p.buf, text, strlen(text), 0644, &err), 0);
    strbuf_release(&p);
}

static int setup(void **state)
{
    struct repo *r = aka_xcalloc(1, sizeof(*r));
    struct aka_err err = AKA_ERR_INIT;
    strbuf_init(&r->dir, 0);
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-git", &r->dir, &err), 0);
    assert_int_equal(aka_git_init(r->dir.buf, "main", &err), 0);
    aka_git_open(&r->git, r->dir.buf);
    write_file(r->dir.buf, "kernel.c", "int k;\n");
    assert_int_equal(aka_git_add(&r->git, NULL, &err), 0);
    assert_int_equal(aka_git_commit(&r->git, "v0: source", NULL, &err), 0);
    *state = r;
    return 0;
}

static int teardown(void **state)
{
    struct repo *r = *state;
    struct aka_err err = AKA_ERR_INIT;
    aka_remove_tree(r->dir.buf, &err);
    aka_git_close(&r->git);
    strbuf_release(&r->dir);
    free(r);
    return 0;
}

static void commit_uses_supervisor_identity(void **state)
{
    struct repo *r = *state;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf out = STRBUF_INIT;
    const char *args[] = {"log", "-1", "--format=%an <%ae>|%s", NULL};
    assert_int_equal(aka_git_run(&r->git, args, &out, &err), 0);
    assert_string_equal(out.buf, AKA_GIT_NAME " <" AKA_GIT_EMAIL ">|v0: source\n");
    strbuf_release(&out);
}

static void rev_parse_and_branch(void **state)
{
    struct repo *r = *state;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf branch = STRBUF_INIT;
    char oid[AKA_GIT_OID_HEX + 1];
    assert_int_equal(aka_git_rev_parse(&r->git, "HEAD", oid, &err), 0);
    assert_int_equal(strlen(oid), 40);
    assert_int_equal(aka_git_rev_parse(&r->git, "no-such-rev", oid, &err), -1);
    assert_non_null(strstr(err.msg, "git rev-parse"));
    assert_int_equal(aka_git_current_branch(&r->git, &branch, &err), 0);
    assert_string_equal(branch.buf, "main");
    strbuf_release(&branch);
}

static void clean_tracks_untracked_files(void **state)
{
    struct repo *r = *state;
    struct aka_err err = AKA_ERR_INIT;
    bool clean = false;
    assert_int_equal(aka_git_is_clean(&r->git, &clean, &err), 0);
    assert_true(clean);
    write_file(r->dir.buf, "stray.txt", "x");
    assert_int_equal(aka_git_is_clean(&r->git, &clean, &err), 0);
    assert_false(clean);
}

static void worktree_diff_squash_blob(void **state)
{
    struct repo *r = *state;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf wt = STRBUF_INIT, blob = STRBUF_INIT;
    struct strvec names = STRVEC_INIT;
    struct aka_git w;
    char base[41], cand[41];
    bool anc = false;

    assert_int_equal(aka_git_rev_parse(&r->git, "HEAD", base, &err), 0);
    strbuf_addf(&wt, "%s-wt", r->dir.buf);
    assert_int_equal(aka_git_worktree_add(&r->git, wt.buf, "e0001", base, &err), 0);
    aka_git_open(&w, wt.buf);
    write_file(wt.buf, "kernel.c", "int k = 2;\n");
    assert_int_equal(aka_git_add(&w, (const char *const[]){"kernel.c", NULL}, &err), 0);
    assert_int_equal(aka_git_commit(&w, "candidate", cand, &err), 0);
    assert_int_equal(aka_git_diff_names(&r->git, base, cand, &names, &err), 0);
    assert_int_equal(names.n, 1);
    assert_string_equal(names.v[0], "kernel.c");
    assert_int_equal(aka_git_is_ancestor(&r->git, base, cand, &anc, &err), 0);
    assert_true(anc);
    assert_int_equal(aka_git_is_ancestor(&r->git, cand, base, &anc, &err), 0);
    assert_false(anc);
    assert_int_equal(aka_git_merge_squash(&r->git, cand, &err), 0);
    assert_int_equal(aka_git_commit(&r->git, "promote", NULL, &err), 0);
    assert_int_equal(aka_git_show_blob(&r->git, "HEAD", "kernel.c", &blob, &err), 0);
    assert_string_equal(blob.buf, "int k = 2;\n");
    assert_int_equal(aka_git_reset_hard(&r->git, base, &err), 0);
    assert_int_equal(aka_git_worktree_remove(&r->git, wt.buf, &err), 0);
    assert_false(aka_exists(wt.buf));
    aka_git_close(&w);
    strvec_clear(&names);
    strbuf_release(&wt);
    strbuf_release(&blob);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(commit_uses_supervisor_identity, setup, teardown),
        cmocka_unit_test_setup_teardown(rev_parse_and_branch, setup, teardown),
        cmocka_unit_test_setup_teardown(clean_tracks_untracked_files, setup, teardown),
        cmocka_unit_test_setup_teardown(worktree_diff_squash_blob, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
