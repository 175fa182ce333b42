/*
 * repo_root.c — finding the asset tree (runtime/, examples/) aka runs with.
 *
 * The order is documented in core.h. The install prefix and the source tree
 * are compiled in by CMake; tests override with --repo-root or ATREX_AKA_HOME.
 */
#include "base/fs.h"
#include "core/core.h"

#include <stdlib.h>

#ifndef AKA_SHARE_DIR
#define AKA_SHARE_DIR "/usr/local/share/aka"
#endif
#ifndef AKA_SOURCE_DIR
#define AKA_SOURCE_DIR "."
#endif

static int holds_runtime(const char *dir)
{
    struct strbuf p = STRBUF_INIT;
    aka_path_join(&p, dir, "runtime");
    int ok = aka_is_dir(p.buf);
    strbuf_release(&p);
    return ok;
}

static int use_explicit(const char *dir, const char *origin, struct strbuf *out,
                        struct aka_err *err)
{
    if (!aka_is_dir(dir))
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: %s is not a directory", origin, dir);
    if (!holds_runtime(dir))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: %s has no runtime/ directory; it is not an aka asset tree", origin,
                           dir);
    return aka_realpath(dir, out, err);
}

int aka_resolve_repo_root(const char *flag_value, struct strbuf *out, struct aka_err *err)
{
    const char *home = getenv("ATREX_AKA_HOME");

    if (flag_value)
        return use_explicit(flag_value, "--repo-root", out, err);
    if (home && *home)
        return use_explicit(home, "ATREX_AKA_HOME", out, err);
    if (holds_runtime(AKA_SHARE_DIR))
        return aka_realpath(AKA_SHARE_DIR, out, err);
    if (holds_runtime(AKA_SOURCE_DIR))
        return aka_realpath(AKA_SOURCE_DIR, out, err);
    return aka_err_set(err, AKA_EXIT_ENV,
                       "no aka asset tree found: pass --repo-root DIR or set ATREX_AKA_HOME "
                       "(looked in %s and %s)",
                       AKA_SHARE_DIR, AKA_SOURCE_DIR);
}
