/*
 * platform.c — owns the platform table and everything derived from it
 * (platform.h): name and --arch parsing, vendor detection, the frameworks,
 * timing and clock policy per vendor, the device nodes of an assigned GPU, and
 * the architecture probe hook.
 *
 * Architectures come from public vendor pages where they list the part:
 * NVIDIA's "CUDA GPU Compute Capability" page (developer.nvidia.com/cuda-gpus
 * and its legacy page) and AMD's ROCm "GPU specifications" table (LLVM target
 * names). Parts those pages do not list are marked in the table below with
 * where their arch comes from instead.
 */
#include "platform/platform.h"

#include "base/fs.h"
#include "base/strbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

struct product {
    const char *spelling, *product; /* as accepted (lower case); canonical product */
    enum aka_vendor vendor;
    const char *arch;
};

/* Table order is detection order: PPU names first (exact names only), then AMD, then NVIDIA. */
static const struct product products[] = {
    /* T-Head PPU: arch token as upstream names it (anchor-sandbox §14.5, anchor-v03 §11). */
    {"zwm890p", "zwm890p", AKA_VENDOR_PPU, "zwm890p"},
    {"zw-m890p", "zwm890p", AKA_VENDOR_PPU, "zwm890p"},
    /* AMD Instinct, from ROCm's GPU specifications table (LLVM target name). */
    {"mi300x", "mi300x", AKA_VENDOR_AMD, "gfx942"},
    {"mi300a", "mi300a", AKA_VENDOR_AMD, "gfx942"},
    {"mi325x", "mi325x", AKA_VENDOR_AMD, "gfx942"},
    /* Not in ROCm's public table (a China-market CDNA3 part): gfx942 as the upstream GPU wiki
     * files it (cdna3) and as the shipped rms_norm SOL table pairs it. Unsure. */
    {"mi308x", "mi308x", AKA_VENDOR_AMD, "gfx942"},
    {"mi350x", "mi350x", AKA_VENDOR_AMD, "gfx950"},
    {"mi355x", "mi355x", AKA_VENDOR_AMD, "gfx950"},
    {"mi250x", "mi250x", AKA_VENDOR_AMD, "gfx90a"},
    {"mi250", "mi250", AKA_VENDOR_AMD, "gfx90a"},
    {"mi210", "mi210", AKA_VENDOR_AMD, "gfx90a"},
    {"mi100", "mi100", AKA_VENDOR_AMD, "gfx908"},
    /* NVIDIA, from the compute-capability pages. */
    {"v100", "v100", AKA_VENDOR_NVIDIA, "sm_70"},
    {"t4", "t4", AKA_VENDOR_NVIDIA, "sm_75"},
    {"a100", "a100", AKA_VENDOR_NVIDIA, "sm_80"},
    {"a30", "a30", AKA_VENDOR_NVIDIA, "sm_80"},
    {"a10", "a10", AKA_VENDOR_NVIDIA, "sm_86"},
    {"a40", "a40", AKA_VENDOR_NVIDIA, "sm_86"},
    {"l4", "l4", AKA_VENDOR_NVIDIA, "sm_89"},
    {"l40", "l40", AKA_VENDOR_NVIDIA, "sm_89"},
    {"l40s", "l40s", AKA_VENDOR_NVIDIA, "sm_89"},
    {"rtx4090", "rtx4090", AKA_VENDOR_NVIDIA, "sm_89"},
    {"h100", "h100", AKA_VENDOR_NVIDIA, "sm_90"},
    {"h200", "h200", AKA_VENDOR_NVIDIA, "sm_90"},
    {"gh200", "gh200", AKA_VENDOR_NVIDIA, "sm_90"},
    {"b200", "b200", AKA_VENDOR_NVIDIA, "sm_100"},
    {"gb200", "gb200", AKA_VENDOR_NVIDIA, "sm_100"},
    {"b300", "b300", AKA_VENDOR_NVIDIA, "sm_103"},
    {"gb300", "gb300", AKA_VENDOR_NVIDIA, "sm_103"},
    {"rtx5090", "rtx5090", AKA_VENDOR_NVIDIA, "sm_120"},
    /* China-market variants NVIDIA's page does not list: the architecture of the die they
     * are cut from (A800: Ampere GA100; H800, H20: Hopper; L20: Ada AD102). */
    {"a800", "a800", AKA_VENDOR_NVIDIA, "sm_80"},
    {"h800", "h800", AKA_VENDOR_NVIDIA, "sm_90"},
    {"h20", "h20", AKA_VENDOR_NVIDIA, "sm_90"},
    {"l20", "l20", AKA_VENDOR_NVIDIA, "sm_89"},
    /* Upstream's quick-start name; no public NVIDIA document names an "L20N". Taken as an
     * L20-class Ada part. Unsure: pass --arch when the machine says otherwise. */
    {"l20n", "l20n", AKA_VENDOR_NVIDIA, "sm_89"},
    {NULL, NULL, AKA_VENDOR_CPU, NULL},
};

