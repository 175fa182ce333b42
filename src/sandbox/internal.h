/*
 * internal.h — helpers shared by the files of the sandbox module, not part of
 * its API (callers use sandbox.h). Each file owns one step of a local job:
 *   allowlist.c  what may be shipped, bound or brought back (pure path rules)
 *   job.c        the job object: builders and whole-job validation
 *   result.c     the result object, its JSON, and aka_sandbox_run()
 *   stage.c      the job directory: creation, copying inputs in, removal
 *   binds.c      read-only system/runtime binds, GPU nodes, the bwrap argv
 *   view.c       the bwrap argv of a view (a long-lived command: the agent sandbox)
 *   artifacts.c  bringing artifacts back out of the job directory
 *   pids.c       the optional pids cgroup that bounds fork bombs
 *   local.c      the local transport that ties the steps together
 *   health.c     health probes run as jobs of a transport
 *   ssh_remote.c the ssh transport's pure pieces: the remote probe, its parsing, the
 *                remote bwrap command line and shell quoting
 *   ssh.c        the ssh transport: ControlMaster, upload, run, download, removal
 *   selftest.c   one local job around `true`: can this host build a sandbox (aka doctor)
 *   gpus.c       which of this host's GPUs a multi-GPU job gets, and how they are named
 *   slurm_state.c, slurm.c  the slurm transport: scheduler states, sbatch/srun/scontrol
 */
#ifndef AKA_SANDBOX_INTERNAL_H
#define AKA_SANDBOX_INTERNAL_H

#include "sandbox/sandbox.h"

#include <sys/types.h>

/* The clean environment every job starts from (plus HOME and TMPDIR). */
#define SBX_PATH     "/usr/local/bin:/usr/bin:/bin"
#define SBX_HOSTNAME "aka-sandbox"

/* ---- allowlist.c ---- */
/* Full check of one shipped file (path rules, names, type, root, size); gives the
 * canonical root and the path below it that the copy will open. */
int sbx_check_file(const struct aka_sandbox_file *f, bool generalized, size_t max_bytes,
                   struct strbuf *root_out, struct strbuf *rel_out, struct aka_err *err);
/* Why an artifact path may not come back (never-shipped directories anywhere, credential
 * and supervisor-private names last), or NULL. Raw profiles and notes may. */
const char *sbx_artifact_rule(const char *rel);
/* A directory name that is never entered nor shipped (.git, .aka, memory, .ssh, ...). */
bool sbx_never_dir(const char *name);
/*
 * Supervisor state on a canonical absolute path: a component .git or .aka, or a
 * memory/ directly inside a directory that holds .aka or .git (a workspace or a
 * repository). Returns what it is ("a workspace's .aka/") with that directory in
 * `where`, or NULL.
 */
const char *sbx_state_path(const char *canonical, struct strbuf *where);
/* Is `path` equal to `dir` or below it (both canonical, absolute)? */
bool sbx_path_within(const char *path, const char *dir);
/* "NAME=VALUE" with NAME a portable variable name. */
int sbx_check_env(const char *name_value, struct aka_err *err);

/*
 * Open `rel` (already checked by aka_sandbox_check_rel) below the directory
 * dirfd, refusing a symlink at every component: the open can never leave the
 * directory, whatever was renamed or linked after the check.
 */
int sbx_open_beneath(int dirfd, const char *rel, int flags, mode_t mode);
/* The directory rel below dirfd ("" for dirfd itself), created as needed, same rules. */
int sbx_mkdir_beneath(int dirfd, const char *rel);

/* ---- stage.c ---- */
struct sbx_stage {
    struct strbuf root; /* mkdtemp result, 0700: nothing below it is reachable by others */
    struct strbuf job;  /* root/job: the only writable place the command sees */
    struct strbuf ctl;  /* root/ctl: generated passwd, group, hosts (bound read-only) */
};
void sbx_stage_init(struct sbx_stage *st);
int sbx_stage_create(struct sbx_stage *st, const char *tmp_dir, struct aka_err *err);
/* passwd, group and hosts in ctl (an existing directory) for user uid:gid whose home is home. */
int sbx_write_etc(const char *ctl, unsigned uid, unsigned gid, const char *home,
                  struct aka_err *err);
int sbx_stage_copy_inputs(const struct aka_sandbox_job *job, const struct sbx_stage *st,
                          struct aka_err *err);
/* Remove the whole stage, even if the command left unwritable directories. */
void sbx_stage_remove(struct sbx_stage *st, struct strvec *notes);
/* Copy from an open fd to a new file (O_EXCL, no symlink follow) below dirfd. */
int sbx_copy_fd(int in, int dirfd, const char *rel, mode_t mode, size_t limit, struct aka_err *err);

/* ---- binds.c ---- */
/* The clean environment of the job ("NAME=VALUE", job entries override); a bound
 * python prefix puts its bin/ first in PATH. */
void sbx_job_env(const struct aka_sandbox_job *job, const char *jobdir, const char *python_prefix,
                 struct strvec *env);
/* Look name up in a PATH-style list; absolute result in out. 0 found, -1 not. */
int sbx_find_in_path(const char *name, const char *path_list, struct strbuf *out);
/* The python3 prefix to bind (empty when none is needed or it is refused; notes say why). */
void sbx_python_prefix(const struct aka_sandbox_job *job, struct strbuf *prefix,
                       struct strvec *notes);
/* The pieces every bwrap argv starts with (jobs and views alike): bwrap and its
 * namespaces (network kept when net; --uid/--gid when uid >= 0), the read-only
 * system with the generated /etc of ctl (plus resolver and TLS files when net), and
 * fresh /proc, /dev, /dev/shm and /tmp. */
