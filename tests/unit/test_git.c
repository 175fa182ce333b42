/*
 * test_git.c — the git wrapper against the real git binary in temp repositories.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "git/git.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* A candidate commit on top of base, then back to base: diff, ancestry, squash, blob. */
static void diff_squash_blob(void **state)
{
    struct repo *r = *state;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf blob = STRBUF_INIT;
    struct strvec names = STRVEC_INIT;
    char base[41], cand[41];
    bool anc = false;

    assert_int_equal(aka_git_rev_parse(&r->git, "HEAD", base, &err), 0);
    write_file(r->dir.buf, "kernel.c", "int k = 2;\n");
    assert_int_equal(aka_git_add(&r->git, (const char *const[]){"kernel.c", NULL}, &err), 0);
    assert_int_equal(aka_git_commit(&r->git, "candidate", cand, &err), 0);
    assert_int_equal(aka_git_reset_hard(&r->git, base, &err), 0);
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
    strvec_clear(&names);
    strbuf_release(&blob);
}

/* An agent's repository: a clone of r holding a candidate commit, a hook and a command in its
 * config that would leave a marker if anything ran them. */
static void agent_repo(struct repo *r, struct strbuf *dir, struct strbuf *marker, char *cand)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_git a;
    struct strbuf p = STRBUF_INIT;
    char base[41];
    assert_int_equal(aka_git_rev_parse(&r->git, "HEAD", base, &err), 0);
    strbuf_addf(dir, "%s-agent", r->dir.buf);
    strbuf_addf(marker, "%s-marker", r->dir.buf);
    assert_int_equal(aka_git_init(dir->buf, "aka/e0001", &err), 0);
    aka_git_open(&a, dir->buf);
    assert_int_equal(
        aka_git_run(&a, (const char *const[]){"fetch", "-q", r->dir.buf, base, NULL}, NULL, &err),
        0);
    assert_int_equal(aka_git_reset_hard(&a, base, &err), 0);
    write_file(dir->buf, "kernel.c", "int k = 3;\n");
    assert_int_equal(aka_git_add(&a, NULL, &err), 0);
    assert_int_equal(aka_git_commit(&a, "candidate", cand, &err), 0);
    strbuf_addf(&p, "touch %s", marker->buf);
    const char *hooks[] = {"post-checkout", "post-merge", "reference-transaction", "pre-push",
                           NULL};
    for (const char *const *h = hooks; *h; h++) {
        struct strbuf text = STRBUF_INIT, path = STRBUF_INIT;
        strbuf_addf(&text, "#!/bin/sh\n%s\n", p.buf);
        strbuf_addf(&path, ".git/hooks/%s", *h);
        write_file(dir->buf, path.buf, text.buf);
        strbuf_reset(&path);
        strbuf_addf(&path, "%s/.git/hooks/%s", dir->buf, *h);
        assert_int_equal(chmod(path.buf, 0755), 0);
        strbuf_release(&text);
        strbuf_release(&path);
    }
    const char *cfg[] = {"config", "core.fsmonitor", p.buf, NULL};
    assert_int_equal(aka_git_run(&a, cfg, NULL, &err), 0);
    const char *pack[] = {"config", "uploadpack.packObjectsHook", p.buf, NULL};
    assert_int_equal(aka_git_run(&a, pack, NULL, &err), 0);
    aka_git_close(&a);
    strbuf_release(&p);
}

/* The supervisor takes exactly one commit by hash and runs nothing of the agent's repository. */
static void fetch_commit_by_hash(void **state)
{
    struct repo *r = *state;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf dir = STRBUF_INIT, marker = STRBUF_INIT, branch = STRBUF_INIT;
    char cand[41], head[41], got[41];
    agent_repo(r, &dir, &marker, cand);
    assert_int_equal(
        aka_git_fetch_commit(&r->git, dir.buf, cand, "refs/aka/candidates/e0001", &err), 0);
    assert_int_equal(aka_git_rev_parse(&r->git, "refs/aka/candidates/e0001", got, &err), 0);
    assert_string_equal(got, cand);
    assert_int_equal(aka_git_remote_head(&r->git, dir.buf, &branch, head, &err), 0);
    assert_string_equal(branch.buf, "aka/e0001");
    assert_string_equal(head, cand);
    assert_false(aka_exists(marker.buf)); /* no hook, no fsmonitor, no pack-objects hook ran */
    /* a commit the agent's repository does not have */
    assert_int_equal(aka_git_fetch_commit(&r->git, dir.buf,
                                          "0123456789012345678901234567890123456789",
                                          "refs/aka/candidates/e0002", &err),
                     -1);
    assert_int_equal(aka_git_rev_parse(&r->git, "refs/aka/candidates/e0002", got, &err), -1);
    /* detached: no branch */
    struct aka_git a;
    aka_git_open(&a, dir.buf);
    assert_int_equal(
        aka_git_run(&a, (const char *const[]){"checkout", "-q", "--detach", NULL}, NULL, &err), 0);
    aka_git_close(&a);
    assert_int_equal(aka_git_remote_head(&r->git, dir.buf, &branch, head, &err), 0);
    assert_string_equal(branch.buf, "");
    aka_remove_tree(dir.buf, &err);
    aka_remove_tree(marker.buf, &err);
    strbuf_release(&dir);
    strbuf_release(&marker);
    strbuf_release(&branch);
}

