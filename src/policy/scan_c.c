/*
 * scan_c.c — the source policy over C/CUDA tokens (native C and CUDA kernels).
 *
 * Every include, identifier, call, function definition, string literal and
 * pointer comparison is checked against the rule table; members (`x.data`,
 * `p->stream`) are field names, not the functions they may share a name with.
 * Then the requirements: a native kernel defines aka_kernel (the native ABI's
 * entry point); a CUDA kernel also defines a __global__ function and launches
 * one (`k<<<...>>>` or cudaLaunchKernel*). Braces of `extern "C" {` and
 * `namespace X {` do not nest, so definitions inside them count as top level.
 */
#include "base/strbuf.h"
#include "policy/internal.h"

#include <stdlib.h>
#include <string.h>

struct cscan {
    struct pol_ctx *c;
    const struct c_toks *t;
    struct strvec globals, launched;
    bool entry;
    int depth; /* braces that nest (extern "C" and namespace braces do not) */
    VEC(bool) braces;
};

static const struct c_tok *tk(const struct cscan *S, size_t i)
{
    static const struct c_tok end = {C_OP, "", 0, 0, false, false};
    return i < S->t->n ? &S->t->v[i] : &end;
}

static bool op(const struct cscan *S, size_t i, const char *o)
{
    return tk(S, i)->kind == C_OP && strcmp(tk(S, i)->text, o) == 0;
}

static bool name(const struct cscan *S, size_t i, const char *n)
{
    return tk(S, i)->kind == C_NAME && (!n || strcmp(tk(S, i)->text, n) == 0);
}

/* Index just past the group opened at i by open (matched by close). */
static size_t past_group(const struct cscan *S, size_t i, const char *open, const char *close)
{
    int d = 0;
    for (; i < S->t->n; i++) {
        d += op(S, i, open);
        d -= op(S, i, close);
        if (d == 0)
            return i + 1;
    }
    return i;
}

static void row(struct cscan *S, enum pol_kind kind, const char *what, const struct c_tok *at)
{
    const struct pol_rule *r = pol_match(kind, S->c->fw, what);
    if (r)
        pol_violation_row(S->c, r, at->line, at->col, what);
}

static void check_include(struct cscan *S, const struct c_tok *k)
{
    if (k->computed) {
        pol_violation(S->c, "dynamic-access", k->line, k->col, "computed #include");
        return;
    }
    const struct pol_rule *r = pol_match(PK_C_INCLUDE, S->c->fw, k->text);
    if (r)
        pol_violation_row(S->c, r, k->line, k->col, k->text);
    else if (!k->system && strcmp(k->text, "aka_native_abi.h") != 0)
        pol_violation(S->c, "one-kernel-file", k->line, k->col,
                      "the kernel includes \"%s\", a second source file", k->text);
}

/* `__global__ ... name(`: the kernel's name, skipping attribute groups. */
static void note_global(struct cscan *S, size_t i)
{
    for (size_t j = i + 1; j < S->t->n && !op(S, j, ";") && !op(S, j, "{"); j++) {
        if (name(S, j, "__launch_bounds__") || name(S, j, "__attribute__") ||
            name(S, j, "__declspec")) {
            j = past_group(S, j + 1, "(", ")") - 1;
        } else if (name(S, j, NULL) && op(S, j + 1, "(")) {
            strvec_push(&S->globals, tk(S, j)->text);
            return;
        }
    }
}

/* name<<<...>>> or name<T><<<...>>>: the launched name. */
static void note_launch(struct cscan *S, size_t i)
{
    size_t j = i - 1;
    if (op(S, j, ">")) {
        int d = 0;
        for (; j > 0; j--) {
            d += op(S, j, ">") - op(S, j, "<");
            if (d == 0)
                break;
        }
        j--;
    }
    if (name(S, j, NULL))
        strvec_push(&S->launched, tk(S, j)->text);
}

/* cudaLaunchKernel*((void *)k, ...): every name in the first argument. */
static void note_api_launch(struct cscan *S, size_t i)
{
    for (size_t j = i + 2; j < S->t->n && !op(S, j, ",") && !op(S, j, ";"); j++)
        if (name(S, j, NULL))
            strvec_push(&S->launched, tk(S, j)->text);
}

/* A function definition: name ( ... ) [attributes/qualifiers] { at file level. */
static bool is_definition(const struct cscan *S, size_t i)
{
    if (S->depth != 0 || !op(S, i + 1, "("))
        return false;
    size_t j = past_group(S, i + 1, "(", ")");
    while (name(S, j, NULL))
        j = op(S, j + 1, "(") ? past_group(S, j + 1, "(", ")") : j + 1;
    return op(S, j, "{");
}

