/*
 * lex_python.c — a Python tokenizer for the source policy.
 *
 * It produces names, numbers, operators, string literals (decoded, so that
 * "plan\x2ejson" reads as what Python sees) and logical-line ends, with the
 * indentation of each logical line. Comments are dropped and strings are one
 * token, so a forbidden name in prose never looks like code; the replacement
 * fields of f-strings are tokenized as code (wrapped in parentheses), because
 * Python runs them. Bracketed and backslash-continued lines join one logical
 * line, as in Python. Anything Python would refuse to tokenize (an
 * unterminated string, an unbalanced bracket, a stray character) is an error
 * naming FILE:LINE:COLUMN and what was expected.
 */
#include "base/strbuf.h"
#include "policy/internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 200

struct lexer {
    const char *file;
    const char *s;
    size_t end, i;
    int line, col;
    int depth;             /* open brackets */
    char stack[MAX_DEPTH]; /* the open brackets, for the error on a mismatch */
    int indent;            /* of the current logical line */
    int sline, scol;       /* where the string being lexed starts */
    bool line_open;        /* a token was emitted on this logical line */
    bool stmt;             /* the next token starts a statement */
    bool fexpr;
    struct py_toks *out;
    struct aka_err *err;
};

static int fail(struct lexer *L, const char *fmt, const char *what)
{
    return aka_err_set(L->err, AKA_EXIT_USAGE, "%s:%d:%d: does not tokenize as Python: %s%s",
                       L->file, L->line, L->col, fmt, what ? what : "");
}

static int peek(const struct lexer *L, size_t k)
{
    return L->i + k < L->end ? (unsigned char)L->s[L->i + k] : -1;
}

static void adv(struct lexer *L)
{
    if (L->s[L->i] == '\n') {
        L->line++;
        L->col = 1;
    } else {
        L->col++;
    }
    L->i++;
}

static struct py_tok *push(struct lexer *L, enum py_kind kind, char *text, int line, int col)
{
    struct py_tok t = {kind, text, line, col, L->indent, L->stmt, L->fexpr, false, false};
    VEC_PUSH(*L->out, t);
    L->stmt = false;
    L->line_open = true;
    return &L->out->v[L->out->n - 1];
}

static bool is_name_byte(int c)
{
    return c == '_' || isalnum(c) || c >= 0x80;
}

static void lex_name(struct lexer *L)
{
    size_t b = L->i;
    int line = L->line, col = L->col;
    bool nonascii = false;
    while (L->i < L->end && is_name_byte(peek(L, 0))) {
        nonascii |= peek(L, 0) >= 0x80;
        adv(L);
    }
    push(L, PY_NAME, aka_xstrndup(L->s + b, L->i - b), line, col)->nonascii = nonascii;
}

static void lex_number(struct lexer *L)
{
    size_t b = L->i;
    int line = L->line, col = L->col;
    while (L->i < L->end) {
        int c = peek(L, 0);
        if ((c == 'e' || c == 'E') && (peek(L, 1) == '+' || peek(L, 1) == '-') &&
            !(L->i > b + 1 && L->s[b] == '0' && (L->s[b + 1] == 'x' || L->s[b + 1] == 'X'))) {
            adv(L);
            adv(L);
            continue;
        }
        if (!(isalnum(c) || c == '_' || c == '.'))
            break;
        adv(L);
    }
    push(L, PY_NUMBER, aka_xstrndup(L->s + b, L->i - b), line, col);
}

