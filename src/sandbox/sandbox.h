/*
 * sandbox.h — the sandbox module's one public header: the job model of
 * DESIGN §4.7, the rules about what may cross the sandbox boundary, and the
 * transport interface (`local`, `ssh` and `slurm` exist; the gateway plugs into the
 * same vtable).
 *
 * A job names every file it ships (an explicit allowlist: host source →
 * relative destination), the command, extra environment, a wall-clock limit,
 * output caps, the relative paths to bring back, and how many GPUs it needs.
 * Nothing else reaches the job: no workspace walk, no inherited environment,
 * no network. What comes back is the exit status, capped stdout/stderr, and
 * artifacts copied out with traversal, symlink and size checks.
 *
 * Failure classes are kept apart so the supervisor never blames a candidate
 * for the machine (DESIGN §4.9):
 *   - the job ran: status COMPLETED, exit_code is the command's (124 on timeout);
 *   - the job was invalid (bad path, never-shipped file, unsafe bind): REFUSED,
 *     error code 2, nothing ran;
 *   - the environment could not run it (bwrap missing or broken, no GPU node,
 *     temp dir unwritable): ENV_FAILED, error code 75;
 *   - aka itself was told to stop (SIGINT, SIGTERM, SIGHUP caught through
 *     base/proc): INTERRUPTED, error code 128+signal, the job's processes ended.
 */
#ifndef AKA_SANDBOX_SANDBOX_H
#define AKA_SANDBOX_SANDBOX_H

#include "base/error.h"
#include "base/opts.h"
#include "base/strbuf.h"
#include "base/vec.h"
#include "platform/platform.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* ---- job model ---------------------------------------------------------------------------- */

enum aka_sandbox_kind { AKA_SBX_RUN = 0, AKA_SBX_PROFILE, AKA_SBX_CHECK, AKA_SBX_DEV };
enum aka_sandbox_isolation { AKA_SBX_BWRAP = 0, AKA_SBX_NONE };

/* Defaults a freshly initialized job carries. */
#define AKA_SBX_DEFAULT_TIMEOUT_S  600
#define AKA_SBX_MAX_TIMEOUT_S      86400
#define AKA_SBX_DEFAULT_OUT_CAP    ((size_t)4 << 20)
#define AKA_SBX_MAX_INPUT_BYTES    ((size_t)16 << 20)
#define AKA_SBX_MAX_ARTIFACT_BYTES ((size_t)512 << 20)
#define AKA_SBX_MAX_ARTIFACT_TOTAL ((size_t)1 << 30)
#define AKA_SBX_DEFAULT_PIDS_MAX   4096
#define AKA_SBX_MAX_GPUS           32
#define AKA_SBX_MAX_FILES          20000

/* One shipped file. */
struct aka_sandbox_file {
    char *src;      /* host path of a regular file (never a symlink) */
    char *root;     /* src must resolve inside this directory (realpath) */
    char *dest;     /* safe relative path inside the job directory */
    bool read_only; /* immutable inside the job: write bits cleared and bound read-only */
    bool trusted;   /* supervisor-owned (harness, injected private shapes): exempt from the
                       never-shipped *name* rules, never from the path and file-type rules */
};

/* A read-only runtime bind (a Python prefix, a CUDA toolkit outside /usr). */
struct aka_sandbox_bind {
    char *src;  /* absolute host path, as given */
    char *dest; /* absolute path inside the sandbox */
};

struct aka_sandbox_job {
    enum aka_sandbox_kind kind;
    enum aka_sandbox_isolation isolation;
    bool generalized; /* production generalized mode: evaluator-private names never ship
                         from the workspace (only trusted injected copies do) */
    VEC(struct aka_sandbox_file) files;
    struct strvec argv;      /* the command; argv[0] is looked up in the job's PATH */
    struct strvec env;       /* "NAME=VALUE" added to the clean environment */
    struct strvec artifacts; /* relative paths (files or directories) to bring back */
    VEC(struct aka_sandbox_bind) binds;
    struct strvec deny_paths; /* host paths a bind must never expose (the workspace, ...) */
    bool detect_python;       /* bind python3's prefix when it lives outside /usr */
    long timeout_s;
    size_t stdout_cap, stderr_cap;
    size_t max_input_bytes;    /* per shipped file */
    size_t max_artifact_bytes; /* per artifact file */
    size_t max_artifact_total; /* all artifacts together */
    long pids_max;             /* processes+threads, via a pids cgroup when the host has one;
                                  0: no limit */
    int gpu_count;
    int gpu_ids[AKA_SBX_MAX_GPUS]; /* physical indices; when n_gpu_ids == 0: 0..gpu_count-1 */
    size_t n_gpu_ids;
    enum aka_vendor gpu_vendor; /* whose device nodes the GPUs are (platform.h); init: NVIDIA */
    const char *dev_root;       /* where the host's device nodes are; NULL: /dev (tests: fakes) */
    char *artifact_dir;    /* where artifacts land (created when missing); NULL: none come back */
    bool in_agent_sandbox; /* started by an agent's `aka eval` inside the agent sandbox: when a
                              fresh /proc cannot be mounted there, the sandbox's is bound */
};