/* A malformed commit object is refused by the fetch's object check (fetch.fsckObjects). */
static void fetch_refuses_a_bad_object(void **state)
{
    struct repo *r = *state;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf dir = STRBUF_INIT, marker = STRBUF_INIT, tree = STRBUF_INIT, obj = STRBUF_INIT;
    struct strbuf oid = STRBUF_INIT;
    char cand[41], got[41];
    struct aka_git a;
    agent_repo(r, &dir, &marker, cand);
    aka_git_open(&a, dir.buf);
    assert_int_equal(
        aka_git_run(&a, (const char *const[]){"rev-parse", "HEAD^{tree}", NULL}, &tree, &err), 0);
    strbuf_trim(&tree);
    /* an author line without an email: git fsck's missingEmail */
    strbuf_addf(&obj, "%s/bad-commit", dir.buf);
    struct strbuf text = STRBUF_INIT;
    strbuf_addf(
        &text,
        "tree %s\nauthor nobody 1700000000 +0000\ncommitter nobody 1700000000 +0000\n\nbad\n",
        tree.buf);
    assert_int_equal(aka_write_file_atomic(obj.buf, text.buf, text.len, 0644, &err), 0);
    const char *hash[] = {"hash-object", "-t", "commit", "--literally", "-w", obj.buf, NULL};
    assert_int_equal(aka_git_run(&a, hash, &oid, &err), 0);
    strbuf_trim(&oid);
    const char *ref[] = {"update-ref", "refs/heads/aka/e0001", oid.buf, NULL};
    assert_int_equal(aka_git_run(&a, ref, NULL, &err), 0);
    aka_git_close(&a);
    assert_int_equal(
        aka_git_fetch_commit(&r->git, dir.buf, oid.buf, "refs/aka/candidates/bad", &err), -1);
    assert_int_equal(aka_git_rev_parse(&r->git, "refs/aka/candidates/bad", got, &err), -1);
    aka_remove_tree(dir.buf, &err);
    aka_remove_tree(marker.buf, &err);
    strbuf_release(&dir);
    strbuf_release(&marker);
    strbuf_release(&tree);
    strbuf_release(&obj);
    strbuf_release(&oid);
    strbuf_release(&text);
}

/* A directory inside the repository that is not a repository itself (a workspace whose
 * .git is not made yet, under a clone's build/): git must not reach the enclosing one.
 * Without the ceiling, rev-parse answered with the outer HEAD and a fresh clone's setup
 * campaign refused to start ("commit ... was not made by this supervisor"). */
static void no_enclosing_repository(void **state)
{
    struct repo *r = *state;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf inner = STRBUF_INIT;
    struct aka_git g;
    char oid[AKA_GIT_OID_HEX + 1];
    aka_path_join(&inner, r->dir.buf, "build");
    assert_int_equal(aka_mkdir_p(inner.buf, 0755, &err), 0);
    aka_git_open(&g, inner.buf);
    assert_int_equal(aka_git_rev_parse(&g, "HEAD", oid, &err), -1);
    assert_non_null(strstr(err.msg, "not a git repository"));
    aka_git_close(&g);
    strbuf_release(&inner);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(commit_uses_supervisor_identity, setup, teardown),
        cmocka_unit_test_setup_teardown(rev_parse_and_branch, setup, teardown),
        cmocka_unit_test_setup_teardown(clean_tracks_untracked_files, setup, teardown),
        cmocka_unit_test_setup_teardown(diff_squash_blob, setup, teardown),
        cmocka_unit_test_setup_teardown(fetch_commit_by_hash, setup, teardown),
        cmocka_unit_test_setup_teardown(fetch_refuses_a_bad_object, setup, teardown),
        cmocka_unit_test_setup_teardown(no_enclosing_repository, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
