/* placeholder so the test dir is non-empty; replaced by base tests */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "base/strbuf.h"
static void t_addf(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_addf(&sb, "%d-%s", 7, "x");
    assert_string_equal(sb.buf, "7-x");
    strbuf_release(&sb);
}
int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(t_addf)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
