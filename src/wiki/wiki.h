/*
 * wiki.h — the GPU wiki: knowledge records in plugins, an FTS5 index, queries
 * with attribution (DESIGN §8). The one public header of the wiki module.
 *
 * Records are JSON files contributed by plugins. A plugin is a directory with a
 * plugin.json manifest; plugins are discovered, in this order, from
 *   1. <repo_root>/runtime/plugins/<name>          (bundled; origin "bundled")
 *   2. $XDG_DATA_HOME/aka/plugins/<name>             (default ~/.local/share; "user")
 *   3. <workspace>/.aka-plugins/<name>               (--workspace or $ATREX_AKA_WORKSPACE)
 * A plugin with any problem (manifest or any record) is skipped whole and the
 * reason ("FILE: FIELD: what is wrong") is kept and reported; it is never half
 * loaded, because a campaign that pins a plugin must see all of it or none.
 *
 * The index is a SQLite database in the cache directory whose validity is keyed
 * by a hash of every file of every discovered plugin: change one byte of one
 * record and the next open rebuilds it (atomically: built in memory, then
 * written to a temporary file and renamed).
 *
 * Every result carries its attribution: record id, plugin name and version,
 * file, line of the record's "id" in that file, and the record's source.
 */
#ifndef AKA_WIKI_H
#define AKA_WIKI_H

#include "base/error.h"
#include "base/sha256.h"
#include "base/strbuf.h"
#include "base/vec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define AKA_WIKI_LIMIT_DEFAULT 8
#define AKA_WIKI_LIMIT_MAX     200

/* Where to look. NULL members fall back to the environment (see above). */
struct aka_wiki_config {
    const char *repo_root; /* asset tree; NULL: no bundled plugins */
    const char *workspace; /* NULL: $ATREX_AKA_WORKSPACE; "" disables */
    const char *data_home; /* NULL: $XDG_DATA_HOME, else $HOME/.local/share */
    const char *cache_dir; /* NULL: $XDG_CACHE_HOME/aka, else $HOME/.cache/aka */
    bool quiet;            /* do not report skipped plugins on stderr */
};

enum aka_wiki_origin { AKA_WIKI_BUNDLED, AKA_WIKI_USER, AKA_WIKI_WORKSPACE };
const char *aka_wiki_origin_name(enum aka_wiki_origin origin);

struct aka_wiki_plugin {
    char *name;    /* from the manifest; NULL when the manifest is unusable */
    char *version; /* idem */
    char *root;    /* the plugin directory as discovered */
    enum aka_wiki_origin origin;
    /* sha256 over "sha256(content) path" lines of every file, sorted by path;
     * computed when first asked for (pinning, listing), not on every query. */
    char fingerprint[AKA_SHA256_HEX_LEN + 1];
    char content_key[33]; /* fast 128-bit hash of the same bytes: the cache key */
    struct strvec record_dirs, skills, instructions, tools; /* manifest contributions */
    size_t record_count;
    bool skipped;
    struct strvec problems; /* why it was skipped, one "FILE: FIELD: reason" each */
};

struct aka_wiki_plugin_list {
    struct aka_wiki_plugin *v;
    size_t n, alloc;
};

struct aka_wiki; /* an opened plugin set plus its index */

/*
 * Discover plugins, (re)build the index when the key changed, open it.
 * Skipped plugins are reported on stderr unless cfg->quiet.
 */
int aka_wiki_open(const struct aka_wiki_config *cfg, struct aka_wiki **out, struct aka_err *err);
void aka_wiki_close(struct aka_wiki *w);

/* The discovered plugins, fingerprints filled in. */
const struct aka_wiki_plugin_list *aka_wiki_plugins(struct aka_wiki *w);
size_t aka_wiki_record_count(const struct aka_wiki *w);
const char *aka_wiki_cache_path(const struct aka_wiki *w);
bool aka_wiki_cache_rebuilt(const struct aka_wiki *w); /* this open built the index */

