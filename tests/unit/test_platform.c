/*
 * test_platform.c — the platform type (platform/platform.h): a table of names
 * with what each must parse to (vendor, canonical name, arch, the device nodes
 * of GPU 1, frameworks, timing, clock policy, hardware validation), bad names,
 * --arch overriding and refused, the missing-device message (code 75), the
 * probe hook, and the Bubblewrap argv of a job on GPU 1 built against a
 * directory of fake device nodes: exactly that GPU's nodes, for NVIDIA, AMD
 * and PPU, and nothing of GPUs 0 and 2.
 */
#include "aka_test.h"
#include "platform/platform.h"
#include "sandbox/sandbox.h"

#include <string.h>
#include <unistd.h>

#define NV_NODES(i)  "nvidiactl nvidia-uvm? nvidia-uvm-tools? nvidia" #i
#define AMD_NODES(i) "kfd dri/renderD" #i
#define NV_FW        "Triton, CuteDSL, Cuda, TileLang"
#define AMD_FW       "Triton, FlyDSL, TileLang"
#define PPU_FW       "Triton, Cuda, TileLang"

struct name_case {
    const char *in, *arch_flag;
    enum aka_vendor vendor;
    const char *name, *arch, *nodes_gpu1, *frameworks;
    enum aka_timing_method timing;
    bool clocks, validated;
};

