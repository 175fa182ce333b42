/*
 * test_strbuf.c — the growable byte buffer (base/strbuf.h).
 */
#include "aka_test.h"

#include "base/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void t_empty_is_printable(void **state)
{
    struct strbuf sb = STRBUF_INIT, sb2;
    assert_non_null(sb.buf);
    assert_string_equal(sb.buf, "");
    assert_int_equal(sb.len, 0);
    strbuf_init(&sb2, 0);
    assert_string_equal(sb2.buf, "");
    strbuf_release(&sb2); /* releasing an unallocated buffer is fine */
    strbuf_init(&sb2, 100);
    assert_true(sb2.alloc >= 101);
    assert_int_equal(sb2.len, 0);
    assert_string_equal(sb2.buf, "");
    strbuf_release(&sb2);
    assert_int_equal(sb2.alloc, 0);
    assert_string_equal(sb2.buf, "");
    strbuf_setlen(&sb, 0); /* no storage: only length 0, and no crash */
    strbuf_trim(&sb);
    assert_int_equal(sb.len, 0);
}

static void t_add_keeps_nuls(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_add(&sb, "a\0b", 3);
    strbuf_addch(&sb, 0);
    strbuf_addstr(&sb, "cd");
    assert_int_equal(sb.len, 6);
    assert_memory_equal(sb.buf, "a\0b\0cd", 7); /* and NUL-terminated */
    strbuf_add(&sb, NULL, 0);
    assert_int_equal(sb.len, 6);
    strbuf_release(&sb);
}

static void t_addf_grows(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    char *want = malloc(100001);
    for (int i = 0; i < 10000; i++) {
        strbuf_addf(&sb, "%09d|", i);
        snprintf(want + 10 * i, 11, "%09d|", i);
    }
    assert_int_equal(sb.len, 100000);
    assert_string_equal(sb.buf, want);
    assert_true(sb.alloc > sb.len);
    strbuf_reset(&sb);
    assert_int_equal(sb.len, 0);
    assert_string_equal(sb.buf, "");
    strbuf_addf(&sb, "%s=%d", "k", -5);
    assert_string_equal(sb.buf, "k=-5");
    free(want);
    strbuf_release(&sb);
}

static void t_trim(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_addstr(&sb, " \t x  y \r\n");
    strbuf_trim(&sb);
    assert_string_equal(sb.buf, "x  y");
    assert_int_equal(sb.len, 4);
    strbuf_reset(&sb);
    strbuf_addstr(&sb, " \n\t ");
    strbuf_trim(&sb);
    assert_string_equal(sb.buf, "");
    assert_int_equal(sb.len, 0);
    strbuf_release(&sb);
}

static void t_setlen_and_starts_with(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_addstr(&sb, "prefix-rest");
    assert_true(strbuf_starts_with(&sb, "prefix"));
    assert_true(strbuf_starts_with(&sb, ""));
    assert_false(strbuf_starts_with(&sb, "rest"));
    assert_false(strbuf_starts_with(&sb, "prefix-rest-longer"));
    strbuf_setlen(&sb, 6);
    assert_string_equal(sb.buf, "prefix");
    assert_int_equal(sb.len, 6);
    size_t before = sb.alloc;
    strbuf_grow(&sb, 1000);
    assert_true(sb.alloc >= 1007);
    assert_true(sb.alloc >= before);
    assert_string_equal(sb.buf, "prefix"); /* growing keeps content and length */
    strbuf_release(&sb);
}

static void t_detach(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    size_t len = 99;
    char *s = strbuf_detach(&sb, &len); /* even an empty buffer gives an owned string */
    assert_int_equal(len, 0);
    assert_string_equal(s, "");
    free(s);
    strbuf_addstr(&sb, "owned");
    s = strbuf_detach(&sb, &len);
    assert_int_equal(len, 5);
    assert_string_equal(s, "owned");
    assert_int_equal(sb.len, 0);
    assert_int_equal(sb.alloc, 0);
    assert_string_equal(sb.buf, "");
    free(s);
}

