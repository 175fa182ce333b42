/*
 * episodes.c — the per-episode records `aka report` shows beside the memory
 * records: each .aka/episodes/e<NNNN>/ directory's runtime/journal.json (the
 * agent's journal, archived when the episode ends) and agent/session.json
 * (tokens and times of the agent session), joined to the version record whose
 * episode.number names it.
 *
 * Both files are optional (an episode in flight has neither yet), but a file
 * that is present is checked field by field before anything is shown: the
 * renderer reads only what was checked here.
 */
#include "base/fs.h"
#include "base/json.h"
#include "report/internal.h"

#include <stdlib.h>
#include <string.h>

/* The phases an agent marks (docs/agents.md), in the order the report shows them. */
const char *const aka_report_phases[] = {"profile",     "research",  "planning",  "implementation",
                                         "correctness", "benchmark", "recording", NULL};

/* "e0012" → 12; -1 for any other name. */
static long episode_number(const char *name)
{
    size_t len = strlen(name);
    long n = 0;
    if (name[0] != 'e' || len < 5 || len > 10)
        return -1;
    for (size_t i = 1; i < len; i++) {
        if (name[i] < '0' || name[i] > '9')
            return -1;
        n = n * 10 + (name[i] - '0');
    }
    return n;
}

static int check_usage(const struct jctx *c, json_t *parent, const char *path)
{
    json_t *u = NULL;
    long long total = 0;
    const char *label = NULL;
    struct strbuf p = STRBUF_INIT;
    int rc = jget_obj(c, parent, path, "usage", false, &u);
    jpath_key(&p, path, "usage");
    if (rc == 0 && u &&
        (jget_int(c, u, p.buf, "total_tokens", false, &total) < 0 ||
         jget_str(c, u, p.buf, "measurement", false, &label) < 0))
        rc = -1;
    strbuf_release(&p);
    return rc;
}

/* phase_tokens.phases.P.usage and phase_times.phases.P.seconds for every known phase. */
static int check_phases(const struct jctx *c, json_t *doc, const char *section)
{
    json_t *sec = NULL, *phases = NULL, *ph = NULL;
    struct strbuf p = STRBUF_INIT;
    const char *label = NULL;
    double secs;
    int rc = jget_obj(c, doc, "", section, false, &sec);
    if (rc == 0 && sec)
        rc = jget_str(c, sec, section, "measurement", false, &label);
    jpath_key(&p, section, "phases");
    if (rc == 0 && sec)
        rc = jget_obj(c, sec, section, "phases", false, &phases);
    for (size_t i = 0; rc == 0 && phases && aka_report_phases[i]; i++) {
        rc = jget_obj(c, phases, p.buf, aka_report_phases[i], false, &ph);
        struct strbuf q = STRBUF_INIT;
        jpath_key(&q, p.buf, aka_report_phases[i]);
        if (rc == 0 && ph && strcmp(section, "phase_tokens") == 0)
            rc = check_usage(c, ph, q.buf);
        else if (rc == 0 && ph)
            rc = jget_num(c, ph, q.buf, "seconds", false, &secs);
        strbuf_release(&q);
    }
    strbuf_release(&p);
    return rc;
}

static int check_turns(const struct jctx *c, json_t *doc)
{
    json_t *turns = NULL, *t;
    struct strbuf p = STRBUF_INIT;
    double wall;
    size_t i;
    int rc = jget_arr(c, doc, "", "turns", false, &turns);
    json_array_foreach(turns, i, t)
    {
        jpath_index(&p, "turns", i);
        if (rc == 0 && (jexpect_obj(c, t, p.buf) < 0 ||
                        jget_num(c, t, p.buf, "wall_seconds", false, &wall) < 0))
            rc = -1;
    }
    strbuf_release(&p);
    return rc;
}

static int load_session(const char *file, json_t **out, struct aka_err *err)
{
    struct jctx c = {file, err};
    if (aka_json_load_file(file, out, err) < 0)
        return -1;
    if (jexpect_obj(&c, *out, "") < 0 || check_usage(&c, *out, "") < 0 ||
        check_turns(&c, *out) < 0 || check_phases(&c, *out, "phase_tokens") < 0 ||
        check_phases(&c, *out, "phase_times") < 0)
        return -1;
    return 0;
}

/* dir/rel when it exists (owned), else NULL. */
static char *present(const char *dir, const char *rel)
{
    struct strbuf p = STRBUF_INIT;
    aka_path_join(&p, dir, rel);
    if (aka_is_file(p.buf))
        return strbuf_detach(&p, NULL);
    strbuf_release(&p);
    return NULL;
}

static int load_one(struct aka_report *r, long n, struct aka_err *err)
{
    struct aka_report_episode e = {.number = n, .version = -1};
    struct strbuf dir = STRBUF_INIT;
    aka_ws_episode_dir(&dir, r->workspace, n);
    e.journal_file = present(dir.buf, "runtime/journal.json");
    e.session_file = present(dir.buf, "agent/session.json");
    strbuf_release(&dir);
    for (size_t i = 0; i < r->versions.n; i++)
        if (r->versions.v[i].episode == n)
            e.version = (long)i;
    VEC_PUSH(r->episodes, e); /* first, so that release frees it on any error */
    struct aka_report_episode *p = &r->episodes.v[r->episodes.n - 1];
    if (p->journal_file && aka_journal_load(p->journal_file, &p->j, err) < 0)
        return -1;
    if (p->session_file && load_session(p->session_file, &p->session, err) < 0)
        return -1;
    return 0;
}

static int by_number(const void *a, const void *b)
{
    long x = episode_number(*(char *const *)a), y = episode_number(*(char *const *)b);
    return (x > y) - (x < y);
}

int aka_report_load_episodes(struct aka_report *r, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT;
    struct strvec names = STRVEC_INIT;
    int rc = 0;
    aka_ws_path(&dir, r->workspace, AKA_WS_EPISODES);
    if (aka_is_dir(dir.buf))
        rc = aka_list_dir(dir.buf, &names, err);
    if (rc == 0 && names.n)
        qsort(names.v, names.n, sizeof(*names.v), by_number);
    for (size_t i = 0; rc == 0 && i < names.n; i++)
        if (episode_number(names.v[i]) >= 0)
            rc = load_one(r, episode_number(names.v[i]), err);
    strvec_clear(&names);
    strbuf_release(&dir);
    return aka_record_one_line(rc, err);
}

void aka_report_release_episodes(struct aka_report *r)
{
    for (size_t i = 0; i < r->episodes.n; i++) {
        struct aka_report_episode *e = &r->episodes.v[i];
        if (e->journal_file)
            aka_journal_release(&e->j);
        json_decref(e->session);
        free(e->journal_file);
        free(e->session_file);
    }
    VEC_FREE(r->episodes);
}