static const char forms[] =
    "cpu; a product (H20, L20N, L20, L40S, RTX4090, A100, H100, H200, H800, GH200, B200, "
    "GB200, B300, MI300X, MI308X, MI325X, MI355X, ZW-M890P, ...); an architecture (sm_<NN>, "
    "gfx<hex>, zwm890p); or <vendor>/<product or architecture> with vendor nvidia, amd or ppu "
    "(nvidia/h200, amd/gfx942)";

const char *aka_platform_forms(void)
{
    return forms;
}

const char *aka_platform_validation_note(void)
{
    return "validated on hardware: cpu and the NVIDIA H200 only; every other platform "
           "(other NVIDIA parts, AMD, T-Head PPU) is accepted but not validated on hardware";
}

const char *aka_platform_validation(const struct aka_platform *p)
{
    return p->validated_on_hardware ? "validated on hardware" : "not validated on hardware";
}

const char *aka_vendor_name(enum aka_vendor v)
{
    static const char *const names[] = {"cpu", "nvidia", "amd", "ppu"};
    return names[v];
}

const char *aka_vendor_label(enum aka_vendor v)
{
    static const char *const labels[] = {"CPU", "NVIDIA", "AMD", "T-Head PPU"};
    return labels[v];
}

/* ---- names ---------------------------------------------------------------------------------- */

/* "sm_" followed by two or three digits, optionally an "a" or "f" feature suffix. */
static bool is_sm_arch(const char *s)
{
    size_t n = strlen(s);
    if (strncmp(s, "sm_", 3) != 0 || n < 5 || n > 7)
        return false;
    for (size_t i = 3; i < n; i++)
        if (!isdigit((unsigned char)s[i]) && !(i == n - 1 && i > 4 && (s[i] == 'a' || s[i] == 'f')))
            return false;
    return true;
}

/* "gfx" followed by three or four hex digits (gfx90a, gfx942, gfx1100). */
static bool is_gfx_arch(const char *s)
{
    size_t n = strlen(s);
    if (strncmp(s, "gfx", 3) != 0 || n < 6 || n > 7)
        return false;
    for (size_t i = 3; i < n; i++)
        if (!isxdigit((unsigned char)s[i]))
            return false;
    return true;
}

static bool arch_fits(enum aka_vendor v, const char *arch)
{
    switch (v) {
    case AKA_VENDOR_NVIDIA:
        return is_sm_arch(arch);
    case AKA_VENDOR_AMD:
        return is_gfx_arch(arch);
    case AKA_VENDOR_PPU:
        return strcmp(arch, "zwm890p") == 0;
    default:
        return false;
    }
}

static const char *arch_form(enum aka_vendor v)
{
    static const char *const f[] = {"none (the CPU platform has no --arch)", "sm_<NN>", "gfx<hex>",
                                    "zwm890p"};
    return f[v];
}

