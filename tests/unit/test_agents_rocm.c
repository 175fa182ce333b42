/*
 * test_agents_rocm.c — the process guard's AMD/ROCm rules as pure functions:
 * HIP builds, ROCm profilers, rocm-smi/amd-smi state changes and HIP from
 * Python are refused; device queries and harmless look-alikes are not. The
 * live checks (a process mapping libamdhip64/libhsa-runtime64, an ELF with a
 * .hip_fatbin section) are in tests/integration/agents_guard.sh.
 */
#include "aka_test.h"

#include "agents/adapters.h"

#include <string.h>

/* Split on single spaces, with '|' standing for a space inside one word. */
static const char *check_words(const struct aka_guard_config *c, const char *line)
{
    static char buf[1024];
    const char *argv[64];
    size_t n = 0;
    snprintf(buf, sizeof(buf), "%s", line);
    for (char *tok = strtok(buf, " "); tok && n < 63; tok = strtok(NULL, " ")) {
        for (char *p = tok; *p; p++)
            if (*p == '|')
                *p = ' ';
        argv[n++] = tok;
    }
    argv[n] = NULL;
    return aka_guard_check_argv(argv, n, c);
}

static void test_rocm_argv_rules(void **state)
{
    struct aka_guard_config c;
    const char *env[] = {"ATREX_PROTECTED_GATEWAY_STATE_DIR=/srv/gw", NULL};
    (void)state;
    aka_guard_config_init(&c, env);
    static const char *const refused[][2] = {
        {"hipcc -O3 --offload-arch=gfx942 kernel.hip", "build tool"},
        {"/opt/rocm/bin/hipcc kernel.cpp -o k", "build tool"},
        {"amdclang++ -x hip --offload-arch=gfx90a k.cpp", "build tool"},
        {"clang++ -xhip k.cpp", "build tool"},
        {"rocprof --stats ./a.out", "profiler"},
        {"rocprofv2 --kernel-trace ./a.out", "profiler"},
        {"/opt/rocm/bin/rocprofv3 --kernel-trace -- ./a.out", "profiler"},
        {"omniperf profile -n x -- ./a.out", "profiler"},
        {"rocprof-compute profile -n x -- ./a.out", "profiler"},
        {"rocprof-sys-run -- ./a.out", "profiler"},
        {"omnitrace-run -- ./a.out", "profiler"},
        {"rocm-smi --setperfdeterminism 1900", "rocm-smi"},
        {"rocm-smi -d 0 --setsclk 7", "rocm-smi"},
        {"rocm-smi --resetclocks", "rocm-smi"},
        {"rocm-smi --setcomputepartition=CPX", "rocm-smi"},
        {"rocm-smi --gpureset -d 1", "rocm-smi"},
        {"amd-smi set -g 0 --perf-determinism 1900", "amd-smi"},
        {"amd-smi reset -g 0 --clocks", "amd-smi"},
        {"bash -c cd|/tmp|&&|rocprofv3|--stats|./bench", "profiler"},
        {"python3 -c from|hip|import|hip;|hip.hipInit(0)", "HIP used"},
        {"python3 -c import|hiprtc", "HIP used"},
        {"python3 -c from|numba|import|hip", "HIP used"},
        /* The ROCm build of torch keeps torch.cuda (HIP underneath): same rule. */
        {"python3 -c import|torch;|torch.cuda.synchronize()", "CUDA used"},
        {"python3 -c import|torch;x=torch.ones(2,device='cuda')", "CUDA used"},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        const char *why = check_words(&c, refused[i][0]);
        if (!why || !strstr(why, refused[i][1]))
            fail_msg("%s: got %s", refused[i][0], why ? why : "(allowed)");
    }
    static const char *const allowed[] = {
        "rocm-smi",
        "rocm-smi --showuse --showmemuse",
        "rocm-smi --showproductname",
        "amd-smi list",
        "amd-smi static -g 0",
        "amd-smi metric",
        "rocminfo",
        "hipcc --version",
        "rocprofv3 --help",
        "clang++ -O2 host.cpp",
        "python3 -c import|torch;print(torch.version.hip)",
        "python3 -c print('import|hip')",
        "python3 -c import|hipster",
        "grep -r rocprofv3 .",
    };
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
        const char *why = check_words(&c, allowed[i]);
        if (why)
            fail_msg("%s: refused (%s)", allowed[i], why);
    }
    aka_guard_config_release(&c);
}

static void test_gpu_query_tools(void **state)
{
    (void)state;
    const char *rocminfo[] = {"/opt/rocm/bin/rocminfo", NULL};
    const char *enumerator[] = {"rocm_agent_enumerator", "-t", "GPU", NULL};
    const char *program[] = {"./bench", NULL};
    const char *python[] = {"python3", "rocminfo", NULL};
    assert_true(aka_guard_gpu_query_tool(rocminfo, 1));
    assert_true(aka_guard_gpu_query_tool(enumerator, 3));
    assert_false(aka_guard_gpu_query_tool(program, 1));
    assert_false(aka_guard_gpu_query_tool(python, 2));
    assert_false(aka_guard_gpu_query_tool(NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rocm_argv_rules),
        cmocka_unit_test(test_gpu_query_tools),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