/* escaped(TEXT, LEN) is what strbuf_add_escaped makes of LEN bytes of TEXT. */
static const char *escaped(struct strbuf *sb, const char *text, size_t len)
{
    strbuf_reset(sb);
    strbuf_add_escaped(sb, text, len);
    return sb->buf;
}
#define ESC(sb, lit) escaped(sb, lit, sizeof(lit) - 1)

static void t_escaped_controls(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    /* A colour change, a cursor move and a forged second line stay on one visible line. */
    assert_string_equal(ESC(&sb, "id\x1b[31mred\x1b[2J\nforged"),
                        "id\\x1b[31mred\\x1b[2J\\nforged");
    assert_string_equal(ESC(&sb, "a\rb\tc\x7f\x01"), "a\\rb\\tc\\x7f\\x01");
    assert_string_equal(ESC(&sb, "nul\0x"), "nul\\x00x"); /* the length counts, not a NUL */
    assert_null(memchr(sb.buf, 0x1b, sb.len));
    /* Ordinary text, backslashes and UTF-8 (—, µ, an emoji) are kept byte for byte. */
    assert_string_equal(ESC(&sb, "v1 \xe2\x80\x94 3 \xc2\xb5s \xf0\x9f\x98\x80 a\\b"),
                        "v1 \xe2\x80\x94 3 \xc2\xb5s \xf0\x9f\x98\x80 a\\b");
    strbuf_release(&sb);
}

static void t_escaped_c1_and_invalid_utf8(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    /* U+009B is CSI on terminals that honour C1 controls; U+00A0 is text. */
    assert_string_equal(ESC(&sb, "\xc2\x9b"
                                 "2J \xc2\xa0"),
                        "\\u009b2J \xc2\xa0");
    /* A lone 0x9b byte (CSI in Latin-1), an overlong ESC, a surrogate, a cut sequence. */
    assert_string_equal(ESC(&sb, "\x9b"
                                 "2J"),
                        "\\x9b2J");
    assert_string_equal(ESC(&sb, "\xc0\x9b"), "\\xc0\\x9b");
    assert_string_equal(ESC(&sb, "\xed\xa0\x80"), "\\xed\\xa0\\x80");
    assert_string_equal(ESC(&sb, "ok\xe2\x80"), "ok\\xe2\\x80");
    assert_string_equal(ESC(&sb, "\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
    strbuf_reset(&sb);
    strbuf_addstr(&sb, "keep: ");
    strbuf_addf_escaped(&sb, "shape %s, %d", "n\x1b]0;title\x07", 7);
    assert_string_equal(sb.buf, "keep: shape n\\x1b]0;title\\x07, 7");
    strbuf_release(&sb);
}

/* The last matching line of a process's stderr, less its prefix; CRLF and a missing final
 * newline alike; nothing appended when no line matches. */
static void t_last_line(void **state)
{
    (void)state;
    struct strbuf sb = STRBUF_INIT;
    const char *err = "aka-native: first\nnoise\r\naka-native: second\r\nlast words\n\n";
    strbuf_add_last_line(&sb, err, strlen(err), "aka-native: ");
    assert_string_equal(sb.buf, "second");
    strbuf_reset(&sb);
    strbuf_add_last_line(&sb, err, strlen(err), NULL);
    assert_string_equal(sb.buf, "last words");
    strbuf_reset(&sb);
    strbuf_add_last_line(&sb, "no newline", 10, NULL);
    assert_string_equal(sb.buf, "no newline");
    strbuf_reset(&sb);
    strbuf_addstr(&sb, "kept");
    strbuf_add_last_line(&sb, err, strlen(err), "missing: ");
    strbuf_add_last_line(&sb, "\n\r\n", 3, NULL);
    assert_string_equal(sb.buf, "kept");
    strbuf_release(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_empty_is_printable),
        cmocka_unit_test(t_add_keeps_nuls),
        cmocka_unit_test(t_addf_grows),
        cmocka_unit_test(t_trim),
        cmocka_unit_test(t_setlen_and_starts_with),
        cmocka_unit_test(t_detach),
        cmocka_unit_test(t_escaped_controls),
        cmocka_unit_test(t_escaped_c1_and_invalid_utf8),
        cmocka_unit_test(t_last_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