void aka_sandbox_job_init(struct aka_sandbox_job *job, enum aka_sandbox_kind kind);
/* Whether this process runs inside an agent sandbox the supervisor made (src/agents/env.c
 * sets ATREX_AKA_AGENT_SANDBOX=bwrap there): every job an aka command builds here is then
 * nested, episode or not, and sets in_agent_sandbox. */
bool aka_sandbox_inside_agent(void);
void aka_sandbox_job_release(struct aka_sandbox_job *job);

/*
 * Builders. Each validates what it adds and refuses (code 2) anything the
 * rules below reject, so a bad job fails before a directory is created. The
 * transport validates the whole job again before running it.
 */
int aka_sandbox_job_add_file(struct aka_sandbox_job *job, const char *src, const char *root,
                             const char *dest, bool read_only, bool trusted, struct aka_err *err);
/*
 * Ship a directory tree: every regular file under dir goes to dest_prefix/<rel>
 * ("" or "." for the job root). Never-shipped directories and files, symlinks,
 * special files and files over the size limit are skipped and each skip is
 * described in `skipped` (may be NULL).
 */
int aka_sandbox_job_add_tree(struct aka_sandbox_job *job, const char *dir, const char *dest_prefix,
                             bool read_only, struct strvec *skipped, struct aka_err *err);
/*
 * A path a person named (`aka sandbox run --input`): a directory is shipped as a
 * tree, anything else as one file (never a symlink); dest NULL: the path's name.
 * Its canonical path (symlinks resolved) may not lie in supervisor state — inside
 * any .git/ or .aka/, or the memory/ of a workspace or repository — code 2.
 */
int aka_sandbox_job_add_input(struct aka_sandbox_job *job, const char *path, const char *dest,
                              bool read_only, struct strvec *skipped, struct aka_err *err);
int aka_sandbox_job_add_env(struct aka_sandbox_job *job, const char *name_value,
                            struct aka_err *err);
int aka_sandbox_job_add_artifact(struct aka_sandbox_job *job, const char *rel, struct aka_err *err);
/* "SRC[=DST]": both absolute; DST defaults to SRC. */
int aka_sandbox_job_add_bind(struct aka_sandbox_job *job, const char *spec, struct aka_err *err);
/* Whole-job validation (what the transport runs first). */
int aka_sandbox_job_validate(const struct aka_sandbox_job *job, struct aka_err *err);

const char *aka_sandbox_kind_name(enum aka_sandbox_kind kind);
int aka_sandbox_kind_parse(const char *s, enum aka_sandbox_kind *out);

/* ---- boundary rules (exposed for tests and for callers that pre-check) --------------------- */

/*
 * A relative path that stays inside its directory: non-empty, not absolute, no
 * empty, "." or ".." component, no control characters, under PATH_MAX. `what`
 * names the path in the message ("--sync path", "destination").
 */
int aka_sandbox_check_rel(const char *rel, const char *what, struct aka_err *err);
/*
 * Is this relative path never shipped? Checks every component against the
 * never-shipped directory names and the last one against the file rules; with
 * generalized, also the evaluator-private names. Returns the reason or NULL.
 */
const char *aka_sandbox_never_shipped(const char *rel, bool generalized);
/* A secret location anywhere in an absolute path (~/.ssh, .gnupg, .aws, ...): reason or NULL. */
const char *aka_sandbox_secret_path(const char *abs_path);
/*
 * A runtime bind whose source already went through realpath: refuses broad
 * roots, system and secret locations, homes (except Python environments) and
 * anything that contains or lies inside a deny path. Code 2.
 */
