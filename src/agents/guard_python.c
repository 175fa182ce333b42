/*
 * guard_python.c — does `python -c CODE` run GPU work on the host?
 *
 * The upstream guard parses CODE with Python's own AST. The poller runs every
 * 100 ms in the supervisor, where starting an interpreter per process is too
 * slow, so this is a small Python tokenizer instead: comments are skipped and
 * string literals are kept apart from code, which is what matters — prose in
 * a string ("print('import kernel')") must never match, real imports must. On
 * top of the tokens it recognizes `import`, `from ... import`, `__import__`
 * and `importlib.import_module` with a literal name, and runs the same check
 * on literal code passed to exec()/eval(), two levels deep.
 *
 * Refused: importing the candidate (`kernel`), JIT-capable GPU packages,
 * touching CUDA from Python (`torch.cuda`, `x.cuda()`, `numba.cuda`, or a
 * "cuda" device string next to a GPU framework import) and HIP's own Python
 * bindings (hip-python's `hip`, `hiprtc`). The ROCm build of torch needs no
 * rule of its own: it keeps the `torch.cuda` API and the "cuda" device name
 * (HIP underneath), so the CUDA rules catch it as they are.
 */
#include "agents/adapters.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define R_IMPORT_KERNEL "kernel imported directly on the host"
#define R_IMPORT_JIT    "JIT-capable third-party GPU package imported directly on the host"
#define R_CUDA          "CUDA used from Python directly on the host"
#define R_HIP           "HIP used from Python directly on the host"
#define EXEC_DEPTH      2

enum tok_kind { T_NAME, T_STRING, T_OP };

struct tok {
    enum tok_kind kind;
    char *text;
};

struct toks {
    struct tok *v;
    size_t n, alloc;
};

struct pyscan {
    bool kernel, jit, cuda_attr, cuda_string, gpu_framework, hip;
};

static void push(struct toks *t, enum tok_kind kind, const char *s, size_t n)
{
    struct tok k = {kind, aka_xstrndup(s, n)};
    VEC_PUSH(*t, k);
}

static void toks_free(struct toks *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].text);
    VEC_FREE(*t);
}

static char unescape(char c)
{
    return c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c == '0' ? '\0' : c;
}

/* A string literal starting at the quote p; returns the position after it. */
static const char *read_string(const char *p, bool raw, struct toks *t)
{
    char q = *p;
    bool triple = p[1] == q && p[2] == q;
    struct strbuf s = STRBUF_INIT;
    p += triple ? 3 : 1;
    while (*p) {
        if (triple ? (p[0] == q && p[1] == q && p[2] == q) : *p == q)
            break;
        if (!triple && *p == '\n')
            break; /* unterminated single-quoted string: stop at the line */
        if (*p == '\\' && p[1]) {
            strbuf_addch(&s, raw ? '\\' : unescape(p[1]));
            if (raw)
                strbuf_addch(&s, p[1]);
            p += 2;
            continue;
        }
        strbuf_addch(&s, *p++);
    }
    push(t, T_STRING, s.buf, s.len);
    strbuf_release(&s);
    if (*p == q)
        p += triple ? 3 : 1;
    return p;
}

/* A string prefix (r, b, u, f and pairs) directly followed by a quote. */
static size_t string_prefix(const char *p, bool *raw)
{
    size_t n = 0;
    *raw = false;
    while (n < 2 && p[n] && strchr("rRbBuUfF", p[n])) {
        *raw = *raw || p[n] == 'r' || p[n] == 'R';
        n++;
    }
    return p[n] == '\'' || p[n] == '"' ? n : (size_t)-1;
}

static void tokenize(const char *p, struct toks *t)
{
    bool raw;
    while (*p) {
        size_t pre = string_prefix(p, &raw);
        if (isspace((unsigned char)*p)) {
            p++;
        } else if (*p == '#') {
            p += strcspn(p, "\n");
        } else if (pre != (size_t)-1) {
            p = read_string(p + pre, raw, t);
        } else if (isalpha((unsigned char)*p) || *p == '_') {
            const char *s = p;
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
            push(t, T_NAME, s, (size_t)(p - s));
        } else {
            push(t, T_OP, p++, 1);
        }
    }
}

static bool tok_is(const struct toks *t, size_t i, enum tok_kind kind, const char *text)
{
    return i < t->n && t->v[i].kind == kind && (!text || strcmp(t->v[i].text, text) == 0);
}

static void scan_code(const char *code, struct pyscan *s, int depth);

