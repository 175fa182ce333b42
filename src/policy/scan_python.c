/*
 * scan_python.c — the source policy over Python tokens.
 *
 * Three passes. Bindings: import statements and plain alias assignments
 * (`F = torch.nn.functional`, followed to a fixpoint), so every name is
 * resolved to the module path it stands for wherever it is used. Scopes: the
 * def/class structure from indentation, decorators, which functions are
 * kernels of a DSL (their bodies are device code) and which names each
 * function references. Uses: every attribute chain, call, string and operator
 * checked against the rule table; then what the framework requires (a kernel
 * defined, and launched from code reachable from the entry point).
 */
#include "base/strbuf.h"
#include "policy/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct binding {
    char *name, *target;
};

struct func {
    char *name;
    int indent;
    int parent;            /* enclosing function, -1 at module level */
    bool is_class, is_var; /* a class scope; a module-level variable set from functions */
    char *cls;             /* the class a method is defined in */
    bool device;           /* decorated by a DSL's kernel or jit decorator (or nested in one) */
    bool launchable;       /* decorated by the chosen framework's kernel decorator */
    bool reached, launched;
};

struct pyscan {
    struct pol_ctx *c;
    const struct py_toks *t;
    VEC(struct binding) binds;
    VEC(struct func) funcs;
    struct strvec containers; /* module-level empty containers */
    struct strvec modules;    /* names bound by `import m` / `import m as n` */
    int *owner;               /* innermost scope of each token, -1 module */
    bool *skip;               /* tokens of import statements */
    bool gluon_import;
    /* module rows already reported, [0] at an import, [1] at a use: the first of each is
     * the line a reviewer needs, the rest repeat it */
    VEC(const struct pol_rule *) reported[2];
    VEC(int) edges; /* pairs (from, to) */
};

static const char *const device_decorators[] = {"triton.jit",
                                                "triton.autotune",
                                                "triton.heuristics",
                                                "triton.experimental.gluon.jit",
                                                "cutlass.cute.kernel",
                                                "cutlass.cute.jit",
                                                "tilelang.language.prim_func",
                                                "tilelang.jit",
                                                "tilelang.language.macro",
                                                "flydsl.compiler.kernel",
                                                "flydsl.compiler.jit",
                                                NULL};

/* The decorators that make a function a kernel of each framework. */
static bool kernel_decorator(enum aka_policy_fw fw, const char *d)
{
    switch (fw) {
    case AKA_FW_TRITON:
        return strcmp(d, "triton.jit") == 0;
    case AKA_FW_GLUON:
        return strcmp(d, "triton.experimental.gluon.jit") == 0;
    case AKA_FW_CUTEDSL:
        return strcmp(d, "cutlass.cute.kernel") == 0;
    case AKA_FW_TILELANG:
        return strcmp(d, "tilelang.language.prim_func") == 0 || strcmp(d, "tilelang.jit") == 0;
    case AKA_FW_FLYDSL:
        return strcmp(d, "flydsl.compiler.kernel") == 0;
    default:
        return false;
    }
}

static const struct py_tok *tok(const struct pyscan *S, size_t i)
{
    static const struct py_tok end = {PY_NEWLINE, "", 0, 0, 0, true, false, false, false};
    return i < S->t->n ? &S->t->v[i] : &end;
}

static bool is_op(const struct pyscan *S, size_t i, const char *op)
{
    return tok(S, i)->kind == PY_OP && strcmp(tok(S, i)->text, op) == 0;
}

static bool is_name(const struct pyscan *S, size_t i, const char *name)
{
    return tok(S, i)->kind == PY_NAME && (!name || strcmp(tok(S, i)->text, name) == 0);
}

static const char *bound(const struct pyscan *S, const char *name)
{
    for (size_t k = S->binds.n; k-- > 0;)
        if (strcmp(S->binds.v[k].name, name) == 0)
            return S->binds.v[k].target;
    return NULL;
}

static bool bind(struct pyscan *S, const char *name, const char *target)
{
    const char *old = bound(S, name);
    if (old && strcmp(old, target) == 0)
        return false;
    struct binding b = {aka_xstrdup(name), aka_xstrdup(target)};
    VEC_PUSH(S->binds, b);
    return true;
}

