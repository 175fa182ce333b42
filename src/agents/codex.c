/*
 * codex.c — the OpenAI Codex CLI adapter: command lines, settings, and the
 * parser of `codex exec --json` output (reference §3.3).
 *
 *   fresh:  codex exec --json --color never --dangerously-bypass-approvals-and-sandbox
 *                 -c model_reasoning_effort="<E>" [-c model="<M>"] [-c k=v ...] <PROMPT>
 *   resume: codex exec resume --json --dangerously-bypass-approvals-and-sandbox
 *                 -c model_reasoning_effort="<E>" [-c ...] <THREAD> <PROMPT>
 *
 * Codex names its own thread (the first `thread.started` event), so our UUID
 * is unused. Settings `-c` pairs come after the effort pair so that they can
 * override it. A brief too large for argv is given as `-` with the brief on
 * stdin, which `codex exec` reads.
 *
 * stdout has only the thread's cumulative usage (`turn.completed`); per-call
 * deltas come from the rollout ledger (codex_ledger.c). Cached input tokens
 * are part of the input count for OpenAI, so they are never added to the
 * total.
 */
#include "agents/adapters.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool config_key_valid(const char *k, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)k[i]) && !strchr("_.-", k[i]))
            return false;
    return true;
}

static bool scalar_valid(const json_t *v)
{
    return json_is_string(v) || json_is_integer(v) || json_is_boolean(v) ||
           (json_is_real(v) && isfinite(json_real_value(v)));
}

static bool value_valid(const json_t *v)
{
    size_t i;
    json_t *item;
    if (!json_is_array(v))
        return scalar_valid(v);
    json_array_foreach(v, i, item)
    {
        if (!scalar_valid(item))
            return false;
    }
    return true;
}

/* {"key": value, ...} → -c key=<JSON text> (booleans as true/false). */
static int settings_object(json_t *doc, struct strvec *argv, struct aka_err *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(doc, key, v)
    {
        if (!config_key_valid(key, strlen(key)) || !value_valid(v))
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "ATREX_CODEX_SESSION_SETTINGS: %s: expected a key of "
                               "[A-Za-z0-9_.-] with a string, number, boolean or array of those",
                               key);
        char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        strvec_push(argv, "-c");
        strvec_pushf(argv, "%s=%s", key, text);
        free(text);
    }
    return 0;
}

/* ["key=value", ...] → passed through unchanged. */
static int settings_array(json_t *doc, struct strvec *argv, struct aka_err *err)
{
    size_t i;
    json_t *v;
    json_array_foreach(doc, i, v)
    {
        const char *s = json_string_value(v), *eq = s ? strchr(s, '=') : NULL;
        if (!eq || !config_key_valid(s, (size_t)(eq - s)))
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "ATREX_CODEX_SESSION_SETTINGS[%zu]: expected \"key=value\" with a "
                               "key of [A-Za-z0-9_.-]",
                               i);
        strvec_pushv(argv, (const char *const[]){"-c", s, NULL});
    }
    return 0;
}

static int codex_settings(const char *settings, struct strvec *argv, struct aka_err *err)
{
    json_error_t je;
    json_t *doc = json_loads(settings, 0, &je);
    int rc;
    if (json_is_object(doc))
        rc = settings_object(doc, argv, err);
    else if (json_is_array(doc))
        rc = settings_array(doc, argv, err);
    else
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "ATREX_CODEX_SESSION_SETTINGS: expected a JSON object or an array of "
                         "\"key=value\" strings");
    json_decref(doc);
    return rc;
}

static int codex_argv(const struct aka_cmdline *c, struct strvec *argv, struct aka_err *err)
{
    strvec_pushv(argv, (const char *const[]){c->cli, "exec", NULL});
    if (c->resume_id)
        strvec_pushv(argv, (const char *const[]){"resume", "--json", NULL});
    else
        strvec_pushv(argv, (const char *const[]){"--json", "--color", "never", NULL});
    strvec_pushv(argv,
                 (const char *const[]){"--dangerously-bypass-approvals-and-sandbox", "-c", NULL});
    strvec_pushf(argv, "model_reasoning_effort=\"%s\"", c->effort);
    if (c->model) {
        strvec_push(argv, "-c");
        strvec_pushf(argv, "model=\"%s\"", c->model);
    }
    if (c->settings && codex_settings(c->settings, argv, err) < 0)
        return -1;
    if (c->resume_id)
        strvec_push(argv, c->resume_id);
    if (c->prompt_mode == AKA_PROMPT_FILE_REF)
        return aka_err_set(err, AKA_EXIT_USAGE, "codex: a file-reference prompt is not used");
    strvec_push(argv, c->prompt_mode == AKA_PROMPT_STDIN ? "-" : c->prompt);
    return 0;
}

/* ---- stdout --------------------------------------------------------------- */

static bool thread_id_valid(const char *id, size_t n)
{
    if (n < 32 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)id[i]) && id[i] != '-')
            return false;
    return true;
}

static void take_thread(struct aka_agent_stream *s, const json_t *ev)
{
    json_t *v = json_object_get(ev, "thread_id");
    const char *id = json_string_value(v ? v : json_object_get(ev, "threadId"));
    if (!id || s->session_id[0])
        return; /* only the first thread.started names the thread */
    while (isspace((unsigned char)*id))
        id++;
    size_t n = strlen(id);
    while (n && isspace((unsigned char)id[n - 1]))
        n--;
    if (thread_id_valid(id, n) && n < sizeof(s->session_id))
        snprintf(s->session_id, sizeof(s->session_id), "%.*s", (int)n, id);
}

static bool str_eq(const json_t *v, const char *want)
{
    return json_is_string(v) && strcmp(json_string_value(v), want) == 0;
}

static void codex_event(json_t *ev, void *data)
{
    struct aka_agent_stream *s = data;
    json_t *type = json_object_get(ev, "type");
    if (str_eq(type, "thread.started")) {
        take_thread(s, ev);
    } else if (str_eq(type, "turn.completed") || str_eq(type, "result")) {
        struct aka_token_usage u;
        aka_usage_from_json(json_object_get(ev, "usage"), AKA_USAGE_OPENAI, &u);
        if (u.total >= 0)
            s->terminal = u; /* cumulative for the thread: the last one wins */
    } else if (str_eq(type, "item.completed")) {
        json_t *item = json_object_get(ev, "item"), *code = json_object_get(item, "exit_code");
        if (str_eq(json_object_get(item, "type"), "command_execution") && json_is_integer(code) &&
            json_integer_value(code) == 0 && str_eq(json_object_get(item, "status"), "completed"))
            aka_agent_stream_scan_receipts(s, json_object_get(item, "aggregated_output"));
    }
}

static void codex_parse(FILE *in, struct aka_agent_stream *s)
{
    s->usage_delta_capable = false; /* until the ledger supplies deltas */
    aka_stream_foreach_object(in, codex_event, s);
    if (s->terminal.total >= 0)
        aka_agent_stream_push_usage(s, AKA_EV_TERMINAL_USAGE, &s->terminal);
}

const struct aka_adapter aka_adapter_codex = {
    .id = "codex",
    .settings_var = "ATREX_CODEX_SESSION_SETTINGS",
    .can_resume = true,
    .own_session_id = false,
    .large_mode = AKA_PROMPT_STDIN,
    .build_argv = codex_argv,
    .parse = codex_parse,
};