/* Append code point cp as UTF-8. */
static void add_utf8(struct strbuf *sb, unsigned long cp)
{
    if (cp < 0x80) {
        strbuf_addch(sb, (int)cp);
    } else if (cp < 0x800) {
        strbuf_addch(sb, (int)(0xc0 | (cp >> 6)));
        strbuf_addch(sb, (int)(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        strbuf_addch(sb, (int)(0xe0 | (cp >> 12)));
        strbuf_addch(sb, (int)(0x80 | ((cp >> 6) & 0x3f)));
        strbuf_addch(sb, (int)(0x80 | (cp & 0x3f)));
    } else {
        strbuf_addch(sb, (int)(0xf0 | (cp >> 18)));
        strbuf_addch(sb, (int)(0x80 | ((cp >> 12) & 0x3f)));
        strbuf_addch(sb, (int)(0x80 | ((cp >> 6) & 0x3f)));
        strbuf_addch(sb, (int)(0x80 | (cp & 0x3f)));
    }
}

/* Read up to max digits of base at L->i; the value, or -1 when none. */
static long read_digits(struct lexer *L, int base, int max)
{
    long v = 0;
    int k = 0;
    for (; k < max && L->i < L->end; k++) {
        int c = peek(L, 0), d;
        if (isdigit(c))
            d = c - '0';
        else if (base == 16 && isxdigit(c))
            d = tolower(c) - 'a' + 10;
        else
            break;
        if (d >= base)
            break;
        v = v * base + d;
        adv(L);
    }
    return k ? v : -1;
}

/* One escape after a backslash in a non-raw literal (the backslash consumed). */
static void lex_escape(struct lexer *L, struct strbuf *sb)
{
    static const char from[] = "ntr0abfv\\'\"", to[] = "\n\t\r\0\a\b\f\v\\'\"";
    int c = peek(L, 0);
    const char *p = c > 0 && c != '0' ? strchr(from, c) : NULL;
    long v;
    if (c >= '0' && c <= '7') {
        add_utf8(sb, (unsigned long)read_digits(L, 8, 3));
        return;
    }
    adv(L);
    if (p) {
        strbuf_addch(sb, to[p - from]);
    } else if ((c == 'x' || c == 'u' || c == 'U') && (v = read_digits(L, 16,
                                                                      c == 'x'   ? 2
                                                                      : c == 'u' ? 4
                                                                                 : 8)) >= 0) {
        add_utf8(sb, (unsigned long)v);
    } else if (c == '\n') {
        /* a backslash-newline inside a literal continues it */
    } else {
        strbuf_addch(sb, '\\');
        strbuf_addch(sb, c);
    }
}

static int lex_tokens(struct lexer *L, bool fstop);
static int lex_fbody(struct lexer *L, char q, bool triple, bool raw, bool spec, struct strbuf *sb);

/* A replacement field after '{': code, then !conversion, then :spec, then '}'. */
static int lex_field(struct lexer *L, char q, bool triple, bool raw)
{
    struct lexer sub = *L;
    sub.depth = 0;
    sub.fexpr = true;
    push(L, PY_OP, aka_xstrdup("("), L->line, L->col);
    sub.line_open = true;
    if (lex_tokens(&sub, true) < 0)
        return -1;
    L->i = sub.i;
    L->line = sub.line;
    L->col = sub.col;
    push(L, PY_OP, aka_xstrdup(")"), L->line, L->col);
    if (peek(L, 0) == '!') {
        adv(L);
        while (L->i < L->end && isalpha(peek(L, 0)))
            adv(L);
    }
    struct strbuf spec = STRBUF_INIT;
    int rc = 0;
    if (peek(L, 0) == ':') {
        adv(L);
        rc = lex_fbody(L, q, triple, raw, true, &spec);
    }
    strbuf_release(&spec);
    if (rc < 0)
        return -1;
    if (peek(L, 0) != '}')
        return fail(L, "expected '}' closing an f-string field", NULL);
    adv(L);
    return 0;
}

static bool at_close(const struct lexer *L, char q, bool triple)
{
    if (peek(L, 0) != q)
        return false;
    return !triple || (peek(L, 1) == q && peek(L, 2) == q);
}

/*
 * The body of a string after its opening quote, up to and past the closing
 * one (or, for a format spec, up to the field's '}'). f-strings lex their
 * fields as code.
 */
static int lex_body(struct lexer *L, char q, bool triple, bool raw, bool f, bool spec,
                    struct strbuf *sb)
{
    for (;;) {
        int c = peek(L, 0);
        if (c < 0 || (c == '\n' && !triple)) {
            L->line = L->sline; /* name where the unterminated string starts */
            L->col = L->scol;
            return fail(L,
                        triple ? "unterminated triple-quoted string (expected "
                               : "unterminated string (expected ",
                        q == '"' ? (triple ? "\"\"\")" : "\")") : (triple ? "''')" : "')"));
        }
        if (spec && c == '}')
            return 0;
        if (!spec && at_close(L, q, triple)) {
            for (int k = 0; k < (triple ? 3 : 1); k++)
                adv(L);
            return 0;
        }
        if (c == '\\') {
            adv(L);
            if (L->i >= L->end)
                continue;
            if (raw) {
                strbuf_addch(sb, '\\');
                strbuf_addch(sb, peek(L, 0));
                adv(L);
            } else {
                lex_escape(L, sb);
            }
        } else if (f && (c == '{' || c == '}') && peek(L, 1) == c && !spec) {
            strbuf_addch(sb, c);
            adv(L);
            adv(L);
        } else if (f && c == '{') {
            adv(L);
            if (lex_field(L, q, triple, raw) < 0)
                return -1;
        } else if (f && c == '}') {
            return fail(L, "single '}' in an f-string", NULL);
        } else {
            strbuf_addch(sb, c);
            adv(L);
        }
    }
}

static int lex_fbody(struct lexer *L, char q, bool triple, bool raw, bool spec, struct strbuf *sb)
{
    return lex_body(L, q, triple, raw, true, spec, sb);
}

/* A string literal starting at L->i with a prefix of plen letters. */
static int lex_string(struct lexer *L, size_t plen)
{
    int line = L->line, col = L->col;
    bool raw = false, f = false;
    int outer_line = L->sline, outer_col = L->scol; /* a string nested in an f-string field */
    L->sline = line;
    L->scol = col;
    for (size_t k = 0; k < plen; k++) {
        int c = tolower(peek(L, 0));
        raw |= c == 'r';
        f |= c == 'f';
        adv(L);
    }
    char q = (char)peek(L, 0);
    bool triple = peek(L, 1) == q && peek(L, 2) == q;
    for (int k = 0; k < (triple ? 3 : 1); k++)
        adv(L);
    size_t idx = L->out->n;
    push(L, PY_STRING, NULL, line, col)->fstring = f;
    struct strbuf sb = STRBUF_INIT;
    int rc = lex_body(L, q, triple, raw, f, false, &sb);
    L->out->v[idx].text = strbuf_detach(&sb, NULL);
    if (rc == 0) {
        L->sline = outer_line;
        L->scol = outer_col;
    }
    return rc;
}

/* Length of a string prefix (r, b, u, f, rb, br, fr, rf ...) followed by a quote, else 0. */
static size_t string_prefix(const struct lexer *L)
{
    size_t k = 0;
    while (k < 2 && strchr("rRbBuUfF", peek(L, k) > 0 ? peek(L, k) : 1))
        k++;
    for (size_t n = 0; n <= k; n++)
        if (peek(L, n) == '"' || peek(L, n) == '\'')
            return n ? n : (size_t)-1;
    return 0;
}

static const char *const ops3[] = {"**=", "//=", ">>=", "<<=", "...", NULL};
static const char *const ops2[] = {"**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", ":=",
                                   "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", NULL};

static int lex_op(struct lexer *L)
{
    int line = L->line, col = L->col;
    for (const char *const *tab = ops3; tab; tab = tab == ops3 ? ops2 : NULL)
        for (const char *const *op = tab; *op; op++) {
            size_t n = strlen(*op);
            if (L->i + n <= L->end && memcmp(L->s + L->i, *op, n) == 0) {
                for (size_t k = 0; k < n; k++)
                    adv(L);
                push(L, PY_OP, aka_xstrdup(*op), line, col);
                return 0;
            }
        }
    int c = peek(L, 0);
    if (!strchr("()[]{}+-*/%@&|^~<>=.,:;!", c)) {
        char what[8];
        snprintf(what, sizeof(what), c < 0x20 ? "0x%02x" : "'%c'", c);
        return fail(L, "unexpected character ", what);
    }
    if (strchr("([{", c)) {
        if (L->depth >= MAX_DEPTH)
            return fail(L, "brackets nested too deep", NULL);
        L->stack[L->depth++] = (char)c;
    } else if (strchr(")]}", c)) {
        char open = c == ')' ? '(' : c == ']' ? '[' : '{';
        if (L->depth == 0 || L->stack[L->depth - 1] != open) {
            char what[4] = {(char)c, '\'', 0, 0};
            return fail(L, "unbalanced '", what);
        }
        L->depth--;
    }
    adv(L);
    char text[2] = {(char)c, 0};
    push(L, PY_OP, aka_xstrdup(text), line, col);
    if (c == ';' && L->depth == 0)
        L->stmt = true;
    return 0;
}

/* At the start of a physical line outside brackets: measure the indent. */
static void lex_indent(struct lexer *L)
{
    int w = 0;
    for (;;) {
        int c = peek(L, 0);
        if (c == ' ')
            w++;
        else if (c == '\t')
            w = (w / 8 + 1) * 8;
        else if (c != '\f')
            break;
        adv(L);
    }
    L->indent = w;
    L->stmt = true;
}

static void end_line(struct lexer *L)
{
    if (L->line_open && !L->fexpr)
        push(L, PY_NEWLINE, aka_xstrdup("\n"), L->line, L->col);
    L->line_open = false;
}

/* The main loop; fstop: stop before '}', '!' or ':' at bracket depth 0 (an f-string field). */
static int lex_tokens(struct lexer *L, bool fstop)
{
    while (L->i < L->end) {
        int c = peek(L, 0);
        size_t plen;
        if (fstop && L->depth == 0 && (c == '}' || c == ':' || (c == '!' && peek(L, 1) != '=')))
            return 0;
        if (c == '\n') {
            adv(L);
            if (L->depth == 0 && !L->fexpr) {
                end_line(L);
                lex_indent(L);
            }
        } else if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
            adv(L);
        } else if (c == '#') {
            while (L->i < L->end && peek(L, 0) != '\n')
                adv(L);
        } else if (c == '\\' &&
                   (peek(L, 1) == '\n' || (peek(L, 1) == '\r' && peek(L, 2) == '\n'))) {
            adv(L);
            while (peek(L, 0) != '\n')
                adv(L);
            adv(L);
        } else if ((plen = string_prefix(L)) != 0) {
            if (lex_string(L, plen == (size_t)-1 ? 0 : plen) < 0)
                return -1;
        } else if (isdigit(c) || (c == '.' && isdigit(peek(L, 1)))) {
            lex_number(L);
        } else if (is_name_byte(c)) {
            lex_name(L);
        } else if (lex_op(L) < 0) {
            return -1;
        }
    }
    if (fstop)
        return fail(L, "unterminated f-string field (expected '}')", NULL);
    if (L->depth > 0) {
        char what[4] = {L->stack[L->depth - 1], '\'', 0, 0};
        return fail(L, "end of file inside an open '", what);
    }
    end_line(L);
    return 0;
}

int pol_lex_python(const char *file, const char *src, size_t len, struct py_toks *out,
                   struct aka_err *err)
{
    struct lexer L = {
        .file = file, .s = src, .end = len, .line = 1, .col = 1, .out = out, .err = err};
    if (memchr(src, '\0', len))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: does not tokenize as Python: a NUL byte (expected text)", file);
    lex_indent(&L);
    if (lex_tokens(&L, false) < 0) {
        pol_py_toks_free(out);
        return -1;
    }
    return 0;
}

void pol_py_toks_free(struct py_toks *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].text);
    VEC_FREE(*t);
}
