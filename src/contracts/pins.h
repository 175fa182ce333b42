/*
 * pins.h — runtime pins: which evaluator runtime a campaign's typed requests demand.
 *
 * DESIGN §4.3. Two environment variables pin the runtime:
 *   ATREX_SANDBOX_ATREX_BENCH_VERSION  the evaluator runtime version, sent with
 *                                      and checked against every typed request;
 *   ATREX_SANDBOX_REQUIREMENTS_FILE    a requirements file read as UTF-8 whose
 *                                      requirement lines go into every typed request.
 * A missing, unreadable or non-UTF-8 requirements file is an error naming the
 * file. Replaying a recorded request requires the same pins with the same
 * parsed content; a missing or changed pin is an error, never a silent switch.
 */
#ifndef AKA_CONTRACTS_PINS_H
#define AKA_CONTRACTS_PINS_H

#include "base/error.h"
#include "base/vec.h"
#include <jansson.h>

#define AKA_ENV_BENCH_VERSION     "ATREX_SANDBOX_ATREX_BENCH_VERSION"
#define AKA_ENV_REQUIREMENTS_FILE "ATREX_SANDBOX_REQUIREMENTS_FILE"

struct aka_runtime_pins {
    char *bench_version;        /* NULL when not pinned */
    char *requirements_file;    /* NULL when not pinned */
    struct strvec requirements; /* parsed requirement lines (comments/blank lines dropped) */
};

/* Load from explicit values (either may be NULL = not pinned). */
int aka_runtime_pins_load(const char *bench_version, const char *requirements_file,
                          struct aka_runtime_pins *out, struct aka_err *err);
/* Load from the two environment variables above (empty counts as unset). */
int aka_runtime_pins_from_env(struct aka_runtime_pins *out, struct aka_err *err);
void aka_runtime_pins_release(struct aka_runtime_pins *p);

/* {"atrex_bench_version": s|null, "requirements_file": s|null, "requirements": [..]} */
json_t *aka_runtime_pins_to_json(const struct aka_runtime_pins *p);

/*
 * Check a recorded typed request (its "runtime" pins object, as written by
 * aka_runtime_pins_to_json) against the pins in force now. `request_file`
 * names the request in errors.
 */
int aka_runtime_pins_check_replay(const struct aka_runtime_pins *now, json_t *recorded,
                                  const char *request_file, struct aka_err *err);

#endif