/*
 * Pinning. The set fingerprint is sha256 over "name version fingerprint" of
 * every loaded plugin, in discovery order. aka_wiki_pin() returns
 * {"fingerprint": HEX, "plugins": [{name, version, origin, fingerprint}]};
 * aka_wiki_pin_verify() fails (code 1) naming the first plugin that was added,
 * removed or changed since the pin was taken.
 */
const char *aka_wiki_fingerprint(struct aka_wiki *w);
json_t *aka_wiki_pin(struct aka_wiki *w);
int aka_wiki_pin_verify(struct aka_wiki *w, const json_t *pin, struct aka_err *err);
/* A campaign's resume: every pinned plugin must still load with its fingerprint (else code
 * 1 naming it); loaded plugins the pin does not list are appended to `added`. */
int aka_wiki_pin_verify_kept(struct aka_wiki *w, const json_t *pin, struct strvec *added,
                             struct aka_err *err);
/* aka_wiki_open + aka_wiki_pin_verify: the plugin set a campaign pinned. */
int aka_wiki_open_pinned(const struct aka_wiki_config *cfg, const json_t *pin,
                         struct aka_wiki **out, struct aka_err *err);

/* Journal citations: the cited ids that no loaded record has go to `missing`. */
int aka_wiki_check_refs(struct aka_wiki *w, const char *const *ids, size_t n,
                        struct strvec *missing, struct aka_err *err);
/* One id, as contracts' aka_wiki_ref_exists_fn (wiki: a struct aka_wiki *). */
bool aka_wiki_has_id(const char *id, void *wiki);
/* Every wiki_refs[] id of the journal at journal_path names a record of the plugins cfg
 * discovers; else an error (code 2) naming the journal, the field and the id. */
int aka_wiki_check_journal(const struct aka_wiki_config *cfg, const char *journal_path,
                           struct aka_err *err);

/*
 * A query. Filter values are user spellings ("CuteDSL", "sm_90", "H200");
 * NULL means no filter. An unknown value is an error (code 2) naming the
 * flag and the nearest valid value.
 */
struct aka_wiki_query {
    const char *text;
    const char *vendor, *arch, *chip, *framework, *family, *kind;
    int limit; /* 0: AKA_WIKI_LIMIT_DEFAULT */
};

struct aka_wiki_hit {
    json_t *record; /* the record as written in its file */
    char *plugin, *plugin_version, *file;
    long line;    /* line of the record's "id" in file */
    double score; /* BM25 (lower is better), 0 without text */
};

struct aka_wiki_result {
    struct {
        struct aka_wiki_hit *v;
        size_t n, alloc;
    } hits;
    json_t *filters;             /* canonical filter values {"vendor": "amd", ...} */
    struct strvec terms;         /* normalised query terms */
    const char *mode;            /* "all-terms", "any-term" or "filters-only" */
    struct strvec notes;         /* e.g. the any-term fallback */
    struct strvec empty_because; /* for an empty result: which filter emptied it */
};

void aka_wiki_result_init(struct aka_wiki_result *res);
void aka_wiki_result_release(struct aka_wiki_result *res);
int aka_wiki_query(struct aka_wiki *w, const struct aka_wiki_query *q, struct aka_wiki_result *res,
                   struct aka_err *err);
/* Look one record up by id; unknown ids are errors (code 2) with a suggestion. */
int aka_wiki_show(struct aka_wiki *w, const char *id, struct aka_wiki_hit *hit,
                  struct aka_err *err);
void aka_wiki_hit_release(struct aka_wiki_hit *hit);

/*
 * One hardware fact of `chip` (any spelling the --chip filter accepts): the first
 * of `quantities` (NULL-terminated) that a fact record holds in a unit convertible
 * to `unit` ("GB/s" or "TFLOPS"). 0 found, 1 none, -1 error (an unknown chip:
 * code 2). out->id and out->source (the record's source title) are the attribution.
 */
struct aka_wiki_fact {
    double value;
    char *id, *source;
};
int aka_wiki_fact(struct aka_wiki *w, const char *chip, const char *const *quantities,
                  const char *unit, struct aka_wiki_fact *out, struct aka_err *err);
