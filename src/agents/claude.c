/*
 * claude.c — the Claude Code adapter: its command lines and the parser of its
 * stream-json output, which Qoder shares ("Claude-like", reference §3.1).
 *
 *   fresh:  claude --print --verbose --dangerously-skip-permissions
 *                  --output-format stream-json --session-id <SID> --effort <E>
 *                  [--settings <S>] [--model <M>] <PROMPT>
 *   resume: the same with `--resume <SID>` in place of `--session-id <SID>`.
 *
 * The session id is ours (a UUID) and never read back. A brief too large for
 * argv is given on stdin with no prompt argument, which `--print` reads.
 *
 * Usage: a `result` event carries the invocation's terminal usage (its
 * `usage`, else the per-model `modelUsage` map); every other event may carry
 * per-call usage in `usage` or `message.usage`. Claude repeats one assistant
 * message (same `message.id`, same usage) once per content block, so only the
 * first occurrence of an id counts. Without a `result` the terminal is the
 * sum of the deltas, labelled partial.
 */
#include "agents/adapters.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static int claude_argv(const struct aka_cmdline *c, struct strvec *argv, struct aka_err *err)
{
    strvec_pushv(argv, (const char *const[]){c->cli, "--print", "--verbose",
                                             "--dangerously-skip-permissions", "--output-format",
                                             "stream-json", NULL});
    strvec_push(argv, c->resume_id ? "--resume" : "--session-id");
    strvec_push(argv, c->resume_id ? c->resume_id : c->session_id);
    strvec_pushv(argv, (const char *const[]){"--effort", c->effort, NULL});
    if (c->settings)
        strvec_pushv(argv, (const char *const[]){"--settings", c->settings, NULL});
    if (c->model)
        strvec_pushv(argv, (const char *const[]){"--model", c->model, NULL});
    if (c->prompt_mode == AKA_PROMPT_ARGV)
        strvec_push(argv, c->prompt);
    else if (c->prompt_mode == AKA_PROMPT_FILE_REF)
        return aka_err_set(err, AKA_EXIT_USAGE, "claude: a file-reference prompt is not used");
    return 0;
}

/* ---- the Claude-like stream ----------------------------------------------- */

struct claude_state {
    struct aka_agent_stream *s;
    struct strvec seen_ids; /* message ids already counted */
    struct aka_token_usage deltas;
    bool have_terminal;
};

static bool is_true(const json_t *v)
{
    return json_is_true(v);
}

/* The text blocks of message.content[], or a plain string content. */
static bool content_text_matches(const json_t *content, bool (*match)(const char *))
{
    size_t i;
    json_t *item;
    if (json_is_string(content))
        return match(json_string_value(content));
    json_array_foreach(content, i, item)
    {
        const char *t = json_string_value(json_object_get(item, "text"));
        if (t && match(t))
            return true;
    }
    return false;
}

static bool contains_ci(const char *hay, const char *needle)
{
    return strcasestr(hay, needle) != NULL;
}

static bool transient_text(const char *t)
{
    while (isspace((unsigned char)*t))
        t++;
    size_t n = strlen(t);
    while (n && isspace((unsigned char)t[n - 1]))
        n--;
    const char *term = "API Error: terminated";
    if (n == strlen(term) && strncasecmp(t, term, n) == 0)
        return true;
    return contains_ci(t, "request rejected (429)") && contains_ci(t, "throttling") &&
           contains_ci(t, "exceeded your current quota");
}

bool aka_claude_is_transient_error(const json_t *ev)
{
    if (!is_true(json_object_get(ev, "isApiErrorMessage")))
        return false;
    json_t *content = json_object_get(json_object_get(ev, "message"), "content");
    return content_text_matches(content, transient_text);
}

/* Terminal usage of a result event: `usage`, else the sum over `modelUsage`. */
static void result_usage(const json_t *ev, struct aka_token_usage *u)
{
    aka_usage_from_json(json_object_get(ev, "usage"), AKA_USAGE_ANTHROPIC, u);
    if (u->total >= 0)
        return;
    json_t *models = json_object_get(ev, "modelUsage");
    if (!json_is_object(models) || json_object_size(models) == 0)
        return;
    struct aka_token_usage sum, one;
    aka_token_usage_zero(&sum);
    const char *name;
    json_t *m;
    json_object_foreach(models, name, m)
    {
        aka_usage_from_json(m, AKA_USAGE_ANTHROPIC, &one);
        aka_token_usage_add(&sum, &one);
    }
    *u = sum;
}

static void scan_tool_results(struct aka_agent_stream *s, const json_t *ev)
{
    const char *type = json_string_value(json_object_get(ev, "type"));
    if (type && strcmp(type, "tool_result") == 0 && !is_true(json_object_get(ev, "is_error")))
        aka_agent_stream_scan_receipts(s, json_object_get(ev, "content"));
    if (!type || strcmp(type, "user") != 0)
        return;
    size_t i;
    json_t *item;
    json_array_foreach(json_object_get(json_object_get(ev, "message"), "content"), i, item)
    {
        const char *t = json_string_value(json_object_get(item, "type"));
        if (t && strcmp(t, "tool_result") == 0 && !is_true(json_object_get(item, "is_error")))
            aka_agent_stream_scan_receipts(s, json_object_get(item, "content"));
    }
}

static void claude_event(json_t *ev, void *data)
{
    struct claude_state *st = data;
    const char *type = json_string_value(json_object_get(ev, "type"));
    struct aka_token_usage u;
    if (aka_claude_is_transient_error(ev))
        st->s->transient_api_error = true;
    if (type && strcmp(type, "result") == 0) {
        result_usage(ev, &u);
        if (u.total >= 0) {
            st->s->terminal = u; /* the last result wins */
            st->have_terminal = true;
            aka_agent_stream_push_usage(st->s, AKA_EV_TERMINAL_USAGE, &u);
        }
        return;
    }
    json_t *msg = json_object_get(ev, "message"), *usage = json_object_get(ev, "usage");
    aka_usage_from_json(usage ? usage : json_object_get(msg, "usage"), AKA_USAGE_ANTHROPIC, &u);
    const char *id = json_string_value(json_object_get(msg, "id"));
    if (u.total >= 0 && !(id && strvec_find(&st->seen_ids, id) >= 0)) {
        if (id)
            strvec_push(&st->seen_ids, id);
        aka_agent_stream_push_usage(st->s, AKA_EV_USAGE_DELTA, &u);
        aka_token_usage_add(&st->deltas, &u);
    }
    scan_tool_results(st->s, ev);
}

void aka_claude_like_parse(FILE *in, struct aka_agent_stream *s)
{
    struct claude_state st = {.s = s, .seen_ids = STRVEC_INIT};
    aka_token_usage_zero(&st.deltas);
    s->usage_delta_capable = true;
    aka_stream_foreach_object(in, claude_event, &st);
    if (!st.have_terminal && s->usage_delta_observed) {
        s->terminal = st.deltas;
        s->terminal.measurement = AKA_TOKENS_PARTIAL;
    }
    strvec_clear(&st.seen_ids);
}

const struct aka_adapter aka_adapter_claude = {
    .id = "claude",
    .settings_var = "ATREX_CLAUDE_SESSION_SETTINGS",
    .can_resume = true,
    .own_session_id = true,
    .large_mode = AKA_PROMPT_STDIN,
    .build_argv = claude_argv,
    .parse = aka_claude_like_parse,
};
