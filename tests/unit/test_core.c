/*
 * test_core.c — application registry and asset-tree resolution (core/core.h).
 */
#include "aka_test.h"

#include "base/fs.h"
#include "core/core.h"

#include <stdlib.h>
#include <string.h>

static void registry_lists_and_finds_apps(void **state)
{
    (void)state;
    size_t n = 0;
    for (const struct aka_app *a = aka_apps(); a->name; a++, n++) {
        assert_non_null(a->summary);
        assert_true(strlen(a->summary) > 10);
        assert_ptr_equal(aka_app_find(a->name), a);
    }
    assert_true(n >= 2);
    assert_non_null(aka_app_find("optimize"));
    assert_null(aka_app_find("optimise"));
}

static void flag_wins_over_env(void **state)
{
    (void)state;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf out = STRBUF_INIT, want = STRBUF_INIT;
    setenv("ATREX_AKA_HOME", "/nonexistent-aka-home", 1);
    assert_int_equal(aka_resolve_repo_root(AKA_SOURCE_DIR, &out, &err), 0);
    assert_int_equal(aka_realpath(AKA_SOURCE_DIR, &want, &err), 0);
    assert_string_equal(out.buf, want.buf);
    unsetenv("ATREX_AKA_HOME");
    strbuf_release(&out);
    strbuf_release(&want);
}

static void env_used_and_checked(void **state)
{
    (void)state;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf out = STRBUF_INIT;
    setenv("ATREX_AKA_HOME", "/nonexistent-aka-home", 1);
    assert_int_equal(aka_resolve_repo_root(NULL, &out, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "ATREX_AKA_HOME: /nonexistent-aka-home is not a directory"));
    setenv("ATREX_AKA_HOME", AKA_SOURCE_DIR, 1);
    assert_int_equal(aka_resolve_repo_root(NULL, &out, &err), 0);
    unsetenv("ATREX_AKA_HOME");
    strbuf_release(&out);
}

static void explicit_tree_without_runtime_refused(void **state)
{
    (void)state;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf out = STRBUF_INIT;
    assert_int_equal(aka_resolve_repo_root("/", &out, &err), -1);
    assert_non_null(strstr(err.msg, "--repo-root: / has no runtime/ directory"));
    strbuf_release(&out);
}

static void default_falls_back_to_a_tree_with_runtime(void **state)
{
    (void)state;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf out = STRBUF_INIT, rt = STRBUF_INIT;
    unsetenv("ATREX_AKA_HOME");
    assert_int_equal(aka_resolve_repo_root(NULL, &out, &err), 0);
    aka_path_join(&rt, out.buf, "runtime");
    assert_true(aka_is_dir(rt.buf));
    strbuf_release(&out);
    strbuf_release(&rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(registry_lists_and_finds_apps),
        cmocka_unit_test(flag_wins_over_env),
        cmocka_unit_test(env_used_and_checked),
        cmocka_unit_test(explicit_tree_without_runtime_refused),
        cmocka_unit_test(default_falls_back_to_a_tree_with_runtime),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
