/*
 * test_tarball.c — tar packing and hostile-archive unpacking (base/tarball.h).
 *
 * Hostile archives are crafted here with libarchive's writer, which (unlike the
 * tar CLI) writes absolute names, ".." components, links and FIFOs as asked.
 * Every refusal must name the entry and leave nothing outside dest.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "base/tarball.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A scratch area: base/ holds dest/ (where we unpack) and outside/ (must stay empty). */
struct area {
    struct strbuf base, dest, outside, tar;
};

static int area_setup(void **state)
{
    struct area *a = calloc(1, sizeof(*a));
    struct aka_err err = AKA_ERR_INIT;
    strbuf_init(&a->base, 0);
    strbuf_init(&a->dest, 0);
    strbuf_init(&a->outside, 0);
    strbuf_init(&a->tar, 0);
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-tar", &a->base, &err), 0);
    aka_path_join(&a->dest, a->base.buf, "dest");
    aka_path_join(&a->outside, a->base.buf, "outside");
    aka_path_join(&a->tar, a->base.buf, "t.tar");
    assert_int_equal(aka_mkdir_p(a->dest.buf, 0755, &err), 0);
    assert_int_equal(aka_mkdir_p(a->outside.buf, 0755, &err), 0);
    *state = a;
    return 0;
}

static int area_teardown(void **state)
{
    struct area *a = *state;
    struct aka_err err = AKA_ERR_INIT;
    aka_remove_tree(a->base.buf, &err);
    strbuf_release(&a->base);
    strbuf_release(&a->dest);
    strbuf_release(&a->outside);
    strbuf_release(&a->tar);
    free(a);
    return 0;
}

static void write_file(const char *dir, const char *rel, const char *data, mode_t mode)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&p, dir, rel);
    assert_int_equal(aka_write_file_atomic(p.buf, data, strlen(data), mode, &err), 0);
    strbuf_release(&p);
}

static void assert_file(const char *dir, const char *rel, const char *want)
{
    struct strbuf p = STRBUF_INIT, got = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&p, dir, rel);
    if (aka_read_file(p.buf, &got, 1 << 20, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(got.len, strlen(want));
    assert_memory_equal(got.buf, want, got.len);
    strbuf_release(&p);
    strbuf_release(&got);
}

static bool exists_in(const char *dir, const char *rel)
{
    struct strbuf p = STRBUF_INIT;
    aka_path_join(&p, dir, rel);
    bool e = aka_exists(p.buf);
    strbuf_release(&p);
    return e;
}

/* The only entries directly under base are the ones we made. */
static void assert_base_clean(const struct area *a)
{
    struct strvec names = STRVEC_INIT;
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_list_dir(a->base.buf, &names, &err), 0);
    assert_int_equal(names.n, 3);
    assert_string_equal(names.v[0], "dest");
    assert_string_equal(names.v[1], "outside");
    assert_string_equal(names.v[2], "t.tar");
    strvec_clear(&names);
    assert_int_equal(aka_list_dir(a->outside.buf, &names, &err), 0);
    assert_int_equal(names.n, 0);
    strvec_clear(&names);
}

static void add_entry(struct archive *ar, const char *name, unsigned type, const char *link,
                      bool hard, const char *data)
{
    struct archive_entry *e = archive_entry_new();
    size_t size = (type == AE_IFREG && !link && data) ? strlen(data) : 0;
    archive_entry_set_pathname(e, name);
    archive_entry_set_filetype(e, type);
    archive_entry_set_perm(e, 0644);
    if (link && hard)
        archive_entry_set_hardlink(e, link);
    else if (link)
        archive_entry_set_symlink(e, link);
    archive_entry_set_size(e, (la_int64_t)size);
    assert_int_equal(archive_write_header(ar, e), ARCHIVE_OK);
    if (size)
        assert_int_equal(archive_write_data(ar, data, size), (la_ssize_t)size);
    archive_entry_free(e);
}

/* first.txt, then the hostile entry, then last.txt (which must never be reached). */
static void craft(const char *tar, const char *name, unsigned type, const char *link, bool hard)
{
    struct archive *ar = archive_write_new();
    assert_int_equal(archive_write_set_format_pax_restricted(ar), ARCHIVE_OK);
    assert_int_equal(archive_write_open_filename(ar, tar), ARCHIVE_OK);
    add_entry(ar, "first.txt", AE_IFREG, NULL, false, "first");
    add_entry(ar, name, type, link, hard, "evil");
    add_entry(ar, "last.txt", AE_IFREG, NULL, false, "last");
    assert_int_equal(archive_write_close(ar), ARCHIVE_OK);
    archive_write_free(ar);
}

/* Unpack must fail with code 2 naming the entry, after first.txt and before last.txt. */
static void expect_refused(struct area *a, const char *name, const char *reason)
{
    struct aka_err err = AKA_ERR_INIT;
    char want[1024];
    assert_int_equal(aka_tar_unpack(a->tar.buf, a->dest.buf, 0, &err), -1);
    assert_int_equal(err.code, 2);
    snprintf(want, sizeof(want), "%s: entry \"%s\": refused: %s", a->tar.buf, name, reason);
    assert_string_equal(err.msg, want);
    assert_file(a->dest.buf, "first.txt", "first");
    assert_false(exists_in(a->dest.buf, "last.txt"));
    assert_base_clean(a);
}

