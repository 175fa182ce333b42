/*
 * evaluator.h — the evaluator module's one public header: evaluating one candidate
 * kernel against its operator, in the sandbox, into one typed evaluator result
 * (DESIGN §4.6). What `aka eval`, the campaign's baselines and its verification call.
 * This module is the only one that builds evaluation jobs; sandbox/ keeps the job
 * model and the transports, and the caller picks the transport.
 *
 * aka_evaluate() loads the operator, checks that layout, framework and
 * platform fit together, hashes the kernel bytes it is about to ship, builds a
 * sandbox job with an explicit allowlist per layout, runs it through the transport
 * its caller hands in and turns what came back into a verdict:
 *
 *   native C / CUDA (operator.json)   aka resolves every shape into plan.json;
 *       the job builds runtime/harness/native with reference.c|.cu and the
 *       kernel (shipped as kernel.c|.cu) and runs it (run_native.sh);
 *   Atrex-Bench / SOL-ExecBench       the job runs `python3 -m aka_harness`
 *       (runtime/harness/python) on the visible evaluator inputs and kernel.py.
 *
 * Fail closed: anything other than exactly one valid RESULT_JSON line whose
 * kernel_sha256 and eval_id are the ones aka sent, from a command whose exit
 * status agrees with it, is a failed evaluation with a diagnostic, never a
 * pass. A candidate that does not compile is a failed evaluation whose
 * actionable_diagnostics carry the compiler's first errors. Only problems that
 * are not the candidate's become errors: a bad operator, flag or reference
 * (code 2), a machine that cannot run the job (code 75).
 *
 * Platforms: any name platform/platform.h accepts (docs/platforms.md). The
 * platform picks the device nodes the job gets and nvcc's -arch; `cuda_arch`
 * (--arch) overrides the latter and is checked against the platform's vendor.
 */
#ifndef AKA_EVALUATOR_EVALUATOR_H
#define AKA_EVALUATOR_EVALUATOR_H

#include "base/error.h"
#include "base/sha256.h"
#include "base/strbuf.h"
#include "base/vec.h"
#include "contracts/operator.h"
#include "contracts/records.h"
#include "platform/platform.h"
#include "sandbox/sandbox.h"

#include <jansson.h>
#include <stdbool.h>

/* ---- frameworks ------------------------------------------------------------------------ */

/* The canonical framework name ("C", "Cuda", "Triton", "Gluon", "CuteDSL",
 * "TileLang", "FlyDSL", "PyTorch") for s, matched case-insensitively; NULL when
 * unknown. C and Cuda kernels of native operators go to the native harness; all
 * others (Cuda too, as an inline extension) to the Python one. */
const char *aka_eval_framework(const char *s);

/* ---- a request and its outcome --------------------------------------------------------- */

/* The default time budget of a shape's timed runs, per runner (aka_eval_request). */
#define AKA_EVAL_TIME_BUDGET_MS 2000

/* The values of aka_eval_request.timed_inputs and .timing (NULL-terminated): what `aka eval`
 * accepts and what a brokered request may ask for. */
extern const char *const aka_eval_timed_input_modes[];
extern const char *const aka_eval_timing_modes[];

/* What an agent's brokered `aka profile` asks of the supervisor's profiler. The supervisor
 * builds the command line itself (aka_eval_broker_base.profiler); nothing else the agent
 * sends reaches it. */
struct aka_eval_profile_ask {
    const char *level;            /* survey | sol | deep */
    const char *kernel_regex;     /* NULL: every kernel */
    const struct strvec *metrics; /* NULL or extra metric names */
};

