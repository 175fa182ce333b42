/*
 * brief.c — rendering a brief from a runtime/prompts/ template.
 *
 * Templates hold {{name}} placeholders (lower-case letters, digits, '_').
 * Every placeholder must have a value: an unknown one is an error naming the
 * template line, never an empty string, because a brief with a hole in it
 * sends an agent off with half its instructions. Values are inserted as they
 * are (no recursive expansion), so text from a journal or a memory record
 * can never inject a placeholder of its own.
 */
#include "agents/agents.h"
#include "base/fs.h"

#include <ctype.h>
#include <string.h>

#define NAME_MAX_LEN 64

static const char *lookup(const struct aka_brief_var *vars, const char *name, size_t n)
{
    for (; vars && vars->name; vars++)
        if (strlen(vars->name) == n && strncmp(vars->name, name, n) == 0)
            return vars->value ? vars->value : "";
    return NULL;
}

static bool valid_name(const char *s, size_t n)
{
    if (n == 0 || n > NAME_MAX_LEN)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '_')
            return false;
    return true;
}

static size_t line_of(const char *text, const char *at)
{
    size_t line = 1;
    for (const char *p = text; p < at; p++)
        line += *p == '\n';
    return line;
}

int aka_brief_render(const char *template_path, const struct aka_brief_var *vars,
                     struct strbuf *out, struct aka_err *err)
{
    struct strbuf text = STRBUF_INIT;
    if (aka_read_file(template_path, &text, AKA_READ_LIMIT_DEFAULT, err) < 0)
        return -1;
    strbuf_reset(out);
    const char *p = text.buf;
    int rc = 0;
    while (rc == 0 && *p) {
        const char *open = strstr(p, "{{");
        if (!open) {
            strbuf_addstr(out, p);
            break;
        }
        strbuf_add(out, p, (size_t)(open - p));
        const char *close = strstr(open + 2, "}}");
        size_t n = close ? (size_t)(close - open - 2) : 0;
        const char *value = close && valid_name(open + 2, n) ? lookup(vars, open + 2, n) : NULL;
        if (!close || !valid_name(open + 2, n))
            rc = aka_err_set(err, AKA_EXIT_USAGE,
                             "%s:%zu: malformed placeholder (expected "
                             "{{name}} with a-z, 0-9, _)",
                             template_path, line_of(text.buf, open));
        else if (!value)
            rc = aka_err_set(err, AKA_EXIT_USAGE, "%s:%zu: unknown placeholder {{%.*s}}",
                             template_path, line_of(text.buf, open), (int)n, open + 2);
        else
            strbuf_addstr(out, value);
        p = close ? close + 2 : p + strlen(p);
    }
    strbuf_release(&text);
    return rc;
}