/* A module path "a.b.c" was imported: judge its top-level name. */
static void take_module(struct pyscan *s, const char *path)
{
    static const char *const jit[] = {"flashinfer", "flash_attn", "xformers", "vllm",
                                      "pycuda",     "cupy",       NULL};
    static const char *const frameworks[] = {"torch", "triton", "cupy", "numba", "jax", NULL};
    static const char *const hip[] = {"hip", "hiprtc", NULL};
    size_t n = strcspn(path, ".");
    for (const char *const *h = hip; *h; h++)
        if (strlen(*h) == n && strncmp(path, *h, n) == 0)
            s->hip = true;
    if (strncmp(path, "numba.hip", 9) == 0 && (path[9] == '\0' || path[9] == '.'))
        s->hip = true; /* numba's HIP target */
    for (const char *const *j = jit; *j; j++)
        if (strlen(*j) == n && strncmp(path, *j, n) == 0)
            s->jit = true;
    for (const char *const *f = frameworks; *f; f++)
        if (strlen(*f) == n && strncmp(path, *f, n) == 0)
            s->gpu_framework = true;
    if (n == 6 && strncmp(path, "kernel", 6) == 0)
        s->kernel = true;
    if (strstr(path, ".cuda"))
        s->cuda_attr = true; /* import torch.cuda / from numba.cuda import ... */
}

/* NAME(.NAME)* at i: the dotted path into buf; returns the index after it. */
static size_t dotted(const struct toks *t, size_t i, struct strbuf *buf)
{
    strbuf_reset(buf);
    while (tok_is(t, i, T_NAME, NULL)) {
        strbuf_addstr(buf, t->v[i].text);
        if (!tok_is(t, i + 1, T_OP, "."))
            return i + 1;
        strbuf_addch(buf, '.');
        i += 2;
    }
    return i;
}

/* `import a.b [as x], c` */
static size_t take_import(const struct toks *t, size_t i, struct pyscan *s)
{
    struct strbuf path = STRBUF_INIT;
    do {
        i = dotted(t, i + 1, &path);
        if (path.len)
            take_module(s, path.buf);
        if (tok_is(t, i, T_NAME, "as"))
            i += 2;
    } while (tok_is(t, i, T_OP, ","));
    strbuf_release(&path);
    return i;
}

/* `from a.b import c, d` (relative imports name no package) */
static size_t take_from(const struct toks *t, size_t i, struct pyscan *s)
{
    struct strbuf path = STRBUF_INIT;
    if (tok_is(t, i + 1, T_OP, ".")) { /* relative: skip `from .x import a, b` whole */
        size_t j = i + 1;
        while (tok_is(t, j, T_OP, ".") ||
               (tok_is(t, j, T_NAME, NULL) && strcmp(t->v[j].text, "import") != 0))
            j++;
        for (j++; tok_is(t, j, T_NAME, NULL) || tok_is(t, j, T_OP, ","); j++)
            ;
        return j;
    }
    i = dotted(t, i + 1, &path);
    if (path.len)
        take_module(s, path.buf);
    if (path.len && tok_is(t, i, T_NAME, "import"))
        for (size_t j = i + 1; tok_is(t, j, T_NAME, NULL) || tok_is(t, j, T_OP, ","); j++) {
            if (tok_is(t, j, T_NAME, "cuda"))
                s->cuda_attr = true; /* from torch import cuda */
            else if (tok_is(t, j, T_NAME, "hip") && strcmp(path.buf, "numba") == 0)
                s->hip = true; /* from numba import hip */
        }
    strbuf_release(&path);
    return i;
}

/* NAME ( "literal" ...: the literal, or NULL. */
static const char *call_literal(const struct toks *t, size_t i)
{
    return tok_is(t, i + 1, T_OP, "(") && tok_is(t, i + 2, T_STRING, NULL) ? t->v[i + 2].text
                                                                           : NULL;
}

static void scan_tokens(const struct toks *t, struct pyscan *s, int depth)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct tok *k = &t->v[i];
        const char *lit = k->kind == T_NAME ? call_literal(t, i) : NULL;
        if (k->kind == T_STRING &&
            (strcmp(k->text, "cuda") == 0 || strncmp(k->text, "cuda:", 5) == 0))
            s->cuda_string = true;
        if (k->kind == T_OP && strcmp(k->text, ".") == 0 && tok_is(t, i + 1, T_NAME, "cuda"))
            s->cuda_attr = true;
        if (tok_is(t, i, T_NAME, "import"))
            i = take_import(t, i, s) - 1;
        else if (tok_is(t, i, T_NAME, "from"))
            i = take_from(t, i, s) - 1;
        else if (lit && (!strcmp(k->text, "__import__") || !strcmp(k->text, "import_module")))
            take_module(s, lit);
        else if (lit && (!strcmp(k->text, "exec") || !strcmp(k->text, "eval")) &&
                 depth < EXEC_DEPTH)
            scan_code(lit, s, depth + 1);
    }
}

static void scan_code(const char *code, struct pyscan *s, int depth)
{
    struct toks t = {0};
    tokenize(code, &t);
    scan_tokens(&t, s, depth);
    toks_free(&t);
}

const char *aka_guard_check_python_code(const char *code)
{
    struct pyscan s = {0};
    if (!code)
        return NULL;
    scan_code(code, &s, 0);
    if (s.kernel)
        return R_IMPORT_KERNEL;
    if (s.jit)
        return R_IMPORT_JIT;
    if (s.cuda_attr || (s.cuda_string && s.gpu_framework))
        return R_CUDA;
    if (s.hip)
        return R_HIP;
    return NULL;
}