/* Lower-case copy into out; false when s is empty or longer than out holds. */
static bool lower(const char *s, char *out, size_t n)
{
    size_t len = s ? strlen(s) : 0;
    if (len == 0 || len >= n)
        return false;
    for (size_t i = 0; i <= len; i++)
        out[i] = (char)tolower((unsigned char)s[i]);
    return true;
}

/* The vendor a "<vendor>/" prefix names; -1 when there is no known prefix. */
static int prefix_vendor(const char *low, const char **rest)
{
    static const char *const names[] = {"nvidia/", "amd/", "ppu/"};
    static const enum aka_vendor v[] = {AKA_VENDOR_NVIDIA, AKA_VENDOR_AMD, AKA_VENDOR_PPU};
    for (size_t i = 0; i < 3; i++)
        if (strncmp(low, names[i], strlen(names[i])) == 0) {
            *rest = low + strlen(names[i]);
            return (int)v[i];
        }
    *rest = low;
    return -1;
}

/* Detect the vendor of a bare name, in upstream's order. false when nothing matches. */
static bool detect(const char *s, struct aka_platform *out)
{
    const struct product *p = products;
    for (; p->spelling && p->vendor == AKA_VENDOR_PPU; p++)
        if (strcmp(s, p->spelling) == 0)
            goto found;
    bool gfx = is_gfx_arch(s);
    if (gfx || is_sm_arch(s)) {
        out->vendor = gfx ? AKA_VENDOR_AMD : AKA_VENDOR_NVIDIA;
        snprintf(out->arch, sizeof(out->arch), "%s", s);
        return true;
    }
    for (; p->spelling; p++)
        if (strcmp(s, p->spelling) == 0)
            goto found;
    return false;
found:
    out->vendor = p->vendor;
    snprintf(out->product, sizeof(out->product), "%s", p->product);
    snprintf(out->arch, sizeof(out->arch), "%s", p->arch);
    return true;
}

static int unknown(const char *name, struct aka_err *err)
{
    return aka_err_set(err, AKA_EXIT_USAGE, "--platform '%s': unknown platform; expected %s",
                       name ? name : "", forms);
}

static int apply_arch(struct aka_platform *p, const char *arch, struct aka_err *err)
{
    char low[16];
    if (!arch || !*arch) {
        p->arch_from = p->vendor == AKA_VENDOR_CPU ? AKA_ARCH_NONE
                       : p->arch[0]                ? AKA_ARCH_FROM_TABLE
                                                   : AKA_ARCH_PROBE;
        return 0;
    }
    if (!lower(arch, low, sizeof(low)) || !arch_fits(p->vendor, low))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--arch '%s': not an architecture of --platform %s (%s); expected %s",
                           arch, p->name, aka_vendor_label(p->vendor), arch_form(p->vendor));
    /* An architecture id as the platform name is already the arch: two must agree. */
    if (!p->product[0] && p->arch[0] && strcmp(p->arch, low) != 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "--arch '%s': --platform %s already names %s", arch,
                           p->name, p->arch);
    snprintf(p->arch, sizeof(p->arch), "%s", low);
    p->arch_from = AKA_ARCH_FROM_FLAG;
    return 0;
}

int aka_platform_parse(const char *name, const char *arch, struct aka_platform *out,
                       struct aka_err *err)
{
    char low[48];
    const char *rest;
    memset(out, 0, sizeof(*out));
    if (!lower(name, low, sizeof(low)))
        return unknown(name, err);
    if (strcmp(low, "cpu") == 0) {
        snprintf(out->name, sizeof(out->name), "cpu");
        out->validated_on_hardware = true;
        return apply_arch(out, arch, err);
    }
    int want = prefix_vendor(low, &rest);
    if (!detect(rest, out) || (want >= 0 && out->vendor != (enum aka_vendor)want))
        return unknown(name, err);
    snprintf(out->name, sizeof(out->name), "%s/%s", aka_vendor_name(out->vendor),
             out->product[0] ? out->product : out->arch);
    /* The only GPU this project has run on. */
    out->validated_on_hardware =
        out->vendor == AKA_VENDOR_NVIDIA && strcmp(out->product, "h200") == 0;
    return apply_arch(out, arch, err);
}

