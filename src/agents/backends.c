/*
 * backends.c — the adapter registry and what every backend shares: the
 * settings-variable lookup with its generic fallback, effort names, and
 * parsing a captured stdout file with the backend's parser.
 */
#include "agents/adapters.h"
#include "base/fs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --agent-cli order; the first is the default of upstream campaigns. */
static const char *const backend_names[] = {"claude", "qodercli", "codex", "pi", "builtin", NULL};

static const struct aka_adapter *const adapters[] = {
    &aka_adapter_claude, &aka_adapter_qodercli, &aka_adapter_codex,
    &aka_adapter_pi,     &aka_adapter_builtin,  NULL,
};

const char *const *aka_agent_backends(void)
{
    return backend_names;
}

const struct aka_adapter *aka_adapter_find(const char *id)
{
    for (size_t i = 0; id && adapters[i]; i++)
        if (strcmp(adapters[i]->id, id) == 0)
            return adapters[i];
    return NULL;
}

bool aka_agent_can_resume(const char *backend)
{
    const struct aka_adapter *a = aka_adapter_find(backend);
    return a && a->can_resume;
}

bool aka_agent_effort_valid(const char *effort)
{
    static const char *const efforts[] = {"low", "medium", "high", "xhigh", "max", NULL};
    for (size_t i = 0; effort && efforts[i]; i++)
        if (strcmp(effort, efforts[i]) == 0)
            return true;
    return false;
}

const char *aka_agent_env_lookup(const char *const *env, const char *name)
{
    size_t n = strlen(name);
    bool given = false;
    const char *value = NULL;
    /* The last entry wins, as in the child's environment; a bare "NAME" removes it. */
    for (const char *const *e = env; e && *e; e++) {
        if (strncmp(*e, name, n) != 0 || ((*e)[n] != '=' && (*e)[n] != '\0'))
            continue;
        given = true;
        value = (*e)[n] == '=' ? *e + n + 1 : NULL;
    }
    return given ? value : getenv(name);
}

const char *aka_agent_settings(const struct aka_adapter *a, const char *const *env)
{
    const char *own = aka_agent_env_lookup(env, a->settings_var);
    if (own && *own)
        return own;
    const char *generic = aka_agent_env_lookup(env, "ATREX_SESSION_SETTINGS");
    return generic && *generic ? generic : NULL;
}

void aka_agent_parse_buf(const struct aka_adapter *a, const char *buf, size_t len,
                         struct aka_agent_stream *s)
{
    FILE *in = len ? fmemopen((void *)buf, len, "r") : NULL;
    if (!in) { /* fmemopen refuses an empty buffer: parse an empty stream */
        in = fopen("/dev/null", "re");
        if (!in)
            return;
    }
    a->parse(in, s);
    fclose(in);
}

int aka_agent_parse_file(const struct aka_adapter *a, const char *path, struct aka_agent_stream *s,
                         struct aka_err *err)
{
    FILE *in = fopen(path, "re");
    if (!in)
        return aka_err_set(err, AKA_EXIT_ENV, "%s: cannot read the captured stream", path);
    a->parse(in, s);
    fclose(in);
    return 0;
}
