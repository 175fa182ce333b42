/*
 * load.c — reading every record of every usable plugin, whole or nothing.
 *
 * Records of a plugin are appended to the shared list; if anything in the
 * plugin is wrong (one bad field in one file, a duplicate id, an id another
 * plugin already defines) its records are taken back out and the plugin is
 * marked skipped with every problem found. A half-loaded plugin would let a
 * campaign cite records from a plugin whose other records silently vanished.
 */
#include "base/fs.h"
#include "wiki/wiki_impl.h"

#include <stdlib.h>
#include <string.h>

#define RECORD_FILE_MAX ((size_t)16 << 20)

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Every *.json under dir (recursive, hidden names skipped, sorted per level). */
static void json_files(const char *dir, int depth, struct strvec *out, struct aka_wiki_plugin *p)
{
    struct strvec names = STRVEC_INIT;
    struct strbuf path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    if (depth > 16 || aka_list_dir(dir, &names, &err) < 0) {
        wiki_plugin_skip(p, "%s", depth > 16 ? "record directories nest too deep" : err.msg);
        return;
    }
    for (size_t i = 0; i < names.n; i++) {
        if (names.v[i][0] == '.')
            continue;
        aka_path_join(&path, dir, names.v[i]);
        if (aka_is_dir(path.buf))
            json_files(path.buf, depth + 1, out, p);
        else if (ends_with(names.v[i], ".json") && aka_is_file(path.buf))
            strvec_push(out, path.buf);
    }
    strvec_clear(&names);
    strbuf_release(&path);
}

static void load_file(const char *path, struct aka_wiki_plugin *p, struct wiki_record_list *recs)
{
    struct strbuf text = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    if (aka_read_file(path, &text, RECORD_FILE_MAX, &err) < 0) {
        wiki_plugin_skip(p, "%s", err.msg);
    } else if (wiki_parse_records(path, text.buf, text.len, recs, &p->problems) > 0) {
        p->skipped = true;
        if (p->problems.n > WIKI_MAX_PROBLEMS)
            strvec_push(&p->problems, "... (more problems not shown)");
    }
    strbuf_release(&text);
}

/* An id of [from, to) that is defined earlier in recs (any plugin). */
static void find_duplicates(struct wiki_record_list *recs, size_t from, size_t to,
                            struct aka_wiki_plugin *p)
{
    for (size_t i = from; i < to; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(recs->v[i].id, recs->v[j].id) == 0) {
                wiki_plugin_skip(p, "%s:%ld: id: \"%s\" is already defined at %s:%ld",
                                 recs->v[i].file, recs->v[i].line, recs->v[i].id, recs->v[j].file,
                                 recs->v[j].line);
                break;
            }
}

static void load_plugin(struct aka_wiki_plugin *p, size_t index, struct wiki_record_list *recs)
{
    size_t start = recs->n;
    struct strvec files = STRVEC_INIT;
    struct strbuf dir = STRBUF_INIT;
    for (size_t i = 0; i < p->record_dirs.n; i++) {
        aka_path_join(&dir, p->root, p->record_dirs.v[i]);
        json_files(dir.buf, 0, &files, p);
    }
    for (size_t i = 0; i < files.n; i++)
        load_file(files.v[i], p, recs);
    find_duplicates(recs, start, recs->n, p);
    if (p->skipped) {
        for (size_t i = start; i < recs->n; i++)
            wiki_record_release(&recs->v[i]);
        recs->n = start;
    } else {
        for (size_t i = start; i < recs->n; i++)
            recs->v[i].plugin = index;
        p->record_count = recs->n - start;
    }
    strvec_clear(&files);
    strbuf_release(&dir);
}

void wiki_load_all(struct aka_wiki_plugin_list *pl, struct wiki_record_list *recs)
{
    for (size_t i = 0; i < pl->n; i++)
        if (!pl->v[i].skipped)
            load_plugin(&pl->v[i], i, recs);
}
