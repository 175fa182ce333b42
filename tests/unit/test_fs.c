/*
 * test_fs.c — files and trees (base/fs.h): atomic replace, mkdir -p, rm -rf
 * that never follows symlinks, sorted listings, bounded reads.
 */
#include "aka_test.h"

#include "base/fs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int dir_setup(void **state)
{
    struct strbuf *dir = calloc(1, sizeof(*dir));
    struct aka_err err = AKA_ERR_INIT;
    strbuf_init(dir, 0);
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-fs", dir, &err), 0);
    assert_true(aka_is_dir(dir->buf));
    assert_non_null(strstr(dir->buf, "/aka-test-fs."));
    *state = dir;
    return 0;
}

static int dir_teardown(void **state)
{
    struct strbuf *dir = *state;
    struct aka_err err = AKA_ERR_INIT;
    aka_remove_tree(dir->buf, &err);
    strbuf_release(dir);
    free(dir);
    return 0;
}

static const char *root(void **state)
{
    return ((struct strbuf *)*state)->buf;
}

/* root/rel into p (a strbuf the caller releases). */
static const char *at(void **state, struct strbuf *p, const char *rel)
{
    aka_path_join(p, root(state), rel);
    return p->buf;
}

static void put(const char *path, const char *text)
{
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_write_file_atomic(path, text, strlen(text), 0644, &err), 0);
}

static void assert_content(const char *path, const char *want)
{
    struct strbuf got = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    if (aka_read_file(path, &got, 1 << 20, &err) < 0)
        fail_msg("%s", err.msg);
    assert_string_equal(got.buf, want);
    strbuf_release(&got);
}