/* A dotted name NAME(.NAME)* at *i into out (raw); advances *i past it. */
static bool read_dotted(const struct pyscan *S, size_t *i, struct strbuf *out)
{
    strbuf_reset(out);
    if (!is_name(S, *i, NULL))
        return false;
    strbuf_addstr(out, tok(S, *i)->text);
    (*i)++;
    while (is_op(S, *i, ".") && is_name(S, *i + 1, NULL)) {
        strbuf_addf(out, ".%s", tok(S, *i + 1)->text);
        *i += 2;
    }
    return true;
}

/* Resolve a raw chain through the bindings of its root; NULL when the root is unbound. */
static char *resolve(const struct pyscan *S, const char *raw)
{
    size_t n = strcspn(raw, ".");
    char *root = aka_xstrndup(raw, n);
    const char *t = bound(S, root);
    free(root);
    if (!t)
        return NULL;
    struct strbuf sb = STRBUF_INIT;
    strbuf_addf(&sb, "%s%s", t, raw + n);
    return strbuf_detach(&sb, NULL);
}

/* Check a module path (an import or a resolved chain) against the module rows. */
static bool check_module(struct pyscan *S, const char *path, int line, int col, bool use);

/* `NAME = chain` on a line of its own: an alias, followed where it is used. */
static bool alias_rhs(const struct pyscan *S, size_t i, size_t j)
{
    return i >= 2 && is_op(S, i - 1, "=") && tok(S, i - 2)->stmt && is_name(S, i - 2, NULL) &&
           (tok(S, j)->kind == PY_NEWLINE || is_op(S, j, ";"));
}

static bool check_module(struct pyscan *S, const char *path, int line, int col, bool use)
{
    const struct pol_rule *r = pol_match(PK_PY_MODULE, S->c->fw, path);
    if (strncmp(path, "triton.experimental.gluon", 25) == 0)
        S->gluon_import = true;
    if (r) {
        size_t k = 0;
        while (k < S->reported[use].n && S->reported[use].v[k] != r)
            k++;
        if (k == S->reported[use].n) {
            VEC_PUSH(S->reported[use], r);
            pol_violation_row(S->c, r, line, col, path);
        }
        return true;
    }
    if (use && (strcmp(path, "torch") == 0 || strncmp(path, "torch.", 6) == 0) &&
        !pol_torch_allowed(path)) {
        pol_violation(S->c, "torch-compute", line, col,
                      "PyTorch compute on the forward path (only allocation and metadata calls "
                      "are allowed): %s",
                      path);
        return true;
    }
    return false;
}

static void check_import(struct pyscan *S, const char *module, const struct py_tok *at)
{
    const struct pol_rule *r = pol_match(PK_PY_MODULE, S->c->fw, module);
    char first[128];
    snprintf(first, sizeof(first), "%.*s", (int)strcspn(module, "."), module);
    if (!(r && strcmp(r->id, "evaluator-files") == 0) && pol_sibling_module(S->c, first)) {
        pol_violation(S->c, "one-kernel-file", at->line, at->col,
                      "the kernel imports %s, a second source file of its directory", first);
        return;
    }
    check_module(S, module, at->line, at->col, false);
}

/* `import a.b as c, d` at i (the `import` token); returns the index after it. */
static size_t parse_import(struct pyscan *S, size_t i)
{
    struct strbuf mod = STRBUF_INIT;
    do {
        i++;
        const struct py_tok *at = tok(S, i);
        if (!read_dotted(S, &i, &mod))
            break;
        check_import(S, mod.buf, at);
        if (is_name(S, i, "as") && is_name(S, i + 1, NULL)) {
            bind(S, tok(S, i + 1)->text, mod.buf);
            strvec_push(&S->modules, tok(S, i + 1)->text);
            i += 2;
        } else {
            mod.buf[strcspn(mod.buf, ".")] = '\0';
            bind(S, mod.buf, mod.buf);
            strvec_push(&S->modules, mod.buf);
        }
    } while (is_op(S, i, ","));
    strbuf_release(&mod);
    return i;
}

