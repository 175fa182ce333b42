/*
 * internal.h — what the report files share and nothing outside src/report/ uses.
 */
#ifndef AKA_REPORT_INTERNAL_H
#define AKA_REPORT_INTERNAL_H

#include "report/report.h"
#include "workspace/workspace.h"

/* An empty report for workspace ws: every count -1, every number AKA_MISSING. */
void aka_report_init(struct aka_report *r, const char *ws);

/* Load memory/v<N>.json (all of them, ascending), memory/v0.failed.json, then
 * derive speedups vs V0 and the incumbent. */
int aka_report_load_versions(const char *ws, struct aka_report *r, struct aka_err *err);

/* Whether a record of this status moved HEAD: baseline, framework_baseline, promoted. */
bool aka_report_status_moves_head(enum aka_memory_status s);

#endif