int aka_sandbox_check_bind(const char *resolved_src, const char *dest,
                           const struct strvec *deny_paths, struct aka_err *err);
/* The source rules alone, for a path shown at its own place in a view (whose /tmp is a
 * fresh tmpfs, so paths below it are not reserved there). */
int aka_sandbox_check_bind_source(const char *resolved_src, const struct strvec *deny_paths,
                                  struct aka_err *err);

/* ---- result ---------------------------------------------------------------------------------- */

enum aka_sandbox_status {
    AKA_SBX_COMPLETED = 0,
    AKA_SBX_REFUSED,
    AKA_SBX_ENV_FAILED,
    AKA_SBX_INTERRUPTED /* a stop signal (base/proc) ended it: code 128+signal */
};

struct aka_sandbox_result {
    enum aka_sandbox_status status;
    int exit_code;   /* the command's status, 128+signal, 124 on timeout; the error code
                        (2 or 75) when the job did not complete */
    int term_signal; /* the signal that ended the command, 0 when it exited */
    bool timed_out;
    struct strbuf out, err;      /* the kept bytes (≤ the caps) */
    size_t out_bytes, err_bytes; /* everything the command wrote */
    bool out_truncated, err_truncated;
    struct strvec artifacts;         /* relative paths copied into artifact_dir */
    struct strvec artifacts_refused; /* "PATH: reason" for each one that was not */
    struct strvec notes;             /* anything else a person should know */
    double setup_seconds;            /* job dir, copies, binds, argv */
    double wall_seconds;             /* the command (with bwrap's own start) */
    double cleanup_seconds;          /* artifacts and job dir removal */
    char transport[16];              /* "local", ... */
    char isolation[8];               /* "bwrap" or "none": results run without isolation say so */
    char pids_limit[8];              /* "cgroup" when a pids limit was enforced, else "none" */
    char error[AKA_ERR_MSG_MAX];     /* set unless status is COMPLETED */
};

void aka_sandbox_result_init(struct aka_sandbox_result *r);
void aka_sandbox_result_release(struct aka_sandbox_result *r);
const char *aka_sandbox_status_name(enum aka_sandbox_status s);
/* The result as a JSON object (schema "aka.sandbox.result.v1"); output bytes that are
 * not UTF-8 are replaced with U+FFFD so the document is always valid. */
json_t *aka_sandbox_result_to_json(const struct aka_sandbox_job *job,
                                   const struct aka_sandbox_result *r);

/* ---- transports ------------------------------------------------------------------------------ */

/*
 * A transport runs one job somewhere: on this host (local), on a host reached over
 * OpenSSH (ssh), later a gateway or a Slurm allocation. aka_sandbox_run() drives every
 * transport through the same steps, so what a caller sees does not depend on where
 * the job ran:
 *
 *   prepare  stage the job (copies, argv, environment); *state holds what the other
 *            steps need. -1: refused (code 2) or the environment failed (code 75).
 *   run      run the command to an end; 0 whatever its exit status, -1 (code 75, or
 *            128+signal when aka was told to stop) when it could not be run.
 *   collect  bring the job's artifacts back (only after a run that returned 0).
 *   cleanup  remove everything prepare made and free *state; always called once
 *            prepare has set *state, also after a failure.
 *   describe one line for notes and --dry-run ("local, bwrap, jobs in /tmp").
 *
 * A transport never modifies the job. `isolation` is what the jobs built for this
 * transport ask for (callers copy it into job->isolation); `tmp_dir` is where this
 * host stages the files a job ships (NULL: $TMPDIR, else /tmp).
 */
struct aka_sandbox_transport;

/*
 * A health probe (DESIGN §7): a shell command that checks the machine, never candidate
 * code. It runs as a job of the transport (the same isolation, GPU nodes and runtime as
 * an evaluation) after a check that the job directory's disk takes a 1 MiB write, so a
 * full disk fails the probe whatever the command prints.
 */
#define AKA_SBX_PROBE_TIMEOUT_S 60
#define AKA_SBX_PROBE_TAIL      2000