static void t_round_trip(void **state)
{
    struct area *a = *state;
    struct strbuf src = STRBUF_INIT, big = STRBUF_INIT, p = STRBUF_INIT;
    struct strvec files = STRVEC_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct stat st;
    aka_path_join(&src, a->outside.buf, "src");
    aka_path_join(&p, src.buf, "sub/dir");
    assert_int_equal(aka_mkdir_p(p.buf, 0755, &err), 0);
    write_file(src.buf, "a.txt", "alpha\n", 0644);
    write_file(src.buf, "run.sh", "#!/bin/sh\n", 0755);
    for (int i = 0; i < 100000; i++)
        strbuf_addf(&big, "%05d\n", i);
    write_file(src.buf, "sub/dir/big.txt", big.buf, 0600);
    strvec_push(&files, "a.txt");
    strvec_push(&files, "./run.sh"); /* normalized to run.sh in the archive */
    strvec_push(&files, "sub/dir/big.txt");
    assert_int_equal(aka_tar_pack(a->tar.buf, src.buf, &files, &err), 0);
    assert_int_equal(aka_tar_unpack(a->tar.buf, a->dest.buf, 0, &err), 0);
    assert_file(a->dest.buf, "a.txt", "alpha\n");
    assert_file(a->dest.buf, "run.sh", "#!/bin/sh\n");
    assert_file(a->dest.buf, "sub/dir/big.txt", big.buf);
    aka_path_join(&p, a->dest.buf, "run.sh");
    assert_int_equal(stat(p.buf, &st), 0);
    assert_true(st.st_mode & S_IXUSR);
    aka_path_join(&p, a->dest.buf, "a.txt");
    assert_int_equal(stat(p.buf, &st), 0);
    assert_false(st.st_mode & S_IXUSR);
    /* A limit below the content is refused once the data crosses it. */
    assert_int_equal(aka_tar_unpack(a->tar.buf, a->dest.buf, 100000, &err), -1);
    assert_int_equal(err.code, 2);
    assert_non_null(strstr(err.msg, "entry \"sub/dir/big.txt\": refused: the archive exceeds "
                                    "the 100000-byte limit"));
    strvec_clear(&files);
    strbuf_release(&src);
    strbuf_release(&big);
    strbuf_release(&p);
}

static void t_pack_refuses(void **state)
{
    struct area *a = *state;
    struct strbuf src = STRBUF_INIT, p = STRBUF_INIT, want = STRBUF_INIT;
    struct strvec files = STRVEC_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&src, a->outside.buf, "src");
    aka_path_join(&p, src.buf, "dir");
    assert_int_equal(aka_mkdir_p(p.buf, 0755, &err), 0);
    write_file(a->outside.buf, "secret", "s", 0644);
    aka_path_join(&p, src.buf, "link");
    assert_int_equal(symlink("../secret", p.buf), 0);
    aka_path_join(&p, src.buf, "ldir");
    assert_int_equal(symlink("..", p.buf), 0);
    const char *cases[][2] = {
        {"link", "cannot pack: a symbolic link"},
        {"dir", "cannot pack: a directory"},
        {"../secret", "cannot pack: \"..\" component"},
        {"/etc/passwd", "cannot pack: absolute path"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        strvec_clear(&files);
        strvec_push(&files, cases[i][0]);
        assert_int_equal(aka_tar_pack(a->tar.buf, src.buf, &files, &err), -1);
        assert_int_equal(err.code, 2);
        strbuf_reset(&want);
        strbuf_addf(&want, "%s/%s: %s", src.buf, cases[i][0], cases[i][1]);
        assert_string_equal(err.msg, want.buf);
        assert_false(aka_exists(a->tar.buf)); /* no half archive left behind */
    }
    /* A symlinked parent directory is not followed either. */
    strvec_clear(&files);
    strvec_push(&files, "ldir/secret");
    assert_int_equal(aka_tar_pack(a->tar.buf, src.buf, &files, &err), -1);
    assert_non_null(strstr(err.msg, "/ldir/secret: cannot pack: a parent is missing"));
    strvec_clear(&files);
    strbuf_release(&src);
    strbuf_release(&p);
    strbuf_release(&want);
}

static void t_refuse_absolute(void **state)
{
    struct area *a = *state;
    struct strbuf abs = STRBUF_INIT;
    aka_path_join(&abs, a->outside.buf, "abs");
    craft(a->tar.buf, abs.buf, AE_IFREG, NULL, false);
    expect_refused(a, abs.buf, "absolute path");
    strbuf_release(&abs);
}