/* ---- what each vendor runs ------------------------------------------------------------------ */

const char *const *aka_platform_frameworks(const struct aka_platform *p)
{
    static const char *const cpu[] = {"C", NULL};
    static const char *const nvidia[] = {"Triton", "CuteDSL", "Cuda", "TileLang", NULL};
    static const char *const amd[] = {"Triton", "FlyDSL", "TileLang", NULL};
    static const char *const ppu[] = {"Triton", "Cuda", "TileLang", NULL};
    static const char *const *const sets[] = {cpu, nvidia, amd, ppu};
    return sets[p->vendor];
}

const char *aka_platform_frameworks_text(const struct aka_platform *p)
{
    static const char *const text[] = {"C", "Triton, CuteDSL, Cuda, TileLang",
                                       "Triton, FlyDSL, TileLang", "Triton, Cuda, TileLang"};
    return text[p->vendor];
}

bool aka_platform_has_framework(const struct aka_platform *p, const char *framework)
{
    for (const char *const *f = aka_platform_frameworks(p); *f; f++)
        if (strcasecmp(*f, framework) == 0)
            return true;
    return false;
}

enum aka_timing_method aka_platform_timing(const struct aka_platform *p)
{
    /* The PPU runs a CUDA-compatible runtime: its events are CUDA events. */
    static const enum aka_timing_method t[] = {AKA_TIMING_HOST_CLOCK, AKA_TIMING_CUDA_EVENTS,
                                               AKA_TIMING_HIP_EVENTS, AKA_TIMING_CUDA_EVENTS};
    return t[p->vendor];
}

const char *aka_timing_name(enum aka_timing_method t)
{
    static const char *const names[] = {"host clock", "CUDA events", "HIP events"};
    return names[t];
}

bool aka_platform_may_touch_clocks(const struct aka_platform *p)
{
    /* PPU-SMI has no managed graphics clocks (upstream never locks them there); the CPU has
     * nothing aka would lock. */
    return p->vendor == AKA_VENDOR_NVIDIA || p->vendor == AKA_VENDOR_AMD;
}

/* ---- device nodes --------------------------------------------------------------------------- */

static void add_node(struct aka_dev_nodes *out, bool required, bool gpu, const char *fmt, int i)
{
    struct aka_dev_node *d = &out->v[out->n++];
    snprintf(d->name, sizeof(d->name), fmt, i);
    d->required = required;
    d->gpu = gpu;
}

/* The nodes every GPU of the vendor shares. The control node is required (no driver without
 * it); the unified-memory nodes are bound when the driver created them. */
static void shared_nodes(enum aka_vendor v, struct aka_dev_nodes *out)
{
    if (v == AKA_VENDOR_AMD) {
        add_node(out, true, false, "kfd", 0);
        return;
    }
    add_node(out, true, false, "nvidiactl", 0);
    add_node(out, false, false, "nvidia-uvm", 0);
    add_node(out, false, false, "nvidia-uvm-tools", 0);
}

/*
 * One GPU's own node. AMD: the DRM render node of the i-th GPU; it is renderD<128+i>
 * when the host's only DRM devices are the AMD GPUs, in enumeration order (a host with
 * another DRM device first shifts the numbering; nothing here can see that).
 * PPU: anchor-sandbox.md documents one device exposure for upstream's SSH sandbox, the
 * NVIDIA-style nodes, which is what a CUDA-compatible runtime opens. The PPU's own node
 * names are not documented there; this is an assumption never checked on a PPU host.
 */
static void gpu_node(enum aka_vendor v, int i, struct aka_dev_nodes *out)
{
    if (v == AKA_VENDOR_AMD)
        add_node(out, true, true, "dri/renderD%d", 128 + i);
    else
        add_node(out, true, true, "nvidia%d", i);
}

