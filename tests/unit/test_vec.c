/*
 * test_vec.c — typed vectors and the string vector (base/vec.h).
 */
#include "aka_test.h"

#include "base/vec.h"

#include <stdlib.h>
#include <string.h>

struct shape {
    int rows, cols;
};

static void t_vec_push_many(void **state)
{
    VEC(int) v = {0};
    for (int i = 0; i < 1000; i++)
        VEC_PUSH(v, i * 3);
    assert_int_equal(v.n, 1000);
    assert_true(v.alloc >= v.n);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(v.v[i], i * 3);
    VEC_FREE(v);
    assert_null(v.v);
    assert_int_equal(v.n, 0);
    assert_int_equal(v.alloc, 0);
    VEC_PUSH(v, 7); /* usable again after free */
    assert_int_equal(v.v[0], 7);
    VEC_FREE(v);
}

static void t_vec_of_structs(void **state)
{
    VEC(struct shape) shapes = {0};
    VEC_PUSH(shapes, ((struct shape){2, 3}));
    VEC_PUSH(shapes, ((struct shape){4, 5}));
    assert_int_equal(shapes.n, 2);
    assert_int_equal(shapes.v[1].rows, 4);
    assert_int_equal(shapes.v[1].cols, 5);
    VEC_GROW(shapes, 100);
    assert_true(shapes.alloc >= 100);
    assert_int_equal(shapes.n, 2); /* grow reserves, it does not add */
    assert_int_equal(shapes.v[0].cols, 3);
    VEC_FREE(shapes);
}

static void t_strvec(void **state)
{
    struct strvec sv = STRVEC_INIT;
    const char *more[] = {"c", "d", NULL};
    char word[] = "a";
    strvec_push(&sv, word);
    word[0] = 'z'; /* strvec owns copies */
    strvec_pushf(&sv, "%s-%d", "b", 2);
    strvec_pushv(&sv, more);
    strvec_pushv(&sv, NULL);
    assert_int_equal(sv.n, 4);
    assert_string_equal(sv.v[0], "a");
    assert_string_equal(sv.v[1], "b-2");
    assert_string_equal(sv.v[3], "d");
    assert_null(sv.v[4]); /* always a valid argv */
    assert_int_equal(strvec_find(&sv, "c"), 2);
    assert_int_equal(strvec_find(&sv, "z"), -1);
    strvec_clear(&sv);
    assert_int_equal(sv.n, 0);
    assert_null(sv.v);
    assert_int_equal(strvec_find(&sv, "a"), -1);
    for (int i = 0; i < 100; i++)
        strvec_pushf(&sv, "%d", i);
    assert_string_equal(sv.v[99], "99");
    assert_null(sv.v[100]);
    strvec_clear(&sv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_vec_push_many),
        cmocka_unit_test(t_vec_of_structs),
        cmocka_unit_test(t_strvec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
