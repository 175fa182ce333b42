/*
 * guard_rules.c — what an agent's process may not be (reference §7.2), as a
 * pure function of its argv: package installs, host GPU execution (build
 * tools, profilers, kernels, GPU state changes) and changes to the shared
 * gateway. guard.c applies it to every process of a session.
 *
 * A shell's `-c` script is split into simple commands (POSIX quoting, split at
 * ; & | and parentheses) so that `bash -c 'cd x && pip install y'` is caught
 * at the shell, before its child appears. Each simple command is unwrapped
 * (leading NAME=value, env/command/sudo/nohup/exec/setsid/time/nice/timeout)
 * and only its command word decides: prose that merely mentions `pip install`
 * in a quoted argument is never a violation. An interpreter running a script
 * (`bash ./pip install x`, what a shebang turns into) is checked as the
 * script itself.
 *
 * GPU rules cover both vendors: CUDA (nvcc, ncu, nsys, nvidia-smi state) and
 * ROCm (hipcc and clang offload builds, rocprof*, omniperf/rocprof-compute,
 * omnitrace/rocprof-sys, rocm-smi and amd-smi state changes).
 */
#include "agents/adapters.h"
#include "base/fs.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define R_GATEWAY    "shared localhost gateway lifecycle/state mutation"
#define R_INSTALL    "third-party package installation/build command"
#define R_BUILD      "CUDA/JIT build tool executed directly on the host"
#define R_PROFILER   "GPU profiler executed directly on the host"
#define R_KERNEL     "kernel/evaluator executed directly on the host"
#define R_WRAPPER    "GPU profiler wrapper executed directly on the host"
#define R_GPU_STATE  "GPU state changed through nvidia-smi on the host"
#define R_ROCM_STATE "GPU state changed through rocm-smi/amd-smi on the host"
#define R_PIP_TREE   "compiler/build tool running in a package-manager temporary tree"

#define MAX_DEPTH 3

struct words {
    const char *const *v;
    size_t n;
};

static bool name_in(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(name, *list) == 0)
            return true;
    return false;
}