static void t_atomic_write_replaces(void **state)
{
    struct strbuf p = STRBUF_INIT;
    struct strvec names = STRVEC_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct stat st;
    at(state, &p, "f.json");
    assert_int_equal(aka_write_file_atomic(p.buf, "one", 3, 0600, &err), 0);
    assert_content(p.buf, "one");
    assert_int_equal(stat(p.buf, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    ino_t first = st.st_ino;
    assert_int_equal(aka_write_file_atomic(p.buf, "second", 6, 0640, &err), 0);
    assert_content(p.buf, "second");
    assert_int_equal(stat(p.buf, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_true(st.st_ino != first); /* a new inode renamed over, not rewritten in place */
    assert_int_equal(aka_list_dir(root(state), &names, &err), 0);
    assert_int_equal(names.n, 1); /* no temporary file left behind */
    assert_string_equal(names.v[0], "f.json");
    assert_int_equal(aka_write_file_atomic(at(state, &p, "no/such/dir/f"), "x", 1, 0644, &err), -1);
    assert_int_equal(err.code, 1);
    assert_non_null(strstr(err.msg, "/no/such/dir/f: cannot create temporary file: "
                                    "No such file or directory"));
    assert_int_equal(aka_fsync_dir(root(state), &err), 0);
    assert_int_equal(aka_fsync_dir(p.buf, &err), -1);
    strvec_clear(&names);
    strbuf_release(&p);
}

static void t_mkdir_p(void **state)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_mkdir_p(at(state, &p, "a/b/c"), 0755, &err), 0);
    assert_true(aka_is_dir(p.buf));
    assert_int_equal(aka_mkdir_p(p.buf, 0755, &err), 0); /* existing is fine */
    assert_int_equal(aka_mkdir_p(at(state, &p, "a//b/d/"), 0755, &err), 0);
    assert_true(aka_is_dir(at(state, &p, "a/b/d")));
    put(at(state, &p, "file"), "x");
    assert_int_equal(aka_mkdir_p(p.buf, 0755, &err), -1);
    assert_int_equal(err.code, 1);
    assert_string_equal(err.msg + strlen(err.msg) - strlen("/file: exists and is not a directory"),
                        "/file: exists and is not a directory");
    assert_int_equal(aka_mkdir_p(at(state, &p, "file/sub"), 0755, &err), -1);
    assert_non_null(strstr(err.msg, "/file/sub: cannot create directory: Not a directory"));
    strbuf_release(&p);
}

static void t_remove_tree_keeps_symlink_targets(void **state)
{
    struct strbuf p = STRBUF_INIT, outside = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    at(state, &outside, "outside");
    assert_int_equal(aka_mkdir_p(outside.buf, 0755, &err), 0);
    put(at(state, &p, "outside/keep"), "precious");
    assert_int_equal(aka_mkdir_p(at(state, &p, "tree/sub"), 0755, &err), 0);
    put(at(state, &p, "tree/sub/f"), "x");
    assert_int_equal(symlink(outside.buf, at(state, &p, "tree/dirlink")), 0);
    assert_int_equal(symlink("../outside/keep", at(state, &p, "tree/sub/filelink")), 0);
    assert_int_equal(symlink("/nonexistent", at(state, &p, "tree/dangling")), 0);
    assert_int_equal(aka_remove_tree(at(state, &p, "tree"), &err), 0);
    assert_false(aka_exists(p.buf));
    assert_content(at(state, &p, "outside/keep"), "precious");
    assert_int_equal(aka_remove_tree(at(state, &p, "tree"), &err), 0); /* missing is fine */
    assert_int_equal(symlink(outside.buf, at(state, &p, "toplink")), 0);
    assert_int_equal(aka_remove_tree(p.buf, &err), 0); /* a symlink root: the link goes */
    assert_false(aka_exists(p.buf));
    assert_content(at(state, &p, "outside/keep"), "precious");
    strbuf_release(&p);
    strbuf_release(&outside);
}

static void t_list_dir_sorted(void **state)
{
    struct strbuf p = STRBUF_INIT;
    struct strvec names = STRVEC_INIT;
    struct aka_err err = AKA_ERR_INIT;
    const char *made[] = {"b", "a", "C", ".hidden", "a0"};
    for (size_t i = 0; i < 5; i++)
        put(at(state, &p, made[i]), "");
    assert_int_equal(aka_list_dir(root(state), &names, &err), 0);
    const char *want[] = {".hidden", "C", "a", "a0", "b"}; /* byte order */
    assert_int_equal(names.n, 5);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(names.v[i], want[i]);
    strvec_clear(&names);
    assert_int_equal(aka_list_dir(at(state, &p, "missing"), &names, &err), -1);
    assert_int_equal(err.code, 2);
    assert_non_null(strstr(err.msg, "/missing: cannot list directory: No such file"));
    strbuf_release(&p);
}

static void t_read_limits(void **state)
{
    struct strbuf p = STRBUF_INIT, out = STRBUF_INIT, want = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    char hundred[101];
    memset(hundred, 'x', 100);
    hundred[100] = '\0';
    put(at(state, &p, "h"), hundred);
    assert_int_equal(aka_read_file(p.buf, &out, 100, &err), 0);
    assert_int_equal(out.len, 100);
    /* The limit is about this file, not what out already held. */
    assert_int_equal(aka_read_file(p.buf, &out, 100, &err), 0);
    assert_int_equal(out.len, 200);
    assert_int_equal(aka_read_file(p.buf, &out, 99, &err), -1);
    assert_int_equal(err.code, 2);
    strbuf_addf(&want, "%s: file is 100 bytes; the limit is 99", p.buf);
    assert_string_equal(err.msg, want.buf);
    assert_int_equal(aka_read_file(root(state), &out, 100, &err), -1);
    assert_non_null(strstr(err.msg, ": not a regular file"));
    /* A FIFO where a file was expected is refused at once instead of blocking. */
    assert_int_equal(mkfifo(at(state, &p, "fifo"), 0600), 0);
    assert_int_equal(aka_read_file(p.buf, &out, 100, &err), -1);
    assert_non_null(strstr(err.msg, "/fifo: not a regular file"));
    assert_int_equal(aka_read_file(at(state, &p, "missing"), &out, 100, &err), -1);
    assert_int_equal(err.code, 2);
    assert_non_null(strstr(err.msg, "/missing: cannot open: No such file or directory"));
    strbuf_release(&p);
    strbuf_release(&out);
    strbuf_release(&want);
}

static void t_predicates_and_copy(void **state)
{
    struct strbuf p = STRBUF_INIT, q = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct stat st;
    put(at(state, &p, "src"), "data");
    assert_int_equal(chmod(p.buf, 0750), 0);
    assert_true(aka_is_file(p.buf));
    assert_false(aka_is_dir(p.buf));
    assert_int_equal(aka_copy_file(p.buf, at(state, &q, "dst"), &err), 0);
    assert_content(q.buf, "data");
    assert_int_equal(stat(q.buf, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0750);
    assert_int_equal(symlink("src", at(state, &q, "link")), 0);
    assert_true(aka_is_file(q.buf)); /* follows */
    assert_int_equal(aka_copy_file(q.buf, at(state, &p, "dst2"), &err), -1);
    assert_int_equal(err.code, 2);
    assert_false(aka_exists(p.buf));
    assert_int_equal(symlink("/nonexistent", at(state, &q, "dangling")), 0);
    assert_true(aka_exists(q.buf)); /* does not follow */
    assert_false(aka_is_file(q.buf));
    strbuf_release(&p);
    strbuf_release(&q);
}

static void t_copy_tree(void **state)
{
    struct strbuf p = STRBUF_INIT, q = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct stat st;
    assert_int_equal(aka_mkdir_p(at(state, &p, "ct/a/b"), 0755, &err), 0);
    put(at(state, &p, "ct/a/b/f"), "deep");
    assert_int_equal(chmod(p.buf, 0750), 0);
    put(at(state, &p, "ct/top"), "top");
    put(at(state, &p, "secret"), "outside");
    assert_int_equal(symlink(at(state, &q, "secret"), at(state, &p, "ct/link")), 0);
    assert_int_equal(symlink(at(state, &q, "ct/a"), at(state, &p, "ct/dirlink")), 0);
    assert_int_equal(mkfifo(at(state, &p, "ct/fifo"), 0600), 0);
    assert_int_equal(aka_copy_tree(at(state, &p, "ct"), at(state, &q, "copy"), &err), 0);
    assert_content(at(state, &p, "copy/a/b/f"), "deep");
    assert_int_equal(stat(p.buf, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0750);
    assert_content(at(state, &p, "copy/top"), "top");
    /* no link, no special file, nothing reached through a link */
    assert_false(aka_exists(at(state, &p, "copy/link")));
    assert_false(aka_exists(at(state, &p, "copy/dirlink")));
    assert_false(aka_exists(at(state, &p, "copy/fifo")));
    assert_true(aka_is_plain_file(at(state, &p, "copy/top")));
    assert_false(aka_is_plain_file(at(state, &p, "ct/link"))); /* a link to a file */
    assert_false(aka_is_plain_file(at(state, &p, "ct/a")));
    /* the top itself may not be a link */
    assert_int_equal(aka_copy_tree(at(state, &p, "ct/dirlink"), at(state, &q, "c2"), &err), -1);
    assert_int_equal(err.code, 2);
    assert_false(aka_exists(q.buf));
    strbuf_release(&p);
    strbuf_release(&q);
}

static void t_path_helpers(void **state)
{
    struct strbuf p = STRBUF_INIT, real = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&p, "a", "b");
    assert_string_equal(p.buf, "a/b");
    aka_path_join(&p, "a/", "b");
    assert_string_equal(p.buf, "a/b");
    aka_path_join(&p, "", "b");
    assert_string_equal(p.buf, "b");
    assert_string_equal(aka_basename("/x/y/z.json"), "z.json");
    assert_string_equal(aka_basename("plain"), "plain");
    assert_string_equal(aka_basename("dir/"), "");
    assert_int_equal(aka_mkdir_p(at(state, &p, "r/s"), 0755, &err), 0);
    strbuf_addstr(&p, "/../s/.");
    assert_int_equal(aka_realpath(p.buf, &real, &err), 0);
    assert_true(real.buf[0] == '/');
    assert_string_equal(real.buf + real.len - 4, "/r/s");
    assert_null(strstr(real.buf, ".."));
    assert_int_equal(aka_realpath("/nonexistent/x", &real, &err), -1);
    assert_int_equal(err.code, 2);
    strbuf_release(&p);
    strbuf_release(&real);
}

#define DIR_TEST(fn) cmocka_unit_test_setup_teardown(fn, dir_setup, dir_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        DIR_TEST(t_atomic_write_replaces),
        DIR_TEST(t_mkdir_p),
        DIR_TEST(t_remove_tree_keeps_symlink_targets),
        DIR_TEST(t_list_dir_sorted),
        DIR_TEST(t_read_limits),
        DIR_TEST(t_predicates_and_copy),
        DIR_TEST(t_copy_tree),
        DIR_TEST(t_path_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