static void t_refuse_dotdot(void **state)
{
    struct area *a = *state;
    craft(a->tar.buf, "../x", AE_IFREG, NULL, false);
    expect_refused(a, "../x", "\"..\" component");
    craft(a->tar.buf, "a/../../x", AE_IFREG, NULL, false);
    expect_refused(a, "a/../../x", "\"..\" component");
    assert_false(exists_in(a->dest.buf, "a")); /* checked before any directory is made */
    craft(a->tar.buf, "../outside/x", AE_IFDIR, NULL, false);
    expect_refused(a, "../outside/x/", "\"..\" component"); /* the writer appends '/' */
}

static void t_refuse_long_dotdot(void **state)
{
    struct area *a = *state;
    char name[400];
    /* Longer than ustar's 100 bytes, so the name travels in a pax header. */
    memset(name, 'd', 300);
    strcpy(name + 300, "/../../../x");
    craft(a->tar.buf, name, AE_IFREG, NULL, false);
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_tar_unpack(a->tar.buf, a->dest.buf, 0, &err), -1);
    assert_int_equal(err.code, 2);
    assert_non_null(strstr(err.msg, "...\": refused: \"..\" component")); /* name is cut */
    assert_base_clean(a);
}

static void t_refuse_links_and_specials(void **state)
{
    struct area *a = *state;
    craft(a->tar.buf, "sym", AE_IFLNK, "/etc", false);
    expect_refused(a, "sym", "a symbolic link");
    assert_false(exists_in(a->dest.buf, "sym"));
    craft(a->tar.buf, "hard", AE_IFREG, "first.txt", true);
    expect_refused(a, "hard", "a hard link");
    assert_false(exists_in(a->dest.buf, "hard"));
    craft(a->tar.buf, "fifo", AE_IFIFO, NULL, false);
    expect_refused(a, "fifo", "a FIFO");
    assert_false(exists_in(a->dest.buf, "fifo"));
    craft(a->tar.buf, "dev", AE_IFCHR, NULL, false);
    expect_refused(a, "dev", "a character device");
}

static void t_existing_symlink_not_followed(void **state)
{
    struct area *a = *state;
    struct strbuf link = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct stat st;
    aka_path_join(&link, a->dest.buf, "evil");
    assert_int_equal(symlink(a->outside.buf, link.buf), 0);
    /* Through the symlink as a directory: refused. */
    craft(a->tar.buf, "evil/x", AE_IFREG, NULL, false);
    expect_refused(a, "evil/x",
                   "a path component in the destination is a symbolic link or not a directory");
    /* Onto the symlink as a file: the link is replaced, its target untouched. */
    craft(a->tar.buf, "evil", AE_IFREG, NULL, false);
    assert_int_equal(aka_tar_unpack(a->tar.buf, a->dest.buf, 0, &err), 0);
    assert_int_equal(lstat(link.buf, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_file(a->dest.buf, "evil", "evil");
    assert_base_clean(a);
    strbuf_release(&link);
}

static void t_size_limit_from_header(void **state)
{
    struct area *a = *state;
    craft(a->tar.buf, "big", AE_IFREG, NULL, false);
    struct aka_err err = AKA_ERR_INIT;
    /* first.txt is 5 bytes and fits; "evil" (4 bytes) would make 9 > 8. */
    assert_int_equal(aka_tar_unpack(a->tar.buf, a->dest.buf, 8, &err), -1);
    assert_int_equal(err.code, 2);
    char want[1024];
    snprintf(want, sizeof(want), "%s: entry \"big\": refused: the archive exceeds the 8-byte limit",
             a->tar.buf);
    assert_string_equal(err.msg, want);
    assert_false(exists_in(a->dest.buf, "big"));
}

static void t_not_a_tar(void **state)
{
    struct area *a = *state;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf junk = STRBUF_INIT;
    for (int i = 0; i < 2048; i++)
        strbuf_addch(&junk, 'A' + i % 26);
    assert_int_equal(aka_write_file_atomic(a->tar.buf, junk.buf, junk.len, 0644, &err), 0);
    assert_int_equal(aka_tar_unpack(a->tar.buf, a->dest.buf, 0, &err), -1);
    assert_int_equal(err.code, 2);
    assert_non_null(strstr(err.msg, ": not a valid tar archive: "));
    assert_int_equal(aka_tar_unpack("/nonexistent.tar", a->dest.buf, 0, &err), -1);
    assert_int_equal(err.code, 2);
    assert_string_equal(err.msg, "/nonexistent.tar: cannot open: No such file or directory");
    strbuf_release(&junk);
}

#define AREA_TEST(fn) cmocka_unit_test_setup_teardown(fn, area_setup, area_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        AREA_TEST(t_round_trip),
        AREA_TEST(t_pack_refuses),
        AREA_TEST(t_refuse_absolute),
        AREA_TEST(t_refuse_dotdot),
        AREA_TEST(t_refuse_long_dotdot),
        AREA_TEST(t_refuse_links_and_specials),
        AREA_TEST(t_existing_symlink_not_followed),
        AREA_TEST(t_size_limit_from_header),
        AREA_TEST(t_not_a_tar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
