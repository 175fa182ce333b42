# session_guard.sh — the shell layer of aka's process guard.
#
# The agent runtime points BASH_ENV here, so every non-interactive bash an
# agent starts (its tool calls, its scripts) reads this file first. It
# defines functions that shadow the commands an agent must not run on the
# supervisor's host and refuses them *before* they start, with a message the
# agent can act on, and exit status 126. Whatever gets past it (`command pip`,
# /usr/bin/pip, a Python subprocess) is still seen by the supervisor's
# process poller, which kills the whole session; this layer exists so that a
# well-meaning agent gets a clear refusal instead of a dead session.
#
# Refused: package installs; GPU work on the host (CUDA/HIP/JIT build tools,
# CUDA and ROCm profilers, the kernel or evaluator run directly, Python
# importing the kernel, touching CUDA or HIP); changing GPU state with
# nvidia-smi, rocm-smi or amd-smi; touching the shared
# gateway (its screen session, state directory, configuration, jobs); and
# deleting or moving files that Git tracks.

[ -n "${__AKA_SESSION_GUARD:-}" ] && return 0
__AKA_SESSION_GUARD=1

__aka_refuse() {
    printf 'aka policy: refused `%s`: %s. Run GPU work through `aka eval` / `aka profile`; never install packages or touch the shared gateway.\n' "$1" "$2" >&2
    return 126
}

# The first argument that is not an option.
__aka_operand() {
    local a
    for a in "$@"; do
        case "$a" in -*) ;; *) printf '%s' "$a"; return 0 ;; esac
    done
    return 1
}

__aka_info_only() {
    local a
    for a in "$@"; do
        case "$a" in --help|-h|--version|-V|--list) ;; *) return 1 ;; esac
    done
    return 0
}

# ---- the shared gateway ------------------------------------------------------

