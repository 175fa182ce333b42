/*
 * profile.h — profiler exports summarised per kernel (DESIGN §2 profile/): the
 * one public header of the profile module.
 *
 * Three exports are read, all CSV:
 *   ncu        Nsight Compute's raw page (`ncu --csv --page raw`): one row per
 *              profiled launch, one column per metric, a units row under the header;
 *   ppu-acu    the PPU vendor profiler's CSV (acu --csv-file), the same layout with
 *              the ppu__/cu__ metric names the vendor uses (anchor-sandbox §14.5);
 *   rocprofv3  rocprofv3's counter_collection.csv (one row per counter per
 *              dispatch) or kernel_trace.csv (one row per dispatch, durations only).
 * The format is recognised from the header. Launches of one kernel are averaged
 * into one summary: duration, compute and memory SOL %, DRAM throughput,
 * achieved occupancy, registers, shared memory, top stall reasons, the bound.
 * A malformed or truncated export is an error (exit 2) naming the file, the
 * line and the field.
 */
#ifndef AKA_PROFILE_H
#define AKA_PROFILE_H

#include "base/error.h"
#include "base/strbuf.h"
#include "base/vec.h"

#include <jansson.h>
#include <stddef.h>

enum aka_profile_field {
    AKA_PF_DURATION_NS,
    AKA_PF_COMPUTE_SOL_PCT,
    AKA_PF_MEMORY_SOL_PCT,
    AKA_PF_DRAM_PCT,
    AKA_PF_DRAM_GBPS,
    AKA_PF_OCCUPANCY_PCT,
    AKA_PF_REGISTERS,
    AKA_PF_SMEM_BYTES,
    AKA_PF_FLOP, /* FP16/32/64 FLOPs per launch, from executed add/mul/fma counts */
    AKA_PF_COUNT
};
extern const char *const aka_profile_field_names[]; /* JSON keys, AKA_PF_COUNT of them */

enum aka_profile_bound {
    AKA_BOUND_UNKNOWN,
    AKA_BOUND_MEMORY,
    AKA_BOUND_COMPUTE,
    AKA_BOUND_LATENCY
};
extern const char *const aka_profile_bound_names[];

/* Below this much of either peak, a kernel is latency-bound (neither unit is busy). */
#define AKA_PROFILE_LATENCY_SOL_PCT 60.0
#define AKA_PROFILE_TOP_STALLS      3

struct aka_profile_acc {
    double sum;
    long n;
};

struct aka_profile_stall {
    char *name;
    double value; /* mean over launches: ncu, cycles stalled per issued instruction */
    struct aka_profile_acc acc;
};

struct aka_profile_kernel {
    char *name;
    char *launch; /* the launch configuration ("grid (4096, 1, 1) block (256, 1, 1)"), or NULL:
                     launches of one kernel with different configurations are summarized apart */
    long launches;
    double v[AKA_PF_COUNT]; /* means over launches; NAN where not collected */
    struct aka_profile_acc acc[AKA_PF_COUNT];
    struct {
        struct aka_profile_stall *v;
        size_t n, alloc;
    } stalls; /* sorted by value, descending, after finalize */
    enum aka_profile_bound bound;
};

struct aka_profile_summary {
    const char *tool; /* "ncu", "ppu-acu" or "rocprofv3" */
    char *source;     /* the export's label */
    struct {
        struct aka_profile_kernel *v;
        size_t n, alloc;
    } kernels; /* by duration, descending */
    size_t launches;
    size_t dropped; /* kernels left out by aka_profile_select */
};

/* Target ceilings from the wiki's hardware records, with their attribution. */
struct aka_profile_ceilings {
    const char *chip;
    double dram_gbps, tflops; /* 0 when unknown */
    const char *dram_record, *dram_source, *flop_record, *flop_source;
};

void aka_profile_summary_init(struct aka_profile_summary *s);
void aka_profile_summary_release(struct aka_profile_summary *s);

/* Parse an export (format recognised from its header). */
int aka_profile_parse_buffer(const char *label, const char *buf, size_t len,
                             struct aka_profile_summary *out, struct aka_err *err);
int aka_profile_parse_file(const char *path, struct aka_profile_summary *out, struct aka_err *err);

/* Keep kernels whose name matches `regex` (POSIX ERE; NULL: all), then the top `top` by
 * duration (0: all). A regex that does not compile is an error (code 2). */
int aka_profile_select(struct aka_profile_summary *s, const char *regex, size_t top,
                       struct aka_err *err);

/* The summary an agent reads and cites (memory record profile_evidence). */
json_t *aka_profile_to_json(const struct aka_profile_summary *s,
                            const struct aka_profile_ceilings *c);
void aka_profile_format(const struct aka_profile_summary *s, const struct aka_profile_ceilings *c,
                        struct strbuf *out);

/*
 * The ncu command line a profile job runs, before the program's own argv:
 *   ncu --clock-control none --csv --page raw --target-processes all
 *       --profile-from-start off --kernel-name-base demangled
 *       [--kernel-name regex:R] <level's sections and metrics> [--metrics M,...]
 * aka never changes clocks. Levels: survey (duration only), sol (speed of
 * light, launch statistics, occupancy, DRAM, FLOP counts), deep (--set full plus
 * the same metrics; needs a kernel regex). An unknown level, deep without a
 * regex, a regex over 256 bytes or a metric that is not a metric name (one starting
 * with '-' would be a flag) is an error (code 2).
 */
int aka_profile_ncu_argv(const char *level, const char *kernel_regex, const struct strvec *metrics,
                         struct strvec *argv, struct aka_err *err);

/*
 * The whole command line of a live profile on this machine: aka_profile_ncu_argv with
 * argv[0] the profiler's absolute path (aka_profile_environment: code 75 when this machine
 * has no profiler or GPU), and dir the install directory a job binds (aka_profile_tool_dir).
 * Only ncu profiles live yet (another vendor's profiler: code 1, use --from-report). Used by
 * `aka profile` and by a campaign's supervisor profiling for its agent (the broker).
 */
int aka_profile_command(const char *platform, const char *level, const char *kernel_regex,
                        const struct strvec *metrics, struct strvec *argv, struct strbuf *dir,
                        struct aka_err *err);

/*
 * Can this machine profile for `platform` (any --platform spelling)? The
 * vendor's profiler (ncu; rocprofv3 for AMD) must be on PATH, its path goes to
 * `tool`, and GPU 0's device nodes must exist under dev_root (NULL: /dev).
 * Missing either: code 75. The cpu platform: code 2.
 */
int aka_profile_environment(const char *platform, const char *dev_root, struct strbuf *tool,
                            struct aka_err *err);
/* The directory the profiler really lives in (symlinks resolved), or the one above it when
 * that is a bin/ (a toolkit's launcher script finds the tool beside bin/): bound into the job. */
int aka_profile_tool_dir(const char *tool, struct strbuf *dir, struct aka_err *err);

/*
 * In an episode: save a summary (aka_profile_to_json) as the worktree's next
 * .aka/profiles/pNNNN.json (path into `saved`, may be NULL), and read the newest
 * one back (NULL when there is none or it is not a JSON object).
 */
int aka_profile_save(const char *worktree, const json_t *summary, struct strbuf *saved,
                     struct aka_err *err);
json_t *aka_profile_latest(const char *worktree);
/* The summary named `name` ("p0002", as `aka profile` reported it), or NULL. */
json_t *aka_profile_cited(const char *worktree, const char *name);

#endif
