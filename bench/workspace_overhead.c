/*
 * workspace_overhead.c — what the pinned evidence costs (docs/security.md).
 *
 * usage: workspace_overhead WORKSPACE REPO_ROOT RUNS
 *   WORKSPACE  a campaign workspace made by `aka optimize` (snapshot, pinned assets)
 *   REPO_ROOT  the asset tree it was pinned with
 *
 * Times, over RUNS repetitions each (monotonic clock, mean per call):
 *   eval_inputs   aka_ws_eval_inputs: campaign.json parsed, the asset tree re-hashed,
 *                 the operator snapshot re-hashed — what every evaluation job pays;
 *   drift         aka_ws_operator_unchanged + aka_ws_memory_unchanged against the
 *                 original operator (what each loop top and verification pays);
 *   incumbent     aka_ws_incumbent (committed blobs through git);
 *   git rev-parse one hardened git command (its config scan included).
 * Built by bench/workspace_overhead.sh against the static libraries of build/.
 */
#include "base/error.h"
#include "git/git.h"
#include "workspace/workspace.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s WORKSPACE REPO_ROOT RUNS\n", argv[0]);
        return 2;
    }
    const char *ws = argv[1], *root = argv[2];
    int runs = atoi(argv[3]);
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf dir = STRBUF_INIT, what = STRBUF_INIT;
    struct aka_ws_campaign c;
    struct aka_memory_record m;
    struct aka_git g;
    char oid[AKA_GIT_OID_HEX + 1];
    if (aka_ws_campaign_load(ws, AKA_CF_OP_DIR, &c, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    double t = now_ms();
    for (int i = 0; i < runs; i++)
        if (aka_ws_eval_inputs(ws, root, &dir, &err) < 0)
            return fprintf(stderr, "%s\n", err.msg), 1;
    printf("eval_inputs    %.3f ms\n", (now_ms() - t) / runs);
    t = now_ms();
    for (int i = 0; i < runs; i++) {
        aka_ws_operator_unchanged(ws, c.op_dir, &what);
        aka_ws_memory_unchanged(ws, &what);
    }
    printf("drift          %.3f ms\n", (now_ms() - t) / runs);
    t = now_ms();
    for (int i = 0; i < runs; i++) {
        if (aka_ws_incumbent(ws, &m, NULL, &err) != 0)
            return fprintf(stderr, "%s\n", err.msg), 1;
        aka_memory_release(&m);
    }
    printf("incumbent      %.3f ms\n", (now_ms() - t) / runs);
    aka_git_open(&g, ws);
    t = now_ms();
    for (int i = 0; i < runs; i++)
        if (aka_git_rev_parse(&g, "HEAD", oid, &err) < 0)
            return fprintf(stderr, "%s\n", err.msg), 1;
    printf("git rev-parse  %.3f ms\n", (now_ms() - t) / runs);
    aka_git_close(&g);
    aka_ws_campaign_release(&c);
    strbuf_release(&dir);
    strbuf_release(&what);
    return 0;
}
