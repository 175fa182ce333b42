/*
 * plugins.c — the campaign's wiki plugins (DESIGN §8): pinned at the first start
 * (campaign.json "plugins": the set fingerprint and each plugin's sha256 fingerprint over
 * all its files), verified on every resume (a plugin added, removed or changed is refused,
 * named), and what they contribute handed to each episode: skills installed for the
 * agent's backend, instructions appended to the brief.
 */
#include "base/fs.h"
#include "base/json.h"
#include "optimize/internal.h"
#include "wiki/wiki.h"

#include <string.h>

#define INSTRUCTIONS_CAP (16u << 10) /* bytes of one plugin instruction file in a brief */

static void collect(struct aka_run *r, const struct aka_wiki_plugin_list *pl)
{
    struct strbuf p = STRBUF_INIT;
    for (size_t i = 0; i < pl->n; i++) {
        const struct aka_wiki_plugin *pg = &pl->v[i];
        for (size_t k = 0; !pg->skipped && k < pg->skills.n; k++) {
            aka_path_join(&p, pg->root, pg->skills.v[k]);
            strvec_push(&r->plugin_skills, p.buf);
        }
        for (size_t k = 0; !pg->skipped && k < pg->instructions.n; k++) {
            aka_path_join(&p, pg->root, pg->instructions.v[k]);
            strvec_push(&r->plugin_instructions, p.buf);
            strvec_pushf(&r->plugin_instruction_names, "%s/%s", pg->name, pg->instructions.v[k]);
        }
    }
    strbuf_release(&p);
}

/*
 * Resume: every plugin campaign.json pinned must be unchanged (a changed or removed one is
 * refused: the evidence of earlier episodes rests on it). A plugin added since is knowledge a
 * person installed: it is said, and pinned from now on (campaign.json's pin is rewritten).
 */
static int verify(struct aka_run *r, struct aka_wiki *w, struct aka_err *err)
{
    struct aka_ws_campaign c;
    struct strvec added = STRVEC_INIT;
    int rc = aka_ws_campaign_load(r->ws.buf, 0, &c, err);
    const json_t *pin = rc == 0 ? json_object_get(c.doc, "plugins") : NULL;
    if (pin && aka_wiki_pin_verify_kept(w, pin, &added, err) < 0) {
        struct strbuf msg = STRBUF_INIT;
        strbuf_addstr(&msg, err->msg);
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "%s: plugins: %s (a campaign's plugins are pinned at its first start: "
                         "restore the plugin, or start a new campaign)",
                         c.path, msg.buf);
        strbuf_release(&msg);
    } else if (pin && added.n) {
        for (size_t i = 0; i < added.n; i++)
            aka_optimize_progress(r,
                                  "plugin %s was added since the campaign pinned its plugins: "
                                  "pinned now",
                                  added.v[i]);
        json_object_set(c.doc, "plugins", r->plugin_pin);
        rc = aka_json_write_file(c.path, c.doc, err);
    }
    aka_ws_campaign_release(&c);
    strvec_clear(&added);
    return rc;
}

int aka_optimize_pin_plugins(struct aka_run *r, struct aka_err *err)
{
    struct aka_wiki_config cfg = {
        .repo_root = r->env.repo_root, .workspace = r->ws.buf, .quiet = true};
    struct aka_wiki *w = NULL;
    int rc = aka_wiki_open(&cfg, &w, err);
    if (rc == 0) {
        json_decref(r->plugin_pin);
        r->plugin_pin = aka_wiki_pin(w);
        r->camp.plugins = r->plugin_pin;
        rc = aka_campaign_pin_or_check(r->ws.buf, &r->camp, err);
    }
    if (rc == 0)
        rc = verify(r, w, err);
    if (rc == 0 && !r->plugin_skills.n && !r->plugin_instructions.n)
        collect(r, aka_wiki_plugins(w));
    if (w)
        aka_wiki_close(w);
    return rc;
}

int aka_optimize_plugin_brief(const struct aka_run *r, struct strbuf *brief, struct aka_err *err)
{
    struct strbuf text = STRBUF_INIT;
    int rc = 0;
    if (r->plugin_instructions.n)
        strbuf_addstr(brief, "\n## Instructions from the campaign's plugins\n");
    for (size_t i = 0; rc == 0 && i < r->plugin_instructions.n; i++) {
        strbuf_reset(&text);
        rc = aka_read_file(r->plugin_instructions.v[i], &text, INSTRUCTIONS_CAP, err);
        if (rc == 0)
            strbuf_addf(brief, "\n### %s\n\n%s%s", r->plugin_instruction_names.v[i], text.buf,
                        text.len && text.buf[text.len - 1] == '\n' ? "" : "\n");
    }
    strbuf_release(&text);
    return rc;
}