struct aka_sandbox_probe {
    const char *command; /* sh -c command; NULL or "": only the disk check */
    int gpu_count;       /* GPUs the probe job gets (0 or 1) */
    enum aka_vendor gpu_vendor;
    bool in_agent_sandbox; /* probing for an agent's `aka eval`: the job field of that name */
};

struct aka_sandbox_health {
    bool ok;
    int exit_code;                       /* the probe's status; 75 when it could not run */
    char output[AKA_SBX_PROBE_TAIL + 1]; /* the last bytes of its stdout+stderr, or why */
};

struct aka_sandbox_transport_ops {
    const char *name;
    int (*prepare)(const struct aka_sandbox_transport *t, const struct aka_sandbox_job *job,
                   struct aka_sandbox_result *res, void **state, struct aka_err *err);
    int (*run)(void *state, struct aka_err *err);
    void (*collect)(void *state);
    void (*cleanup)(void *state);
    void (*describe)(const struct aka_sandbox_transport *t, struct strbuf *out);
    /* Optional: run a health probe where this transport's jobs run (health.c); NULL: the
     * transport cannot probe and aka_sandbox_probe_health reports healthy with a note. */
    int (*probe_health)(const struct aka_sandbox_transport *t, const struct aka_sandbox_probe *p,
                        struct aka_sandbox_health *h);
};

struct aka_sandbox_transport {
    const struct aka_sandbox_transport_ops *ops;
    void *ctx; /* the transport's configuration (below for local) */
    enum aka_sandbox_isolation isolation;
    const char *tmp_dir;
    const char *health_command; /* --sandbox-health-command: replaces the default probe */
};

struct aka_sandbox_local_opts {
    const char *tmp_dir; /* where job directories are created; NULL: $TMPDIR, else /tmp */
    const char *bwrap;   /* bwrap binary; NULL: looked up in PATH */
    /* Called with the pid of the command's process group leader once it started (the
     * gateway records it, to end the job's group on cancel); NULL: none. */
    void (*started)(void *arg, int pid);
    void *started_arg;
};

/*
 * Can job directories be created in tmp_dir (NULL: $TMPDIR, else /tmp)? It must
 * exist, be a writable directory and not sit on a noexec mount (nothing shipped
 * or built there could run). Code 75 naming the directory and the reason.
 */
int aka_sandbox_check_tmp(const char *tmp_dir, struct aka_err *err);

/* Fill t with the local transport (isolation bwrap); opts must outlive t (NULL: defaults). */
void aka_sandbox_local(struct aka_sandbox_transport *t, const struct aka_sandbox_local_opts *opts);

/*
 * The ssh transport (ssh.c): jobs run on another host reached with the user's own
 * OpenSSH client, under that host's Bubblewrap, with no network, the read-only system,
 * only the allowlisted files (shipped as one tar stream into a fresh `mktemp -d`) and the
 * job's GPUs: a job of N GPUs (N > 1 for a distributed operator's pinned world_size) gets
 * the physical indices gpu..gpu+N-1, by their device nodes and CUDA_VISIBLE_DEVICES set
 * to their UUIDs. One ControlMaster connection serves every job of the transport and is
 * closed by aka_sandbox_ssh_close. What the remote host could not do (ssh exit 255, a
 * full disk, a missing tool, MIG) is the environment's (code 75), never the job's.
 */
struct aka_sandbox_ssh_opts {
    const char *target; /* USER@HOST (or a Host alias of ssh_config) */
    int gpu;            /* the remote host's physical index of the job's first GPU */
    const char *init;   /* shell command run in the sandbox before the job */
    const struct strvec *runtime_binds; /* "SRC[=DST]", remote paths */
    const char *tmp_dir;                /* local staging (NULL: $TMPDIR, else /tmp) */
};

/* What the remote host said before a job (the probe of ssh_remote.c). */
struct aka_ssh_remote {
    struct strbuf dir;       /* the job's mktemp -d directory */
    struct strbuf home;      /* the remote $HOME: never bound, nor anything holding it */
    unsigned uid, gid;       /* the remote user */
    struct strvec gpu_uuids; /* GPU-... of each of the job's GPUs, in order; none for no GPU */
    bool mig;                /* MIG enabled on one of them: the job is refused */
    struct strvec dev_nodes; /* GPU device node names present under the remote /dev */
    struct strvec bind_src;  /* each runtime bind's source after `realpath -e` */
    struct strvec bind_dst;  /* and where it appears inside */
    struct strvec missing;   /* tools the remote host lacks (bwrap, tar, timeout, ...) */
};

