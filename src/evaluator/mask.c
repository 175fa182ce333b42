/*
 * mask.c — masking an evaluator result for generalized production (docs/production.md,
 * "Generalized production").
 *
 * A generalized campaign keeps the evaluator's exact shapes private, yet every result the
 * supervisor gets is stored where the agent can read it (memory records, the next brief).
 * So the result is masked as it comes out of aka_evaluate, before anyone keeps it: shape
 * ids become opaque case-<n> labels (n: the shape's 1-based position in the operator, so
 * the same shape has the same label in every evaluation whatever subset ran), failure and
 * diagnostic texts lose every private id and every number (a message such as "index 7918
 * of 7919" would give a size away), probe details likewise, error magnitudes of a failing
 * result are dropped, and every key or string of the result's extensions that names a
 * private id is renamed. Latencies stay: they are what the campaign optimizes and they
 * are not shape values. The job's stderr is not kept.
 */
#include "evaluator/evaluator.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void aka_eval_mask_id(const struct aka_operator *op, const char *id, char *out, size_t n)
{
    for (size_t i = 0; i < op->shapes.n; i++)
        if (strcmp(op->shapes.v[i].id, id) == 0) {
            snprintf(out, n, "case-%zu", i + 1);
            return;
        }
    snprintf(out, n, "case-?");
}

/* The private id starting at s (the longest, so "n1" never masks half of "n10"), or NULL. */
static const char *id_at(const struct aka_operator *op, const char *s, size_t *len)
{
    const char *best = NULL;
    *len = 0;
    for (size_t i = 0; i < op->shapes.n; i++) {
        size_t l = strlen(op->shapes.v[i].id);
        if (l > *len && strncmp(s, op->shapes.v[i].id, l) == 0) {
            best = op->shapes.v[i].id;
            *len = l;
        }
    }
    return best;
}

void aka_eval_mask_text(const struct aka_operator *op, const char *text, struct strbuf *out)
{
    char alias[32];
    size_t len;
    strbuf_reset(out);
    for (const char *s = text; *s;) {
        const char *id = id_at(op, s, &len);
        if (id) {
            aka_eval_mask_id(op, id, alias, sizeof(alias));
            strbuf_addstr(out, alias);
            s += len;
        } else if (isdigit((unsigned char)*s)) {
            strbuf_addch(out, '#');
            while (isdigit((unsigned char)*s))
                s++;
        } else {
            strbuf_addch(out, *s++);
        }
    }
}

static void mask_string(const struct aka_operator *op, char **s)
{
    struct strbuf sb = STRBUF_INIT;
    if (!*s)
        return;
    aka_eval_mask_text(op, *s, &sb);
    free(*s);
    *s = strbuf_detach(&sb, NULL);
}

static void mask_map(const struct aka_operator *op, struct aka_shape_map *m)
{
    char alias[32];
    for (size_t i = 0; i < m->n; i++) {
        aka_eval_mask_id(op, m->v[i].id, alias, sizeof(alias));
        free(m->v[i].id);
        m->v[i].id = aka_xstrdup(alias);
    }
}

/* Extensions: keys naming a private id renamed, strings masked, recursively. */
static json_t *mask_json(const struct aka_operator *op, json_t *v)
{
    struct strbuf sb = STRBUF_INIT;
    char alias[32];
    const char *key;
    size_t i, len;
    json_t *out, *child;
    if (json_is_object(v)) {
        out = json_object();
        json_object_foreach(v, key, child)
        {
            const char *id = id_at(op, key, &len);
            if (id && key[len] == '\0')
                aka_eval_mask_id(op, id, alias, sizeof(alias));
            else
                snprintf(alias, sizeof(alias), "%s", key);
            json_object_set_new(out, alias, mask_json(op, child));
        }
        return out;
    }
    if (json_is_array(v)) {
        out = json_array();
        json_array_foreach(v, i, child) json_array_append_new(out, mask_json(op, child));
        return out;
    }
    if (json_is_string(v)) {
        aka_eval_mask_text(op, json_string_value(v), &sb);
        out = json_string(sb.buf);
        strbuf_release(&sb);
        return out;
    }
    return json_incref(v);
}

static void mask_failures(const struct aka_result *r, struct strvec *out)
{
    /* A failure's text may hold indices and values of the private inputs: only its
     * count survives, as in the Python harness's masked results. */
    for (size_t i = 0; i < r->failures.n; i++)
        strvec_push(out, "a correctness or runtime check failed (details hidden: generalized "
                         "evaluation)");
}

void aka_eval_mask_result(const struct aka_operator *op, struct aka_result *r)
{
    struct strvec failures = STRVEC_INIT;
    mask_failures(r, &failures);
    strvec_clear(&r->failures);
    r->failures = failures;
    r->masked = true;
    mask_map(op, &r->latency_us_by_shape);
    mask_map(op, &r->timing.cv_by_shape);
    mask_map(op, &r->timing.reps_by_shape);
    if (!r->all_pass) {
        r->max_abs_err = AKA_MISSING;
        r->max_rel_err = AKA_MISSING;
    }
    for (size_t i = 0; i < r->diagnostics.n; i++) {
        mask_string(op, &r->diagnostics.v[i].shape_id);
        mask_string(op, &r->diagnostics.v[i].message);
    }
    for (size_t i = 0; i < r->probes.n; i++) {
        mask_string(op, &r->probes.v[i].id);
        mask_string(op, &r->probes.v[i].shape_id);
        mask_string(op, &r->probes.v[i].detail);
    }
    if (r->extra) {
        json_t *m = mask_json(op, r->extra);
        json_decref(r->extra);
        r->extra = m;
    }
}
