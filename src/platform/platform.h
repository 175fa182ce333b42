/*
 * platform.h — the hardware a campaign targets, parsed once into a type (docs/platforms.md).
 *
 * A --platform value names a vendor and, through a table, an architecture:
 * upstream's free product names (H20, L20N, H200, B200, MI308X, ...), the
 * nvidia/<gpu> form aka used first, bare architecture ids (sm_90, gfx942),
 * the T-Head PPU (zwm890p, ZW-M890P) and cpu. Matching is case-insensitive and
 * exact: a name is in the table or it is refused (exit 2), never recognised by a
 * substring. Vendor detection follows upstream's order: PPU names first (a PPU
 * reports a borrowed sm_89 through its CUDA-compatible runtime), then gfx* and
 * AMD products, then NVIDIA products and sm_*.
 *
 * What the rest of aka asks of the type instead of comparing strings: the
 * device nodes a sandbox exposes for an assigned GPU index, the frameworks a
 * dispatch runs, how timing is taken, whether clocks may ever be touched, and
 * whether this project has run on the hardware at all (validated_on_hardware:
 * only cpu and the NVIDIA H200 so far; everything else is labelled).
 */
#ifndef AKA_PLATFORM_H
#define AKA_PLATFORM_H

#include "base/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum aka_vendor { AKA_VENDOR_CPU = 0, AKA_VENDOR_NVIDIA, AKA_VENDOR_AMD, AKA_VENDOR_PPU };

/* How a timed run is clocked: the host's monotonic clock on the CPU, device events elsewhere. */
enum aka_timing_method { AKA_TIMING_HOST_CLOCK = 0, AKA_TIMING_CUDA_EVENTS, AKA_TIMING_HIP_EVENTS };

/* Where the architecture came from. PROBE: neither --arch nor the table knew it. */
enum aka_arch_source { AKA_ARCH_NONE = 0, AKA_ARCH_FROM_FLAG, AKA_ARCH_FROM_TABLE, AKA_ARCH_PROBE };

/* The architecture when a probe has not (yet) told it. */
#define AKA_ARCH_UNKNOWN "unknown"

struct aka_platform {
    enum aka_vendor vendor;
    char name[48];    /* canonical: cpu, nvidia/h200, nvidia/sm_90, amd/mi308x, amd/gfx942,
                       * ppu/zwm890p */
    char product[24]; /* lower-case table product ("h20", "mi308x"); "" for arch ids and cpu */
    char arch[16];    /* sm_90, gfx942, zwm890p; "" on cpu; AKA_ARCH_UNKNOWN until probed */
    enum aka_arch_source arch_from;
    bool validated_on_hardware;
};

/*
 * Parse a --platform value and an optional --arch (NULL or "": none). 0 on
 * success; -1 with code 2 naming the flag, the value and the accepted forms
 * for an unknown name, or an --arch that is not an architecture of the
 * platform's vendor.
 */
int aka_platform_parse(const char *name, const char *arch, struct aka_platform *out,
                       struct aka_err *err);

/* The accepted forms, for usage text and errors. */
const char *aka_platform_forms(void);

/* What has run on real hardware, for --help and docs: one sentence. */
const char *aka_platform_validation_note(void);

/* "validated on hardware" or "not validated on hardware". */
const char *aka_platform_validation(const struct aka_platform *p);

/* "cpu", "nvidia", "amd", "ppu": the wiki's and the records' vendor token. */
const char *aka_vendor_name(enum aka_vendor v);
/* "CPU", "NVIDIA", "AMD", "T-Head PPU": for messages. */
const char *aka_vendor_label(enum aka_vendor v);

/* The frameworks a dispatch runs on the platform, NULL-terminated, in dispatch order. */
const char *const *aka_platform_frameworks(const struct aka_platform *p);
/* The same set as text: "Triton, CuteDSL, Cuda, TileLang". */
const char *aka_platform_frameworks_text(const struct aka_platform *p);
bool aka_platform_has_framework(const struct aka_platform *p, const char *framework);

enum aka_timing_method aka_platform_timing(const struct aka_platform *p);
const char *aka_timing_name(enum aka_timing_method t);

/* Whether anything may ever lock or reset the device's clocks (never on a PPU). */
bool aka_platform_may_touch_clocks(const struct aka_platform *p);

/* {name, vendor, product, arch, arch_from, validated_on_hardware, frameworks, timing,
 * clocks, device_nodes_gpu0}: what `aka inspect --json` prints. */
json_t *aka_platform_to_json(const struct aka_platform *p);

/* ---- device nodes ----------------------------------------------------------------------- */

#define AKA_PLATFORM_MAX_NODES 40

struct aka_dev_node {
    char name[32]; /* relative to /dev: "nvidiactl", "dri/renderD129" */
    bool required; /* absent on the host: the job cannot run (code 75); else bound if present */
    bool gpu;      /* one GPU's own node (else shared by all of the vendor's GPUs) */
};

struct aka_dev_nodes {
    struct aka_dev_node v[AKA_PLATFORM_MAX_NODES];
    size_t n;
};

/*
 * The nodes a sandbox exposes for the GPUs ids[0..n) of a vendor: the vendor's
 * shared nodes once, then each assigned GPU's own node, nothing of any other
 * GPU. Nothing for the CPU or n == 0. -1 (code 2) when an id is out of range.
 */
int aka_platform_dev_nodes(enum aka_vendor v, const int *ids, size_t n, struct aka_dev_nodes *out,
                           struct aka_err *err);

/*
 * The required nodes exist under dev_root (NULL: "/dev"; tests point it at a
 * directory of fake nodes). -1 with code 75 naming what is missing, e.g.
 * "no NVIDIA GPU: /dev/nvidia0 not found".
 */
int aka_platform_check_nodes(enum aka_vendor v, const char *dev_root,
                             const struct aka_dev_nodes *nodes, struct aka_err *err);

/* ---- the architecture probe ------------------------------------------------------------- */

/*
 * A probe runs on the machine that will run the jobs (through the caller's
 * transport) and writes the runtime architecture ("sm_90", "gfx942") into arch.
 */
typedef int (*aka_arch_probe_fn)(void *ctx, char *arch, size_t n, struct aka_err *err);

/*
 * Fill p->arch when neither --arch nor the table gave one. Without a probe
 * (probe NULL, as today: no transport hands one in yet) it becomes
 * AKA_ARCH_UNKNOWN. A probed arch of another vendor is refused (code 75: the
 * machine is not the platform it was named as).
 */
int aka_platform_probe_arch(struct aka_platform *p, aka_arch_probe_fn probe, void *ctx,
                            struct aka_err *err);

#endif
