/*
 * policy.h — the deterministic source policy of production mode (DESIGN §4,
 * issue 14): is one kernel source a self-authored kernel of the chosen
 * framework, and nothing else?
 *
 * A candidate source is tokenized (a real Python tokenizer, a real C/CUDA
 * tokenizer: strings, comments and line splices are never mistaken for code),
 * the facts a reviewer would look for are extracted (imports with their
 * aliases, attribute chains, calls, decorators, includes, __global__
 * definitions and launches, string literals), and the rule table of rules.c
 * is applied. Each violation names its rule id, the file, the line and the
 * column. docs/production.md lists every rule with an example.
 */
#ifndef AKA_POLICY_POLICY_H
#define AKA_POLICY_POLICY_H

#include "base/error.h"

#include <stdbool.h>
#include <stddef.h>

enum aka_policy_fw {
    AKA_FW_TRITON,
    AKA_FW_GLUON,
    AKA_FW_CUTEDSL,
    AKA_FW_CUDA,
    AKA_FW_TILELANG,
    AKA_FW_FLYDSL,
    AKA_FW_NATIVE_C,
    AKA_FW_COUNT
};

struct aka_policy_violation {
    char *rule;       /* a rule id of rules.c, e.g. "torch-compute" */
    char *file;       /* the file the violation is in (the kernel, or its solution.json) */
    int line, column; /* 1-based */
    char *message;    /* one line: what was found and why it is refused */
};

struct aka_policy_report {
    struct aka_policy_violation *v;
    size_t n, alloc;
};

/*
 * Framework name to enum: triton, gluon (tritongluon), cutedsl (cute), cuda
 * (cudac), tilelang, flydsl (fly), native C (c, native, nativec). Case and
 * non-alphanumerics are ignored. -1 with a usage error naming the choices.
 */
int aka_policy_framework(const char *name, enum aka_policy_fw *out, struct aka_err *err);
const char *aka_policy_framework_name(enum aka_policy_fw fw);

/*
 * Check the kernel source at path for framework. 0: checked, every violation
 * in *report (clean when report->n == 0). -1 (code 2): bad input — unknown
 * framework, a file that is missing, unreadable, of the wrong kind for the
 * framework or does not tokenize; the message names the file and what was
 * expected. A solution.json next to the kernel is checked too.
 */
int aka_policy_check(const char *framework, const char *path, struct aka_policy_report *report,
                     struct aka_err *err);

/* {"clean": bool, "violations": [{"rule","file","line","column","message"}]} */
char *aka_policy_report_json(const struct aka_policy_report *report);
void aka_policy_report_free(struct aka_policy_report *report);

#endif
