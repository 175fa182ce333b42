/*
 * qodercli.c — the Qoder CLI adapter (reference §3.2).
 *
 *   qodercli --print --dangerously-skip-permissions --output-format stream-json
 *            --session-id <SID> --no-session-persistence --reasoning-effort <E>
 *            [--settings <S>] [--model <M>] <PROMPT>
 *
 * No `--verbose`, the effort flag is `--reasoning-effort`, and no session is
 * kept, so there is no resume. The stream is Claude-like, with one extra rule:
 * some models report every count as 0. A run whose terminal total and every
 * per-call total are 0 "does not report usage": its usage events are dropped
 * (markers kept) and the terminal is unavailable, never an exact 0 that a
 * token budget would believe. A brief too large for argv is not piped (that
 * CLI's stdin handling is not documented for us); the prompt points at the
 * brief file instead, which the agent reads with its tools.
 */
#include "agents/adapters.h"

#include <string.h>

static int qoder_argv(const struct aka_cmdline *c, struct strvec *argv, struct aka_err *err)
{
    strvec_pushv(argv, (const char *const[]){c->cli, "--print", "--dangerously-skip-permissions",
                                             "--output-format", "stream-json", "--session-id",
                                             c->session_id, "--no-session-persistence",
                                             "--reasoning-effort", c->effort, NULL});
    if (c->resume_id)
        return aka_err_set(err, AKA_EXIT_USAGE, "qodercli: sessions cannot be resumed");
    if (c->settings)
        strvec_pushv(argv, (const char *const[]){"--settings", c->settings, NULL});
    if (c->model)
        strvec_pushv(argv, (const char *const[]){"--model", c->model, NULL});
    if (c->prompt_mode == AKA_PROMPT_STDIN)
        return aka_err_set(err, AKA_EXIT_USAGE, "qodercli: a stdin prompt is not used");
    if (c->prompt_mode == AKA_PROMPT_FILE_REF)
        strvec_pushf(argv,
                     "Your brief for this session is the file %s. Read all of it before "
                     "doing anything else, then follow it exactly.",
                     c->prompt);
    else
        strvec_push(argv, c->prompt);
    return 0;
}

static bool all_usage_zero(const struct aka_agent_stream *s)
{
    if (s->terminal.total != 0)
        return false;
    for (size_t i = 0; i < s->events.n; i++)
        if (s->events.v[i].kind != AKA_EV_PHASE_MARKER && s->events.v[i].usage.total != 0)
            return false;
    return true;
}

static void qoder_parse(FILE *in, struct aka_agent_stream *s)
{
    aka_claude_like_parse(in, s);
    if (!all_usage_zero(s))
        return;
    aka_agent_stream_drop_usage(s);
    aka_token_usage_unavailable(&s->terminal);
    aka_agent_stream_observe(s, "qodercli_usage_not_reported");
}

const struct aka_adapter aka_adapter_qodercli = {
    .id = "qodercli",
    .settings_var = "ATREX_QODER_SESSION_SETTINGS",
    .can_resume = false,
    .own_session_id = true,
    .large_mode = AKA_PROMPT_FILE_REF,
    .build_argv = qoder_argv,
    .parse = qoder_parse,
};
