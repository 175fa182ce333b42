/*
 * answer.c — the model's final message in a captured stdout, in each CLI's
 * own event format. The stream parsers only count tokens and find markers;
 * a plan reviewer is asked for text, and this is where that text is:
 *
 *   claude, qodercli  the last `result` event's "result" string, else the
 *                     text blocks of the last assistant message
 *   codex             the last `item.completed` whose item is an agent_message
 *   pi                the text blocks of the last assistant `message_end`
 */
#include "agents/adapters.h"
#include "base/fs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct answer {
    const char *backend;
    struct strbuf result, message; /* the result event's text, the last message's */
};

/* The text blocks of content[] ({"type":"text","text":...}), joined. */
static void text_blocks(const json_t *content, struct strbuf *out)
{
    size_t i;
    const json_t *block;
    strbuf_reset(out);
    if (json_is_string(content)) {
        strbuf_addstr(out, json_string_value(content));
        return;
    }
    json_array_foreach(content, i, block)
    {
        const char *type = json_string_value(json_object_get(block, "type"));
        const char *text = json_string_value(json_object_get(block, "text"));
        if (type && strcmp(type, "text") == 0 && text)
            strbuf_addf(out, "%s%s", out->len ? "\n" : "", text);
    }
}

static void claude_like(json_t *ev, struct answer *a, const char *type)
{
    const json_t *msg = json_object_get(ev, "message");
    const char *result = json_string_value(json_object_get(ev, "result"));
    const char *role = json_string_value(json_object_get(msg, "role"));
    if (strcmp(type, "result") == 0 && result) {
        strbuf_reset(&a->result);
        strbuf_addstr(&a->result, result);
    } else if (strcmp(type, "assistant") == 0 && (!role || strcmp(role, "assistant") == 0) &&
               !json_is_true(json_object_get(ev, "isApiErrorMessage"))) {
        struct strbuf text = STRBUF_INIT;
        text_blocks(json_object_get(msg, "content"), &text);
        if (text.len) { /* a tool-use-only message is not an answer */
            strbuf_reset(&a->message);
            strbuf_addstr(&a->message, text.buf);
        }
        strbuf_release(&text);
    }
}

static void on_event(json_t *ev, void *data)
{
    struct answer *a = data;
    const char *type = json_string_value(json_object_get(ev, "type"));
    const json_t *item = json_object_get(ev, "item"), *msg = json_object_get(ev, "message");
    if (!type)
        return;
    if (strcmp(a->backend, "codex") == 0) {
        const char *kind = json_string_value(json_object_get(item, "type"));
        const char *text = json_string_value(json_object_get(item, "text"));
        if (strcmp(type, "item.completed") == 0 && kind && strcmp(kind, "agent_message") == 0 &&
            text) {
            strbuf_reset(&a->message);
            strbuf_addstr(&a->message, text);
        }
    } else if (strcmp(a->backend, "pi") == 0) {
        const char *role = json_string_value(json_object_get(msg, "role"));
        if (strcmp(type, "message_end") == 0 && role && strcmp(role, "assistant") == 0) {
            struct strbuf text = STRBUF_INIT;
            text_blocks(json_object_get(msg, "content"), &text);
            if (text.len) {
                strbuf_reset(&a->message);
                strbuf_addstr(&a->message, text.buf);
            }
            strbuf_release(&text);
        }
    } else {
        claude_like(ev, a, type);
    }
}

int aka_agent_final_message(const char *backend, const char *stdout_path, struct strbuf *out,
                            struct aka_err *err)
{
    struct answer a = {backend ? backend : "", STRBUF_INIT, STRBUF_INIT};
    FILE *in = fopen(stdout_path, "re");
    if (!in)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: cannot read the captured output: %s",
                           stdout_path, strerror(errno));
    aka_stream_foreach_object(in, on_event, &a);
    fclose(in);
    strbuf_reset(out);
    strbuf_addstr(out, a.result.len ? a.result.buf : a.message.buf);
    strbuf_release(&a.result);
    strbuf_release(&a.message);
    return 0;
}