static const struct name_case good[] = {
    /* upstream's free names */
    {"H20", NULL, AKA_VENDOR_NVIDIA, "nvidia/h20", "sm_90", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    {"L20N", NULL, AKA_VENDOR_NVIDIA, "nvidia/l20n", "sm_89", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    {"H100", NULL, AKA_VENDOR_NVIDIA, "nvidia/h100", "sm_90", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    {"H200", NULL, AKA_VENDOR_NVIDIA, "nvidia/h200", "sm_90", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, true},
    {"H800", NULL, AKA_VENDOR_NVIDIA, "nvidia/h800", "sm_90", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    {"A100", NULL, AKA_VENDOR_NVIDIA, "nvidia/a100", "sm_80", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    {"B200", NULL, AKA_VENDOR_NVIDIA, "nvidia/b200", "sm_100", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    {"gb200", NULL, AKA_VENDOR_NVIDIA, "nvidia/gb200", "sm_100", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    {"B300", NULL, AKA_VENDOR_NVIDIA, "nvidia/b300", "sm_103", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    {"L40S", NULL, AKA_VENDOR_NVIDIA, "nvidia/l40s", "sm_89", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    {"RTX4090", NULL, AKA_VENDOR_NVIDIA, "nvidia/rtx4090", "sm_89", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    /* today's nvidia/<gpu> form, any case */
    {"nvidia/h200", NULL, AKA_VENDOR_NVIDIA, "nvidia/h200", "sm_90", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, true},
    {"NVIDIA/B200", NULL, AKA_VENDOR_NVIDIA, "nvidia/b200", "sm_100", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    {"nvidia/gh200", NULL, AKA_VENDOR_NVIDIA, "nvidia/gh200", "sm_90", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    {"nvidia/sm_90", NULL, AKA_VENDOR_NVIDIA, "nvidia/sm_90", "sm_90", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    /* sm_XX alone */
    {"sm_89", NULL, AKA_VENDOR_NVIDIA, "nvidia/sm_89", "sm_89", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    {"SM_100a", NULL, AKA_VENDOR_NVIDIA, "nvidia/sm_100a", "sm_100a", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    /* AMD */
    {"MI300X", NULL, AKA_VENDOR_AMD, "amd/mi300x", "gfx942", AMD_NODES(129), AMD_FW,
     AKA_TIMING_HIP_EVENTS, true, false},
    {"MI308X", NULL, AKA_VENDOR_AMD, "amd/mi308x", "gfx942", AMD_NODES(129), AMD_FW,
     AKA_TIMING_HIP_EVENTS, true, false},
    {"mi325x", NULL, AKA_VENDOR_AMD, "amd/mi325x", "gfx942", AMD_NODES(129), AMD_FW,
     AKA_TIMING_HIP_EVENTS, true, false},
    {"MI355X", NULL, AKA_VENDOR_AMD, "amd/mi355x", "gfx950", AMD_NODES(129), AMD_FW,
     AKA_TIMING_HIP_EVENTS, true, false},
    {"gfx942", NULL, AKA_VENDOR_AMD, "amd/gfx942", "gfx942", AMD_NODES(129), AMD_FW,
     AKA_TIMING_HIP_EVENTS, true, false},
    {"GFX950", NULL, AKA_VENDOR_AMD, "amd/gfx950", "gfx950", AMD_NODES(129), AMD_FW,
     AKA_TIMING_HIP_EVENTS, true, false},
    {"amd/mi308x", NULL, AKA_VENDOR_AMD, "amd/mi308x", "gfx942", AMD_NODES(129), AMD_FW,
     AKA_TIMING_HIP_EVENTS, true, false},
    /* T-Head PPU: exact names; never touches clocks */
    {"zwm890p", NULL, AKA_VENDOR_PPU, "ppu/zwm890p", "zwm890p", NV_NODES(1), PPU_FW,
     AKA_TIMING_CUDA_EVENTS, false, false},
    {"ZW-M890P", NULL, AKA_VENDOR_PPU, "ppu/zwm890p", "zwm890p", NV_NODES(1), PPU_FW,
     AKA_TIMING_CUDA_EVENTS, false, false},
    /* cpu */
    {"cpu", NULL, AKA_VENDOR_CPU, "cpu", "", "", "C", AKA_TIMING_HOST_CLOCK, false, true},
    {"CPU", NULL, AKA_VENDOR_CPU, "cpu", "", "", "C", AKA_TIMING_HOST_CLOCK, false, true},
    /* --arch overrides the table, and is checked against the vendor */
    {"H20", "sm_90a", AKA_VENDOR_NVIDIA, "nvidia/h20", "sm_90a", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    {"L20N", "SM_90", AKA_VENDOR_NVIDIA, "nvidia/l20n", "sm_90", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    {"MI308X", "gfx950", AKA_VENDOR_AMD, "amd/mi308x", "gfx950", AMD_NODES(129), AMD_FW,
     AKA_TIMING_HIP_EVENTS, true, false},
    {"sm_90", "sm_90", AKA_VENDOR_NVIDIA, "nvidia/sm_90", "sm_90", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, false},
    {"H200", "", AKA_VENDOR_NVIDIA, "nvidia/h200", "sm_90", NV_NODES(1), NV_FW,
     AKA_TIMING_CUDA_EVENTS, true, true},
};

/* Refused with code 2; the message names this flag and value. */
static const struct {
    const char *in, *arch_flag, *flag, *value;
} bad[] = {
    {"", NULL, "--platform", "''"},
    {NULL, NULL, "--platform", "''"},
    {"nvidia/", NULL, "--platform", "'nvidia/'"},
    {"gfx", NULL, "--platform", "'gfx'"},
    {"foo", NULL, "--platform", "'foo'"},
    {"b20", NULL, "--platform", "'b20'"},                     /* a prefix of b200 */
    {"xgb200", NULL, "--platform", "'xgb200'"},               /* contains gb200 */
    {"gb2000", NULL, "--platform", "'gb2000'"},               /* contains gb200 */
    {"ppu", NULL, "--platform", "'ppu'"},                     /* PPU: exact names only */
    {"zwm890", NULL, "--platform", "'zwm890'"},               /* PPU: exact names only */
    {"nvidia/mi308x", NULL, "--platform", "'nvidia/mi308x'"}, /* vendor mismatch */
    {"amd/h200", NULL, "--platform", "'amd/h200'"},
    {"nvidia/sm_9x", NULL, "--platform", "'nvidia/sm_9x'"},
    {"sm_9", NULL, "--platform", "'sm_9'"},
    {"gfx94z", NULL, "--platform", "'gfx94z'"},
    {"H200", "gfx942", "--arch", "'gfx942'"},  /* an AMD arch on NVIDIA */
    {"MI308X", "sm_90", "--arch", "'sm_90'"},  /* an NVIDIA arch on AMD */
    {"zwm890p", "sm_89", "--arch", "'sm_89'"}, /* the borrowed sm_89 is not the PPU's arch */
    {"cpu", "sm_90", "--arch", "'sm_90'"},     /* the CPU has none */
    {"sm_90", "sm_100", "--arch", "'sm_100'"}, /* contradicts the name */
    {"H200", "hopper", "--arch", "'hopper'"},
};

/* The node list as "name name? ...", '?' marking a node bound only when present. */
static void nodes_text(const struct aka_dev_nodes *n, char *out, size_t cap)
{
    out[0] = '\0';
    for (size_t i = 0; i < n->n; i++) {
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s%s%s", i ? " " : "", n->v[i].name,
                 n->v[i].required ? "" : "?");
    }
}

static void t_names(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        const struct name_case *c = &good[i];
        struct aka_platform p;
        struct aka_dev_nodes nodes;
        struct aka_err err = AKA_ERR_INIT;
        char text[512];
        int gpu1 = 1;
        if (aka_platform_parse(c->in, c->arch_flag, &p, &err) != 0)
            fail_msg("%s: %s", c->in, err.msg);
        if (p.vendor != c->vendor || strcmp(p.name, c->name) || strcmp(p.arch, c->arch))
            fail_msg("%s --arch %s: vendor %d name %s arch %s", c->in, c->arch_flag, p.vendor,
                     p.name, p.arch);
        assert_int_equal(p.arch_from, c->vendor == AKA_VENDOR_CPU     ? AKA_ARCH_NONE
                                      : c->arch_flag && *c->arch_flag ? AKA_ARCH_FROM_FLAG
                                                                      : AKA_ARCH_FROM_TABLE);
        assert_int_equal(
            aka_platform_dev_nodes(p.vendor, &gpu1, p.vendor != AKA_VENDOR_CPU, &nodes, &err), 0);
        nodes_text(&nodes, text, sizeof(text));
        if (strcmp(text, c->nodes_gpu1) != 0)
            fail_msg("%s: nodes for GPU 1 '%s', expected '%s'", c->in, text, c->nodes_gpu1);
        assert_string_equal(aka_platform_frameworks_text(&p), c->frameworks);
        assert_string_equal(aka_platform_frameworks(&p)[0], c->vendor ? "Triton" : "C");
        assert_int_equal(aka_platform_timing(&p), c->timing);
        assert_int_equal(aka_platform_may_touch_clocks(&p), c->clocks);
        if (p.validated_on_hardware != c->validated)
            fail_msg("%s: validated_on_hardware %d", c->in, p.validated_on_hardware);
    }
}

static void t_bad_names(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct aka_platform p;
        struct aka_err err = AKA_ERR_INIT;
        if (aka_platform_parse(bad[i].in, bad[i].arch_flag, &p, &err) != -1)
            fail_msg("%s --arch %s: accepted as %s", bad[i].in, bad[i].arch_flag, p.name);
        assert_int_equal(err.code, AKA_EXIT_USAGE);
        if (strncmp(err.msg, bad[i].flag, strlen(bad[i].flag)) || !strstr(err.msg, bad[i].value))
            fail_msg("%s: message '%s' does not name %s %s", bad[i].in, err.msg, bad[i].flag,
                     bad[i].value);
        if (strcmp(bad[i].flag, "--platform") == 0 && !strstr(err.msg, "nvidia/h200"))
            fail_msg("%s: message does not list the accepted forms: %s", bad[i].in, err.msg);
    }
}

static void t_framework_sets(void **state)
{
    struct aka_platform nv, amd, ppu;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    assert_int_equal(aka_platform_parse("H20", NULL, &nv, &err), 0);
    assert_int_equal(aka_platform_parse("MI308X", NULL, &amd, &err), 0);
    assert_int_equal(aka_platform_parse("zwm890p", NULL, &ppu, &err), 0);
    assert_true(aka_platform_has_framework(&nv, "cutedsl"));
    assert_false(aka_platform_has_framework(&nv, "FlyDSL"));
    assert_true(aka_platform_has_framework(&amd, "FlyDSL"));
    assert_false(aka_platform_has_framework(&amd, "Cuda"));
    assert_false(aka_platform_has_framework(&ppu, "CuteDSL"));
    assert_true(aka_platform_has_framework(&ppu, "Cuda"));
}

static int fake_probe(void *ctx, char *arch, size_t n, struct aka_err *err)
{
    (void)err;
    snprintf(arch, n, "%s", (const char *)ctx);
    return 0;
}

/* The hook a transport will call when neither --arch nor the table knows the arch. */
static void t_probe_hook(void **state)
{
    struct aka_platform p;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    assert_int_equal(aka_platform_parse("gfx942", NULL, &p, &err), 0);
    p.arch[0] = '\0';
    p.arch_from = AKA_ARCH_PROBE;
    assert_int_equal(aka_platform_probe_arch(&p, NULL, NULL, &err), 0);
    assert_string_equal(p.arch, AKA_ARCH_UNKNOWN);
    p.arch[0] = '\0';
    assert_int_equal(aka_platform_probe_arch(&p, fake_probe, "gfx950", &err), 0);
    assert_string_equal(p.arch, "gfx950");
    /* A machine that reports another vendor's arch is not the platform it was named as. */
    assert_int_equal(aka_platform_probe_arch(&p, fake_probe, "sm_90", &err), -1);
    assert_int_equal(err.code, AKA_EXIT_ENV);
    /* A table arch is never probed over. */
    assert_int_equal(aka_platform_parse("H200", NULL, &p, &err), 0);
    assert_int_equal(aka_platform_probe_arch(&p, fake_probe, "sm_80", &err), 0);
    assert_string_equal(p.arch, "sm_90");
}

/* ---- the sandbox's device exposure, against fake device nodes -------------------------------- */

static void touch(const char *rel)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&path, aka_scratch_dir(), rel);
    assert_int_equal(aka_write_file_plain(path.buf, "", 0, 0644, &err), 0);
    strbuf_release(&path);
}

/* A /dev with three NVIDIA GPUs and three AMD render nodes. */
static void fake_dev(const char *root)
{
    static const char *const nodes[] = {
        "nvidiactl", "nvidia-uvm",     "nvidia0",        "nvidia1",        "nvidia2",
        "kfd",       "dri/renderD128", "dri/renderD129", "dri/renderD130", NULL};
    struct strbuf path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    char rel[128];
    aka_path_join(&path, aka_scratch_dir(), root);
    strbuf_addstr(&path, "/dri");
    assert_int_equal(aka_mkdir_p(path.buf, 0755, &err), 0);
    for (size_t i = 0; nodes[i]; i++) {
        snprintf(rel, sizeof(rel), "%s/%s", root, nodes[i]);
        touch(rel);
    }
    strbuf_release(&path);
}

/* The device binds of the job's argv, as "OPTION HOST INSIDE" lines relative to root. */
static int device_binds(enum aka_vendor v, const char *root, char *out, size_t cap,
                        struct aka_err *err)
{
    struct aka_sandbox_job job;
    struct strvec argv = STRVEC_INIT;
    struct strbuf dev = STRBUF_INIT;
    aka_sandbox_job_init(&job, AKA_SBX_RUN);
    job.detect_python = false;
    job.gpu_count = 1;
    job.n_gpu_ids = 1;
    job.gpu_ids[0] = 1;
    job.gpu_vendor = v;
    aka_path_join(&dev, aka_scratch_dir(), root);
    job.dev_root = dev.buf;
    strvec_push(&job.argv, "true");
    int rc = aka_sandbox_bwrap_argv(&job, "bwrap", "/J", "/C", &argv, NULL, err);
    out[0] = '\0';
    for (size_t i = 0; rc == 0 && i < argv.n; i++) {
        /* Nothing of another GPU anywhere in the argv. */
        assert_null(strstr(argv.v[i], "nvidia0"));
        assert_null(strstr(argv.v[i], "nvidia2"));
        assert_null(strstr(argv.v[i], "renderD128"));
        assert_null(strstr(argv.v[i], "renderD130"));
        if (strncmp(argv.v[i], "--dev-bind", 10) == 0 && i + 2 < argv.n) {
            size_t len = strlen(out);
            const char *host = argv.v[i + 1];
            if (strncmp(host, dev.buf, dev.len) == 0)
                host += dev.len;
            snprintf(out + len, cap - len, "%s %s %s\n", argv.v[i], host, argv.v[i + 2]);
        }
    }
    strvec_clear(&argv);
    strbuf_release(&dev);
    aka_sandbox_job_release(&job);
    return rc;
}

#define NV_BINDS                                                                                   \
    "--dev-bind /nvidiactl /dev/nvidiactl\n"                                                       \
    "--dev-bind-try /nvidia-uvm /dev/nvidia-uvm\n"                                                 \
    "--dev-bind-try /nvidia-uvm-tools /dev/nvidia-uvm-tools\n"                                     \
    "--dev-bind /nvidia1 /dev/nvidia1\n"

static void t_bwrap_device_nodes(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    char binds[1024];
    (void)state;
    fake_dev("dev");
    assert_int_equal(device_binds(AKA_VENDOR_NVIDIA, "dev", binds, sizeof(binds), &err), 0);
    assert_string_equal(binds, NV_BINDS);
    assert_int_equal(device_binds(AKA_VENDOR_AMD, "dev", binds, sizeof(binds), &err), 0);
    assert_string_equal(binds, "--dev-bind /kfd /dev/kfd\n"
                               "--dev-bind /dri/renderD129 /dev/dri/renderD129\n");
    assert_int_equal(device_binds(AKA_VENDOR_PPU, "dev", binds, sizeof(binds), &err), 0);
    assert_string_equal(binds, NV_BINDS);
}

/* A machine without the assigned GPU: code 75 naming the missing node, no argv. */
static void t_missing_device(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    char binds[1024], want[512];
    (void)state;
    assert_int_equal(device_binds(AKA_VENDOR_NVIDIA, "nodev", binds, sizeof(binds), &err), -1);
    assert_int_equal(err.code, AKA_EXIT_ENV);
    snprintf(want, sizeof(want), "no NVIDIA GPU: %s/nodev/nvidia1 not found", aka_scratch_dir());
    assert_string_equal(err.msg, want);
    aka_err_clear(&err);
    assert_int_equal(device_binds(AKA_VENDOR_AMD, "nodev", binds, sizeof(binds), &err), -1);
    assert_int_equal(err.code, AKA_EXIT_ENV);
    assert_non_null(strstr(err.msg, "no AMD GPU: "));
    assert_non_null(strstr(err.msg, "/nodev/dri/renderD129 not found"));
    /* The GPU is there but the driver's control node is not. */
    fake_dev("nokfd");
    char path[512];
    snprintf(path, sizeof(path), "%s/nokfd/kfd", aka_scratch_dir());
    assert_int_equal(unlink(path), 0);
    aka_err_clear(&err);
    assert_int_equal(device_binds(AKA_VENDOR_AMD, "nokfd", binds, sizeof(binds), &err), -1);
    assert_non_null(strstr(err.msg, "no AMD driver: "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_names),
        cmocka_unit_test(t_bad_names),
        cmocka_unit_test(t_framework_sets),
        cmocka_unit_test(t_probe_hook),
        cmocka_unit_test(t_bwrap_device_nodes),
        cmocka_unit_test(t_missing_device),
    };
    return cmocka_run_group_tests(tests, aka_scratch_setup, aka_scratch_teardown);
}