struct aka_eval_request {
    const char *op_dir;
    const char *kernel;             /* host path of the candidate file */
    const char *framework;          /* any spelling aka_eval_framework accepts */
    const char *platform;           /* any spelling aka_platform_parse accepts */
    const char *repo_root;          /* asset tree holding runtime/harness/ */
    const struct strvec *shape_ids; /* NULL or empty: every shape */
    int multi_seed;                 /* correctness seeds 0..N-1; <= 0 means 1 */
    int timed_runs;                 /* < 0: the harness's default (C 25, CUDA 100, Python 100) */
    int warmup;                     /* < 0: the harness's default (C 3, CUDA 10, Python 10) */
    /* The time budget of a shape's timed runs per runner: fewer timed runs when the
     * reference's call is slow. 0: AKA_EVAL_TIME_BUDGET_MS; < 0: none. */
    int time_budget_ms;
    const struct strvec *tune; /* NULL or "NAME=VALUE" knobs (native only) */
    const char *cuda_arch;     /* --arch; NULL: the platform's */
    long timeout_s;            /* <= 0: AKA_SBX_DEFAULT_TIMEOUT_S */
    long long llc_bytes;       /* <= 0: read from this host's sysfs (native C) */
    const char *eval_id;       /* NULL: generated */
    bool in_agent_sandbox;     /* an agent's `aka eval` inside the agent sandbox (job field) */
    /* PyTorch layouts: the owner's evaluator decides when the sandbox runtime has it
     * (runtime/harness/python/aka_harness/official.py); never used to promote. */
    bool official;
    /* PyTorch layouts: the judge's --timed-inputs (aka_eval_timed_input_modes); NULL: auto. */
    const char *timed_inputs;
    /* GPU operators: how a call is timed (aka_eval_timing_modes); NULL: auto. */
    const char *timing;
    /* `aka profile`: the job runs the harness under this profiler command line (profile.h
     * aka_profile_ncu_argv; argv[0] an absolute path), which writes its CSV export to
     * AKA_EVAL_PROFILE_EXPORT in the job; the export comes back into artifact_dir. The
     * profiler's install directory (profiler_dir, outside /usr) is bound read-only. */
    const struct strvec *profiler;
    const char *profiler_dir;
    const char *artifact_dir;
    /* An agent's `aka profile` handed to the supervisor (aka_eval_broker_call): the export
     * the supervisor's profile job wrote comes back as artifact_dir/AKA_EVAL_PROFILE_EXPORT. */
    const struct aka_eval_profile_ask *profile_ask;
    bool production_score; /* a production campaign's: score against production_performance
                              when the operator's metadata has it (score.c) */
    /* The supervisor's numerical probes (optimize/episode_probe.c), NULL for an ordinary
     * evaluation: {"rel_l2": {DTYPE: X}, "cases": [{"name", "seed", "scale", "offset",
     * "pattern"}]}. The harness runs one correctness case per probe case on the judge's
     * transformed inputs, compares by relative L2 error and times nothing. */
    const json_t *probes;
    /* Generalized production (mask.c): the result comes back masked (opaque case-<n> ids,
     * no private values) and the job's stderr is not kept. The supervisor's evaluations of a
     * generalized campaign ask for it; the agent's own evaluate the public operator. */
    bool generalized;
};
#define AKA_EVAL_PROFILE_EXPORT "profile.csv"

struct aka_eval_outcome {
    struct aka_result result; /* the verdict (valid whenever aka_evaluate returned 0) */
    int exit_code;            /* 0 iff result.all_pass, else 1 */
    char kernel_sha256[AKA_SHA256_HEX_LEN + 1]; /* of the bytes aka shipped */
    char eval_id[64];
    char isolation[8];     /* "bwrap" or "none"; also in result.extra "sandbox_isolation" */
    char transport[16];    /* where the job ran: "local", "ssh", "slurm", "gateway" */
    bool brokered;         /* an agent's request, evaluated by the supervisor (broker.c) */
    char platform[48];     /* canonical */
    const char *framework; /* canonical (static string) */
    enum aka_layout layout;
    int command_exit;    /* the job command's exit status (124: timed out) */
    double seconds;      /* wall time of the whole job */
    struct strbuf log;   /* the job's stderr as kept (capped) */
    struct strvec notes; /* sandbox notes */
};

void aka_eval_outcome_init(struct aka_eval_outcome *o);
void aka_eval_outcome_release(struct aka_eval_outcome *o);

/*
 * Evaluate through transport t (from the caller: sandbox.h's aka_transport_open, or
 * aka_sandbox_local); the job asks for t->isolation and stages its private files in
 * t->tmp_dir. 0: out->result holds a verdict (pass or fail) and out->exit_code says
 * which. -1: no verdict; err has code 2 (bad operator, flags, kernel path, reference
 * that fails) or 75 (sandbox, toolchain or device unavailable).
 */