static void check_name(struct cscan *S, size_t i)
{
    const struct c_tok *k = tk(S, i);
    if (op(S, i - 1, ".") || op(S, i - 1, "->"))
        return; /* a member, not the function of that name */
    if (strcmp(k->text, "__global__") == 0)
        note_global(S, i);
    if (strncmp(k->text, "cudaLaunchKernel", 16) == 0 ||
        strcmp(k->text, "cudaLaunchCooperativeKernel") == 0)
        note_api_launch(S, i);
    if (is_definition(S, i)) {
        if (strcmp(k->text, "aka_kernel") == 0)
            S->entry = true;
        row(S, PK_C_DEFINE, k->text, k);
        return;
    }
    const struct pol_rule *r = pol_match(PK_C_IDENT, S->c->fw, k->text);
    if (!r && op(S, i + 1, "("))
        r = pol_match(PK_C_CALL, S->c->fw, k->text);
    if (r)
        pol_violation_row(S->c, r, k->line, k->col, k->text);
}

/* Does the operand of == / != at i, walking by step, mention a `.data` / `->data` field? */
static bool operand_has_data(const struct cscan *S, size_t i, int step, bool *null)
{
    static const char *const stop[] = {";", "{", "}", ",", "&&", "||", "?", ":", "=", NULL};
    int d = 0, count = 0;
    bool data = false, zero = false;
    for (size_t j = i + (size_t)step; j < S->t->n; j += (size_t)step, count++) {
        const struct c_tok *k = tk(S, j);
        if (k->kind == C_OP) {
            d += (step > 0 ? op(S, j, "(") - op(S, j, ")") : op(S, j, ")") - op(S, j, "("));
            if (d < 0)
                break;
            bool hit = false;
            for (const char *const *s = stop; *s && !hit; s++)
                hit = d == 0 && strcmp(k->text, *s) == 0;
            if (hit)
                break;
        }
        if (name(S, j, "return"))
            break;
        if (name(S, j, "data") && (op(S, j - 1, ".") || op(S, j - 1, "->")))
            data = true;
        zero = name(S, j, "NULL") || name(S, j, "nullptr") ||
               (k->kind == C_NUMBER && strcmp(k->text, "0") == 0);
        if (j == 0) {
            count++;
            break;
        }
    }
    *null |= count == 1 && zero; /* a null check compares with a lone NULL / 0 */
    return data;
}

static void check_compare(struct cscan *S, size_t i)
{
    bool null = false;
    bool left = operand_has_data(S, i, -1, &null);
    bool right = operand_has_data(S, i, 1, &null);
    bool data = left || right;
    if (data && !null)
        pol_violation(S->c, "input-cache", tk(S, i)->line, tk(S, i)->col,
                      "an input pointer compared (an output cache keyed on addresses)");
}

static size_t check_strings(struct cscan *S, size_t i)
{
    struct strbuf sb = STRBUF_INIT;
    const struct c_tok *at = tk(S, i);
    for (; tk(S, i)->kind == C_STRING; i++)
        strbuf_addstr(&sb, tk(S, i)->text);
    row(S, PK_STRING, sb.buf, at);
    strbuf_release(&sb);
    return i;
}

static void track_brace(struct cscan *S, size_t i)
{
    if (op(S, i, "{")) {
        bool flat = (tk(S, i - 1)->kind == C_STRING && name(S, i - 2, "extern")) ||
                    name(S, i - 1, "namespace") ||
                    (name(S, i - 1, NULL) && name(S, i - 2, "namespace"));
        VEC_PUSH(S->braces, flat);
        S->depth += !flat;
    } else if (op(S, i, "}") && S->braces.n) {
        S->depth -= !S->braces.v[--S->braces.n];
    }
}

static void walk(struct cscan *S)
{
    for (size_t i = 0; i < S->t->n;) {
        const struct c_tok *k = tk(S, i);
        if (k->kind == C_STRING) {
            i = check_strings(S, i);
            continue;
        }
        if (k->kind == C_INCLUDE)
            check_include(S, k);
        else if (k->kind == C_NAME)
            check_name(S, i);
        else if (op(S, i, "##"))
            pol_violation(S->c, "dynamic-access", k->line, k->col,
                          "token pasting (it can assemble names the policy never sees)");
        else if (op(S, i, "<<<"))
            note_launch(S, i);
        else if (op(S, i, "==") || op(S, i, "!="))
            check_compare(S, i);
        track_brace(S, i);
        i++;
    }
}

static void check_requirements(struct cscan *S)
{
    if (!S->entry)
        pol_violation(S->c, "requires-entry", 1, 1,
                      "no aka_kernel entry point is defined (the native ABI calls aka_kernel)");
    if (S->c->fw != AKA_FW_CUDA)
        return;
    if (S->globals.n == 0) {
        pol_violation(S->c, "requires-kernel", 1, 1,
                      "no cuda kernel is defined (expected a __global__ function)");
        return;
    }
    for (size_t k = 0; k < S->launched.n; k++)
        if (strvec_find(&S->globals, S->launched.v[k]) >= 0)
            return;
    pol_violation(S->c, "requires-launch", 1, 1,
                  "no __global__ kernel of this file is launched (expected kernel<<<grid, "
                  "block>>>(...) or cudaLaunchKernel)");
}

void pol_scan_c(struct pol_ctx *c, const struct c_toks *t)
{
    struct cscan S = {.c = c, .t = t};
    walk(&S);
    check_requirements(&S);
    strvec_clear(&S.globals);
    strvec_clear(&S.launched);
    VEC_FREE(S.braces);
}