void aka_ssh_remote_init(struct aka_ssh_remote *r);
void aka_ssh_remote_release(struct aka_ssh_remote *r);
/* The remote GPUs a job asks the probe about: n consecutive indices from first (n 0: none). */
struct aka_ssh_gpus {
    int first;
    int n;
};
/*
 * The probe, as an argv to run with `sh -c`: makes the job directory under tmp (NULL:
 * the remote $TMPDIR, else /tmp), and reports the user, $HOME, each bind's real path,
 * each asked GPU's UUID and MIG mode and the nvidia* nodes under dev_root.
 */
void aka_ssh_probe_argv(struct aka_ssh_gpus g, const char *dev_root, const char *tmp,
                        const struct strvec *bind_srcs, struct strvec *argv);
/* Parse the probe's output into r; code 75 naming what the remote host lacks or said. */
int aka_ssh_probe_parse(const char *text, struct aka_ssh_gpus g, const struct strvec *bind_dsts,
                        struct aka_ssh_remote *r, struct aka_err *err);
/*
 * The remote command for job as an argv (pure: nothing is run): `env -i` with the job's
 * clean environment (and CUDA_VISIBLE_DEVICES), `timeout`, then bwrap with the remote
 * system read-only, the generated /etc of r->dir/ctl, the job directory r->dir/job, the
 * assigned GPU's nodes among r->dev_nodes, the checked runtime binds, and the command
 * (behind `sh -c` running init when init is set). Code 2 for a job the transport cannot
 * run (two or more GPUs: a distributed operator), 75 for a GPU the host does not show.
 */
int aka_ssh_job_argv(const struct aka_sandbox_job *job, const struct aka_sandbox_ssh_opts *o,
                     const struct aka_ssh_remote *r, struct strvec *argv, struct aka_err *err);
/* n words as one POSIX shell command line (what ssh hands the remote shell). */
void aka_shell_join(const char *const *words, size_t n, struct strbuf *out);
/* "SRC[=DST]" split, checked with the runtime-bind rules as written (code 2). */
int aka_ssh_check_bind_spec(const char *spec, struct strbuf *src, struct strbuf *dst,
                            struct aka_err *err);

/* Fill t with an ssh transport (opts must outlive it) and connect its ControlMaster. Code 2
 * for a runtime bind the rules refuse as written, 75 when the host cannot be reached. */
int aka_sandbox_ssh(struct aka_sandbox_transport *t, const struct aka_sandbox_ssh_opts *opts,
                    struct aka_err *err);
/* Retry remote removals that failed (each once more), close the ControlMaster and free t's
 * state; what could not be removed goes to notes (may be NULL). */
void aka_sandbox_ssh_close(struct aka_sandbox_transport *t, struct strvec *notes);

/*
 * The gateway transport (gateway.c): each job is one typed request to `aka gateway serve`
 * (or a gateway with the same routes) over HTTP: submit, long-poll, cancel on a stop signal.
 * Connection failures, 5xx and jobs the gateway lost are retried a bounded number of times
 * and then the environment's (code 75); a request the gateway refuses is code 2. The token
 * comes from $AGATE_TOKEN or the file $ATREX_SANDBOX_TOKEN_FILE; each request is recorded
 * (0600) under $ATREX_SANDBOX_REQUEST_DIR (default $XDG_STATE_HOME/aka/gateway-requests)
 * for `aka sandbox replay`; ATREX_SANDBOX_LOCK_CLOCKS=1 asks for locked GPU clocks.
 */
struct aka_sandbox_gateway_opts {
    const char *url;      /* http(s)://host:port; NULL: from the profile */
    const char *profile;  /* URL from $ATREX_SANDBOX_PROFILE_<P>_URL */
    const char *hardware; /* spec.target_hardware */
    const char *tmp_dir;  /* where returned artifacts are checked (NULL: $TMPDIR, /tmp) */
    bool lock_clocks;     /* filled by aka_sandbox_gateway from the environment */
    char record_dir[4096];
};
/* Fill t (o must outlive it). Code 2 for a profile whose URL is not configured. */
int aka_sandbox_gateway(struct aka_sandbox_transport *t, struct aka_sandbox_gateway_opts *o,
                        struct aka_err *err);
