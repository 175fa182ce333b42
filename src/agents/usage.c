/*
 * usage.c — token usage values and their measurement labels.
 *
 * Every counter is nullable (-1) so that "not reported" never reads as 0, and
 * every value carries a label: exact (the backend reported all of it), partial
 * (some of it is missing, so the number is a lower bound) or unavailable. The
 * summing rules follow the reference (§1.1): an entry without a total is
 * dropped from a sum and makes the sum partial; a component is null as soon
 * as one kept entry lacks it.
 */
#include "agents/adapters.h"

#include <string.h>

void aka_token_usage_unavailable(struct aka_token_usage *u)
{
    u->input = u->output = u->cache_read = u->cache_write = u->total = -1;
    u->measurement = AKA_TOKENS_UNAVAILABLE;
}

void aka_token_usage_zero(struct aka_token_usage *u)
{
    u->input = u->output = u->cache_read = u->cache_write = u->total = 0;
    u->measurement = AKA_TOKENS_EXACT;
}

const char *aka_token_measurement_name(enum aka_token_measurement m)
{
    return m == AKA_TOKENS_EXACT ? "exact" : m == AKA_TOKENS_PARTIAL ? "partial" : "unavailable";
}

static long long add_component(long long a, long long b)
{
    return a < 0 || b < 0 ? -1 : a + b;
}

void aka_token_usage_add(struct aka_token_usage *a, const struct aka_token_usage *b)
{
    if (b->total < 0) { /* dropped: what we have is now a lower bound */
        if (a->total >= 0)
            a->measurement = AKA_TOKENS_PARTIAL;
        return;
    }
    if (a->total < 0) { /* a was dropped: b alone, but the sum lost an entry */
        *a = *b;
        a->measurement = AKA_TOKENS_PARTIAL;
        return;
    }
    a->input = add_component(a->input, b->input);
    a->output = add_component(a->output, b->output);
    a->cache_read = add_component(a->cache_read, b->cache_read);
    a->cache_write = add_component(a->cache_write, b->cache_write);
    a->total += b->total;
    if (a->measurement != AKA_TOKENS_EXACT || b->measurement != AKA_TOKENS_EXACT)
        a->measurement = AKA_TOKENS_PARTIAL;
}

static json_t *count_json(long long v)
{
    return v < 0 ? json_null() : json_integer(v);
}

json_t *aka_token_usage_to_json(const struct aka_token_usage *u)
{
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:s}", "input_tokens", count_json(u->input),
                     "output_tokens", count_json(u->output), "cache_read_tokens",
                     count_json(u->cache_read), "cache_write_tokens", count_json(u->cache_write),
                     "total_tokens", count_json(u->total), "measurement",
                     aka_token_measurement_name(u->measurement));
}

/* The first alias holding a non-negative integer (booleans are not numbers). */
static long long pick(const json_t *obj, const char *const *aliases)
{
    for (; *aliases; aliases++) {
        json_t *v = json_object_get(obj, *aliases);
        if (json_is_integer(v) && json_integer_value(v) >= 0)
            return json_integer_value(v);
    }
    return -1;
}

static const char *const in_keys[] = {"input_tokens", "inputTokens", "input", NULL};
static const char *const out_keys[] = {"output_tokens", "outputTokens", "output", NULL};
static const char *const read_keys[] = {"cache_read_input_tokens", "cacheReadInputTokens",
                                        "cacheRead", NULL};
static const char *const write_keys[] = {"cache_creation_input_tokens", "cacheCreationInputTokens",
                                         "cacheWrite", NULL};
static const char *const openai_read_keys[] = {"cached_input_tokens", "cachedInputTokens", NULL};
static const char *const total_keys[] = {"total_tokens", "totalTokens", NULL};

void aka_usage_from_json(const json_t *obj, enum aka_usage_dialect d, struct aka_token_usage *u)
{
    aka_token_usage_unavailable(u);
    if (!json_is_object(obj))
        return;
    u->input = pick(obj, in_keys);
    u->output = pick(obj, out_keys);
    u->cache_read = pick(obj, d == AKA_USAGE_OPENAI ? openai_read_keys : read_keys);
    u->cache_write = d == AKA_USAGE_OPENAI ? -1 : pick(obj, write_keys);
    u->total = pick(obj, total_keys);
    bool any = u->input >= 0 || u->output >= 0 || u->cache_read >= 0 || u->cache_write >= 0;
    if (u->total < 0 && !any)
        return; /* nothing usable: stays unavailable */
    u->measurement = AKA_TOKENS_EXACT;
    if (u->total >= 0)
        return;
    /* No official total: OpenAI's cached tokens are already inside input. */
    long long parts[4] = {u->input, u->output, d == AKA_USAGE_OPENAI ? -1 : u->cache_read,
                          u->cache_write};
    u->total = 0;
    for (int i = 0; i < 4; i++)
        if (parts[i] > 0)
            u->total += parts[i];
}

bool aka_usage_exceeds(const struct aka_token_usage *a, const struct aka_token_usage *b)
{
    const long long av[5] = {a->input, a->output, a->cache_read, a->cache_write, a->total};
    const long long bv[5] = {b->input, b->output, b->cache_read, b->cache_write, b->total};
    for (int i = 0; i < 5; i++)
        if (av[i] >= 0 && bv[i] >= 0 && av[i] > bv[i])
            return true;
    return false;
}

static long long sub_component(long long a, long long b)
{
    return a < 0 || b < 0 ? -1 : a - b;
}

int aka_usage_subtract(const struct aka_token_usage *total, const struct aka_token_usage *part,
                       struct aka_token_usage *out)
{
    if (aka_usage_exceeds(part, total))
        return -1;
    out->input = sub_component(total->input, part->input);
    out->output = sub_component(total->output, part->output);
    out->cache_read = sub_component(total->cache_read, part->cache_read);
    out->cache_write = sub_component(total->cache_write, part->cache_write);
    out->total = sub_component(total->total, part->total);
    out->measurement = total->measurement == AKA_TOKENS_EXACT &&
                               part->measurement == AKA_TOKENS_EXACT && out->total >= 0
                           ? AKA_TOKENS_EXACT
                       : out->total >= 0 ? AKA_TOKENS_PARTIAL
                                         : AKA_TOKENS_UNAVAILABLE;
    return 0;
}
