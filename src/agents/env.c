/*
 * env.c — the environment of an agent session (reference §2), as overrides on
 * top of the supervisor's own environment:
 *
 *   - ATREX_PRIVATE_REFERENCE_DIR is removed (a campaign that may show it
 *     passes it back in req->env);
 *   - PATH starts with the directory of this aka binary, so `aka eval`,
 *     `aka trace` ... inside the session are the supervisor's own;
 *   - pip may only take wheels and never asks questions; installs are refused
 *     anyway, this only makes an attempt fail faster;
 *   - BASH_ENV points at runtime/guard/session_guard.sh, the shell layer of
 *     the guard, sourced by every non-interactive bash the agent starts;
 *   - the protected gateway screen name and state directory, resolved here
 *     and written out so that the guard script and the poller agree;
 *   - IS_SANDBOX=1, the trace file for `aka trace`, Pi's version check and
 *     telemetry off, one Anthropic credential path for Claude;
 *   - for a confined session, ATREX_AKA_AGENT_SANDBOX (bwrap or none) and,
 *     under bwrap, TMPDIR=/tmp (the sandbox's own);
 *   - then the request's own variables, and ATREX_AGENT_CLI last so that
 *     nothing can claim to be another backend.
 */
#include "agents/internal.h"
#include "base/fs.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void aka_agent_self_exe(char *out, size_t size)
{
    static const char deleted[] = " (deleted)";
    ssize_t n = readlink("/proc/self/exe", out, size - 1);
    out[n > 0 ? n : 0] = '\0';
    /* A week-long supervisor outlives upgrades of its own binary: the kernel then
     * reports the old file as "PATH (deleted)", while the `aka eval` processes an
     * agent starts run the new file at PATH. Both are aka at PATH. */
    size_t len = strlen(out), dl = sizeof(deleted) - 1;
    if (len > dl && strcmp(out + len - dl, deleted) == 0)
        out[len - dl] = '\0';
}

void aka_agent_self_dir(struct strbuf *out)
{
    char exe[4096];
    aka_agent_self_exe(exe, sizeof(exe));
    char *slash = strrchr(exe, '/');
    strbuf_reset(out);
    if (slash)
        strbuf_add(out, exe, (size_t)(slash - exe));
}

/* PATH with dir first and nowhere else. */
static void path_with_first(const char *dir, const char *path, struct strbuf *out)
{
    strbuf_addf(out, "PATH=%s", dir);
    for (const char *p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        if (n && !(strlen(dir) == n && strncmp(p, dir, n) == 0)) {
            strbuf_addch(out, ':');
            strbuf_add(out, p, n);
        }
        p += n + (p[n] == ':');
    }
}

static void push_kv(struct strvec *env, const char *name, const char *value)
{
    strvec_pushf(env, "%s=%s", name, value);
}

static void gateway_vars(const struct aka_agent_request *req, struct strvec *env)
{
    struct aka_guard_config c;
    aka_guard_config_init(&c, req->env);
    push_kv(env, "ATREX_PROTECTED_GATEWAY_SCREEN", c.screen);
    push_kv(env, "ATREX_PROTECTED_GATEWAY_STATE_DIR", c.state_dir);
    aka_guard_config_release(&c);
}

static void backend_vars(const struct agent_env_in *in, struct strvec *env)
{
    const char *id = in->adapter->id;
    if (strcmp(id, "pi") == 0) {
        push_kv(env, "PI_SKIP_VERSION_CHECK", "1");
        push_kv(env, "PI_TELEMETRY", "0");
    }
    const char *token = aka_agent_env_lookup(in->req->env, "ANTHROPIC_AUTH_TOKEN");
    if (strcmp(id, "claude") == 0 && token && *token)
        strvec_push(env, "ANTHROPIC_API_KEY"); /* one credential path only */
}

int aka_agent_build_env(const struct agent_env_in *in, struct strvec *env, struct aka_err *err)
{
    struct strbuf buf = STRBUF_INIT, dir = STRBUF_INIT;
    if (!aka_is_file(in->guard_script))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: the session guard script is missing (wrong asset tree?)",
                           in->guard_script);
    strvec_push(env, "ATREX_PRIVATE_REFERENCE_DIR");
    aka_agent_self_dir(&dir);
    if (dir.len) {
        path_with_first(dir.buf, getenv("PATH"), &buf);
        strvec_push(env, buf.buf);
    }
    push_kv(env, "PIP_ONLY_BINARY", ":all:");
    push_kv(env, "PIP_DISABLE_PIP_VERSION_CHECK", "1");
    push_kv(env, "PIP_NO_INPUT", "1");
    push_kv(env, "BASH_ENV", in->guard_script);
    gateway_vars(in->req, env);
    push_kv(env, "IS_SANDBOX", "1");
    if (in->req->confine) /* `aka eval` inside knows it is nested (sandbox/binds.c) */
        push_kv(env, "ATREX_AKA_AGENT_SANDBOX", aka_agent_sandbox_names[in->req->confine->mode]);
    if (in->req->confine && in->req->confine->mode == AKA_AGENT_SANDBOX_BWRAP)
        push_kv(env, "TMPDIR", "/tmp"); /* the host's $TMPDIR is not in the sandbox */
    push_kv(env, "ATREX_AKA_TRACE_FILE", in->trace_file);
    backend_vars(in, env);
    for (const char *const *e = in->req->env; e && *e; e++)
        strvec_push(env, *e);
    push_kv(env, "ATREX_AGENT_CLI", in->adapter->id);
    strbuf_release(&buf);
    strbuf_release(&dir);
    return 0;
}
