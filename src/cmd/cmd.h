/*
 * cmd.h — the subcommands of the aka binary, one file each in src/cmd/.
 *
 * A cmd_* function declares its flags as a table, parses them with base/opts.h
 * (argv[0] is the application name), calls into a module and prints. It holds
 * no logic beyond that: anything a test would want to call lives in a module.
 * Every command understands --help (generated from its table) and returns an
 * exit code from DESIGN §4.9.
 */
#ifndef AKA_CMD_H
#define AKA_CMD_H

/* What core resolved before dispatching. */
struct aka_app_ctx {
    const char *repo_root; /* asset tree: runtime/, examples/ (see core.h) */
    const char *version;
};

typedef int (*aka_cmd_fn)(int argc, char **argv, const struct aka_app_ctx *ctx);

/* The --heartbeat row of `aka eval` and `aka profile` (an int at `offset`; the value goes to
 * aka_eval_heartbeat_on): base/opts.h parses it, range and environment included. */
#define AKA_CMD_HEARTBEAT_FLAG(offset)                                                             \
    {                                                                                              \
        .name = "--heartbeat", .off = (offset), .kind = AKA_OPT_INT, .lo = 0, .hi = 86400,         \
        .def = "60", .env = "ATREX_AKA_HEARTBEAT_S", .metavar = "S",                               \
        .help = "while the job runs (a slow reference or a profiler's replay takes minutes), say " \
                "so on stderr every S seconds; 0: never"                                           \
    }

int cmd_eval(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_inspect(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_optimize(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_wiki(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_sandbox(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_status(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_report(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_memory(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_trace(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_journal(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_handoff(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_agent_session(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_tune_agent(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_ask_codex(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_ask_qoder(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_plan_reviewers(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_policy(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_profile(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_recovery(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_doctor(int argc, char **argv, const struct aka_app_ctx *ctx);
int cmd_gateway(int argc, char **argv, const struct aka_app_ctx *ctx);
/* `aka sandbox replay` (sandbox_replay.c), dispatched by cmd_sandbox. */
int cmd_sandbox_replay(int argc, char **argv);

#endif