void aka_wiki_fact_release(struct aka_wiki_fact *f);

/*
 * Which records helped: the wiki_citations of every canonical memory record of the
 * campaign workspace `ws`, per id: {id, cited, outcomes{status: n}, dispositions{decision:
 * n}, versions[]}. NULL with err set when a record cannot be read.
 */
json_t *aka_wiki_citations(const char *ws, struct aka_err *err);
void aka_wiki_citations_format(const json_t *cites, struct strbuf *out);

/*
 * `aka wiki tool NAME [ARG...]`: run the tool a loaded plugin declares, with args appended
 * and the caller's standard streams; its exit status goes to *exit_code. When ws (a
 * campaign workspace or an episode's view) has a campaign.json that pins plugins, the
 * loaded set must match the pin (code 2 naming the plugin). An unknown tool: code 2.
 */
int aka_wiki_tool_run(struct aka_wiki *w, const char *ws, const char *name,
                      const struct strvec *args, int *exit_code, struct aka_err *err);

/* Rendering, so that callers only print. */
json_t *aka_wiki_hit_json(const struct aka_wiki_hit *hit);
void aka_wiki_hit_format(const struct aka_wiki_hit *hit, bool full, struct strbuf *out);
json_t *aka_wiki_result_json(const struct aka_wiki_result *res);
void aka_wiki_result_format(const struct aka_wiki_result *res, struct strbuf *out);
json_t *aka_wiki_plugins_json(const struct aka_wiki_plugin_list *pl);
void aka_wiki_plugins_format(const struct aka_wiki_plugin_list *pl, struct strbuf *out);

/*
 * `aka wiki check`: load everything afresh (no cache) and list every problem:
 * schema errors, duplicate ids, dangling related ids, missing sources,
 * malformed manifests. Counts by kind and vendor go to `stats`.
 */
struct aka_wiki_check_report {
    struct strvec problems;
    size_t plugins, records;
    json_t *stats; /* {"by_kind": {...}, "by_vendor": {...}} */
};
void aka_wiki_check_report_init(struct aka_wiki_check_report *rep);
void aka_wiki_check_report_release(struct aka_wiki_check_report *rep);
int aka_wiki_check(const struct aka_wiki_config *cfg, struct aka_wiki_check_report *rep,
                   struct aka_err *err);

/*
 * `aka wiki import`: convert a store in upstream gpu-wiki format (kernel
 * records "clean-1.3", hardware records "hw-1.0") under src_dir into a plugin
 * directory out_dir (plugin.json + records/). The result passes our validator.
 * An upstream id that is not a valid id here (longer than 128 bytes, or other
 * characters) is mapped deterministically: its first bytes, folded to the id
 * alphabet, then "-" and the first 16 hex digits of its sha256; the original is
 * kept as the record's upstream.id, which `aka wiki show` and journal citations
 * accept as an alias, related ids are rewritten, and out_dir/import-report.json
 * lists every mapping.
 */
struct aka_wiki_import_report {
    size_t kernel_in, hardware_in, records_out, skipped;
    size_t mapped;  /* ids that are not valid here (over 128 bytes, other characters) */
    json_t *id_map; /* {upstream id: our id} of those; also written to import-report.json */
    struct strvec notes;
};
void aka_wiki_import_report_init(struct aka_wiki_import_report *rep);
void aka_wiki_import_report_release(struct aka_wiki_import_report *rep);
int aka_wiki_import(const char *src_dir, const char *out_dir, const char *plugin_name,
                    struct aka_wiki_import_report *rep, struct aka_err *err);

/*
 * Validate one record file's bytes (an object or an array of records) as the
 * loader does. Problems ("LABEL: FIELD: reason") are appended; returns the
 * number of valid records, or -1 when there were problems. For tests/fuzzing.
 */
long aka_wiki_validate_buffer(const char *label, const char *buf, size_t len,
                              struct strvec *problems);

#endif
