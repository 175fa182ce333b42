/*
 * tuner_search.c — what has been tried, and which configuration to try next.
 *
 * History is gathered from every record the campaign keeps (evaluation lines,
 * memory records, the journal) without trusting their schema beyond two keys:
 * a "tune" object names a configuration, a "kernel_sha256" names exact kernel
 * bytes. Matching by hash as well as by knob values is what makes the
 * never-repeat rule hold for kernels evaluated without --tune (Python kernels,
 * and the knob-free re-evaluation of every committed candidate).
 *
 * Order: coordinate descent is "the untried configuration nearest the centre",
 * where distance 1 is one knob moved to a neighbouring value; once every
 * neighbour of the best is tried (a local optimum) the next trial is a random
 * restart, and goal episodes restart on every other trial. Random draws are
 * uniform over what is left, with a seeded generator so a campaign replays
 * identically.
 */
#include "agents/tuner.h"
#include "base/sha256.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Spaces up to this size are enumerated; larger ones only vary one knob at a time. */
#define ENUM_LIMIT ((size_t)1 << 16)

void aka_tune_history_release(struct aka_tune_history *h)
{
    strvec_clear(&h->keys);
    strvec_clear(&h->hashes);
}

void aka_tune_history_add_key(struct aka_tune_history *h, const struct aka_knob_space *s,
                              const size_t *idx)
{
    struct strbuf key = STRBUF_INIT;
    aka_tune_key(s, idx, &key);
    if (strvec_find(&h->keys, key.buf) < 0)
        strvec_push(&h->keys, key.buf);
    strbuf_release(&key);
}

/* A "tune" map naming a value of every knob (strings or numbers) → its key. */
static void add_tune_map(struct aka_tune_history *h, const struct aka_knob_space *s, json_t *map)
{
    size_t idx[AKA_TUNE_MAX_KNOBS];
    char num[64];
    for (size_t i = 0; i < s->n; i++) {
        json_t *v = json_object_get(map, s->v[i].name);
        const char *str = json_is_string(v) ? json_string_value(v) : NULL;
        if (json_is_integer(v))
            snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v)), str = num;
        long at = str ? strvec_find(&s->v[i].values, str) : -1;
        if (at < 0)
            return; /* incomplete or outside today's space: says nothing about it */
        idx[i] = (size_t)at;
    }
    if (s->n)
        aka_tune_history_add_key(h, s, idx);
}

void aka_tune_history_add_json(struct aka_tune_history *h, const struct aka_knob_space *s,
                               json_t *doc)
{
    const char *key;
    json_t *v;
    size_t i;
    if (json_is_array(doc)) {
        json_array_foreach(doc, i, v) aka_tune_history_add_json(h, s, v);
        return;
    }
    if (!json_is_object(doc))
        return;
    json_object_foreach(doc, key, v)
    {
        if (strcmp(key, "tune") == 0 && json_is_object(v))
            add_tune_map(h, s, v);
        else if (strcmp(key, "kernel_sha256") == 0 && json_is_string(v) &&
                 strvec_find(&h->hashes, json_string_value(v)) < 0)
            strvec_push(&h->hashes, json_string_value(v));
        else
            aka_tune_history_add_json(h, s, v);
    }
}

bool aka_tune_tried(const struct aka_tune_history *h, const struct aka_knob_space *s,
                    const char *text, const size_t *idx)
{
    struct strbuf sb = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    char hex[AKA_SHA256_HEX_LEN + 1];
    aka_tune_key(s, idx, &sb);
    bool tried = strvec_find(&h->keys, sb.buf) >= 0;
    if (!tried && text && h->hashes.n && aka_tune_rewrite("kernel", text, s, idx, &sb, &err) == 0) {
        aka_sha256_hex(sb.buf, sb.len, hex);
        tried = strvec_find(&h->hashes, hex) >= 0;
    }
    strbuf_release(&sb);
    return tried;
}

/* ---- candidates ---------------------------------------------------------------------------- */

/* Mixed-radix decoding of configuration number e (knob 0 most significant). */
static void decode(const struct aka_knob_space *s, size_t e, size_t *idx)
{
    for (size_t i = s->n; i-- > 0;) {
        idx[i] = e % s->v[i].values.n;
        e /= s->v[i].values.n;
    }
}

/* Candidate number e of the search domain: every configuration of a small space,
 * else the configurations that differ from center in exactly one knob. */