/* `from [.]mod import a as b, (c, d)` or `import *`. */
static size_t parse_from(struct pyscan *S, size_t i)
{
    const struct py_tok *from = tok(S, i);
    struct strbuf mod = STRBUF_INIT, full = STRBUF_INIT;
    i++;
    if (is_op(S, i, ".") || is_op(S, i, "...")) {
        pol_violation(S->c, "relative-import", from->line, from->col,
                      "relative import (the kernel is one self-contained file)");
        while (is_op(S, i, ".") || is_op(S, i, "..."))
            i++;
        strbuf_addstr(&mod, ".");
        if (is_name(S, i, NULL) && !is_name(S, i, "import"))
            read_dotted(S, &i, &full);
    } else {
        read_dotted(S, &i, &mod);
        check_import(S, mod.buf, from);
    }
    if (!is_name(S, i, "import"))
        goto out;
    i++;
    if (is_op(S, i, "*")) {
        pol_violation(S->c, "dynamic-access", tok(S, i)->line, tok(S, i)->col,
                      "star import (the names it binds cannot be followed): from %s import *",
                      mod.buf);
        i++;
        goto out;
    }
    bool paren = is_op(S, i, "(");
    i += paren;
    while (is_name(S, i, NULL)) {
        const struct py_tok *name = tok(S, i);
        strbuf_reset(&full);
        strbuf_addf(&full, "%s.%s", mod.buf, name->text);
        i++;
        const char *as = name->text;
        if (is_name(S, i, "as") && is_name(S, i + 1, NULL)) {
            as = tok(S, i + 1)->text;
            i += 2;
        }
        if (strcmp(mod.buf, ".") != 0) {
            check_module(S, full.buf, name->line, name->col, false);
            bind(S, as, full.buf);
        }
        if (!is_op(S, i, ","))
            break;
        i++;
    }
    i += paren && is_op(S, i, ")");
out:
    strbuf_release(&mod);
    strbuf_release(&full);
    return i;
}

/* Imports, then `NAME = chain` aliases to a fixpoint. */
static void pass_bindings(struct pyscan *S)
{
    for (size_t i = 0; i < S->t->n; i++) {
        const struct py_tok *k = tok(S, i);
        if (!k->stmt || k->kind != PY_NAME)
            continue;
        size_t j = i;
        if (strcmp(k->text, "import") == 0)
            j = parse_import(S, i);
        else if (strcmp(k->text, "from") == 0)
            j = parse_from(S, i);
        for (size_t m = i; m < j; m++)
            S->skip[m] = true;
    }
    struct strbuf raw = STRBUF_INIT;
    for (int round = 0, changed = 1; changed && round < 8; round++) {
        changed = 0;
        for (size_t i = 0; i + 2 < S->t->n; i++) {
            size_t j = i + 2;
            if (!tok(S, i)->stmt || !is_name(S, i, NULL) || !is_op(S, i + 1, "=") ||
                !read_dotted(S, &j, &raw))
                continue;
            if (tok(S, j)->kind != PY_NEWLINE && !is_op(S, j, ";"))
                continue;
            char *r = resolve(S, raw.buf);
            if (r && strcmp(r, tok(S, i)->text) != 0)
                changed |= bind(S, tok(S, i)->text, r);
            free(r);
        }
    }
    strbuf_release(&raw);
}

static bool is_device_decorator(const char *d)
{
    for (const char *const *p = device_decorators; *p; p++)
        if (strcmp(*p, d) == 0)
            return true;
    return false;
}

static int add_func(struct pyscan *S, const char *name, int indent, int parent)
{
    struct func f = {
        aka_xstrdup(name), indent, parent, false, false, NULL, false, false, false, false};
    if (parent >= 0 && S->funcs.v[parent].device)
        f.device = true;
    if (parent >= 0 && S->funcs.v[parent].is_class)
        f.cls = aka_xstrdup(S->funcs.v[parent].name);
    VEC_PUSH(S->funcs, f);
    return (int)S->funcs.n - 1;
}

static void add_edge(struct pyscan *S, int from, int to)
{
    VEC_PUSH(S->edges, from);
    VEC_PUSH(S->edges, to);
}

/* Decorators of a def: resolved chains after '@' statements just before it. */
static void apply_decorators(struct pyscan *S, size_t first, size_t def, struct func *f)
{
    struct strbuf raw = STRBUF_INIT;
    for (size_t i = first; i < def; i++) {
        size_t j = i + 1;
        if (!is_op(S, i, "@") || !tok(S, i)->stmt || !read_dotted(S, &j, &raw))
            continue;
        char *r = resolve(S, raw.buf);
        const char *d = r ? r : raw.buf;
        f->device |= is_device_decorator(d);
        f->launchable |= kernel_decorator(S->c->fw, d);
        free(r);
    }
    strbuf_release(&raw);
}

