/*
 * internal.h — what the policy module's files share: the two token streams,
 * the rule table's shape and the check context that collects violations.
 */
#ifndef AKA_POLICY_INTERNAL_H
#define AKA_POLICY_INTERNAL_H

#include "base/error.h"
#include "base/vec.h"
#include "policy/policy.h"

#include <stdbool.h>
#include <stddef.h>

/* ---- Python tokens (lex_python.c) ---- */
enum py_kind { PY_NAME, PY_NUMBER, PY_STRING, PY_OP, PY_NEWLINE };

struct py_tok {
    enum py_kind kind;
    char *text;    /* names, ops; for strings the decoded literal text */
    int line, col; /* 1-based, where the token starts */
    int indent;    /* indentation of the logical line the token is on */
    bool stmt;     /* first token of a statement (line start or after ';') */
    bool fexpr;    /* lexed from an f-string replacement field */
    bool fstring;  /* a string with an f prefix (its text is the literal part) */
    bool nonascii; /* a name with bytes outside ASCII (NFKC-folded by Python) */
};

struct py_toks {
    struct py_tok *v;
    size_t n, alloc;
};

int pol_lex_python(const char *file, const char *src, size_t len, struct py_toks *out,
                   struct aka_err *err);
void pol_py_toks_free(struct py_toks *t);

/* ---- C/CUDA tokens (lex_c.c) ---- */
enum c_kind { C_NAME, C_NUMBER, C_STRING, C_CHAR, C_OP, C_INCLUDE, C_DIRECTIVE };

struct c_tok {
    enum c_kind kind;
    char *text; /* strings: the literal text; includes: the header name */
    int line, col;
    bool system;   /* C_INCLUDE: <...> rather than "..." */
    bool computed; /* C_INCLUDE: a macro, not a header name */
};

struct c_toks {
    struct c_tok *v;
    size_t n, alloc;
};

int pol_lex_c(const char *file, const char *src, size_t len, struct c_toks *out,
              struct aka_err *err);
void pol_c_toks_free(struct c_toks *t);

/* ---- rules (rules.c) ---- */
enum pol_kind {
    PK_PY_MODULE,       /* an imported module (or a chain rooted at one), prefix match */
    PK_PY_BUILTIN,      /* a bare name that no import binds, any reference */
    PK_PY_BUILTIN_CALL, /* a bare name that no import binds, called */
    PK_PY_ATTR,         /* an attribute of that name on any receiver */
    PK_PY_METHOD,       /* a method of that name called on a local, outside kernels */
    PK_STRING,          /* a string literal (Python or C) containing the pattern */
    PK_C_INCLUDE,       /* a header name, prefix match */
    PK_C_IDENT,         /* an identifier anywhere in code */
    PK_C_CALL,          /* an identifier called */
    PK_C_DEFINE,        /* a function defined under that name */
    PK_CODE             /* checked in code (requirements, structure); listed for docs */
};

#define FW(x) (1u << (x))
#define FW_PY                                                                                      \
    (FW(AKA_FW_TRITON) | FW(AKA_FW_GLUON) | FW(AKA_FW_CUTEDSL) | FW(AKA_FW_TILELANG) |             \
     FW(AKA_FW_FLYDSL))
#define FW_C   (FW(AKA_FW_CUDA) | FW(AKA_FW_NATIVE_C))
#define FW_ALL (FW_PY | FW_C)

struct pol_rule {
    const char *id; /* the rule id a rejection names */
    unsigned fws;   /* frameworks the row applies to (FW bits) */
    enum pol_kind kind;
    const char *pattern; /* a trailing '*' makes it a plain prefix */
    const char *why;     /* the message, completed with what matched */
};

const struct pol_rule *pol_rules(size_t *n);
/* The first row of kind for fw that matches name, or NULL. */
const struct pol_rule *pol_match(enum pol_kind kind, enum aka_policy_fw fw, const char *name);
/* Is a torch.* chain allowed (allocation and metadata, not compute)? */
bool pol_torch_allowed(const char *chain);

/* ---- the check context (check.c) ---- */
struct pol_ctx {
    enum aka_policy_fw fw;
    const char *file;  /* the kernel path as given */
    const char *dir;   /* its directory, for the one-file rule */
    const char *entry; /* entry function from solution.json, or NULL */
    struct aka_policy_report *rep;
};

/* One violation at FILE:LINE:COL (another file than the kernel's: solution.json); a repeat
 * of the same rule at the same place is dropped. */
void pol_violation_at(struct pol_ctx *c, const char *rule, const char *file, int line, int col,
                      const char *msg);
void pol_violation(struct pol_ctx *c, const char *rule, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Report the row's rule with "why: what". */
void pol_violation_row(struct pol_ctx *c, const struct pol_rule *r, int line, int col,
                       const char *what);
/* Does a module name a sibling source of the kernel (a second kernel file)? */
bool pol_sibling_module(const struct pol_ctx *c, const char *module);

void pol_scan_python(struct pol_ctx *c, const struct py_toks *t);
void pol_scan_c(struct pol_ctx *c, const struct c_toks *t);

#endif