void sbx_bwrap_head(struct strvec *a, const char *bwrap, bool net, long uid, bool share_pid);
void sbx_add_system(struct strvec *a, const char *ctl, bool net);
/*
 * An agent's own `aka eval` inside the agent sandbox of a root supervisor cannot mount a
 * fresh /proc (bwrap as root covers parts of /proc, and the kernel then refuses a fresh
 * proc mount in a nested user namespace). Its job then binds the agent sandbox's /proc
 * and stays in that sandbox's PID namespace (share_pid), so that the pids the judge
 * forks are the ones that /proc names (the native judge observes its runners through
 * /proc/<pid>/stat). What the job sees is the agent's own processes, which already
 * control everything the job could reach. Never for the supervisor's evaluations: the
 * flag comes from the agent sandbox's environment, which they do not read.
 */
bool sbx_parent_proc(bool in_agent_sandbox);
/*
 * The uid a job inside the agent sandbox runs as: the one the supervisor runs as, which is
 * what its own one-level jobs show. A root supervisor's agent sandbox runs as uid 1000
 * (view.c), so without this a nested job saw root's files, the GPU's device nodes among
 * them, as owned by 1000 where every other job sees 0 (matching them did not let CUDA
 * start there: error 304 stayed, lent H100, 2026-12-07). -1: keep the caller's (not nested,
 * or its user namespace maps it to itself). sbx_outer_id reads one /proc/self/uid_map
 * text: the id `id` has outside, or -1 when no line maps it.
 */
long sbx_nested_uid(bool in_agent_sandbox);
long sbx_outer_id(const char *map, long id);
/* The same read-only system for a remote host (ssh): each directory bound when present. */
void sbx_add_system_remote(struct strvec *a, const char *ctl);
/* The writable job directory, its read-only inputs on top, / remounted read-only, chdir. */
void sbx_add_jobdir(const struct aka_sandbox_job *job, const char *jobdir, struct strvec *a);
/* Fresh /dev, /dev/shm and /tmp; /proc fresh, or the parent's read-only (parent_proc). */
void sbx_add_fresh(struct strvec *a, bool parent_proc);
/* The job's GPU nodes (and /sys read-only) when it asks for any. */
int sbx_add_gpus(const struct aka_sandbox_job *job, struct strvec *a, struct aka_err *err);
/* The bwrap argv for job in jobdir, binding python_prefix (may be empty) read-only. */
int sbx_bwrap_argv(const struct aka_sandbox_job *job, const char *bwrap, const char *jobdir,
                   const char *ctl, const char *python_prefix, struct strvec *a,
                   struct aka_err *err);
/* GPU device indices of the job (explicit ids or 0..count-1); -1 with err when too many. */
int sbx_gpu_ids(const struct aka_sandbox_job *job, int *ids, size_t *n, struct aka_err *err);
/* The job's GPUs exist on this host (the platform's required nodes, platform.h): else code 75
 * naming the missing node. Checked for isolation none too. */
int sbx_check_gpus(const struct aka_sandbox_job *job, struct aka_err *err);

/* ---- gpus.c ---- */
/* copy = job, with the GPUs a job of two or more NVIDIA GPUs gets on this host (nvidia-smi's
 * first gpu_count indices); code 75 when the host shows fewer. */
int sbx_pick_local_gpus(const struct aka_sandbox_job *job, struct aka_sandbox_job *copy,
                        struct aka_err *err);
/* CUDA_VISIBLE_DEVICES (the physical indices) and CUDA_DEVICE_ORDER=PCI_BUS_ID into env. */
void sbx_gpu_env(const int *ids, size_t n, struct strvec *env);

/* ---- result.c ---- */
/* A finished process's status, counts and output into res (the buffers are swapped, not
 * copied); a transport adjusts what its process means for the job afterwards. */
struct proc_result; /* base/proc.h */
void sbx_take_proc_result(struct aka_sandbox_result *res, struct proc_result *pr);

/* ---- health.c ---- */
/* The probe as a job of t (the local transport's probe_health). */
int sbx_probe_job(const struct aka_sandbox_transport *t, const struct aka_sandbox_probe *p,
                  struct aka_sandbox_health *h);
/* ---- ssh_remote.c ---- */
/* What the ssh transport cannot run at all (code 2): isolation none, GPUs that are not
 * NVIDIA's, more GPUs than the indices from --sandbox-ssh-gpu up to the highest allow. */
int sbx_ssh_check_job(const struct aka_sandbox_job *job, const struct aka_sandbox_ssh_opts *o,
                      struct aka_err *err);

/* ---- artifacts.c ---- */
void sbx_collect_artifacts(const struct aka_sandbox_job *job, const char *jobdir,
                           struct aka_sandbox_result *res);

/* ---- pids.c ---- */
struct sbx_cgroup {
    struct strbuf dir;   /* empty when no limit is in force */
    struct strbuf procs; /* dir/cgroup.procs, for proc_spec.cgroup_procs ("" when none) */
};
void sbx_cgroup_init(struct sbx_cgroup *cg);
/* Create a pids cgroup named after the stage; best effort (false: none available). */
bool sbx_cgroup_create(struct sbx_cgroup *cg, const char *name, long pids_max);
/* Move pid and everything it already started into the cgroup. */
void sbx_cgroup_adopt(struct sbx_cgroup *cg, pid_t pid);
/* Wait (bounded) until the cgroup is empty, then remove it. */
void sbx_cgroup_destroy(struct sbx_cgroup *cg, struct strvec *notes);

#endif
