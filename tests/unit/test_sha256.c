/*
 * test_sha256.c — SHA-256 through libcrypto (base/sha256.h) against the
 * FIPS 180-2 test vectors, for buffers and for files larger than one read.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "base/sha256.h"

#include <string.h>

#define EMPTY      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define ABC        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define TWO_BLOCKS "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
#define MILLION_A  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"

static void t_vectors(void **state)
{
    char hex[AKA_SHA256_HEX_LEN + 1];
    aka_sha256_hex("", 0, hex);
    assert_string_equal(hex, EMPTY);
    aka_sha256_hex("abc", 3, hex);
    assert_string_equal(hex, ABC);
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    aka_sha256_hex(two, strlen(two), hex);
    assert_string_equal(hex, TWO_BLOCKS);
}

static void t_file(void **state)
{
    char hex[AKA_SHA256_HEX_LEN + 1];
    struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT, data = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-sha", &dir, &err), 0);
    aka_path_join(&path, dir.buf, "a");
    for (int i = 0; i < 1000000; i++) /* many 64 KiB reads */
        strbuf_addch(&data, 'a');
    assert_int_equal(aka_write_file_atomic(path.buf, data.buf, data.len, 0644, &err), 0);
    assert_int_equal(aka_sha256_file(path.buf, hex, &err), 0);
    assert_string_equal(hex, MILLION_A);
    assert_int_equal(aka_write_file_atomic(path.buf, "", 0, 0644, &err), 0);
    assert_int_equal(aka_sha256_file(path.buf, hex, &err), 0);
    assert_string_equal(hex, EMPTY);
    assert_int_equal(aka_remove_tree(dir.buf, &err), 0);
    assert_int_equal(aka_sha256_file(path.buf, hex, &err), -1);
    assert_int_equal(err.code, 2);
    assert_non_null(strstr(err.msg, "/a: cannot open: No such file or directory"));
    strbuf_release(&dir);
    strbuf_release(&path);
    strbuf_release(&data);
}

static void t_is_hex(void **state)
{
    assert_true(aka_sha256_is_hex(EMPTY));
    assert_true(aka_sha256_is_hex(ABC));
    assert_false(aka_sha256_is_hex(""));
    assert_false(aka_sha256_is_hex(EMPTY "0")); /* 65 digits */
    assert_false(aka_sha256_is_hex(&EMPTY[1])); /* 63 digits */
    assert_false(
        aka_sha256_is_hex("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"));
    assert_false(
        aka_sha256_is_hex("g3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_vectors),
        cmocka_unit_test(t_file),
        cmocka_unit_test(t_is_hex),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
