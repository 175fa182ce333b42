/*
 * lex_c.c — a C/CUDA tokenizer for the source policy.
 *
 * Line splices (backslash-newline) are removed first, as translation phase 2
 * does, with every remaining character keeping its original line and column.
 * Then comments are dropped, string and character literals (with L/u/U/u8
 * prefixes and C++ raw strings, which .cu files may use) become one token each,
 * and preprocessor lines are recognized: #include yields its header name
 * (a computed include is marked as such), every other directive yields a
 * C_DIRECTIVE token followed by its body's ordinary tokens, so a #define that
 * spells a forbidden name is seen like code. An unterminated comment or
 * literal is an error naming FILE:LINE:COLUMN.
 */
#include "base/strbuf.h"
#include "policy/internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct clex {
    const char *file;
    char *s;         /* the text after splicing */
    int *line, *col; /* original positions of s[k] */
    size_t n, i;
    bool bol; /* only whitespace since the last newline */
    struct c_toks *out;
    struct aka_err *err;
};

static void splice(struct clex *X, const char *src, size_t len)
{
    int line = 1, col = 1;
    X->s = aka_xmalloc(len + 1);
    X->line = aka_xmalloc((len + 1) * sizeof(int));
    X->col = aka_xmalloc((len + 1) * sizeof(int));
    for (size_t k = 0; k < len; k++) {
        size_t nl = k + 1 < len && src[k + 1] == '\r' ? k + 2 : k + 1;
        if (src[k] == '\\' && nl < len && src[nl] == '\n') {
            k = nl;
            line++;
            col = 1;
            continue;
        }
        X->s[X->n] = src[k];
        X->line[X->n] = line;
        X->col[X->n++] = col;
        if (src[k] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    X->s[X->n] = '\0';
    X->line[X->n] = line;
    X->col[X->n] = col;
}

static int fail(struct clex *X, size_t at, const char *what)
{
    return aka_err_set(X->err, AKA_EXIT_USAGE, "%s:%d:%d: does not tokenize as C/CUDA: %s", X->file,
                       X->line[at], X->col[at], what);
}

static int pk(const struct clex *X, size_t k)
{
    return X->i + k < X->n ? (unsigned char)X->s[X->i + k] : -1;
}

static struct c_tok *push(struct clex *X, enum c_kind kind, char *text, size_t at)
{
    struct c_tok t = {kind, text, X->line[at], X->col[at], false, false};
    VEC_PUSH(*X->out, t);
    X->bol = false;
    return &X->out->v[X->out->n - 1];
}

static bool name_byte(int c)
{
    return c == '_' || c == '$' || isalnum(c) || c >= 0x80;
}

/* A quoted literal from the opening quote at X->i; its text without escapes decoded. */
static int lex_quoted(struct clex *X, enum c_kind kind, size_t at)
{
    char q = X->s[X->i++];
    struct strbuf sb = STRBUF_INIT;
    for (;;) {
        int c = pk(X, 0);
        if (c < 0 || c == '\n') {
            strbuf_release(&sb);
            return fail(X, at,
                        q == '"' ? "unterminated string literal (expected \")"
                                 : "unterminated character literal (expected ')");
        }
        X->i++;
        if (c == q)
            break;
        if (c == '\\' && pk(X, 0) >= 0) {
            strbuf_addch(&sb, c);
            c = X->s[X->i++];
        }
        strbuf_addch(&sb, c);
    }
    push(X, kind, strbuf_detach(&sb, NULL), at);
    return 0;
}

/* A C++ raw string R"delim( ... )delim" from the quote at X->i. */
static int lex_raw(struct clex *X, size_t at)
{
    size_t d = ++X->i;
    while (X->i < X->n && X->s[X->i] != '(' && X->i - d < 16)
        X->i++;
    if (pk(X, 0) != '(')
        return fail(X, at, "malformed raw string delimiter (expected '(')");
    char close[20];
    snprintf(close, sizeof(close), ")%.*s\"", (int)(X->i - d), X->s + d);
    const char *e = strstr(X->s + X->i + 1, close);
    if (!e)
        return fail(X, at, "unterminated raw string literal");
    size_t b = X->i + 1;
    push(X, C_STRING, aka_xstrndup(X->s + b, (size_t)(e - X->s) - b), at);
    X->i = (size_t)(e - X->s) + strlen(close);
    return 0;
}

static void lex_word(struct clex *X, enum c_kind kind)
{
    size_t b = X->i;
    while (X->i < X->n) {
        int c = pk(X, 0);
        if (kind == C_NUMBER && (c == '+' || c == '-') && strchr("eEpP", X->s[X->i - 1])) {
            X->i++;
            continue;
        }
        if (!(name_byte(c) || (kind == C_NUMBER && (c == '.' || c == '\''))))
            break;
        X->i++;
    }
    push(X, kind, aka_xstrndup(X->s + b, X->i - b), b);
}

/* After '#' at the start of a line: the directive name, and for #include its header. */
static int lex_directive(struct clex *X)
{
    size_t at = X->i++;
    while (pk(X, 0) == ' ' || pk(X, 0) == '\t')
        X->i++;
    size_t b = X->i;
    while (X->i < X->n && isalpha(pk(X, 0)))
        X->i++;
    char *name = aka_xstrndup(X->s + b, X->i - b);
    if (strcmp(name, "include") != 0 && strcmp(name, "include_next") != 0 &&
        strcmp(name, "import") != 0) {
        push(X, C_DIRECTIVE, name, at);
        return 0;
    }
    free(name);
    while (pk(X, 0) == ' ' || pk(X, 0) == '\t')
        X->i++;
    int open = pk(X, 0), close = open == '<' ? '>' : '"';
    struct c_tok *t;
    if (open == '<' || open == '"') {
        const char *e = strchr(X->s + X->i + 1, close);
        const char *nl = strchr(X->s + X->i + 1, '\n');
        if (!e || (nl && nl < e))
            return fail(X, at,
                        open == '<' ? "unterminated #include <...> (expected '>')"
                                    : "unterminated #include \"...\" (expected '\"')");
        t = push(X, C_INCLUDE, aka_xstrndup(X->s + X->i + 1, (size_t)(e - X->s) - X->i - 1), at);
        t->system = open == '<';
        X->i = (size_t)(e - X->s) + 1;
    } else {
        t = push(X, C_INCLUDE, aka_xstrdup(""), at);
        t->computed = true;
    }
    return 0;
}

static const char *const cops[] = {"<<<", ">>>", "<<=", ">>=", "...", "->", "++", "--", "<<",
                                   ">>",  "<=",  ">=",  "==",  "!=",  "&&", "||", "+=", "-=",
                                   "*=",  "/=",  "%=",  "&=",  "|=",  "^=", "##", "::", NULL};

static int lex_one(struct clex *X)
{
    int c = pk(X, 0);
    size_t at = X->i;
    if (c == '\n') {
        X->i++;
        X->bol = true;
    } else if (isspace(c)) {
        X->i++;
    } else if (c == '/' && pk(X, 1) == '/') {
        while (X->i < X->n && pk(X, 0) != '\n')
            X->i++;
    } else if (c == '/' && pk(X, 1) == '*') {
        const char *e = strstr(X->s + X->i + 2, "*/");
        if (!e)
            return fail(X, at, "unterminated comment (expected */)");
        X->i = (size_t)(e - X->s) + 2;
    } else if (c == '#' && X->bol) {
        return lex_directive(X);
    } else if (c == '"' || c == '\'') {
        return lex_quoted(X, c == '"' ? C_STRING : C_CHAR, at);
    } else if (isdigit(c) || (c == '.' && isdigit(pk(X, 1)))) {
        lex_word(X, C_NUMBER);
    } else if (name_byte(c)) {
        size_t b = X->i;
        while (name_byte(pk(X, 0)))
            X->i++;
        size_t len = X->i - b;
        int q = pk(X, 0);
        bool prefix = len <= 3 && strspn(X->s + b, "LuU8R") >= len;
        if (prefix && (q == '"' || q == '\'')) {
            if (X->s[X->i - 1] == 'R' && q == '"')
                return lex_raw(X, b);
            return lex_quoted(X, q == '"' ? C_STRING : C_CHAR, b);
        }
        X->i = b;
        lex_word(X, C_NAME);
    } else {
        for (const char *const *op = cops; *op; op++) {
            size_t n = strlen(*op);
            if (strncmp(X->s + X->i, *op, n) == 0) {
                X->i += n;
                push(X, C_OP, aka_xstrdup(*op), at);
                return 0;
            }
        }
        if (!strchr("()[]{}+-*/%&|^~!<>=.,:;?#@\\`", c)) {
            char what[64];
            snprintf(what, sizeof(what), "unexpected byte 0x%02x", c);
            return fail(X, at, what);
        }
        char text[2] = {(char)c, 0};
        X->i++;
        push(X, C_OP, aka_xstrdup(text), at);
    }
    return 0;
}

int pol_lex_c(const char *file, const char *src, size_t len, struct c_toks *out,
              struct aka_err *err)
{
    struct clex X = {.file = file, .bol = true, .out = out, .err = err};
    int rc = 0;
    if (memchr(src, '\0', len))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: does not tokenize as C/CUDA: a NUL byte (expected text)", file);
    splice(&X, src, len);
    while (rc == 0 && X.i < X.n)
        rc = lex_one(&X);
    free(X.s);
    free(X.line);
    free(X.col);
    if (rc < 0)
        pol_c_toks_free(out);
    return rc;
}

void pol_c_toks_free(struct c_toks *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].text);
    VEC_FREE(*t);
}