__aka_gateway_path() {
    local state="${ATREX_PROTECTED_GATEWAY_STATE_DIR:-}" p="${1#*=}"
    [ -n "$state" ] || return 1
    state="${state%/}"
    case "$p" in "$state"|"$state"/*|"$state.log") return 0 ;; esac
    return 1
}

__aka_any_gateway_path() {
    local a
    for a in "$@"; do __aka_gateway_path "$a" && return 0; done
    return 1
}

# Is $1 a file Git tracks in the current repository?
__aka_tracked() {
    local root rel abs
    root=$(command git rev-parse --show-toplevel 2>/dev/null) || return 1
    case "$1" in /*) abs="$1" ;; *) abs="$PWD/$1" ;; esac
    case "$abs" in "$root"/*) rel="${abs#"$root"/}" ;; *) return 1 ;; esac
    [ -n "$(command git -C "$root" ls-files -- "$rel" 2>/dev/null)" ]
}

__aka_guard_paths() {
    local tool="$1" a
    shift
    for a in "$@"; do
        case "$a" in -*) continue ;; esac
        __aka_gateway_path "$a" && { __aka_refuse "$tool $*" "the shared gateway's state is not yours to change"; return; }
        __aka_tracked "$a" && { __aka_refuse "$tool $*" "$a is tracked by Git; change tracked files by editing them, and only the kernel"; return; }
    done
    return 0
}

rm()       { __aka_guard_paths rm "$@" || return $?; command rm "$@"; }
rmdir()    { __aka_guard_paths rmdir "$@" || return $?; command rmdir "$@"; }
mv()       { __aka_guard_paths mv "$@" || return $?; command mv "$@"; }
truncate() { __aka_guard_paths truncate "$@" || return $?; command truncate "$@"; }

__aka_gateway_writes() {
    local tool="$1"
    shift
    __aka_any_gateway_path "$@" && { __aka_refuse "$tool $*" "the shared gateway's state and configuration are not yours to change"; return; }
    return 0
}

cp()      { __aka_gateway_writes cp "${@: -1}" || return $?; command cp "$@"; }
tee()     { __aka_gateway_writes tee "$@" || return $?; command tee "$@"; }
touch()   { __aka_gateway_writes touch "$@" || return $?; command touch "$@"; }
ln()      { __aka_gateway_writes ln "${@: -1}" || return $?; command ln "$@"; }
sqlite3() { __aka_gateway_writes sqlite3 "$@" || return $?; command sqlite3 "$@"; }
sed() {
    local a inplace=
    for a in "$@"; do case "$a" in -i*|--in-place*) inplace=1 ;; esac; done
    [ -n "$inplace" ] && { __aka_gateway_writes sed "$@" || return $?; }
    command sed "$@"
}

screen() {
    local name="${ATREX_PROTECTED_GATEWAY_SCREEN:-atrex-local-gateway}" a
    for a in "$@"; do
        case "$a" in "$name"|*."$name") __aka_refuse "screen $*" "the shared gateway's screen session is not yours"; return ;; esac
    done
    command screen "$@"
}

__aka_kill_by_name() {
    local tool="$1" name="${ATREX_PROTECTED_GATEWAY_SCREEN:-atrex-local-gateway}" a
    shift
    for a in "$@"; do
        case "$a" in *gateway*|"$name") __aka_refuse "$tool $*" "the shared gateway is not yours to stop"; return ;; esac
    done
    command "$tool" "$@"
}
pkill()   { __aka_kill_by_name pkill "$@"; }
killall() { __aka_kill_by_name killall "$@"; }

__aka_cancel_job() {
    local tool="$1" a
    shift
    for a in "$@"; do
        case "$a" in */v1/jobs/*/cancel*) __aka_refuse "$tool $*" "cancelling gateway jobs is the supervisor's decision"; return ;; esac
    done
    command "$tool" "$@"
}
curl() { __aka_cancel_job curl "$@"; }
wget() { __aka_cancel_job wget "$@"; }

aka() {
    if [ "${1:-}" = gateway ]; then
        case "${2:-}" in status|help|--help|-h) ;; *) __aka_refuse "aka $*" "the shared gateway is the supervisor's"; return ;; esac
    fi
    command aka "$@"
}

# ---- package installs ----------------------------------------------------------

__aka_installer() {
    local tool="$1" verbs="$2" sub
    shift 2
    sub=$(__aka_operand "$@") || sub=
    case " $verbs " in *" $sub "*)
        [ -n "$sub" ] && { __aka_refuse "$tool $*" "installing packages is not allowed in an episode; the evaluator's environment is fixed"; return; } ;;
    esac
    command "$tool" "$@"
}

pip()        { __aka_installer pip "install wheel" "$@"; }
pip3()       { __aka_installer pip3 "install wheel" "$@"; }
conda()      { __aka_installer conda "install create update upgrade" "$@"; }
mamba()      { __aka_installer mamba "install create update upgrade" "$@"; }
micromamba() { __aka_installer micromamba "install create update" "$@"; }
apt()        { __aka_installer apt "install reinstall upgrade full-upgrade build-dep" "$@"; }
apt-get()    { __aka_installer apt-get "install reinstall upgrade dist-upgrade build-dep" "$@"; }
dnf()        { __aka_installer dnf "install reinstall upgrade update groupinstall" "$@"; }
yum()        { __aka_installer yum "install reinstall upgrade update groupinstall" "$@"; }
npm()        { __aka_installer npm "install i add ci update" "$@"; }
pnpm()       { __aka_installer pnpm "install i add update" "$@"; }
yarn()       { __aka_installer yarn "add install global" "$@"; }
cargo()      { __aka_installer cargo "install" "$@"; }
gem()        { __aka_installer gem "install update" "$@"; }
pipx()       { __aka_installer pipx "install run inject" "$@"; }
brew()       { __aka_installer brew "install reinstall upgrade" "$@"; }
npx()        { __aka_refuse "npx $*" "npx downloads and runs packages"; }

uv() {
    local sub
    sub=$(__aka_operand "$@") || sub=
    case "$sub" in
        add|sync) __aka_refuse "uv $*" "installing packages is not allowed in an episode"; return ;;
        pip|tool)
            case " $* " in *" install "*|*" sync "*|*" compile "*)
                __aka_refuse "uv $*" "installing packages is not allowed in an episode"; return ;;
            esac ;;
    esac
    command uv "$@"
}

# ---- GPU work on the host --------------------------------------------------------

__aka_gpu_tool() {
    local tool="$1" why="$2"
    shift 2
    __aka_info_only "$@" && { command "$tool" "$@"; return; }
    __aka_refuse "$tool $*" "$why"
}

__aka_profiler="GPU profilers run only inside the sandbox: use \`aka profile\`"
__aka_builder="CUDA/JIT builds run only inside the sandbox: use \`aka eval\`"
ncu()               { __aka_gpu_tool ncu "$__aka_profiler" "$@"; }
nsys()              { __aka_gpu_tool nsys "$__aka_profiler" "$@"; }
nvprof()            { __aka_gpu_tool nvprof "$__aka_profiler" "$@"; }
rocprof()           { __aka_gpu_tool rocprof "$__aka_profiler" "$@"; }
rocprofv2()         { __aka_gpu_tool rocprofv2 "$__aka_profiler" "$@"; }
rocprofv3()         { __aka_gpu_tool rocprofv3 "$__aka_profiler" "$@"; }
omniperf()          { __aka_gpu_tool omniperf "$__aka_profiler" "$@"; }
rocprof-compute()   { __aka_gpu_tool rocprof-compute "$__aka_profiler" "$@"; }
rocprof-sys-run()   { __aka_gpu_tool rocprof-sys-run "$__aka_profiler" "$@"; }
omnitrace-run()     { __aka_gpu_tool omnitrace-run "$__aka_profiler" "$@"; }
compute-sanitizer() { __aka_gpu_tool compute-sanitizer "$__aka_profiler" "$@"; }
nvcc()              { __aka_gpu_tool nvcc "$__aka_builder" "$@"; }
hipcc()             { __aka_gpu_tool hipcc "$__aka_builder" "$@"; }

nvidia-smi() {
    local a
    for a in "$@"; do
        case "${a%%=*}" in
            -pm|--persistence-mode|-e|--ecc-config|-p|--reset-ecc-errors|-c|--compute-mode|\
            -r|--gpu-reset|-ac|--applications-clocks|-rac|--reset-applications-clocks|\
            -pl|--power-limit|-lgc|--lock-gpu-clocks|-rgc|--reset-gpu-clocks|-lmc|\
            --lock-memory-clocks|-rmc|--reset-memory-clocks|-mig|--multi-instance-gpu|mig|clocks)
                __aka_refuse "nvidia-smi $*" "GPU state belongs to the supervisor"; return ;;
        esac
    done
    command nvidia-smi "$@"
}

rocm-smi() {
    local a
    for a in "$@"; do
        case "${a%%=*}" in
            --set*|--reset*|-r|--gpureset|--load|--rasenable|--rasdisable|--rasinject|--autorespond)
                __aka_refuse "rocm-smi $*" "GPU state belongs to the supervisor"; return ;;
        esac
    done
    command rocm-smi "$@"
}

amd-smi() {
    case "$(__aka_operand "$@")" in
        set|reset|ras) __aka_refuse "amd-smi $*" "GPU state belongs to the supervisor"; return ;;
    esac
    command amd-smi "$@"
}

# Python: the kernel or evaluator run directly, or -c code importing the
# kernel / JIT GPU packages or touching CUDA or HIP (judged on Python's own AST, so
# prose in strings never matches).
__aka_py_code_refused() {
    AKA_GUARD_CODE="$1" command python3 -I -c '
import ast, os, sys
JIT = {"flashinfer", "flash_attn", "xformers", "vllm", "pycuda", "cupy"}
FRAMEWORKS = {"torch", "triton", "cupy", "numba", "jax"}
HIP = {"hip", "hiprtc"}
found = set()
def literal(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
def scan(src, depth):
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError):
        return
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            found.update(a.name for a in n.names)
        elif isinstance(n, ast.ImportFrom) and n.module and not n.level:
            found.add(n.module)
            found.update(n.module + "." + a.name for a in n.names)
        elif isinstance(n, ast.Attribute) and n.attr == "cuda":
            found.add("<cuda>")
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.split(":")[0] == "cuda":
            found.add("<cuda-device>")
        elif isinstance(n, ast.Call) and n.args and literal(n.args[0]) is not None:
            name = n.func.id if isinstance(n.func, ast.Name) else getattr(n.func, "attr", "")
            if name in ("__import__", "import_module"):
                found.add(literal(n.args[0]))
            elif name in ("exec", "eval") and depth < 2:
                scan(literal(n.args[0]), depth + 1)
scan(os.environ.get("AKA_GUARD_CODE", ""), 0)
tops = {m.split(".")[0] for m in found}
if "kernel" in tops:
    print("it imports the kernel on the host")
elif tops & JIT:
    print("it imports a JIT-capable GPU package on the host")
elif "<cuda>" in found or any(".cuda" in m for m in found) or ("<cuda-device>" in found and tops & FRAMEWORKS):
    print("it uses CUDA on the host")
elif tops & HIP or any(m == "numba.hip" or m.startswith("numba.hip.") for m in found):
    print("it uses HIP on the host")
' 2>/dev/null
}

__aka_python() {
    local py="$1" a code= next= why
    shift
    for a in "$@"; do
        if [ -n "$next" ]; then code="$a"; break; fi
        case "$a" in
            -c) next=1 ;;
            -m|-) break ;;
            -*) ;;
            *) case "${a##*/}" in
                   kernel.py|test_kernel.py|profile_driver.py)
                       __aka_refuse "$py $*" "the kernel and the evaluator run only inside the sandbox: use \`aka eval\`"; return ;;
               esac
               break ;;
        esac
    done
    case " $* " in *" -m pip install "*|*" -m pip wheel "*|*" -m build "*|*" -m ensurepip "*)
        __aka_refuse "$py $*" "installing packages is not allowed in an episode"; return ;;
    esac
    if [ -n "$code" ]; then
        why=$(__aka_py_code_refused "$code")
        [ -n "$why" ] && { __aka_refuse "$py -c ..." "$why; run GPU work through \`aka eval\`"; return; }
    fi
    command "$py" "$@"
}
python()     { __aka_python python "$@"; }
python3()    { __aka_python python3 "$@"; }
python3.10() { __aka_python python3.10 "$@"; }
python3.11() { __aka_python python3.11 "$@"; }
python3.12() { __aka_python python3.12 "$@"; }

readonly -f rm rmdir mv truncate cp tee touch ln sqlite3 sed screen pkill killall curl wget aka \
    pip pip3 conda mamba micromamba apt apt-get dnf yum npm pnpm yarn cargo gem pipx brew npx uv \
    ncu nsys nvprof rocprof rocprofv2 rocprofv3 omniperf rocprof-compute rocprof-sys-run \
    omnitrace-run compute-sanitizer nvcc hipcc nvidia-smi rocm-smi amd-smi \
    python python3 python3.10 python3.11 python3.12 \
    __aka_refuse __aka_operand __aka_info_only __aka_gateway_path __aka_any_gateway_path \
    __aka_tracked __aka_guard_paths __aka_gateway_writes __aka_kill_by_name __aka_cancel_job \
    __aka_installer __aka_gpu_tool __aka_py_code_refused __aka_python