/* Owner of every token from the def/class structure; a module-level
 * `NAME = ...` statement is owned by a pseudo function NAME, so that
 * `compiled = make(kernel)` links compiled to kernel. */
static void pass_scopes(struct pyscan *S)
{
    int stack[256], depth = 0, var = -1;
    size_t deco = (size_t)-1;
    for (size_t i = 0; i < S->t->n; i++) {
        const struct py_tok *k = tok(S, i);
        if (k->kind == PY_NEWLINE)
            var = -1;
        if (k->stmt) {
            while (depth > 0 && S->funcs.v[stack[depth - 1]].indent >= k->indent)
                depth--;
            if (is_op(S, i, "@") && deco == (size_t)-1)
                deco = i;
        }
        int cur = depth ? stack[depth - 1] : -1;
        bool def = k->kind == PY_NAME &&
                   (strcmp(k->text, "def") == 0 || strcmp(k->text, "class") == 0) &&
                   (k->stmt || is_name(S, i - 1, "async")) && is_name(S, i + 1, NULL);
        if (def && depth < 256) {
            int f = add_func(S, tok(S, i + 1)->text, k->indent, cur);
            S->funcs.v[f].is_class = k->text[0] == 'c';
            if (deco != (size_t)-1)
                apply_decorators(S, deco, i, &S->funcs.v[f]);
            deco = (size_t)-1;
            if (cur >= 0)
                add_edge(S, cur, f);
            S->owner[i] = cur;
            stack[depth++] = f;
            continue;
        }
        if (k->stmt && cur < 0 && k->indent == 0 && is_name(S, i, NULL) && is_op(S, i + 1, "=")) {
            var = add_func(S, k->text, -1, -1);
            S->funcs.v[var].is_var = true;
        }
        S->owner[i] = var >= 0 ? var : cur;
    }
}

/* The function (or module-level variable) a token belongs to; NULL at module level. */
static struct func *owner(const struct pyscan *S, size_t i)
{
    int f = i < S->t->n ? S->owner[i] : -1;
    return f >= 0 && (size_t)f < S->funcs.n ? &S->funcs.v[f] : NULL;
}

static bool in_device(const struct pyscan *S, size_t i)
{
    const struct func *f = owner(S, i);
    return f && f->device;
}

/* Index after the bracket group opening at i. */
static size_t skip_group(const struct pyscan *S, size_t i)
{
    int d = 0;
    for (; i < S->t->n; i++) {
        const char *x = tok(S, i)->kind == PY_OP ? tok(S, i)->text : "";
        d += strchr("([{", x[0]) && x[0] ? 1 : 0;
        d -= strchr(")]}", x[0]) && x[0] ? 1 : 0;
        if (d == 0)
            return i + 1;
    }
    return i;
}

static void check_attr(struct pyscan *S, const char *attr, const struct py_tok *at, bool call,
                       bool local, size_t i)
{
    const struct pol_rule *r = pol_match(PK_PY_ATTR, S->c->fw, attr);
    if (!r && call && local && !in_device(S, i))
        r = pol_match(PK_PY_METHOD, S->c->fw, attr);
    if (r)
        pol_violation_row(S->c, r, at->line, at->col, attr);
}

/* getattr(obj, "literal") is obj.literal; any other name is dynamic access. */
static void check_getattr(struct pyscan *S, size_t i, const struct py_tok *at)
{
    size_t a = i + 2, b = a;
    while (b < S->t->n && !is_op(S, b, ",") && !is_op(S, b, ")"))
        b = strchr("([{", tok(S, b)->text[0]) && tok(S, b)->kind == PY_OP ? skip_group(S, b)
                                                                          : b + 1;
    const struct py_tok *name = tok(S, b + 1);
    bool literal = is_op(S, b, ",") && name->kind == PY_STRING && !name->fstring &&
                   (is_op(S, b + 2, ")") || is_op(S, b + 2, ","));
    if (!literal) {
        pol_violation(S->c, "dynamic-access", at->line, at->col,
                      "getattr with a computed attribute name");
        return;
    }
    struct strbuf raw = STRBUF_INIT;
    size_t j = a;
    if (read_dotted(S, &j, &raw) && j == b) {
        char *r = resolve(S, raw.buf);
        if (r) {
            strbuf_reset(&raw);
            strbuf_addf(&raw, "%s.%s", r, name->text);
            check_module(S, raw.buf, at->line, at->col, true);
        }
        free(r);
    }
    check_attr(S, name->text, at, false, false, i);
    strbuf_release(&raw);
}

