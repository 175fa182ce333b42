/*
 * builtin.c — the built-in tuner as a backend: `aka tune-agent --brief FILE`
 * (DESIGN §9), run by the same runtime as the LLM CLIs so that it gets the
 * same environment, guard, capture and exit handling.
 *
 * It is the aka binary itself, so it always gets the brief by path, never on
 * the command line. It spends no LLM tokens: its usage is an exact 0, which is
 * a measurement, not a missing one. It keeps no thread, so there is no resume.
 */
#include "agents/adapters.h"

static int builtin_argv(const struct aka_cmdline *c, struct strvec *argv, struct aka_err *err)
{
    if (c->resume_id)
        return aka_err_set(err, AKA_EXIT_USAGE, "builtin: sessions cannot be resumed");
    strvec_pushv(argv, (const char *const[]){c->aka_bin, "tune-agent", "--brief", c->prompt,
                                             "--effort", c->effort, NULL});
    return 0;
}

static void builtin_parse(FILE *in, struct aka_agent_stream *s)
{
    (void)in;
    s->usage_delta_capable = false;
    aka_token_usage_zero(&s->terminal);
    aka_agent_stream_push_usage(s, AKA_EV_TERMINAL_USAGE, &s->terminal);
}

const struct aka_adapter aka_adapter_builtin = {
    .id = "builtin",
    .settings_var = "ATREX_BUILTIN_SESSION_SETTINGS",
    .can_resume = false,
    .own_session_id = true,
    .large_mode = AKA_PROMPT_FILE_REF,
    .brief_by_path = true,
    .build_argv = builtin_argv,
    .parse = builtin_parse,
};
