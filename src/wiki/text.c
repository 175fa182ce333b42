/*
 * text.c — the one text normalisation applied both to indexed record text and
 * to query text, so that spelling variants meet in one token:
 *   "CuTe-DSL", "cute_dsl", "cute dsl", "CuteDSL"  -> cutedsl
 *   "RMS norm", "rms_norm", "RMSNorm"              -> rmsnorm
 *   "sm_90a", "SM90a"                              -> sm90a
 *   "split-K", "top-k", "FP 8", "x86-64"           -> splitk, topk, fp8, x86
 * Why here and not in the FTS tokenizer: SQLite's unicode61 tokenizer splits on
 * every punctuation character, so "cute-dsl" would become two tokens that never
 * match "cutedsl". We hand FTS5 text that is already normalised.
 */
#include "wiki/wiki_impl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Adjacent token pairs that are one word in our vocabulary. */
static const char *const joins[][2] = {
    {"cute", "dsl"},   {"fly", "dsl"},    {"tile", "lang"},       {"rms", "norm"},
    {"layer", "norm"}, {"group", "norm"}, {"flash", "attention"}, {"flash", "attn"},
    {"split", "k"},    {"stream", "k"},   {"top", "k"},           {"soft", "max"},
    {"fp", "8"},       {"fp", "4"},       {"fp", "16"},           {"fp", "32"},
    {"fp", "64"},      {"bf", "16"},      {"tf", "32"},           {"int", "4"},
    {"int", "8"},      {"hbm", "3"},      {"hbm", "3e"},          {"hbm", "2e"},
    {"nv", "link"},    {"x86", "64"},     {"wave", "front"},      {"warp", "group"},
};

/* Single-token synonyms (after joining). x8664 is what "x86-64" joins to. */
static const char *const synonyms[][2] = {
    {"attn", "attention"}, {"matmul", "gemm"}, {"rotary", "rope"},      {"x8664", "x86"},
    {"amd64", "x86"},      {"gemms", "gemm"},  {"cutedsls", "cutedsl"}, {"wavefronts", "wavefront"},
};

static const char *const stop_words[] = {
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "by",
    "can",
    "do",
    "does",
    "for",
    "from",
    "how",
    "i",
    "in",
    "into",
    "is",
    "it",
    "its",
    "me",
    "my",
    "of",
    "on",
    "or",
    "should",
    "so",
    "than",
    "that",
    "the",
    "this",
    "to",
    "use",
    "using",
    "what",
    "when",
    "where",
    "which",
    "why",
    "with",
    "you",
    "your",
    "we",
    "our",
    "about",
    /* Intent words: every query wants a fast kernel; matching records that
     * happen to contain "fast" would only add noise. */
    "make",
    "fast",
    "faster",
    "fastest",
    "quick",
    "speed",
    "speedup",
    "improve",
    "optimize",
    "optimise",
    "optimizing",
    "efficient",
    "better",
    "best",
    "good",
    "write",
    "implement",
    "get",
    "want",
    "need",
    "help",
    "kernel",
    "kernels",
    NULL,
};

/* Split into lower-case [a-z0-9]+ tokens. */
static void tokenize(const char *in, struct strvec *toks)
{
    struct strbuf cur = STRBUF_INIT;
    for (const unsigned char *p = (const unsigned char *)in;; p++) {
        if (*p && *p < 0x80 && isalnum(*p)) {
            strbuf_addch(&cur, tolower(*p));
            continue;
        }
        if (cur.len)
            strvec_push(toks, cur.buf);
        strbuf_reset(&cur);
        if (!*p)
            break;
    }
    strbuf_release(&cur);
}

static bool all_digits_start(const char *s)
{
    return isdigit((unsigned char)s[0]);
}

/* Should tokens a and b be written as one token? */
static bool should_join(const char *a, const char *b)
{
    /* sm_90, gfx 942, MI 300X: an architecture prefix followed by its number. */
    if ((strcmp(a, "sm") == 0 || strcmp(a, "gfx") == 0 || strcmp(a, "mi") == 0) &&
        all_digits_start(b))
        return true;
    for (size_t i = 0; i < sizeof(joins) / sizeof(joins[0]); i++)
        if (strcmp(a, joins[i][0]) == 0 && strcmp(b, joins[i][1]) == 0)
            return true;
    return false;
}

static const char *synonym(const char *tok)
{
    for (size_t i = 0; i < sizeof(synonyms) / sizeof(synonyms[0]); i++)
        if (strcmp(tok, synonyms[i][0]) == 0)
            return synonyms[i][1];
    return tok;
}

/* Tokens after joining and synonym replacement. */
static void normalised_tokens(const char *in, struct strvec *out)
{
    struct strvec toks = STRVEC_INIT;
    tokenize(in, &toks);
    for (size_t i = 0; i < toks.n; i++) {
        if (i + 1 < toks.n && should_join(toks.v[i], toks.v[i + 1])) {
            struct strbuf j = STRBUF_INIT;
            strbuf_addf(&j, "%s%s", toks.v[i], toks.v[i + 1]);
            strvec_push(out, synonym(j.buf));
            strbuf_release(&j);
            i++;
        } else {
            strvec_push(out, synonym(toks.v[i]));
        }
    }
    strvec_clear(&toks);
}

void wiki_norm_text(const char *in, struct strbuf *out)
{
    struct strvec toks = STRVEC_INIT;
    strbuf_reset(out);
    normalised_tokens(in ? in : "", &toks);
    for (size_t i = 0; i < toks.n; i++)
        strbuf_addf(out, "%s%s", i ? " " : "", toks.v[i]);
    strvec_clear(&toks);
}

static bool is_stop_word(const char *w)
{
    for (int i = 0; stop_words[i]; i++)
        if (strcmp(w, stop_words[i]) == 0)
            return true;
    return false;
}

void wiki_query_terms(const char *in, struct strvec *terms)
{
    struct strvec toks = STRVEC_INIT;
    normalised_tokens(in ? in : "", &toks);
    for (size_t i = 0; i < toks.n; i++)
        if (!is_stop_word(toks.v[i]) && strvec_find(terms, toks.v[i]) < 0)
            strvec_push(terms, toks.v[i]);
    strvec_clear(&toks);
}