int aka_platform_dev_nodes(enum aka_vendor v, const int *ids, size_t n, struct aka_dev_nodes *out,
                           struct aka_err *err)
{
    out->n = 0;
    if (n == 0)
        return 0;
    if (v == AKA_VENDOR_CPU)
        return aka_err_set(err, AKA_EXIT_USAGE, "%zu GPU(s) requested on the CPU platform", n);
    if (n > AKA_PLATFORM_MAX_NODES - 3)
        return aka_err_set(err, AKA_EXIT_USAGE, "%zu GPUs: at most %d", n,
                           AKA_PLATFORM_MAX_NODES - 3);
    shared_nodes(v, out);
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] > 255)
            return aka_err_set(err, AKA_EXIT_USAGE, "GPU id %d: out of range", ids[i]);
        gpu_node(v, ids[i], out);
    }
    return 0;
}

int aka_platform_check_nodes(enum aka_vendor v, const char *dev_root,
                             const struct aka_dev_nodes *nodes, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    int rc = 0;
    /* The GPU's own nodes first: "no GPU" is what a machine without one is told. */
    for (int pass = 0; rc == 0 && pass < 2; pass++)
        for (size_t i = 0; rc == 0 && i < nodes->n; i++) {
            const struct aka_dev_node *d = &nodes->v[i];
            if (!d->required || d->gpu != (pass == 0))
                continue;
            aka_path_join(&path, dev_root ? dev_root : "/dev", d->name);
            if (!aka_exists(path.buf))
                rc = aka_err_set(err, AKA_EXIT_ENV, "no %s%s: %s not found", aka_vendor_label(v),
                                 !d->gpu               ? " driver"
                                 : v == AKA_VENDOR_PPU ? ""
                                                       : " GPU",
                                 path.buf);
        }
    strbuf_release(&path);
    return rc;
}

/* ---- the architecture probe ----------------------------------------------------------------- */

int aka_platform_probe_arch(struct aka_platform *p, aka_arch_probe_fn probe, void *ctx,
                            struct aka_err *err)
{
    char arch[16] = "";
    if (p->arch_from != AKA_ARCH_PROBE)
        return 0;
    if (!probe) {
        snprintf(p->arch, sizeof(p->arch), "%s", AKA_ARCH_UNKNOWN);
        return 0;
    }
    if (probe(ctx, arch, sizeof(arch), err) < 0)
        return -1;
    if (!arch_fits(p->vendor, arch))
        return aka_err_set(err, AKA_EXIT_ENV,
                           "--platform %s: the machine reports architecture '%s', not one of %s",
                           p->name, arch, aka_vendor_label(p->vendor));
    snprintf(p->arch, sizeof(p->arch), "%s", arch);
    return 0;
}

/* ---- JSON ----------------------------------------------------------------------------------- */

json_t *aka_platform_to_json(const struct aka_platform *p)
{
    static const char *const from[] = {"none", "flag", "table", "probe"};
    struct aka_dev_nodes nodes;
    struct aka_err ignored = AKA_ERR_INIT;
    int gpu0 = 0;
    json_t *fw = json_array(), *dev = json_array();
    for (const char *const *f = aka_platform_frameworks(p); *f; f++)
        json_array_append_new(fw, json_string(*f));
    if (aka_platform_dev_nodes(p->vendor, &gpu0, p->vendor != AKA_VENDOR_CPU, &nodes, &ignored) ==
        0)
        for (size_t i = 0; i < nodes.n; i++)
            json_array_append_new(dev, json_pack("{s:s+, s:b}", "path", "/dev/", nodes.v[i].name,
                                                 "required", nodes.v[i].required));
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:o, s:s, s:b, s:o}", "name", p->name,
                     "vendor", aka_vendor_name(p->vendor), "product", p->product, "arch", p->arch,
                     "arch_from", from[p->arch_from], "validated_on_hardware",
                     p->validated_on_hardware, "frameworks", fw, "timing",
                     aka_timing_name(aka_platform_timing(p)), "clocks_may_be_touched",
                     aka_platform_may_touch_clocks(p), "device_nodes_gpu0", dev);
}