static bool assign_op(const struct pyscan *S, size_t i)
{
    const struct py_tok *k = tok(S, i);
    size_t n = strlen(k->text);
    return k->kind == PY_OP && n >= 1 && k->text[n - 1] == '=' && strcmp(k->text, "==") != 0 &&
           strcmp(k->text, "!=") != 0 && strcmp(k->text, "<=") != 0 && strcmp(k->text, ">=") != 0;
}

static int find_func(const struct pyscan *S, const char *name)
{
    for (size_t f = 0; f < S->funcs.n; f++)
        if (strcmp(S->funcs.v[f].name, name) == 0)
            return (int)f;
    return -1;
}

/* A container filled inside a function: NAME[...] = or NAME.setdefault(...). */
static void check_container(struct pyscan *S, size_t i, const struct py_tok *at)
{
    static const char *const fill[] = {"setdefault", "update",      "append",
                                       "add",        "__setitem__", NULL};
    const struct func *f = owner(S, i);
    if (!f || f->is_var || strvec_find(&S->containers, at->text) < 0)
        return;
    bool hit = is_op(S, i + 1, "[") && assign_op(S, skip_group(S, i + 1));
    for (const char *const *m = fill; *m && !hit; m++)
        hit = is_op(S, i + 1, ".") && is_name(S, i + 2, *m);
    if (hit)
        pol_violation(S->c, "input-cache", at->line, at->col,
                      "a module-level container filled on the forward path: %s", at->text);
}

/*
 * An imported module used as a value (`f(torch)`, `[torch]`, `return torch`)
 * rather than through an attribute: what the receiver does with it cannot be
 * followed. `t = torch` alone is an alias (followed) and getattr(m, "name")
 * is resolved by check_getattr.
 */
static bool module_as_value(const struct pyscan *S, size_t i, size_t j, const char *raw)
{
    if (strchr(raw, '.') || strvec_find(&S->modules, raw) < 0 || is_op(S, j, ".") ||
        alias_rhs(S, i, j))
        return false;
    return !(is_op(S, i - 1, "(") && is_name(S, i - 2, "getattr"));
}

/* A bare name passed on as a value (`o = open`, `f(id, x)`), not assigned or called. */
static bool value_use(const struct pyscan *S, size_t i, size_t j)
{
    bool before = is_op(S, i - 1, "=") || is_op(S, i - 1, "(") || is_op(S, i - 1, ",");
    bool after = tok(S, j)->kind == PY_NEWLINE || is_op(S, j, ",") || is_op(S, j, ")");
    return before && after;
}

/* One chain NAME(.NAME)* starting at i; returns the index after it. */
static size_t check_chain(struct pyscan *S, size_t i)
{
    const struct py_tok *at = tok(S, i);
    struct strbuf raw = STRBUF_INIT;
    size_t j = i;
    bool nonascii = false;
    for (size_t m = i; m < S->t->n && (m == i || is_op(S, m - 1, ".")); m += 2)
        nonascii |= tok(S, m)->nonascii;
    read_dotted(S, &j, &raw);
    bool call = is_op(S, j, "(");
    char *r = resolve(S, raw.buf);
    if (nonascii)
        pol_violation(S->c, "dynamic-access", at->line, at->col,
                      "identifier outside ASCII (Python folds it to another name): %s", raw.buf);
    if (at->stmt && !strchr(raw.buf, '.') && assign_op(S, j)) {
        free(r); /* a plain assignment target: a name, not a use */
        strbuf_release(&raw);
        return j;
    }
    if (r && strchr(raw.buf, '.') && assign_op(S, j))
        pol_violation(S->c, "harness-patching", at->line, at->col,
                      "assignment to an attribute of an imported module: %s", r);
    else if (r && module_as_value(S, i, j, raw.buf))
        pol_violation(S->c, "dynamic-access", at->line, at->col,
                      "an imported module passed on as a value (its uses cannot be followed): %s",
                      raw.buf);
    else if (r)
        check_module(S, r, at->line, at->col, !alias_rhs(S, i, j));
    else {
        const struct pol_rule *b = pol_match(PK_PY_BUILTIN, S->c->fw, at->text);
        if (!b && (call || value_use(S, i, j)) && !strchr(raw.buf, '.'))
            b = pol_match(PK_PY_BUILTIN_CALL, S->c->fw, at->text);
        if (b)
            pol_violation_row(S->c, b, at->line, at->col, at->text);
        else if (call && strcmp(raw.buf, "getattr") == 0)
            check_getattr(S, j - 1, at);
        check_container(S, i, at);
    }
    for (size_t m = i + 2; m < j; m += 2)
        check_attr(S, tok(S, m)->text, tok(S, m), call && m + 1 == j, !r, m);
    free(r);
    strbuf_release(&raw);
    return j;
}

