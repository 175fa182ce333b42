/*
 * shape_expr.c — the tiny integer expression language of tensor shapes and axes.
 *
 * Owns aka_shape_expr_eval / aka_shape_expr_check (see operator.h). Native
 * shapes ("2*N", "N/2") and SOL "expr" axes ("d * 2") both go through here.
 * Grammar, by precedence:
 *
 *     sum     := product (('+' | '-') product)*
 *     product := unary (('*' | '/' | '//' | '%') unary)*
 *     unary   := ('-' | '+') unary | power
 *     power   := atom ('**' unary)?
 *     atom    := INTEGER | NAME | '(' sum ')'
 *
 * Every operation is overflow-checked: a shape is an allocation size, and a
 * wrapped product would turn into a tiny buffer and an out-of-bounds kernel.
 */
#include "contracts/operator.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Deep enough for any real shape, shallow enough that "((((..." cannot blow the stack. */
#define EXPR_MAX_DEPTH 64

struct parser {
    const char *s;
    size_t pos;
    int depth;
    const struct aka_dim_values *dims; /* evaluate when set */
    const struct strvec *names;        /* check names only when set */
    char *why;
    size_t why_len;
};

static void set_why(const struct parser *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void set_why(const struct parser *p, const char *fmt, ...)
{
    va_list ap;
    if (p->why && p->why_len) {
        va_start(ap, fmt);
        vsnprintf(p->why, p->why_len, fmt, ap);
        va_end(ap);
    }
}

/*
 * Say why (printf-style) and evaluate to -1. A macro, so that the -1 is visible
 * where it is returned: static analysis does not follow variadic calls, and
 * would otherwise explore a failed parse as a success with *out unset.
 */
#define fail(p, ...) (set_why((p), __VA_ARGS__), -1)

static void skip_space(struct parser *p)
{
    while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t')
        p->pos++;
}

/* Consume tok if it comes next (and, for "/" and "*", is not the start of "//" or "**"). */
static bool accept(struct parser *p, const char *tok)
{
    size_t n = strlen(tok);
    skip_space(p);
    if (strncmp(p->s + p->pos, tok, n) != 0)
        return false;
    if (n == 1 && (tok[0] == '/' || tok[0] == '*') && p->s[p->pos + 1] == tok[0])
        return false;
    p->pos += n;
    return true;
}

static int parse_sum(struct parser *p, long long *out);
static int parse_unary(struct parser *p, long long *out);

static int parse_int(struct parser *p, long long *out)
{
    long long v = 0;
    while (isdigit((unsigned char)p->s[p->pos])) {
        int d = p->s[p->pos++] - '0';
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, d, &v))
            return fail(p, "integer literal too large");
    }
    if (p->s[p->pos] == '.' || isalpha((unsigned char)p->s[p->pos]) || p->s[p->pos] == '_')
        return fail(p, "expected an integer literal at column %zu", p->pos + 1);
    *out = v;
    return 0;
}

static int lookup_name(struct parser *p, const char *name, long long *out)
{
    if (p->dims) {
        const struct aka_dim_value *d = aka_dim_find(p->dims, name);
        if (!d)
            return fail(p, "undefined dim '%s'", name);
        *out = d->value;
        return 0;
    }
    if (p->names && strvec_find(p->names, name) < 0)
        return fail(p, "undefined dim '%s'", name);
    *out = 1;
    return 0;
}

static int parse_name(struct parser *p, long long *out)
{
    size_t start = p->pos;
    char name[128];
    while (isalnum((unsigned char)p->s[p->pos]) || p->s[p->pos] == '_')
        p->pos++;
    if (p->pos - start >= sizeof(name))
        return fail(p, "name too long at column %zu", start + 1);
    memcpy(name, p->s + start, p->pos - start);
    name[p->pos - start] = '\0';
    return lookup_name(p, name, out);
}

static int parse_atom(struct parser *p, long long *out)
{
    skip_space(p);
    char c = p->s[p->pos];
    if (isdigit((unsigned char)c))
        return parse_int(p, out);
    if (isalpha((unsigned char)c) || c == '_')
        return parse_name(p, out);
    if (c == '(') {
        p->pos++;
        if (parse_sum(p, out) < 0)
            return -1;
        if (!accept(p, ")"))
            return fail(p, "expected ')' at column %zu", p->pos + 1);
        return 0;
    }
    if (c == '\0')
        return fail(p, "unexpected end of expression");
    return fail(p, "unexpected '%c' at column %zu", c, p->pos + 1);
}