int aka_evaluate(const struct aka_sandbox_transport *t, const struct aka_eval_request *req,
                 struct aka_eval_outcome *out, struct aka_err *err);

/*
 * Re-score r against op's production_performance latencies (score.c): performance_score
 * and the speedups become production µs / candidate µs; r->extra gets "score_reference"
 * and "production_latency_us_by_shape". -1 (code 2) when a shape of r has no unambiguous
 * production latency.
 */
int aka_eval_score_production(const struct aka_operator *op, struct aka_result *r,
                              struct aka_err *err);

/*
 * Masking for generalized production (mask.c). aka_eval_mask_id: "case-<n>", n the
 * shape's 1-based position in op ("case-?" for an id op lacks). aka_eval_mask_text: text
 * with every private id replaced by its label and every run of digits by '#'.
 * aka_eval_mask_result: r in place — shape ids relabelled everywhere (latencies, CVs,
 * diagnostics, probes, the extensions' keys and strings), failure texts replaced by a
 * fixed line each, diagnostic and probe texts masked, error magnitudes of a failing
 * result dropped, r->masked set.
 */
void aka_eval_mask_id(const struct aka_operator *op, const char *id, char *out, size_t n);
void aka_eval_mask_text(const struct aka_operator *op, const char *text, struct strbuf *out);
void aka_eval_mask_result(const struct aka_operator *op, struct aka_result *r);

/* The result object as printed and recorded: the typed result plus "sandbox_isolation". */
json_t *aka_eval_result_json(const struct aka_eval_outcome *o);

/* ---- pieces exposed for tests ----------------------------------------------------------- */

struct aka_native_plan_opts {
    const char *eval_id, *kernel_sha256;
    const struct strvec *shape_ids; /* NULL or empty: all */
    int n_seeds, warmup, reps;
    long long llc_bytes, rotate_budget; /* 0: the harness decides */
    const json_t *probes;               /* NULL, or aka_eval_request.probes */
    int time_budget_ms;                 /* a shape's timed runs per runner; 0: none */
    bool kernel_span;                   /* CUDA: time by CUPTI kernel span, not events */
};

/* plan.json ("aka.native.plan.v1") for a native operator; code 2 on an unknown shape id. */
json_t *aka_eval_native_plan(const struct aka_operator *op, const struct aka_native_plan_opts *o,
                             struct aka_err *err);

/*
 * Compiler flags as knobs (cc_knobs.c): AKA_CC_* names, each value one flag of a closed
 * table or none. aka_cc_knob_flags appends the flags of every AKA_CC_* knob that --tune
 * (tune: "NAME=VALUE" strings) or else a "#define AKA_CC_NAME VALUE" line of text sets;
 * an unknown name or value is code 2 naming "--tune NAME=VALUE" or "LABEL:LINE".
 */
bool aka_cc_knob_name(const char *name);
int aka_cc_knob_flag(const char *where, const char *name, const char *value, const char **flag,
                     struct aka_err *err);
int aka_cc_knob_flags(const char *label, const char *text, const struct strvec *tune,
                      struct strvec *out, struct aka_err *err);
/* The table, for tests and listings: knob i's name, and its value v (NULL past the last). */
size_t aka_cc_knob_count(void);
const char *aka_cc_knob_name_at(size_t i);
const char *aka_cc_knob_at(size_t i, size_t v, const char **flag);

/* What a verdict is checked against. */
struct aka_eval_expect {
    const char *evaluator; /* name for synthesized results ("aka.native.c", ...) */
    const char *eval_id, *kernel_sha256;
    const struct strvec *shape_ids; /* the shapes evaluated */
    int n_seeds, warmup, reps;
    const char *timing_method;
    bool l2_flush;
    bool native;    /* exit statuses of run_native.sh apply */
    long timeout_s; /* for the timeout message */
};

/* What came back from the job. */
struct aka_eval_run {
    int exit_code, term_signal;
    bool timed_out;
    const char *out, *err_text;
    size_t out_len, err_len;
    /* stdout passed its cap: what is kept may be a candidate's line with the judge's cut off */
    bool out_truncated;
};

