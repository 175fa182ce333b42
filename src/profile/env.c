/*
 * env.c — whether this machine can profile at all: the vendor's profiler on
 * PATH and the GPU's device nodes. Missing either is the environment's
 * problem, not the caller's (exit 75, like every other missing-GPU path).
 */
#include "base/fs.h"
#include "platform/platform.h"
#include "profile/profile.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool on_path(const char *tool, struct strbuf *found)
{
    const char *path = getenv("PATH");
    char *copy = aka_xstrdup(path ? path : "");
    bool ok = false;
    for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir && !ok;
         dir = strtok_r(NULL, ":", &save)) {
        strbuf_reset(found);
        aka_path_join(found, dir, tool);
        ok = aka_is_file(found->buf) && access(found->buf, X_OK) == 0;
    }
    free(copy);
    return ok;
}

int aka_profile_tool_dir(const char *tool, struct strbuf *dir, struct aka_err *err)
{
    if (aka_realpath(tool, dir, err) < 0)
        return -1;
    char *slash = strrchr(dir->buf, '/');
    strbuf_setlen(dir, slash && slash != dir->buf ? (size_t)(slash - dir->buf) : 1);
    /* A CUDA toolkit's bin/ncu is a launcher script that looks for the real tool in
     * ../nsight-compute-<version>/ (measured on the H200's CUDA 13.0): binding bin/ alone
     * leaves the job a launcher that says "Nsight Compute is not installed". A profiler
     * in a bin/ directory is therefore bound with the directory above it. */
    slash = strrchr(dir->buf, '/');
    if (slash && slash != dir->buf && strcmp(slash, "/bin") == 0)
        strbuf_setlen(dir, (size_t)(slash - dir->buf));
    return 0;
}

int aka_profile_environment(const char *platform, const char *dev_root, struct strbuf *tool,
                            struct aka_err *err)
{
    struct aka_platform p;
    struct aka_dev_nodes nodes;
    const int gpu0 = 0;
    if (aka_platform_parse(platform, NULL, &p, err) < 0)
        return -1;
    if (p.vendor == AKA_VENDOR_CPU)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--platform: cpu has no kernel profiler; profile on a GPU platform");
    const char *name = p.vendor == AKA_VENDOR_AMD ? "rocprofv3" : "ncu";
    if (!on_path(name, tool))
        return aka_err_set(err, AKA_EXIT_ENV,
                           "no GPU profiler on this machine: %s not found on PATH (profile on "
                           "the GPU host, or re-summarize a saved export with --from-report FILE)",
                           name);
    if (aka_platform_dev_nodes(p.vendor, &gpu0, 1, &nodes, err) < 0 ||
        aka_platform_check_nodes(p.vendor, dev_root, &nodes, err) < 0)
        return -1;
    return 0;
}