/* Send a recorded request again (o->url NULL: the recorded URL) and wait for its result.
 * The runtime pins in force must equal the recorded ones (code 2 otherwise). */
int aka_sandbox_replay(const char *file, struct aka_sandbox_gateway_opts *o,
                       struct aka_sandbox_result *res, struct aka_err *err);

/*
 * The slurm transport (slurm.c): each job is an allocation (`sbatch` of a holder that only
 * sleeps, --gres=gpu:N for a job of N GPUs, none for a CPU job) whose step (`srun
 * --jobid`) runs the same Bubblewrap job as the local transport on the allocated node.
 * The job directory is staged under tmp_dir, which must be on a filesystem the nodes
 * share with this host at the same path. The scheduler's word on the allocation decides
 * what a failure means: an allocation that ended under the job (preempted, cancelled by
 * the scheduler or an operator, node failure, time limit) is the environment's (code 75,
 * retried in a fresh allocation up to AKA_SLURM_ATTEMPTS times), never the job's.
 */
#define AKA_SLURM_ATTEMPTS 3

struct aka_sandbox_slurm_opts {
    const char *partition, *account, *qos; /* account and qos may be NULL */
    const char *time;    /* --time of each allocation; NULL: job timeout + 5 min */
    const char *tmp_dir; /* shared staging (NULL: $TMPDIR, else /tmp) */
    long poll_max_ms;    /* longest wait between state queries; 0: 2000 */
};

/* What the scheduler's state of an allocation means for a job in it. */
enum aka_slurm_phase {
    AKA_SLURM_WAITING = 0, /* not started yet: PENDING, CONFIGURING, REQUEUED, ... */
    AKA_SLURM_RUNNING,     /* the node is ours */
    AKA_SLURM_ENDED        /* anything else: the allocation is gone (PREEMPTED, NODE_FAIL, ...) */
};
enum aka_slurm_phase aka_slurm_phase(const char *state);

/* One `scontrol -o -d show job ID` line, parsed. */
struct aka_slurm_job_info {
    char state[32];                /* JobState, e.g. RUNNING, PREEMPTED */
    char reason[96];               /* Reason, e.g. Priority, None */
    int gpu_ids[AKA_SBX_MAX_GPUS]; /* the node's GPU indices (GRES IDX) */
    size_t n_gpu_ids;
};
/* Code 75 when the line has no JobState or an IDX list that cannot be read. */
int aka_slurm_parse_job(const char *line, struct aka_slurm_job_info *out, struct aka_err *err);
/* The sbatch argv of an allocation for a job of gpu_count GPUs and timeout_s seconds. */
void aka_slurm_sbatch_argv(const struct aka_sandbox_slurm_opts *o, int gpu_count, long timeout_s,
                           const char *name, struct strvec *argv);

/* The first n GPU indices of nvidia-smi's `--query-gpu=index` output into ids; code 75 naming
 * both counts when it lists fewer (a distributed job on a host without enough GPUs). */
int aka_gpu_pick(const char *smi_out, int n, int *ids, struct aka_err *err);

/* Fill t with a slurm transport (opts must outlive it); aka_sandbox_slurm_close releases it. */
void aka_sandbox_slurm(struct aka_sandbox_transport *t, const struct aka_sandbox_slurm_opts *opts);
/*
 * Same-allocation runs (ABBA verification): hold(t, n) with n >= 1 makes the next n jobs of
 * t (with one GPU count) steps of one allocation, whose time limit covers n job timeouts
 * (unless --slurm-time says otherwise); hold(t, 0) cancels it. A held allocation that
 * ends under a job is an environment failure without a retry (its runs would otherwise
 * be compared across allocations). No-op for other transports.
 */
void aka_sandbox_transport_hold(const struct aka_sandbox_transport *t, int n_jobs);
/* Cancel what t still holds and free its state (no-op for other transports). */
void aka_sandbox_slurm_close(struct aka_sandbox_transport *t);

/* Validate, then prepare, run, collect and clean up through t; on refusal or
 * environment failure res is filled too. Setup, run and cleanup times go to res. */
int aka_sandbox_run(const struct aka_sandbox_transport *t, const struct aka_sandbox_job *job,
                    struct aka_sandbox_result *res, struct aka_err *err);