/*
 * The verdict for what a job printed: out->result and out->exit_code, or -1
 * with code 2/75 when the failure is not the candidate's (see aka_evaluate).
 */
int aka_eval_interpret(const struct aka_eval_expect *x, const struct aka_eval_run *run,
                       struct aka_eval_outcome *out, struct aka_err *err);

/* The result must name exactly the kernel bytes and the eval id aka sent (code 1 otherwise). */
int aka_eval_check_identity(const struct aka_result *r, const char *kernel_sha256,
                            const char *eval_id, struct aka_err *err);

/*
 * Say on stderr, every `seconds` (0: never) while an evaluation job runs, that `command`
 * ("aka eval", "aka profile") is still waiting on it: a slow reference or a profiler's
 * replay can take minutes, and silence then reads as a hang to a person or an agent.
 * Through proc_set_heartbeat (base/proc.h): jobs of the local, ssh and slurm transports,
 * an agent's wait on the campaign's broker and the gateway transport's long-polls.
 */
void aka_eval_heartbeat_on(const char *command, int seconds);

/* ---- the machine or the candidate? (health.c) ------------------------------------------- */

enum aka_env_class {
    AKA_ENV_NONE = 0,  /* nothing of the environment's: a pass, or the candidate's failure */
    AKA_ENV_PROBE,     /* a command failed: run a health probe to decide */
    AKA_ENV_TRANSPORT, /* the transport could not run the job (sandbox broken, host gone) */
    AKA_ENV_HEALTH,    /* the command failed and a health probe right after failed too */
    AKA_ENV_DISK_FULL  /* the same, with ENOSPC in the command's stderr */
};

/* What came back from one job, and the probe run after it. */
struct aka_env_evidence {
    const char *transport; /* "local", "ssh", ... (ssh's own failures exit 255) */
    bool ran;              /* the transport ran the command to an end */
    int exit_code;
    bool timed_out;
    const char *err_text; /* the command's stderr as kept */
    size_t err_len;
    int probe; /* -1 not run yet, 0 failed, 1 passed */
};

/* The class of a job's outcome; a candidate's text alone never makes it the environment's. */
enum aka_env_class aka_env_classify(const struct aka_env_evidence *e);
/* "none", "probe", "transport_down", "health_failed", "disk_full". */
const char *aka_env_class_name(enum aka_env_class c);

/* The probe command: override when given; else on the CPU "" (only the transport's disk
 * check), on a GPU the allocate-compute-synchronize-check probe (python3 with torch, else
 * the vendor's SMI tool) and, for a Python framework, an import of its module. */
void aka_eval_health_command(enum aka_vendor vendor, const char *framework, const char *override,
                             struct strbuf *out);
/* Probe t's environment for platform/framework (t->health_command overrides), as a job
 * like an evaluation's (in_agent_sandbox: for an agent's `aka eval`). 0 healthy; -1 with
 * code 75 ("environment: health_failed: ...") when not, or code 2 on a bad platform. */
int aka_eval_health(const struct aka_sandbox_transport *t, const char *platform,
                    const char *framework, bool in_agent_sandbox, struct aka_sandbox_health *h,
                    struct aka_err *err);

/* The last environment failure this process met (for the campaign's failure marker). */
struct aka_env_failure {
    bool set;
    enum aka_env_class cls;
    char command[512];                         /* what failed: the evaluation or the probe */
    char probe_output[AKA_SBX_PROBE_TAIL + 1]; /* the probe's output tail */
    char detected_at[AKA_TIMESTAMP_MAX];
};
void aka_env_note_failure(enum aka_env_class c, const char *command, const char *probe_output);
const struct aka_env_failure *aka_env_last_failure(void);

/* ---- inside an episode worktree ---------------------------------------------------------- */

/*
 * Episode mode is on when ATREX_AKA_WORKSPACE is set. The campaign is the one at
 * $ATREX_AKA_WORKSPACE (workspace/ reads its campaign.json: framework, platform,
 * kernel — relative to the worktree —, optional sandbox_isolation, cuda_arch). The
 * operator evaluated is the campaign's snapshot, verified against its manifest, with
 * the asset tree at repo_root re-hashed against the campaign's pin first (a hand-written
 * campaign without them names op_dir, relative to the workspace or absolute). The
 * worktree is $ATREX_AKA_WORKTREE, else the nearest directory at or above the current
 * one that holds .git, else the current directory. Results go to the worktree's
 * evaluations.jsonl.
 */