static size_t domain_size(const struct aka_knob_space *s)
{
    size_t total = aka_tune_space_size(s), n = 0;
    if (total <= ENUM_LIMIT)
        return total;
    for (size_t i = 0; i < s->n; i++)
        n += s->v[i].values.n - 1;
    return n;
}

static void domain_at(const struct aka_knob_space *s, const size_t *center, size_t e, size_t *idx)
{
    if (aka_tune_space_size(s) <= ENUM_LIMIT) {
        decode(s, e, idx);
        return;
    }
    memcpy(idx, center, s->n * sizeof(*idx));
    for (size_t i = 0; i < s->n; i++) {
        size_t m = s->v[i].values.n - 1;
        if (e < m) {
            idx[i] = e < center[i] ? e : e + 1;
            return;
        }
        e -= m;
    }
}

/* Distance, then the earliest moved knob, then the smaller move (down before up). */
static bool closer(const struct aka_knob_space *s, const size_t *center, const size_t *a,
                   const size_t *b)
{
    size_t da = 0, db = 0;
    for (size_t i = 0; i < s->n; i++) {
        da += a[i] > center[i] ? a[i] - center[i] : center[i] - a[i];
        db += b[i] > center[i] ? b[i] - center[i] : center[i] - b[i];
    }
    if (da != db)
        return da < db;
    for (size_t i = 0; i < s->n; i++) {
        long xa = (long)a[i] - (long)center[i], xb = (long)b[i] - (long)center[i];
        unsigned long ta = xa ? (unsigned long)(2 * labs(xa) - (xa < 0)) : ULONG_MAX;
        unsigned long tb = xb ? (unsigned long)(2 * labs(xb) - (xb < 0)) : ULONG_MAX;
        if (ta != tb)
            return ta < tb;
    }
    return false;
}

bool aka_tune_nearest(const struct aka_knob_space *s, const struct aka_tune_history *h,
                      const char *text, const size_t *center, size_t *out)
{
    size_t idx[AKA_TUNE_MAX_KNOBS], n = domain_size(s);
    bool found = false;
    if (s->n == 0)
        return false;
    for (size_t e = 0; e < n; e++) {
        domain_at(s, center, e, idx);
        if (found && !closer(s, center, idx, out))
            continue;
        if (aka_tune_tried(h, s, text, idx))
            continue;
        memcpy(out, idx, s->n * sizeof(*idx));
        found = true;
    }
    return found;
}

/* splitmix64: tiny, seedable, and the same on every platform. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

bool aka_tune_random(const struct aka_knob_space *s, const struct aka_tune_history *h,
                     const char *text, uint64_t *rng, size_t *out)
{
    size_t idx[AKA_TUNE_MAX_KNOBS], n = domain_size(s), untried = 0, pick;
    size_t center[AKA_TUNE_MAX_KNOBS];
    if (s->n == 0)
        return false;
    aka_tune_defaults(s, center);
    for (size_t e = 0; e < n; e++) {
        domain_at(s, center, e, idx);
        untried += !aka_tune_tried(h, s, text, idx);
    }
    if (untried == 0)
        return false;
    pick = (size_t)(next_random(rng) % untried);
    for (size_t e = 0; e < n; e++) {
        domain_at(s, center, e, idx);
        if (aka_tune_tried(h, s, text, idx))
            continue;
        if (pick-- == 0)
            break;
    }
    memcpy(out, idx, s->n * sizeof(*idx));
    return true;
}

static size_t distance(const struct aka_knob_space *s, const size_t *a, const size_t *b)
{
    size_t d = 0;
    for (size_t i = 0; i < s->n; i++)
        d += a[i] > b[i] ? a[i] - b[i] : b[i] - a[i];
    return d;
}

bool aka_tune_next(const struct aka_knob_space *s, const struct aka_tune_history *h,
                   const char *text, bool restarts_often, int trial, const size_t *best,
                   uint64_t *rng, size_t *out)
{
    if (restarts_often && trial % 2 == 0 && aka_tune_random(s, h, text, rng, out))
        return true;
    if (!aka_tune_nearest(s, h, text, best, out))
        return false;
    /* Nothing left next to the best: a descent from there only creeps outwards. */
    if (distance(s, out, best) > 1)
        aka_tune_random(s, h, text, rng, out);
    return true;
}
