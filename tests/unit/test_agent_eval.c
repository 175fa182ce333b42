/*
 * test_agent_eval.c — where an agent's own `aka eval` runs (--agent-eval): served by the
 * supervisor's broker or nested in the agent sandbox, by mode, platform and transport.
 * The option's parsing is test_optimize_options.c's.
 */
#include "aka_test.h"

#include "optimize/internal.h"

/* auto: a GPU campaign on this host brokers, a CPU one nests. */
static void t_auto_by_platform(void **state)
{
    (void)state;
    assert_true(aka_agent_eval_brokered("auto", true, false, false));
    assert_false(aka_agent_eval_brokered("auto", false, false, false));
}

/* An explicit choice holds on this host, whatever the platform. */
static void t_explicit_choice(void **state)
{
    (void)state;
    assert_true(aka_agent_eval_brokered("broker", false, false, false));
    assert_true(aka_agent_eval_brokered("broker", true, false, false));
    assert_false(aka_agent_eval_brokered("sandbox", true, false, false));
    assert_false(aka_agent_eval_brokered("sandbox", false, false, false));
}

/* A remote transport always brokers (the agent has neither the network nor its keys);
 * the generalized mode never does (its agent evaluates the public operator). */
static void t_remote_and_generalized(void **state)
{
    (void)state;
    assert_true(aka_agent_eval_brokered("sandbox", false, true, false));
    assert_true(aka_agent_eval_brokered("auto", true, true, false));
    assert_false(aka_agent_eval_brokered("broker", true, true, true));
    assert_false(aka_agent_eval_brokered("auto", true, false, true));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_auto_by_platform),
        cmocka_unit_test(t_explicit_choice),
        cmocka_unit_test(t_remote_and_generalized),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