struct aka_eval_episode {
    bool active;
    char *workspace, *episode, *worktree;         /* episode: $ATREX_AKA_EPISODE or NULL */
    char *op_dir, *framework, *platform, *kernel; /* kernel: absolute path */
    char *isolation, *cuda_arch;                  /* NULL when the campaign says nothing */
    char *record_path;
    char *operator_note; /* the original operator changed since the snapshot (NULL: no) */
    bool production;     /* the campaign is a production one (its evaluations score alike) */
};

/*
 * The evaluation broker (broker.c): an agent's `aka eval` and `aka profile` in a campaign
 * whose jobs run on a remote transport, or on this host's GPU, hand their request to the
 * supervisor through the episode view.
 */
struct aka_eval_broker;
struct aka_eval_broker_base {
    /* framework, platform, cuda_arch, repo_root, timeout_s, production_score: the
     * campaign's; op_dir, kernel and the agent's own choices are filled per request. */
    struct aka_eval_request req;
    /* The operator snapshot to evaluate, re-verified before every job (the supervisor's
     * own evaluations do the same); code 2 or 75 when it cannot be. */
    int (*resolve)(void *data, struct strbuf *op_dir, struct aka_err *err);
    void *resolve_data;
    /* Optional: one line per answered request, for the campaign's progress output (called
     * from the broker's thread while the caller waits for the agent's session). */
    void (*served)(void *data, const char *line);
    void *served_data;
    /* Optional: the supervisor's profiler for an agent's `aka profile` (optimize/ fills it
     * from profile.h, which this module does not use): the command line for ask (argv[0]
     * absolute) and the install directory to bind, as aka_eval_request's profiler and
     * profiler_dir; -1 with code 75 when this host cannot profile, 2 for an ask it refuses.
     * NULL: profiles are refused (code 75). */
    int (*profiler)(void *data, const struct aka_eval_profile_ask *ask, struct strvec *argv,
                    struct strbuf *dir, struct aka_err *err);
    void *profiler_data;
};
/* Serve the requests that appear in view's broker directories (created here) on t until
 * aka_eval_broker_stop; base is copied, what it points at must outlive the broker. */
int aka_eval_broker_start(struct aka_eval_broker **out, const char *view,
                          const struct aka_sandbox_transport *t,
                          const struct aka_eval_broker_base *base, struct aka_err *err);
/* Stop serving (an evaluation in progress is finished first) and free b (NULL: nothing). */
void aka_eval_broker_stop(struct aka_eval_broker *b);
/* Whether the view of this episode has a broker (the agent's `aka eval` then uses it). */
bool aka_eval_broker_present(const char *view);
/* Hand req (its kernel file and the agent's choices, and its profile_ask if any) to the
 * supervisor, wait for the answer; out as aka_evaluate fills it, or -1 with the supervisor's
 * error (code 2 or 75). A profile's export is written to req->artifact_dir. */
int aka_eval_broker_call(const char *view, const struct aka_eval_request *req,
                         struct aka_eval_outcome *out, struct aka_err *err);

void aka_eval_episode_release(struct aka_eval_episode *ep);
/* Fill ep from the environment; ep->active false (and 0) when not in an episode. repo_root:
 * the asset tree this `aka eval` ships from (checked against the campaign's pin). */
int aka_eval_episode_detect(struct aka_eval_episode *ep, const char *repo_root,
                            struct aka_err *err);

/*
 * Append one compact JSON line {schema "aka.evaluation.v1", timestamp, episode,
 * kernel, kernel_sha256, op_dir, framework, platform, shape_ids, multi_seed,
 * timed_runs, tune, sandbox_isolation, exit_code, all_pass, result} to path
 * (O_APPEND, one write, fsync; the directory is created when missing).
 */
int aka_eval_record_append(const char *path, const struct aka_eval_request *req,
                           const struct aka_eval_outcome *o, const char *episode,
                           struct aka_err *err);

#endif