static int power(struct parser *p, long long base, long long exp, long long *out)
{
    long long r = 1;
    if (exp < 0)
        return fail(p, "negative exponent");
    for (long long i = 0; i < exp; i++) {
        if (__builtin_mul_overflow(r, base, &r))
            return fail(p, "value overflows 64 bits");
        if (r == 0 || r == 1)
            break; /* 0**n and 1**n stay put: no need to loop a huge exponent */
    }
    *out = r;
    return 0;
}

static int parse_power(struct parser *p, long long *out)
{
    long long exp;
    if (parse_atom(p, out) < 0)
        return -1;
    if (!accept(p, "**"))
        return 0;
    if (parse_unary(p, &exp) < 0)
        return -1;
    return p->dims ? power(p, *out, exp, out) : 0;
}

static int parse_unary(struct parser *p, long long *out)
{
    int rc;
    if (++p->depth > EXPR_MAX_DEPTH)
        return fail(p, "expression nested too deeply");
    if (accept(p, "-")) {
        rc = parse_unary(p, out);
        if (rc == 0 && p->dims && __builtin_mul_overflow(*out, -1LL, out))
            rc = fail(p, "value overflows 64 bits");
    } else if (accept(p, "+")) {
        rc = parse_unary(p, out);
    } else {
        rc = parse_power(p, out);
    }
    p->depth--;
    return rc;
}

/* Apply one binary operator to a and b (evaluation mode only). */
static int apply(struct parser *p, char op, bool floor_div, long long a, long long b,
                 long long *out)
{
    bool ovf = false;
    switch (op) {
    case '+':
        ovf = __builtin_add_overflow(a, b, out);
        break;
    case '-':
        ovf = __builtin_sub_overflow(a, b, out);
        break;
    case '*':
        ovf = __builtin_mul_overflow(a, b, out);
        break;
    default: /* '/', '//' and '%' */
        if (b == 0)
            return fail(p, "division by zero");
        if (a == -9223372036854775807LL - 1 && b == -1)
            return fail(p, "value overflows 64 bits");
        if (op == '%') {
            /* Python semantics, as SOL expressions are written against Python. */
            *out = a % b;
            if (*out != 0 && ((*out < 0) != (b < 0)))
                *out += b;
        } else if (floor_div) {
            *out = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
        } else if (a % b != 0) {
            return fail(p, "%lld/%lld does not divide exactly (use // to round down)", a, b);
        } else {
            *out = a / b;
        }
    }
    return ovf ? fail(p, "value overflows 64 bits") : 0;
}

static int parse_product(struct parser *p, long long *out)
{
    if (parse_unary(p, out) < 0)
        return -1;
    for (;;) {
        char op;
        bool floor_div = false;
        long long rhs;
        if (accept(p, "*"))
            op = '*';
        else if (accept(p, "//"))
            op = '/', floor_div = true;
        else if (accept(p, "/"))
            op = '/';
        else if (accept(p, "%"))
            op = '%';
        else
            return 0;
        if (parse_unary(p, &rhs) < 0)
            return -1;
        if (p->dims && apply(p, op, floor_div, *out, rhs, out) < 0)
            return -1;
    }
}

static int parse_sum(struct parser *p, long long *out)
{
    if (++p->depth > EXPR_MAX_DEPTH)
        return fail(p, "expression nested too deeply");
    if (parse_product(p, out) < 0)
        return -1;
    for (;;) {
        char op;
        long long rhs;
        if (accept(p, "+"))
            op = '+';
        else if (accept(p, "-"))
            op = '-';
        else
            break;
        if (parse_product(p, &rhs) < 0)
            return -1;
        if (p->dims && apply(p, op, false, *out, rhs, out) < 0)
            return -1;
    }
    p->depth--;
    return 0;
}

static int run(struct parser *p, long long *out)
{
    if (!p->s)
        return fail(p, "empty expression");
    skip_space(p);
    if (!p->s[p->pos])
        return fail(p, "empty expression");
    if (parse_sum(p, out) < 0)
        return -1;
    skip_space(p);
    if (p->s[p->pos])
        return fail(p, "unexpected '%c' at column %zu", p->s[p->pos], p->pos + 1);
    return 0;
}

int aka_shape_expr_eval(const char *expr, const struct aka_dim_values *dims, long long *out,
                        char *why, size_t why_len)
{
    static const struct aka_dim_values none = {0};
    struct parser p = {expr, 0, 0, dims ? dims : &none, NULL, why, why_len};
    return run(&p, out);
}

int aka_shape_expr_check(const char *expr, const struct strvec *names, char *why, size_t why_len)
{
    long long ignored;
    struct parser p = {expr, 0, 0, NULL, names, why, why_len};
    return run(&p, &ignored);
}