/* Run probe p through t (health.c; a transport without probe_health: healthy, with a note).
 * Never fails: h->ok says whether the machine answered. */
void aka_sandbox_probe_health(const struct aka_sandbox_transport *t,
                              const struct aka_sandbox_probe *p, struct aka_sandbox_health *h);

/* t's one-line description. */
void aka_sandbox_transport_describe(const struct aka_sandbox_transport *t, struct strbuf *out);

/* ---- the transport factory (transport.c) ----------------------------------------------------- */

/*
 * Every command that runs jobs (`aka eval`, `aka sandbox run`, `aka optimize`) takes
 * the same transport flags from one table, aka_transport_flags, and gets its transport
 * from aka_transport_open. Flags given on the command line win over the environment
 * (ATREX_SANDBOX_SSH, ATREX_SANDBOX_SSH_GPU, ATREX_SANDBOX_SSH_INIT,
 * ATREX_SANDBOX_SSH_RUNTIME_BINDS as a JSON array, ATREX_SANDBOX_HEALTH_COMMAND,
 * ATREX_SANDBOX_URL, ATREX_SANDBOX_PROFILE, ATREX_SANDBOX_GPU); a transport chosen on
 * the command line ignores the environment's choice of another one.
 */
#define AKA_TRANSPORT_MAX_FLAGS 24

enum aka_transport_kind {
    AKA_TRANSPORT_LOCAL = 0,
    AKA_TRANSPORT_SSH,
    AKA_TRANSPORT_GATEWAY,
    AKA_TRANSPORT_SLURM
};

struct aka_transport_opts {
    const char *sandbox;   /* local | ssh | gateway | slurm (resolved by validate) */
    const char *isolation; /* local: bwrap | none */
    const char *tmp;       /* local: --sandbox-tmp (NULL: $TMPDIR, else /tmp) */
    const char *ssh, *ssh_init, *health_command; /* ssh: USER@HOST, ... */
    int ssh_gpu;                                 /* ssh: remote GPU index; -1 unset */
    struct strvec ssh_runtime_binds;             /* ssh: "SRC[=DST]" */
    const char *url, *profile, *hardware;        /* gateway */
    const char *slurm_partition, *slurm_account, *slurm_qos, *slurm_time;
    enum aka_transport_kind kind; /* set by validate */
    bool validated;
    bool env_cannot_choose; /* the caller knows the transport (an episode's campaign): the
                               variables that choose one are ignored, the others still fill */
    bool given[AKA_TRANSPORT_MAX_FLAGS];  /* indexed like aka_transport_flags */
    struct aka_sandbox_local_opts local;  /* what a local transport opened from these points at */
    struct aka_sandbox_ssh_opts ssh_opts; /* ... and an ssh transport */
    struct aka_sandbox_gateway_opts gateway_opts; /* ... and a gateway transport */
    struct aka_sandbox_slurm_opts slurm_opts;     /* ... and a slurm transport */
    struct aka_sandbox_transport opened;          /* the transport opened (closed by release) */
};

void aka_transport_opts_init(struct aka_transport_opts *o);
void aka_transport_opts_release(struct aka_transport_opts *o);
/* The transport flags as one group of a command's parser (base/opts.h), storing
 * into o, under the help heading title. Defaults come from the table; the
 * environment is applied by aka_transport_opts_validate. */
struct aka_opt_group aka_transport_opts_group(struct aka_transport_opts *o, const char *title);
bool aka_transport_opt_given(const struct aka_transport_opts *o, const char *flag);
/*
 * After parsing: take the environment's values for absent flags, resolve the transport
 * the flags imply (--sandbox-ssh: ssh; --sandbox-url or --sandbox-profile: gateway),
 * and check every combination and value. platform (NULL: none) is the gateway's GPU
 * token when --sandbox-hardware is absent. Code 2 naming the flag or variable. A
 * transport this build lacks passes (aka_transport_open says 75).
 */
int aka_transport_opts_validate(struct aka_transport_opts *o, const char *platform,
                                struct aka_err *err);
/*
 * The transport the validated options describe (validated here first, without a
 * platform, when the caller did not); o must outlive t, and aka_transport_opts_release
 * closes it. Code 75 when the environment cannot serve it: an unusable --sandbox-tmp,
 * an ssh host that cannot be reached (ssh connects here, before anything is written),
 * or a transport this build does not have yet.
 */