/* Lower-case basename of a command word, into buf. */
static const char *cmd_name(const char *word, char *buf, size_t size)
{
    const char *slash = strrchr(word, '/');
    snprintf(buf, size, "%s", slash ? slash + 1 : word);
    for (char *p = buf; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return buf;
}

static bool is_python(const char *name)
{
    if (strncmp(name, "python", 6) != 0)
        return false;
    for (const char *p = name + 6; *p; p++)
        if (!isdigit((unsigned char)*p) && *p != '.')
            return false;
    return true;
}

static bool is_shell(const char *name)
{
    static const char *const shells[] = {"bash", "sh", "dash", "zsh", "ksh", NULL};
    return name_in(name, shells);
}

/* The first word after index `from` that is not an option. */
static const char *first_operand(struct words w, size_t from)
{
    for (size_t i = from; i < w.n; i++)
        if (w.v[i][0] != '-')
            return w.v[i];
    return NULL;
}

static bool any_word(struct words w, size_t from, const char *const *list)
{
    for (size_t i = from; i < w.n; i++)
        if (name_in(w.v[i], list))
            return true;
    return false;
}

/* ---- configuration -------------------------------------------------------- */

static bool skip_config_name(const char *name)
{
    static const char *const suffixes[] = {".db",      ".db-wal", ".db-shm", ".sqlite",
                                           ".sqlite3", "-wal",    "-shm",    ".log",
                                           ".lock",    ".pid",    NULL};
    size_t n = strlen(name);
    for (const char *const *s = suffixes; *s; s++)
        if (n >= strlen(*s) && strcmp(name + n - strlen(*s), *s) == 0)
            return true;
    return false;
}

/* ATREX_PROTECTED_GATEWAY_CONFIG: colon-separated files. */
static void add_config_list(struct aka_guard_config *c, const char *files)
{
    for (const char *p = files; *p;) {
        size_t n = strcspn(p, ":");
        if (n) {
            char *one = aka_xstrndup(p, n);
            strvec_push(&c->config_files, one);
            free(one);
        }
        p += n + (p[n] == ':');
    }
}

/* Default: the regular files of the state directory that are configuration,
 * not the job database or logs the running gateway rewrites all the time. */
static void add_config_dir(struct aka_guard_config *c)
{
    struct strvec names = STRVEC_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf path = STRBUF_INIT;
    if (aka_list_dir(c->state_dir, &names, &err) < 0)
        return;
    for (size_t i = 0; i < names.n; i++) {
        strbuf_reset(&path);
        aka_path_join(&path, c->state_dir, names.v[i]);
        if (!skip_config_name(names.v[i]) && aka_is_file(path.buf))
            strvec_push(&c->config_files, path.buf);
    }
    strbuf_release(&path);
    strvec_clear(&names);
}

void aka_guard_config_init(struct aka_guard_config *c, const char *const *env)
{
    memset(c, 0, sizeof(*c));
    const char *screen = aka_agent_env_lookup(env, "ATREX_PROTECTED_GATEWAY_SCREEN");
    snprintf(c->screen, sizeof(c->screen), "%s",
             screen && *screen ? screen : "atrex-local-gateway");
    const char *state = aka_agent_env_lookup(env, "ATREX_PROTECTED_GATEWAY_STATE_DIR");
    const char *cache = aka_agent_env_lookup(env, "XDG_CACHE_HOME");
    const char *home = aka_agent_env_lookup(env, "HOME");
    if (state && *state)
        snprintf(c->state_dir, sizeof(c->state_dir), "%s", state);
    else if (cache && *cache)
        snprintf(c->state_dir, sizeof(c->state_dir), "%s/atrex-local-gateway", cache);
    else
        snprintf(c->state_dir, sizeof(c->state_dir), "%s/.cache/atrex-local-gateway",
                 home ? home : "");
    const char *files = aka_agent_env_lookup(env, "ATREX_PROTECTED_GATEWAY_CONFIG");
    if (files && *files)
        add_config_list(c, files);
    else
        add_config_dir(c);
}

void aka_guard_config_release(struct aka_guard_config *c)
{
    strvec_clear(&c->config_files);
}

/* ---- splitting a shell script into simple commands -------------------------- */

static bool is_sep_char(char ch)
{
    return ch == ';' || ch == '&' || ch == '|' || ch == '\n' || ch == '(' || ch == ')';
}

/* One quoted or unquoted piece of a word; returns the next position or NULL. */
static const char *read_quoted(const char *p, struct strbuf *word)
{
    char q = *p++;
    while (*p && *p != q) {
        if (q == '"' && *p == '\\' && p[1] && strchr("\\\"$`\n", p[1]))
            p++;
        strbuf_addch(word, *p++);
    }
    return *p ? p + 1 : NULL; /* an unterminated quote fails the whole script */
}

/* Skip a redirection operator and its target word (they are not command words). */
static const char *skip_redirection(const char *p)
{
    while (*p == '<' || *p == '>' || *p == '&')
        p++;
    while (*p == ' ' || *p == '\t')
        p++;
    while (*p && !isspace((unsigned char)*p) && !is_sep_char(*p))
        p++;
    return p;
}

static const char *read_word(const char *p, struct strbuf *word)
{
    while (*p && !isspace((unsigned char)*p) && !is_sep_char(*p)) {
        if (*p == '\'' || *p == '"') {
            if (!(p = read_quoted(p, word)))
                return NULL;
        } else if (*p == '\\' && p[1]) {
            strbuf_addch(word, p[1]);
            p += 2;
        } else {
            strbuf_addch(word, *p++);
        }
    }
    return p;
}

static bool all_digits(const char *s)
{
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

/* Words of `script`, with each run of separators as one "" token. */
static int tokenize(const char *script, struct strvec *out)
{
    struct strbuf word = STRBUF_INIT;
    const char *p = script;
    while (p && *p) {
        if (*p == ' ' || *p == '\t') {
            p++;
        } else if (is_sep_char(*p)) {
            while (is_sep_char(*p) || *p == ' ' || *p == '\t')
                p++;
            strvec_push(out, "");
        } else if (*p == '#') {
            p += strcspn(p, "\n");
        } else if (*p == '<' || *p == '>') {
            p = skip_redirection(p);
        } else {
            strbuf_reset(&word);
            p = read_word(p, &word);
            if (p && (*p == '<' || *p == '>') && all_digits(word.buf))
                continue; /* "2>": a descriptor number, not a word */
            if (p)
                strvec_push(out, word.buf);
        }
    }
    strbuf_release(&word);
    return p ? 0 : -1;
}

/* ---- unwrapping a simple command ------------------------------------------ */

static bool is_assignment(const char *w)
{
    if (!isalpha((unsigned char)*w) && *w != '_')
        return false;
    while (isalnum((unsigned char)*w) || *w == '_')
        w++;
    return *w == '=';
}

/* Drop prefixes that run another command: returns the index of the real command. */
static size_t unwrap(struct words w)
{
    static const char *const simple[] = {"env",  "command", "sudo", "nohup",  "exec",
                                         "time", "setsid",  "nice", "stdbuf", NULL};
    char name[64];
    size_t i = 0;
    for (int round = 0; round < 8 && i < w.n; round++) {
        while (i < w.n && is_assignment(w.v[i]))
            i++;
        if (i >= w.n)
            break;
        cmd_name(w.v[i], name, sizeof(name));
        if (name_in(name, simple)) {
            i++;
            while (i < w.n && (w.v[i][0] == '-' || strchr(w.v[i], '=') ||
                               (strcmp(name, "nice") == 0 && all_digits(w.v[i]))))
                i++;
        } else if (strcmp(name, "timeout") == 0) {
            i++;
            while (i < w.n && w.v[i][0] == '-') /* -s SIG and -k DUR take a value */
                i += (!strcmp(w.v[i], "-s") || !strcmp(w.v[i], "-k")) && i + 1 < w.n ? 2 : 1;
            i += i < w.n; /* the duration */
        } else {
            break;
        }
    }
    return i;
}

/* ---- the rules ------------------------------------------------------------ */

static bool under_state(const char *arg, const struct aka_guard_config *c)
{
    size_t n = strlen(c->state_dir);
    if (!n)
        return false;
    while (n > 1 && c->state_dir[n - 1] == '/')
        n--;
    if (strncasecmp(arg, c->state_dir, n) != 0)
        return false;
    return arg[n] == '\0' || arg[n] == '/' || strcasecmp(arg + n, ".log") == 0;
}

static bool any_under_state(struct words w, size_t from, const struct aka_guard_config *c)
{
    for (size_t i = from; i < w.n; i++) {
        const char *eq = strchr(w.v[i], '='); /* dd of=PATH, --file=PATH */
        if (under_state(w.v[i], c) || (eq && under_state(eq + 1, c)))
            return true;
    }
    return false;
}

static bool has_in_place_flag(struct words w)
{
    for (size_t i = 1; i < w.n; i++)
        if (strncmp(w.v[i], "-i", 2) == 0 || strncmp(w.v[i], "--in-place", 10) == 0)
            return true;
    return false;
}

static bool screen_arg(const char *a, const struct aka_guard_config *c)
{
    if (!a)
        return false;
    size_t n = strlen(a), s = strlen(c->screen);
    return strcasecmp(a, c->screen) == 0 ||
           (n > s && a[n - s - 1] == '.' && strcasecmp(a + n - s, c->screen) == 0);
}

static bool python_code_mutates_state(struct words w, const struct aka_guard_config *c)
{
    static const char *const verbs[] = {"rmtree",  "unlink",  "remove", "rename",
                                        "replace", "sqlite3", "write",  NULL};
    for (size_t i = 1; i + 1 < w.n; i++) {
        if (strcmp(w.v[i], "-c") != 0 || !strcasestr(w.v[i + 1], c->state_dir))
            continue;
        for (const char *const *v = verbs; *v; v++)
            if (strstr(w.v[i + 1], *v))
                return true;
    }
    return false;
}

static const char *gateway_rule(struct words w, const char *name, const struct aka_guard_config *c)
{
    static const char *const any_arg[] = {"rm",    "rmdir", "unlink", "shred", "truncate", "mv",
                                          "touch", "chmod", "chown",  "tee",   "dd",       NULL};
    static const char *const last_arg[] = {"cp", "ln", "install", "rsync", NULL};
    if (strcmp(name, "screen") == 0)
        for (size_t i = 1; i < w.n; i++)
            if (screen_arg(w.v[i], c))
                return R_GATEWAY;
    if (name_in(name, any_arg) && any_under_state(w, 1, c))
        return R_GATEWAY;
    if (name_in(name, last_arg) && w.n > 1 && under_state(w.v[w.n - 1], c))
        return R_GATEWAY;
    if ((strcmp(name, "sed") == 0 || strcmp(name, "perl") == 0) && has_in_place_flag(w) &&
        any_under_state(w, 1, c))
        return R_GATEWAY;
    if (strcmp(name, "sqlite3") == 0 && any_under_state(w, 1, c))
        return R_GATEWAY;
    if (is_python(name) && python_code_mutates_state(w, c))
        return R_GATEWAY;
    for (size_t i = 1; i < w.n && (!strcmp(name, "pkill") || !strcmp(name, "killall")); i++)
        if (strcasestr(w.v[i], "gateway") || screen_arg(w.v[i], c))
            return R_GATEWAY;
    for (size_t i = 1; i < w.n && (!strcmp(name, "curl") || !strcmp(name, "wget")); i++)
        if (strstr(w.v[i], "/v1/jobs/") && strstr(w.v[i], "/cancel"))
            return R_GATEWAY;
    return NULL;
}

/* `aka gateway ...` other than status/help starts, stops or changes the gateway. */
static const char *aka_rule(struct words w, const char *name)
{
    static const char *const harmless[] = {"status", "help", "--help", "-h", NULL};
    if (strcmp(name, "aka") != 0 || w.n < 2 || strcmp(w.v[1], "gateway") != 0)
        return NULL;
    return w.n > 2 && name_in(w.v[2], harmless) ? NULL : R_GATEWAY;
}

static bool is_pip(const char *name)
{
    if (strncmp(name, "pip", 3) != 0 || strcmp(name, "pipx") == 0)
        return false;
    for (const char *p = name + 3; *p; p++)
        if (!isdigit((unsigned char)*p) && *p != '.')
            return false;
    return true;
}

/* `python -m MODULE ARGS`: the module and the index of its first argument. */
static const char *python_module(struct words w, size_t *rest)
{
    for (size_t i = 1; i + 1 < w.n; i++) {
        if (strcmp(w.v[i], "-m") == 0) {
            *rest = i + 2;
            return w.v[i + 1];
        }
        if (strcmp(w.v[i], "-W") == 0 || strcmp(w.v[i], "-X") == 0)
            i++; /* options with a separate value */
        else if (w.v[i][0] != '-')
            return NULL; /* a script: options after it are its own */
    }
    return NULL;
}

static bool pip_installs(struct words w, size_t from)
{
    static const char *const verbs[] = {"install", "wheel", NULL};
    const char *sub = first_operand(w, from);
    return sub && name_in(sub, verbs);
}

static bool setup_py_builds(struct words w)
{
    static const char *const verbs[] = {"install", "build",     "build_ext", "bdist_wheel",
                                        "develop", "bdist_egg", NULL};
    for (size_t i = 0; i < w.n; i++) {
        char name[64];
        if (strcmp(cmd_name(w.v[i], name, sizeof(name)), "setup.py") == 0)
            return any_word(w, i + 1, verbs);
    }
    return false;
}

/* name SUBCOMMAND: the package managers whose first operand installs. */
static bool manager_installs(const char *name, struct words w)
{
    static const struct {
        const char *tool, *verbs[6];
    } table[] = {
        {"conda", {"install", "create", "update", "upgrade", NULL}},
        {"mamba", {"install", "create", "update", "upgrade", NULL}},
        {"micromamba", {"install", "create", "update", NULL}},
        {"apt", {"install", "reinstall", "upgrade", "full-upgrade", "build-dep", NULL}},
        {"apt-get", {"install", "reinstall", "upgrade", "dist-upgrade", "build-dep", NULL}},
        {"aptitude", {"install", "reinstall", "upgrade", NULL}},
        {"dnf", {"install", "reinstall", "upgrade", "update", "groupinstall", NULL}},
        {"yum", {"install", "reinstall", "upgrade", "update", "groupinstall", NULL}},
        {"zypper", {"install", "in", "update", "up", NULL}},
        {"apk", {"add", NULL}},
        {"npm", {"install", "i", "add", "ci", "update", NULL}},
        {"pnpm", {"install", "i", "add", "update", NULL}},
        {"yarn", {"add", "install", "global", NULL}},
        {"cargo", {"install", NULL}},
        {"go", {"install", "get", NULL}},
        {"gem", {"install", "update", NULL}},
        {"pipx", {"install", "run", "inject", NULL}},
        {"brew", {"install", "reinstall", "upgrade", NULL}},
        {"spack", {"install", NULL}},
    };
    const char *sub = first_operand(w, 1);
    for (size_t i = 0; sub && i < sizeof(table) / sizeof(table[0]); i++)
        if (strcmp(name, table[i].tool) == 0)
            return name_in(sub, table[i].verbs);
    return false;
}

static bool uv_installs(struct words w)
{
    static const char *const verbs[] = {"add", "sync", NULL};
    static const char *const pip_verbs[] = {"install", "sync", "compile", NULL};
    const char *sub = first_operand(w, 1);
    if (!sub)
        return false;
    for (size_t i = 1; strcmp(sub, "pip") == 0 && i < w.n; i++)
        if (strcmp(w.v[i], "pip") == 0) {
            const char *verb = first_operand(w, i + 1);
            return verb && name_in(verb, pip_verbs);
        }
    if (strcmp(sub, "tool") == 0)
        return any_word(w, 2, (const char *const[]){"install", NULL});
    return name_in(sub, verbs);
}

static const char *segment_rules(struct words w, const struct aka_guard_config *c, int depth);

/* `python ... -- CMD` and `aka ... -- CMD`: the command after `--` is checked too. */
static const char *after_dashes(struct words w, const char *name, const struct aka_guard_config *c,
                                int depth)
{
    if (!is_python(name) && strcmp(name, "aka") != 0)
        return NULL;
    for (size_t i = 1; i + 1 < w.n; i++)
        if (strcmp(w.v[i], "--") == 0) {
            const char *r = segment_rules((struct words){w.v + i + 1, w.n - i - 1}, c, depth + 1);
            return r && strcmp(r, R_INSTALL) == 0 ? r : NULL;
        }
    return NULL;
}

static const char *install_rule(struct words w, const char *name)
{
    static const char *const npx_like[] = {"npx", "easy_install", "pnpx", NULL};
    size_t rest = 0;
    if (is_pip(name) && pip_installs(w, 1))
        return R_INSTALL;
    if (strcmp(name, "uv") == 0 && uv_installs(w))
        return R_INSTALL;
    if (manager_installs(name, w) || name_in(name, npx_like) || setup_py_builds(w))
        return R_INSTALL;
    const char *mod = is_python(name) ? python_module(w, &rest) : NULL;
    if (mod && ((strcmp(mod, "pip") == 0 && pip_installs(w, rest)) || strcmp(mod, "build") == 0 ||
                strcmp(mod, "ensurepip") == 0 ||
                (strcmp(mod, "uv") == 0 && rest < w.n && strcmp(w.v[rest], "pip") == 0 &&
                 pip_installs(w, rest + 1))))
        return R_INSTALL;
    return NULL;
}

static bool info_only(struct words w)
{
    static const char *const info[] = {"--help", "-h", "--version", "-V", "--list", NULL};
    for (size_t i = 1; i < w.n; i++)
        if (!name_in(w.v[i], info))
            return false;
    return true;
}

/* nvidia-smi options that change GPU state (queries stay allowed). */
static bool smi_changes_state(struct words w)
{
    static const char *const opts[] = {"-pm",
                                       "--persistence-mode",
                                       "-e",
                                       "--ecc-config",
                                       "-p",
                                       "--reset-ecc-errors",
                                       "-c",
                                       "--compute-mode",
                                       "-dm",
                                       "--driver-model",
                                       "-r",
                                       "--gpu-reset",
                                       "-ac",
                                       "--applications-clocks",
                                       "-rac",
                                       "--reset-applications-clocks",
                                       "-acp",
                                       "--applications-clocks-permission",
                                       "-pl",
                                       "--power-limit",
                                       "-am",
                                       "--accounting-mode",
                                       "-lgc",
                                       "--lock-gpu-clocks",
                                       "-rgc",
                                       "--reset-gpu-clocks",
                                       "-lmc",
                                       "--lock-memory-clocks",
                                       "-rmc",
                                       "--reset-memory-clocks",
                                       "-cc",
                                       "--cuda-clocks",
                                       "-mig",
                                       "--multi-instance-gpu",
                                       "--auto-boost-default",
                                       "--auto-boost-permission",
                                       "mig",
                                       "clocks",
                                       NULL};
    char opt[64];
    for (size_t i = 1; i < w.n; i++) {
        snprintf(opt, sizeof(opt), "%.*s", (int)strcspn(w.v[i], "="), w.v[i]);
        if (name_in(opt, opts))
            return true;
    }
    return false;
}

/* rocm-smi's --set* and --reset* options, and the few others that act. */
static bool rocm_smi_changes_state(struct words w)
{
    static const char *const opts[] = {
        "-r",           "--gpureset",  "--load",        "--rasenable",
        "--rasdisable", "--rasinject", "--autorespond", NULL};
    char opt[64];
    for (size_t i = 1; i < w.n; i++) {
        snprintf(opt, sizeof(opt), "%.*s", (int)strcspn(w.v[i], "="), w.v[i]);
        if (strncmp(opt, "--set", 5) == 0 || strncmp(opt, "--reset", 7) == 0 || name_in(opt, opts))
            return true;
    }
    return false;
}

/* amd-smi subcommands that act on the GPU (its queries stay allowed). */
static bool amd_smi_changes_state(struct words w)
{
    static const char *const verbs[] = {"set", "reset", "ras", NULL};
    const char *sub = first_operand(w, 1);
    return sub && name_in(sub, verbs);
}

/* clang/amdclang compiling GPU offload code (HIP or CUDA) on the host. */
static bool offload_build(struct words w, const char *name)
{
    static const char *const compilers[] = {"clang",      "clang++",  "amdclang",
                                            "amdclang++", "hipcc.pl", NULL};
    if (!name_in(name, compilers))
        return false;
    for (size_t i = 1; i < w.n; i++)
        if (strncmp(w.v[i], "--offload-arch", 14) == 0 ||
            strncmp(w.v[i], "--cuda-gpu-arch", 15) == 0 ||
            ((strcmp(w.v[i], "-x") == 0 && i + 1 < w.n &&
              (strcmp(w.v[i + 1], "hip") == 0 || strcmp(w.v[i + 1], "cuda") == 0))) ||
            strcmp(w.v[i], "-xhip") == 0 || strcmp(w.v[i], "-xcuda") == 0)
            return true;
    return false;
}

bool aka_guard_gpu_query_tool(const char *const *argv, size_t argc)
{
    /* Device queries that bring up ROCr to list the GPUs (the ROCm counterparts
     * of `nvidia-smi -L`): they map the runtime but run nothing on the GPU. */
    static const char *const queries[] = {"rocminfo", "rocm_agent_enumerator", NULL};
    char name[64];
    return argc > 0 && name_in(cmd_name(argv[0], name, sizeof(name)), queries);
}

static const char *python_gpu_rule(struct words w)
{
    static const char *const kernels[] = {"kernel.py", "test_kernel.py", "profile_driver.py", NULL};
    char name[64];
    for (size_t i = 1; i < w.n; i++) {
        if (strcmp(w.v[i], "-c") == 0)
            return i + 1 < w.n ? aka_guard_check_python_code(w.v[i + 1]) : NULL;
        if (strcmp(w.v[i], "-m") == 0 || strcmp(w.v[i], "-") == 0)
            return NULL;
        if (strcmp(w.v[i], "-W") == 0 || strcmp(w.v[i], "-X") == 0) {
            i++;
            continue;
        }
        if (w.v[i][0] == '-')
            continue;
        cmd_name(w.v[i], name, sizeof(name));
        if (strcmp(name, "sandbox.py") == 0)
            return NULL; /* the upstream sandbox client: GPU work done right */
        return name_in(name, kernels) ? R_KERNEL : NULL;
    }
    return NULL;
}

static const char *gpu_rule(struct words w, const char *name)
{
    static const char *const builders[] = {"nvcc",  "cicc",  "ptxas",     "fatbinary", "nvlink",
                                           "ninja", "hipcc", "hipcc.bin", NULL};
    static const char *const profilers[] = {"ncu",
                                            "nv-nsight-cu-cli",
                                            "nsys",
                                            "nvprof",
                                            "rocprof",
                                            "rocprofv2",
                                            "rocprofv3",
                                            "compute-sanitizer",
                                            "cuda-memcheck",
                                            "omniperf",
                                            "rocprof-compute",
                                            "rocprof-sys-run",
                                            "rocprof-sys-sample",
                                            "rocprof-sys-instrument",
                                            "omnitrace",
                                            "omnitrace-run",
                                            "omnitrace-sample",
                                            "omnitrace-instrument",
                                            NULL};
    static const char *const programs[] = {"kernel",         "kernel.out", "test_kernel",
                                           "profile_driver", "harness",    NULL};
    static const char *const wrappers[] = {"profile_nvidia.sh", "profile_kernel.sh", NULL};
    char arg[64];
    if ((name_in(name, builders) || offload_build(w, name)) && !info_only(w))
        return R_BUILD;
    if (name_in(name, profilers) && !info_only(w))
        return R_PROFILER;
    if (strcmp(name, "nvidia-smi") == 0 && smi_changes_state(w))
        return R_GPU_STATE;
    if ((strcmp(name, "rocm-smi") == 0 && rocm_smi_changes_state(w)) ||
        (strcmp(name, "amd-smi") == 0 && amd_smi_changes_state(w)))
        return R_ROCM_STATE;
    if (name_in(name, programs))
        return R_KERNEL;
    if (is_python(name))
        return python_gpu_rule(w);
    for (size_t i = 1; is_shell(name) && i < w.n; i++)
        if (name_in(cmd_name(w.v[i], arg, sizeof(arg)), wrappers))
            return R_WRAPPER;
    return NULL;
}

static const char *pip_tree_rule(struct words w, const char *name)
{
    static const char *const compilers[] = {"cicc", "nvcc", "ninja", "cmake", "make",    "gcc",
                                            "g++",  "cc",   "c++",   "clang", "clang++", NULL};
    static const char *const marks[] = {"pip-install-", "pip-build-", "pip-modern-metadata-", NULL};
    if (!name_in(name, compilers))
        return NULL;
    for (size_t i = 0; i < w.n; i++)
        for (const char *const *m = marks; *m; m++)
            if (strcasestr(w.v[i], *m))
                return R_PIP_TREE;
    return NULL;
}

static const char *script_rules(const char *script, const struct aka_guard_config *c, int depth)
{
    struct strvec tok = STRVEC_INIT;
    const char *r = NULL;
    if (depth <= MAX_DEPTH && tokenize(script, &tok) == 0) {
        size_t start = 0;
        for (size_t i = 0; i <= tok.n && !r; i++) {
            if (i < tok.n && tok.v[i][0])
                continue;
            if (i > start)
                r = segment_rules((struct words){(const char *const *)tok.v + start, i - start}, c,
                                  depth + 1);
            start = i + 1;
        }
    }
    strvec_clear(&tok);
    return r;
}

/* `sh -c SCRIPT` / `bash -lc SCRIPT`: the script, or NULL. */
static const char *shell_script(struct words w)
{
    for (size_t i = 1; i + 1 < w.n; i++) {
        if (w.v[i][0] != '-' || strncmp(w.v[i], "--", 2) == 0)
            return NULL;
        if (strchr(w.v[i], 'c'))
            return w.v[i + 1];
    }
    return NULL;
}

static const char *eval_rules(struct words w, const struct aka_guard_config *c, int depth)
{
    struct strbuf joined = STRBUF_INIT;
    for (size_t i = 1; i < w.n; i++)
        strbuf_addf(&joined, "%s%s", i > 1 ? " " : "", w.v[i]);
    const char *r = script_rules(joined.buf, c, depth);
    strbuf_release(&joined);
    return r;
}

static bool is_interpreter(const char *name)
{
    static const char *const others[] = {"perl", "node", "ruby", NULL};
    return is_shell(name) || is_python(name) || name_in(name, others);
}

static const char *segment_rules(struct words w, const struct aka_guard_config *c, int depth)
{
    size_t i0 = unwrap(w);
    char name[64];
    if (i0 >= w.n || depth > MAX_DEPTH)
        return NULL;
    w = (struct words){w.v + i0, w.n - i0};
    cmd_name(w.v[0], name, sizeof(name));
    const char *r = NULL, *script = is_shell(name) ? shell_script(w) : NULL;
    if (strcmp(name, "eval") == 0 && w.n > 1)
        r = eval_rules(w, c, depth);
    if (!r && script)
        r = script_rules(script, c, depth);
    if (!r && !(r = gateway_rule(w, name, c)) && !(r = aka_rule(w, name)) &&
        !(r = install_rule(w, name)) && !(r = after_dashes(w, name, c, depth)) &&
        !(r = gpu_rule(w, name)))
        r = pip_tree_rule(w, name);
    /* An interpreter running a script file: what a shebang turns `./pip` into. */
    if (!r && !script && is_interpreter(name) && w.n > 1 && w.v[1][0] != '-')
        r = segment_rules((struct words){w.v + 1, w.n - 1}, c, depth + 1);
    return r;
}

const char *aka_guard_check_argv(const char *const *argv, size_t argc,
                                 const struct aka_guard_config *c)
{
    if (!argv || argc == 0)
        return NULL;
    return segment_rules((struct words){argv, argc}, c, 0);
}
