/*
 * pi.c — the Pi coding-agent adapter (reference §3.4).
 *
 *   pi --mode json --session-id <SID> --approve --thinking <E>
 *      [--provider <P>] [--model <M>] <PROMPT>
 *
 * Settings are a JSON object with only `provider` and `model`; API keys never
 * go on a command line. There is no resume. A brief too large for argv is
 * attached as `@<file>` (Pi includes such a file in the first prompt) with a
 * one-line message after it.
 *
 * Usage arrives per message (`message_end` of the assistant or of a tool
 * result, and `compaction_end`); the terminal is their sum, and it is only
 * exact when the run reached `agent_settled`.
 */
#include "agents/adapters.h"

#include <ctype.h>
#include <string.h>

/* A trimmed, non-empty settings string, copied into out. */
static int pi_setting(json_t *doc, const char *key, char *out, size_t size, struct aka_err *err)
{
    json_t *v = json_object_get(doc, key);
    out[0] = '\0';
    if (!v)
        return 0;
    const char *s = json_string_value(v);
    while (s && isspace((unsigned char)*s))
        s++;
    size_t n = s ? strlen(s) : 0;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (!n || n >= size)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "ATREX_PI_SESSION_SETTINGS: %s: expected a non-empty string", key);
    snprintf(out, size, "%.*s", (int)n, s);
    return 0;
}

static int pi_unknown_keys(json_t *doc, struct aka_err *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(doc, key, v)
    {
        if (strcmp(key, "provider") != 0 && strcmp(key, "model") != 0)
            return aka_err_set(err, AKA_EXIT_USAGE, "ATREX_PI_SESSION_SETTINGS: %s: unknown key",
                               key);
    }
    return 0;
}

static int pi_settings(const char *settings, char *provider, char *model, size_t size,
                       struct aka_err *err)
{
    json_t *doc = json_loads(settings, 0, NULL);
    int rc = 0;
    if (!json_is_object(doc))
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "ATREX_PI_SESSION_SETTINGS: expected a JSON object with optional "
                         "\"provider\" and \"model\"");
    else if (pi_unknown_keys(doc, err) < 0 ||
             pi_setting(doc, "provider", provider, size, err) < 0 ||
             pi_setting(doc, "model", model, size, err) < 0)
        rc = -1;
    json_decref(doc);
    return rc;
}

static int pi_argv(const struct aka_cmdline *c, struct strvec *argv, struct aka_err *err)
{
    char provider[256] = "", model[256] = "";
    if (c->resume_id)
        return aka_err_set(err, AKA_EXIT_USAGE, "pi: sessions cannot be resumed");
    if (c->settings && pi_settings(c->settings, provider, model, sizeof(model), err) < 0)
        return -1;
    if (c->model)
        snprintf(model, sizeof(model), "%s", c->model);
    strvec_pushv(argv,
                 (const char *const[]){c->cli, "--mode", "json", "--session-id", c->session_id,
                                       "--approve", "--thinking", c->effort, NULL});
    if (provider[0])
        strvec_pushv(argv, (const char *const[]){"--provider", provider, NULL});
    if (model[0])
        strvec_pushv(argv, (const char *const[]){"--model", model, NULL});
    if (c->prompt_mode == AKA_PROMPT_STDIN)
        return aka_err_set(err, AKA_EXIT_USAGE, "pi: a stdin prompt is not used");
    if (c->prompt_mode == AKA_PROMPT_FILE_REF) {
        strvec_pushf(argv, "@%s", c->prompt);
        strvec_push(argv, "The attached file is your brief for this session. Follow it exactly.");
    } else {
        strvec_push(argv, c->prompt);
    }
    return 0;
}

struct pi_state {
    struct aka_agent_stream *s;
    struct aka_token_usage sum;
    bool settled;
};

static bool str_eq(const json_t *v, const char *want)
{
    return json_is_string(v) && strcmp(json_string_value(v), want) == 0;
}

static void pi_delta(struct pi_state *st, const json_t *usage)
{
    struct aka_token_usage u;
    aka_usage_from_json(usage, AKA_USAGE_PI, &u);
    if (u.total < 0)
        return;
    aka_agent_stream_push_usage(st->s, AKA_EV_USAGE_DELTA, &u);
    aka_token_usage_add(&st->sum, &u);
}

static void pi_event(json_t *ev, void *data)
{
    struct pi_state *st = data;
    json_t *type = json_object_get(ev, "type");
    if (str_eq(type, "message_end")) {
        json_t *msg = json_object_get(ev, "message"), *role = json_object_get(msg, "role");
        if (!str_eq(role, "assistant") && !str_eq(role, "toolResult"))
            return;
        pi_delta(st, json_object_get(msg, "usage"));
        if (str_eq(role, "toolResult") && !json_is_true(json_object_get(msg, "isError")))
            aka_agent_stream_scan_receipts(st->s, json_object_get(msg, "content"));
    } else if (str_eq(type, "compaction_end")) {
        pi_delta(st, json_object_get(json_object_get(ev, "result"), "usage"));
    } else if (str_eq(type, "agent_settled")) {
        st->settled = true;
    }
}

static void pi_parse(FILE *in, struct aka_agent_stream *s)
{
    struct pi_state st = {.s = s};
    aka_token_usage_zero(&st.sum);
    s->usage_delta_capable = true;
    aka_stream_foreach_object(in, pi_event, &st);
    if (!s->usage_delta_observed)
        return; /* the sum of nothing is unavailable, not 0 */
    s->terminal = st.sum;
    if (st.settled)
        aka_agent_stream_push_usage(s, AKA_EV_TERMINAL_USAGE, &s->terminal);
    else
        s->terminal.measurement = AKA_TOKENS_PARTIAL;
}

const struct aka_adapter aka_adapter_pi = {
    .id = "pi",
    .settings_var = "ATREX_PI_SESSION_SETTINGS",
    .can_resume = false,
    .own_session_id = true,
    .large_mode = AKA_PROMPT_FILE_REF,
    .build_argv = pi_argv,
    .parse = pi_parse,
};