/* Adjacent (or +-joined) string literals as one text, docstrings aside. */
static size_t check_strings(struct pyscan *S, size_t i)
{
    struct strbuf sb = STRBUF_INIT;
    const struct py_tok *at = tok(S, i);
    bool doc = at->stmt && tok(S, i + 1)->kind == PY_NEWLINE;
    while (tok(S, i)->kind == PY_STRING) {
        strbuf_addstr(&sb, tok(S, i)->text);
        i++;
        if (is_op(S, i, "+") && tok(S, i + 1)->kind == PY_STRING)
            i++;
    }
    const struct pol_rule *r = doc ? NULL : pol_match(PK_STRING, S->c->fw, sb.buf);
    if (r)
        pol_violation_row(S->c, r, at->line, at->col, r->pattern);
    strbuf_release(&sb);
    return i;
}

/* A launch `kernel[grid](...)` of a launchable function. */
static void note_launch(struct pyscan *S, size_t i)
{
    int f = find_func(S, tok(S, i)->text);
    if (f < 0 || !S->funcs.v[f].launchable || !is_op(S, i + 1, "["))
        return;
    struct func *in = owner(S, i);
    if (is_op(S, skip_group(S, i + 1), "(") && in)
        in->launched = true;
}

static void pass_uses(struct pyscan *S)
{
    for (size_t i = 0; i < S->t->n;) {
        const struct py_tok *k = tok(S, i);
        if (S->skip[i]) {
            i++;
        } else if (k->kind == PY_STRING) {
            i = check_strings(S, i);
        } else if (k->kind == PY_NAME && !is_op(S, i - 1, ".")) {
            if (strcmp(k->text, "global") == 0 && k->stmt && owner(S, i))
                pol_violation(S->c, "input-cache", k->line, k->col,
                              "module-level state written on the forward path (global)");
            note_launch(S, i);
            i = check_chain(S, i);
        } else if (k->kind == PY_NAME) {
            check_attr(S, k->text, k, is_op(S, i + 1, "("), true, i);
            i++;
        } else {
            if (k->kind == PY_OP && (strcmp(k->text, "@") == 0 || strcmp(k->text, "@=") == 0) &&
                !k->stmt && !in_device(S, i))
                pol_violation(S->c, "torch-compute", k->line, k->col,
                              "the matrix-multiply operator outside a kernel");
            i++;
        }
    }
}

/* Module-level `NAME = {}` / [] / dict() / set() / list() / OrderedDict() / defaultdict(...). */
static void find_containers(struct pyscan *S)
{
    static const char *const ctors[] = {"dict",        "set",         "list", "OrderedDict",
                                        "defaultdict", "collections", NULL};
    for (size_t i = 0; i + 3 < S->t->n; i++) {
        if (!tok(S, i)->stmt || tok(S, i)->indent != 0 || !is_name(S, i, NULL) ||
            !is_op(S, i + 1, "="))
            continue;
        bool empty = (is_op(S, i + 2, "{") && is_op(S, i + 3, "}")) ||
                     (is_op(S, i + 2, "[") && is_op(S, i + 3, "]"));
        for (const char *const *c = ctors; *c && !empty; c++)
            empty = is_name(S, i + 2, *c);
        if (empty)
            strvec_push(&S->containers, tok(S, i)->text);
    }
}

/* Functions referenced by name (NAME or self.NAME) from each function's body. */
static void collect_refs(struct pyscan *S)
{
    for (size_t i = 0; i < S->t->n; i++) {
        if (S->owner[i] < 0 || !is_name(S, i, NULL))
            continue;
        for (size_t f = 0; f < S->funcs.n; f++)
            if ((int)f != S->owner[i] && strcmp(S->funcs.v[f].name, tok(S, i)->text) == 0)
                add_edge(S, S->owner[i], (int)f);
    }
}

