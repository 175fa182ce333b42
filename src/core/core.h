/*
 * core.h — the application registry and the entry point of the aka binary.
 *
 * `aka <app> [--repo-root DIR] [--] <flags>` selects an application by name.
 * The asset tree (prompts, harness, skills, plugins, examples) is resolved in
 * this order, first match wins:
 *   1. --repo-root DIR
 *   2. $ATREX_AKA_HOME
 *   3. the install prefix's share/aka (when it holds runtime/)
 *   4. the source tree the binary was built from (when it holds runtime/)
 * A directory given explicitly (1 or 2) that does not hold runtime/ is a usage
 * error: silently falling through to another tree would run with other assets.
 */
#ifndef AKA_CORE_H
#define AKA_CORE_H

#include "base/error.h"
#include "base/strbuf.h"
#include "cmd/cmd.h"

struct aka_app {
    const char *name;
    const char *summary; /* one line for `aka --help` */
    aka_cmd_fn run;
};

/* The registered applications, terminated by an entry with name == NULL. */
const struct aka_app *aka_apps(void);
const struct aka_app *aka_app_find(const char *name);

/* Resolve the asset tree; flag_value is --repo-root's value or NULL. */
int aka_resolve_repo_root(const char *flag_value, struct strbuf *out, struct aka_err *err);

int aka_main(int argc, char **argv);

#endif