int aka_transport_open(struct aka_transport_opts *o, struct aka_sandbox_transport *t,
                       struct aka_err *err);
const char *aka_transport_kind_name(enum aka_transport_kind k);

/*
 * The bwrap argv the local transport would use for job in jobdir (for --dry-run,
 * tests and docs). ctl_dir holds the generated /etc files. Notes about binds
 * that were detected but refused go to notes (may be NULL).
 */
int aka_sandbox_bwrap_argv(const struct aka_sandbox_job *job, const char *bwrap, const char *jobdir,
                           const char *ctl_dir, struct strvec *argv, struct strvec *notes,
                           struct aka_err *err);

/* ---- views: a sandbox around one long-lived command (the agent sandbox) ------------------- */

/*
 * A job ships copies into a fresh directory; a view instead names which host
 * paths the command sees, at the same place, read-only or writable. It shares
 * the job's head (every namespace, no capabilities, die with aka, a new
 * session), its read-only system and its fresh /proc, /dev and /tmp; it may
 * keep the network and expose GPUs. Nothing else of the host is there.
 */
enum aka_sandbox_view_mode {
    AKA_VIEW_RO,     /* bound read-only */
    AKA_VIEW_RW,     /* bound writable */
    AKA_VIEW_RO_TRY, /* read-only, when it exists */
    AKA_VIEW_RW_TRY, /* writable, when it exists */
    AKA_VIEW_TMPFS   /* an empty writable tmpfs at dest, gone with the sandbox */
};

struct aka_sandbox_view_path {
    enum aka_sandbox_view_mode mode;
    char *src, *dest; /* absolute; src NULL for a tmpfs */
};

struct aka_sandbox_view {
    VEC(struct aka_sandbox_view_path) paths;
    bool share_net;
    int gpu_count; /* GPUs 0..N-1: their nodes (platform.h), the vendor's shared ones, /sys ro */
    enum aka_vendor gpu_vendor; /* init: NVIDIA */
    char *chdir;
};

void aka_sandbox_view_init(struct aka_sandbox_view *v);
void aka_sandbox_view_release(struct aka_sandbox_view *v);
/* dest NULL: the same path as src (for a tmpfs, src is the place). */
void aka_sandbox_view_add(struct aka_sandbox_view *v, enum aka_sandbox_view_mode mode,
                          const char *src, const char *dest);
/*
 * The user the command runs as inside: the caller's uid, or 1000 when the caller is
 * root — a sandbox started inside (an agent's `aka eval`) can map only its own user
 * without CAP_SETFCAP, and no process inside needs to be root. -1: keep the caller's.
 */
long aka_sandbox_view_uid(void);
/* passwd, group and hosts for the view into ctl_dir (an existing private directory). */
int aka_sandbox_view_etc(const char *ctl_dir, const char *home, struct aka_err *err);
/* The bwrap argv of the view around cmd (NULL-terminated). Paths are mounted parents
 * first, so a bind below a tmpfs or another bind lands on top of it. */
int aka_sandbox_view_argv(const struct aka_sandbox_view *v, const char *bwrap, const char *ctl_dir,
                          const char *const *cmd, struct strvec *argv, struct aka_err *err);
/* name (or a path with a '/') looked up in $PATH: 0 with its path, -1 when absent. */
int aka_sandbox_find_program(const char *name, struct strbuf *out);
/* The files this process has mapped (its binary and shared libraries), from
 * /proc/self/maps: what a view must show for aka to run inside it. */
void aka_sandbox_mapped_files(struct strvec *out);
/* The Python prefix a job would bind (python3 on PATH outside /usr: a venv, conda env,
 * pyenv version), "" when none or refused: a view shows it too, so that an `aka eval`
 * started inside finds the interpreter the supervisor's evaluations use. */
void aka_sandbox_python_prefix(struct strbuf *out);
/* Can this host build a job sandbox? A local job around `true` is run (bwrap found in PATH,
 * user namespaces usable): 0, or code 75 with why; bwrap's path into out when found. */
int aka_sandbox_selftest(struct strbuf *bwrap, struct aka_err *err);
/* bwrap: `given` or "bwrap" looked up in PATH; code 75 naming what is missing. */
int aka_sandbox_find_bwrap(const char *given, struct strbuf *out, struct aka_err *err);

#endif