static void reach(struct pyscan *S, int f)
{
    if (f < 0 || S->funcs.v[f].reached)
        return;
    S->funcs.v[f].reached = true;
    for (size_t e = 0; e + 1 < S->edges.n; e += 2)
        if (S->edges.v[e] == f)
            reach(S, S->edges.v[e + 1]);
}

/* Entry: solution.json's name, else `run` at module level or any class's `forward`. */
static bool mark_entry(struct pyscan *S)
{
    bool any = false;
    for (size_t f = 0; f < S->funcs.n; f++) {
        struct func *fn = &S->funcs.v[f];
        bool entry;
        if (S->c->entry)
            entry = (strcmp(fn->name, S->c->entry) == 0 && fn->parent < 0) ||
                    (fn->cls && strcmp(fn->cls, S->c->entry) == 0 &&
                     (strcmp(fn->name, "forward") == 0 || strcmp(fn->name, "__call__") == 0));
        else
            entry = (strcmp(fn->name, "run") == 0 && fn->parent < 0 && !fn->is_var) ||
                    (fn->cls && strcmp(fn->name, "forward") == 0);
        if (entry) {
            reach(S, (int)f);
            any = true;
        }
    }
    return any;
}

static void check_requirements(struct pyscan *S)
{
    bool kernel = false, launched = false;
    for (size_t f = 0; f < S->funcs.n; f++)
        kernel |= S->funcs.v[f].launchable;
    if (S->c->fw == AKA_FW_GLUON && !S->gluon_import)
        pol_violation(S->c, "gluon-latch", 1, 1,
                      "a Gluon kernel must import Gluon (triton.experimental.gluon); "
                      "switching back is forbidden");
    if (!kernel) {
        pol_violation(S->c, "requires-kernel", 1, 1, "no %s kernel is defined (expected %s)",
                      aka_policy_framework_name(S->c->fw),
                      S->c->fw == AKA_FW_TRITON     ? "a @triton.jit function"
                      : S->c->fw == AKA_FW_GLUON    ? "a @gluon.jit function"
                      : S->c->fw == AKA_FW_CUTEDSL  ? "a @cute.kernel function"
                      : S->c->fw == AKA_FW_TILELANG ? "a @T.prim_func or @tilelang.jit function"
                                                    : "a @flyc.kernel function");
        return;
    }
    bool entry = mark_entry(S);
    bool grid = S->c->fw == AKA_FW_TRITON || S->c->fw == AKA_FW_GLUON;
    for (size_t f = 0; f < S->funcs.n; f++) {
        const struct func *fn = &S->funcs.v[f];
        launched |= fn->reached && (grid ? fn->launched && !fn->device : fn->launchable);
    }
    if (!entry && S->c->entry)
        pol_violation(S->c, "requires-launch", 1, 1,
                      "no entry point: solution.json names %s, which the kernel does not define",
                      S->c->entry);
    else if (!entry)
        pol_violation(S->c, "requires-launch", 1, 1,
                      "no entry point: expected def run(...) or a class with forward()");
    else if (!launched)
        pol_violation(S->c, "requires-launch", 1, 1,
                      "no %s kernel is launched from the entry point%s",
                      aka_policy_framework_name(S->c->fw),
                      grid ? " (expected kernel[grid](...) in code the entry point reaches)" : "");
}

void pol_scan_python(struct pol_ctx *c, const struct py_toks *t)
{
    struct pyscan S = {.c = c, .t = t};
    S.owner = aka_xcalloc(t->n + 1, sizeof(int));
    for (size_t i = 0; i <= t->n; i++)
        S.owner[i] = -1; /* module level until pass_scopes says otherwise */
    S.skip = aka_xcalloc(t->n + 1, sizeof(bool));
    pass_bindings(&S);
    find_containers(&S);
    pass_scopes(&S);
    collect_refs(&S);
    pass_uses(&S);
    check_requirements(&S);
    for (size_t k = 0; k < S.binds.n; k++) {
        free(S.binds.v[k].name);
        free(S.binds.v[k].target);
    }
    for (size_t f = 0; f < S.funcs.n; f++) {
        free(S.funcs.v[f].name);
        free(S.funcs.v[f].cls);
    }
    VEC_FREE(S.binds);
    VEC_FREE(S.funcs);
    VEC_FREE(S.edges);
    VEC_FREE(S.reported[0]);
    VEC_FREE(S.reported[1]);
    strvec_clear(&S.containers);
    strvec_clear(&S.modules);
    free(S.owner);
    free(S.skip);
}
