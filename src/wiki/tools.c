/*
 * tools.c — plugin tools, callable through aka (`aka wiki tool NAME [ARG...]`): the
 * command a loaded plugin declares in contributes.tools, run with the caller's
 * standard streams. Inside an episode the plugin set must be the one the campaign
 * pinned (campaign.json "plugins"): a tool an agent added or changed never runs.
 *
 * command[0] containing a '/' is a path inside the plugin (no "..", not absolute);
 * a bare name is looked up in PATH. In the other elements ${PLUGIN_ROOT} is replaced
 * by the plugin's directory; the tool also gets it as $AKA_PLUGIN_ROOT.
 */
#include "base/fs.h"
#include "base/json.h"
#include "base/proc.h"
#include "wiki/wiki_impl.h"
#include "workspace/workspace.h"

#include <string.h>

static void expand(const char *arg, const char *root, struct strbuf *out)
{
    static const char var[] = "${PLUGIN_ROOT}";
    strbuf_reset(out);
    for (const char *p = arg; *p;) {
        const char *hit = strstr(p, var);
        if (!hit) {
            strbuf_addstr(out, p);
            break;
        }
        strbuf_add(out, p, (size_t)(hit - p));
        strbuf_addstr(out, root);
        p = hit + strlen(var);
    }
}

/* The tool's command from its plugin's manifest, resolved; 1 when no plugin has it. */
static int resolve(const struct aka_wiki_plugin *p, const char *name, struct strvec *argv,
                   struct aka_err *err)
{
    struct strbuf man = STRBUF_INIT, arg = STRBUF_INIT;
    json_t *doc = NULL, *t, *v;
    size_t i, k;
    aka_path_join(&man, p->root, "plugin.json");
    int rc = aka_json_load_file(man.buf, &doc, err) < 0 ? -1 : 1;
    json_array_foreach(json_object_get(json_object_get(doc, "contributes"), "tools"), i, t)
    {
        if (rc != 1 || strcmp(json_string_value(json_object_get(t, "name")), name) != 0)
            continue;
        json_array_foreach(json_object_get(t, "command"), k, v)
        {
            const char *s = json_string_value(v);
            if (k == 0 && strchr(s, '/') && (s[0] == '/' || strstr(s, ".."))) {
                rc = aka_err_set(err, AKA_EXIT_USAGE,
                                 "%s: tools[%zu].command[0]: \"%s\" must be a path inside the "
                                 "plugin",
                                 man.buf, i, s);
                break;
            }
            if (k == 0 && strchr(s, '/'))
                aka_path_join(&arg, p->root, s);
            else
                expand(s, p->root, &arg);
            strvec_push(argv, arg.buf);
            rc = 0;
        }
    }
    json_decref(doc);
    strbuf_release(&man);
    strbuf_release(&arg);
    return rc;
}

/* In an episode (or any campaign workspace): the plugins must be the pinned ones. */
static int check_pin(struct aka_wiki *w, const char *ws, struct aka_err *err)
{
    struct aka_ws_campaign c;
    struct strbuf path = STRBUF_INIT;
    int rc = 0;
    aka_ws_path(&path, ws, AKA_WS_CAMPAIGN);
    if (aka_is_file(path.buf)) {
        rc = aka_ws_campaign_load(ws, 0, &c, err);
        const json_t *pin = rc == 0 ? json_object_get(c.doc, "plugins") : NULL;
        if (pin && aka_wiki_pin_verify(w, pin, err) < 0) {
            aka_err_prefix(err, "%s: plugins", path.buf);
            err->code = AKA_EXIT_USAGE;
            rc = -1;
        }
        aka_ws_campaign_release(&c);
    }
    strbuf_release(&path);
    return rc;
}

int aka_wiki_tool_run(struct aka_wiki *w, const char *ws, const char *name,
                      const struct strvec *args, int *exit_code, struct aka_err *err)
{
    struct strvec argv = STRVEC_INIT, env = STRVEC_INIT;
    const struct aka_wiki_plugin *owner = NULL;
    int rc = ws && *ws ? check_pin(w, ws, err) : 0;
    for (size_t i = 0; rc == 0 && !owner && i < w->plugins.n; i++) {
        const struct aka_wiki_plugin *p = &w->plugins.v[i];
        if (p->skipped || strvec_find(&p->tools, name) < 0)
            continue;
        owner = p;
        rc = resolve(p, name, &argv, err);
    }
    if (rc > 0 || (rc == 0 && !owner)) /* 1: the manifest no longer declares it */
        rc =
            aka_err_set(err, AKA_EXIT_USAGE, "wiki tool: no loaded plugin has a tool \"%s\"", name);
    for (size_t i = 0; rc == 0 && args && i < args->n; i++)
        strvec_push(&argv, args->v[i]);
    if (rc == 0 && owner) {
        struct proc_result res;
        strvec_pushf(&env, "AKA_PLUGIN_ROOT=%s", owner->root);
        struct proc_spec spec = {.argv = (const char *const *)argv.v,
                                 .env = (const char *const *)env.v};
        proc_result_init(&res);
        rc = proc_run(&spec, &res, err);
        *exit_code = res.exit_code;
        proc_result_release(&res);
    }
    strvec_clear(&argv);
    strvec_clear(&env);
    return rc;
}
