#!/usr/bin/env bash
# sandbox_isolation.sh — red-team tests of `aka sandbox run` (local transport).
#
# Each test runs a hostile command or candidate from tests/redteam/ through the
# real binary and real Bubblewrap, then checks from the host side that it was
# refused or contained: no network, nothing outside the allowlist readable, no
# write outside the job directory, time and output limits enforced, fork bombs
# contained with no survivors, hostile artifacts refused, and the explicit
# `none` opt-out and a missing bwrap handled as documented; SIGINT/SIGTERM of
# aka ends the job and removes it; supervisor-state inputs, impossible GPU
# requests and unusable temp directories are refused before anything runs.
# Every test also checks that no job directory or pids cgroup is left behind.
#
# Env: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -u

AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
RT=$SRC/tests/redteam
WORK=$(mktemp -d "${TMPDIR:-/tmp}/aka-redteam.XXXXXX")
SBXTMP=$WORK/sbx
MARK=aka-redteam-$$-$RANDOM
HTTP_PID=
FAILS=0
PASSES=0

cleanup() {
    [ -n "$HTTP_PID" ] && kill "$HTTP_PID" 2>/dev/null
    # Only processes carrying this run's unique marker, each by its id.
    for pid in $(pgrep -f -- "$MARK"); do kill -KILL "$pid" 2>/dev/null; done
    rm -rf "$WORK" "/tmp/aka-escape-$MARK" "$SRC/aka-escape-$MARK"
}
trap cleanup EXIT

pass() { PASSES=$((PASSES + 1)); echo "ok   - $*"; }
fail() { FAILS=$((FAILS + 1)); echo "FAIL - $*"; }
check() { # check DESCRIPTION COMMAND...
    local what=$1
    shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}

# aka sandbox run with our private job-dir parent, so leftovers are visible.
sbx() { "$AKA" sandbox run --sandbox-tmp "$SBXTMP" "$@"; }
# Field of the last JSON result: jfield FILE EXPR (a Python expression on r).
jfield() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

# pids cgroups of finished jobs that were not removed: present and empty twice in
# a row (a concurrent run's live job always has processes in its cgroup).
stale_cgroups() {
    local first=() d
    for d in /sys/fs/cgroup/pids/aka-sbx.* /sys/fs/cgroup/aka-sbx.*; do
        [ -d "$d" ] && [ -z "$(cat "$d/cgroup.procs" 2>/dev/null)" ] && first+=("$d")
    done
    [ ${#first[@]} -eq 0 ] && return 0
    sleep 0.5
    for d in "${first[@]}"; do
        [ -d "$d" ] && [ -z "$(cat "$d/cgroup.procs" 2>/dev/null)" ] && echo "stale cgroup: $d" && return 1
    done
    return 0
}

no_leftovers() {
    [ -z "$(ls -A "$SBXTMP")" ] && stale_cgroups
}

setup() {
    command -v bwrap >/dev/null || { echo "bwrap is required for the isolation tests" >&2; exit 1; }
    command -v python3 >/dev/null || { echo "python3 is required" >&2; exit 1; }
    mkdir -p "$SBXTMP" "$WORK/bin" "$WORK/in"
    cc -O2 -o "$WORK/in/forkbomb" "$RT/forkbomb.c" || exit 1
    cc -O2 -o "$WORK/in/net_connect" "$RT/net_connect.c" || exit 1
    cp "$RT"/*.sh "$WORK/in/"
}

# ---- network ---------------------------------------------------------------------------------

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_listener() {
    PORT=$(free_port)
    mkdir -p "$WORK/www"
    echo "listener-reached" > "$WORK/www/index.html"
    (cd "$WORK/www" && exec python3 -m http.server "$PORT" --bind 127.0.0.1 >"$WORK/http.log" 2>&1) &
    HTTP_PID=$!
    for _ in $(seq 100); do
        python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $PORT), 1)" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

t_network() {
    check "host listener on 127.0.0.1 is reachable from the host" start_listener
    sbx --input "$WORK/in/net_connect" -- ./net_connect 127.0.0.1 "$PORT" >"$WORK/net.out" 2>&1
    local rc=$?
    check "TCP connect to the host's 127.0.0.1:$PORT fails inside (rc=$rc)" \
        grep -q "connect failed" "$WORK/net.out"
    check "no CONNECTED line" bash -c "! grep -q CONNECTED '$WORK/net.out'"
    check "only the loopback interface is visible" grep -qx "interfaces: lo" "$WORK/net.out"
    sbx -- python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PORT/$MARK', timeout=3)" \
        >/dev/null 2>&1
    check "python urllib to the host listener fails inside" test $? -ne 0
    check "the listener never saw a request from the sandbox" \
        bash -c "! grep -q '$MARK' '$WORK/http.log'"
    kill "$HTTP_PID" 2>/dev/null
    HTTP_PID=
    check "no leftovers after network tests" no_leftovers
}

# ---- reading outside the allowlist ----------------------------------------------------------

t_private_read() {
    local token=AKA-TOKEN-$MARK home=$WORK/home
    mkdir -p "$WORK/private" "$home/.ssh"
    echo "{\"secret\": \"$token\"}" >"$WORK/private/shapes.json"
    echo "$token" >"$home/.ssh/id_rsa"
    echo "$token" >"$home/notes.txt"
    HOME=$home sbx --timeout 120 --input "$WORK/in/read_private.sh" -- sh read_private.sh \
        "$WORK/private/shapes.json" "$home" "$home/.ssh/id_rsa" /root "$SRC" "$token" \
        >"$WORK/read.out" 2>&1
    check "the private shapes file is absent inside" \
        grep -qx "absent $WORK/private/shapes.json" "$WORK/read.out"
    check "the user's home is absent inside" grep -qx "absent $home" "$WORK/read.out"
    check "/root is absent inside" grep -qx "absent /root" "$WORK/read.out"
    check "the source tree is absent inside" grep -qx "absent $SRC" "$WORK/read.out"
    check "the blind search finished" grep -qx "search done" "$WORK/read.out"
    check "the token is found nowhere" bash -c "! grep -q -- '$token' '$WORK/read.out'"
    check "no leftovers after read tests" no_leftovers
}

t_allowlist_walk() {
    local ws=$WORK/ws
    mkdir -p "$ws/.git" "$ws/.aka" "$ws/memory" "$ws/sub" "$ws/.ssh" "$ws/.claude"
    for f in kernel.py sub/ok.py .git/config .aka/campaign.json memory/v1.json .env id_rsa \
        key.pem notes.md .ssh/config .claude/session.json cache.pyc; do
        echo "x" >"$ws/$f"
    done
    ln -s "$WORK/private/shapes.json" "$ws/shapes.json"
    sbx --input "$ws=." -- sh -c 'find . -type f | sort' >"$WORK/walk.out" 2>&1
    check "a directory input ships only allowed files" \
        diff <(printf './kernel.py\n./sub/ok.py\n') "$WORK/walk.out"
    sbx --input "$ws/.env" -- true >/dev/null 2>&1
    check "an explicit never-shipped file (.env) is refused with 2" test $? -eq 2
    sbx --input "$ws/key.pem" -- true >/dev/null 2>&1
    check "an explicit key file (*.pem) is refused with 2" test $? -eq 2
    sbx --input "$ws/shapes.json" -- true >/dev/null 2>&1
    check "an explicit symlink input is refused with 2" test $? -eq 2
    sbx --input "$ws/kernel.py=../kernel.py" -- true >/dev/null 2>&1
    check "a destination with '..' is refused with 2" test $? -eq 2
    sbx --input "$ws/memory" -- true >/dev/null 2>&1
    check "an explicit memory/ directory is refused with 2" test $? -eq 2
    check "no leftovers after allowlist tests" no_leftovers
}

# An --input whose real path lies in supervisor state is refused with 2, naming the
# path and the rule: inside .aka/, .git/, or a workspace's memory/, also through a
# symlink; a directory merely called memory outside any workspace ships.
t_state_inputs() {
    local ws=$WORK/stws rc rel dir rule
    mkdir -p "$ws/.aka/sub" "$ws/memory" "$ws/.git" "$WORK/plain/memory"
    echo x >"$ws/.aka/campaign.json"
    echo x >"$ws/.aka/sub/notes.txt"
    echo x >"$ws/memory/v0.json"
    echo x >"$ws/.git/config"
    echo x >"$WORK/plain/memory/data.txt"
    ln -sfn "$ws/.aka" "$WORK/aka-link"
    local cases=(".aka/campaign.json|$ws/.aka|a workspace's .aka/"
        ".aka/sub|$ws/.aka|a workspace's .aka/"
        "memory/v0.json|$ws/memory|a workspace's memory/"
        ".git/config|$ws/.git|a repository's .git/")
    for c in "${cases[@]}"; do
        IFS='|' read -r rel dir rule <<<"$c"
        sbx --input "$ws/$rel" -- true >/dev/null 2>"$WORK/state.err"
        rc=$?
        check "--input $rel is refused with 2 (rc=$rc)" test "$rc" -eq 2
        check "  and the message names $dir and the rule" \
            grep -qF "$ws/$rel is inside $rule ($dir)" "$WORK/state.err"
    done
    sbx --input "$WORK/aka-link/campaign.json" -- true >/dev/null 2>"$WORK/state.err"
    rc=$?
    check "--input through a symlink into .aka/ is refused with 2 (rc=$rc)" test "$rc" -eq 2
    check "  and the message names the resolved path" \
        grep -qF "$ws/.aka/campaign.json is inside a workspace's .aka/" "$WORK/state.err"
    sbx --input "$WORK/plain/memory/data.txt" -- cat data.txt >"$WORK/state.out" 2>&1
    check "a memory/ directory outside any workspace or repository ships" grep -qx x "$WORK/state.out"
    check "no leftovers after state-input tests" no_leftovers
}

# ---- writing outside the job directory --------------------------------------------------------

t_write_outside() {
    local outside=$WORK/outside
    mkdir -p "$outside"
    local targets=("/tmp/aka-escape-$MARK" "$SRC/aka-escape-$MARK" "/usr/aka-escape-$MARK"
        "$outside/escape" "$SBXTMP/escape")
    sbx --input "$WORK/in/escape_write.sh" -- sh escape_write.sh "${targets[@]}" \
        >"$WORK/write.out" 2>&1
    for t in "${targets[@]}"; do
        check "host path $t was not written" test ! -e "$t"
    done
    # A source tree under /tmp (a CI clone, say) is shadowed by the job's private
    # tmpfs: the write lands there and vanishes, which the host checks above prove.
    case "$SRC/" in
    /tmp/*)
        check "the workspace path only reaches the job's private /tmp" \
            grep -qxE "(refused|wrote-after-mkdir) $SRC/aka-escape-$MARK" "$WORK/write.out" ;;
    *)
        check "the workspace path cannot even be created inside" \
            grep -qx "refused $SRC/aka-escape-$MARK" "$WORK/write.out" ;;
    esac
    check "/usr cannot be written inside" grep -qx usr-refused "$WORK/write.out"
    check "/usr cannot be remounted read-write" grep -qx remount-refused "$WORK/write.out"
    check "nothing can be mounted" grep -qx mount-refused "$WORK/write.out"
    check "no /usr probe file on the host" test ! -e /usr/aka-escape-probe
    check "no leftovers after write tests" no_leftovers
}

t_ro_input() {
    echo original >"$WORK/in/harness.txt"
    sbx --ro-input "$WORK/in/harness.txt" -- sh -c \
        'echo evil > harness.txt; rm -f harness.txt; mv harness.txt x 2>/dev/null; cat harness.txt' \
        >"$WORK/ro.out" 2>&1
    check "a read-only input survives write/rm/mv inside" grep -qx original "$WORK/ro.out"
    check "the host copy is unchanged" grep -qx original "$WORK/in/harness.txt"
}

t_clean_env() {
    AKA_REDTEAM_SECRET=$MARK sbx -- env >"$WORK/env.out" 2>&1
    check "the caller's environment does not reach the job" \
        bash -c "! grep -q '$MARK' '$WORK/env.out'"
    check "the job's HOME is its job directory" grep -q "^HOME=$SBXTMP/aka-sbx" "$WORK/env.out"
    # (a bound Python prefix outside /usr may come first: /opt/conda/bin:...)
    check "PATH is the clean default" grep -qE "^PATH=(/[^:]+/bin:)?/usr/local/bin:/usr/bin:/bin$" \
        "$WORK/env.out"
}

# ---- time, processes, output -----------------------------------------------------------------

live_marked() { # processes carrying our marker that are not zombies
    local pid st
    for pid in $(pgrep -f -- "$MARK"); do
        st=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -c1)
        [ -n "$st" ] && [ "$st" != Z ] && echo "$pid"
    done
}

survivors_gone() { # wait up to 5 s for every process carrying our marker to be gone
    for _ in $(seq 50); do
        [ -z "$(live_marked)" ] && return 0
        sleep 0.1
    done
    return 1
}

t_timeout() {
    local t0 t1 rc
    t0=$(date +%s%N)
    sbx --timeout 2 -- sh -c 'trap "" TERM; while :; do :; done' >/dev/null 2>&1
    rc=$?
    t1=$(date +%s%N)
    local ms=$(((t1 - t0) / 1000000))
    check "an endless loop (ignoring SIGTERM) ends with 124 (rc=$rc)" test "$rc" -eq 124
    check "it ends within a bounded time (${ms} ms, limit 2 s)" test "$ms" -ge 1900 -a "$ms" -lt 8000
    sbx --timeout 2 --input "$(command -v sleep)=$MARK-sleeper" -- \
        sh -c "./$MARK-sleeper 1000 & ./$MARK-sleeper 1001 & wait" >/dev/null 2>&1
    check "background children die with the job" survivors_gone
    check "no leftovers after timeout tests" no_leftovers
}

t_forkbomb() {
    local pids=$1 t0 t1 rc
    t0=$(date +%s%N)
    timeout 60 "$AKA" sandbox run --sandbox-tmp "$SBXTMP" --json --timeout 6 --pids-max "$pids" \
        --input "$WORK/in/forkbomb" -- ./forkbomb "$MARK" >"$WORK/bomb.json" 2>/dev/null
    rc=$?
    t1=$(date +%s%N)
    local ms=$(((t1 - t0) / 1000000)) limit
    limit=$(jfield "$WORK/bomb.json" 'r["pids_limit"]')
    check "fork bomb (pids-max $pids, limit: $limit) ends at its time limit with 124 (rc=$rc)" \
        test "$rc" -eq 124
    check "fork bomb ends within a bounded time (${ms} ms)" test "$ms" -lt 15000
    check "no fork bomb process survives" survivors_gone
    if [ "$limit" = cgroup ]; then
        check "the pids cgroup refused forks" grep -q "fork refused" "$WORK/bomb.json"
    fi
    sbx -- true
    check "the sandbox still runs jobs after the bomb" test $? -eq 0
    check "no leftovers after the fork bomb" no_leftovers
}

t_output_cap() {
    sbx --json --stdout-cap 1048576 -- sh -c 'yes | head -c 100000000' >"$WORK/cap.json" 2>/dev/null
    check "100 MB of stdout: all bytes counted" \
        test "$(jfield "$WORK/cap.json" 'r["stdout_bytes"]')" = 100000000
    check "stdout kept <= the 1 MiB cap" \
        test "$(jfield "$WORK/cap.json" 'len(r["stdout"].encode())')" -le 1048576
    check "stdout_truncated is true" test "$(jfield "$WORK/cap.json" 'r["stdout_truncated"]')" = True
    sbx --json --stderr-cap 4096 -- sh -c 'head -c 100000000 /dev/zero >&2' >"$WORK/cap2.json" \
        2>/dev/null
    check "100 MB of stderr capped at 4096 bytes" \
        test "$(jfield "$WORK/cap2.json" 'len(r["stderr"])')" -le 4096
    check "stderr_truncated is true" \
        test "$(jfield "$WORK/cap2.json" 'r["stderr_truncated"]')" = True
    check "no leftovers after output tests" no_leftovers
}

# SIGINT / SIGTERM of `aka sandbox run` while its command runs: exit 130 / 143, the
# command and its background children are ended, the job directory is removed.
t_interrupt() {
    local iso sig want pid rc
    for iso in bwrap none; do
        for sig in INT TERM; do
            want=$([ $sig = INT ] && echo 130 || echo 143)
            # aka itself in the background (not the sbx function, which would be a subshell).
            "$AKA" sandbox run --sandbox-tmp "$SBXTMP" --sandbox-isolation "$iso" \
                --input "$(command -v sleep)=$MARK-sleeper" -- \
                sh -c "./$MARK-sleeper 100 & ./$MARK-sleeper 101" >/dev/null 2>"$WORK/int.err" &
            pid=$!
            for _ in $(seq 100); do
                [ "$(live_marked | wc -l)" -ge 2 ] && break
                sleep 0.05
            done
            check "$iso: the job's command runs before SIG$sig" test "$(live_marked | wc -l)" -ge 2
            kill -s "$sig" "$pid"
            wait "$pid"
            rc=$?
            check "$iso: SIG$sig ends aka sandbox run with $want (rc=$rc)" test "$rc" -eq "$want"
            check "$iso: it says it was interrupted by SIG$sig" grep -q "interrupted by SIG$sig" \
                "$WORK/int.err"
            check "$iso: no process of the job survives SIG$sig" survivors_gone
            check "$iso: no job directory or cgroup is left after SIG$sig" no_leftovers
        done
    done
}

# ---- artifacts ---------------------------------------------------------------------------------

t_artifacts() {
    local art=$WORK/art
    mkdir -p "$art"
    for bad in ../x /etc/passwd a/../b ./x memory/v1.json ""; do
        sbx --sync "$bad" --artifact-dir "$art" -- true >/dev/null 2>&1
        check "--sync '$bad' is refused with 2" test $? -eq 2
    done
    echo victim >"$WORK/victim"
    ln -s "$WORK/victim" "$art/out.txt"
    sbx --json --artifact-dir "$art" --input "$WORK/in/hostile_artifacts.sh" \
        --sync leak --sync dirlink/etc/passwd --sync results --sync good.txt --sync out.txt \
        -- sh hostile_artifacts.sh >"$WORK/art.json" 2>/dev/null
    check "a symlink artifact is refused" \
        test "$(jfield "$WORK/art.json" 'any(x.startswith("leak:") for x in r["artifacts_refused"])')" = True
    check "a path through a directory symlink is refused" \
        test "$(jfield "$WORK/art.json" 'any(x.startswith("dirlink/") for x in r["artifacts_refused"])')" = True
    check "a symlink inside a synced directory is refused" \
        test "$(jfield "$WORK/art.json" '"results/passwd-link" in " ".join(r["artifacts_refused"])')" = True
    check "nothing at the refused destinations" \
        test ! -e "$art/leak" -a ! -e "$art/dirlink" -a ! -e "$art/results/passwd-link" \
        -a ! -e "$art/results/fifo"
    check "honest artifacts come back" test -f "$art/good.txt" -a -f "$art/results/ok.txt"
    check "a pre-planted destination symlink is replaced, not followed" \
        bash -c "grep -qx victim '$WORK/victim' && test -f '$art/out.txt' -a ! -L '$art/out.txt'"
    check "no leftovers after artifact tests" no_leftovers
}

# ---- opt-out and missing bwrap ---------------------------------------------------------------

t_isolation_none() {
    sbx --json --sandbox-isolation none -- true >"$WORK/none.json" 2>/dev/null
    check "--sandbox-isolation none is recorded in the result" \
        test "$(jfield "$WORK/none.json" 'r["isolation"]')" = none
    sbx --sandbox-isolation none -- true 2>"$WORK/none.err"
    check "and announced on stderr" grep -q "isolation none" "$WORK/none.err"
    sbx --json -- true >"$WORK/bwrap.json" 2>/dev/null
    check "the default is recorded as bwrap" test "$(jfield "$WORK/bwrap.json" 'r["isolation"]')" = bwrap
}

t_missing_bwrap() {
    local bin=$WORK/nobwrap
    mkdir -p "$bin"
    for tool in sh true env cat; do ln -sf "$(command -v $tool)" "$bin/$tool"; done
    PATH=$bin "$AKA" sandbox run --sandbox-tmp "$SBXTMP" -- true >/dev/null 2>"$WORK/nob.err"
    check "without bwrap in PATH the job is refused with 75" test $? -eq 75
    check "the message names bwrap and the opt-out" \
        grep -q "bwrap.*--sandbox-isolation none" "$WORK/nob.err"
    PATH=$bin "$AKA" sandbox run --sandbox-tmp "$SBXTMP" --json -- true >"$WORK/nob.json" 2>/dev/null
    check "--json says environment_error" \
        test "$(jfield "$WORK/nob.json" 'r["status"]')" = environment_error
    PATH=$bin "$AKA" sandbox run --sandbox-tmp "$SBXTMP" --sandbox-isolation none -- true \
        >/dev/null 2>&1
    check "with --sandbox-isolation none it runs" test $? -eq 0
    if [ ! -e /dev/nvidiactl ]; then
        sbx --gpus 1 -- true >/dev/null 2>&1
        check "--gpus 1 without NVIDIA device nodes is an environment error (75)" test $? -eq 75
    fi
    check "no leftovers after opt-out tests" no_leftovers
}

# An allocation the host cannot give is an environment error (75) naming what is
# missing, with or without isolation, before anything runs.
t_impossible_gpus() {
    local iso rc
    for iso in bwrap none; do
        sbx --sandbox-isolation "$iso" --gpus 32 -- touch "$WORK/gpu-ran" >/dev/null 2>"$WORK/gpu.err"
        rc=$?
        check "$iso: --gpus 32 is refused with 75 (rc=$rc)" test "$rc" -eq 75
        check "$iso: the reason names the missing device node" grep -q "/dev/nvidia" "$WORK/gpu.err"
        if [ ! -e /dev/nvidiactl ]; then
            sbx --sandbox-isolation "$iso" --gpus 1 -- touch "$WORK/gpu-ran" >/dev/null 2>&1
            rc=$?
            check "$iso: --gpus 1 on a host without NVIDIA devices is 75 (rc=$rc)" test "$rc" -eq 75
        fi
    done
    check "the command never ran" test ! -e "$WORK/gpu-ran"
    check "no leftovers after allocation tests" no_leftovers
}

# An unusable --sandbox-tmp is an environment error (75) naming the directory and why.
tmp_refused() { # tmp_refused WHAT DIR WHY [RUNNER...]
    local what=$1 dir=$2 why=$3 rc
    shift 3
    "$@" "$AKA" sandbox run --sandbox-tmp "$dir" -- true >/dev/null 2>"$WORK/tmp.err"
    rc=$?
    check "--sandbox-tmp $what is refused with 75 (rc=$rc)" test "$rc" -eq 75
    check "  the reason names $dir: $why" grep -qF "sandbox temp directory $dir (--sandbox-tmp): $why" \
        "$WORK/tmp.err"
}

t_sandbox_tmp() {
    local mnt=$WORK/mnt
    mkdir -p "$mnt"
    : >"$WORK/a-file"
    tmp_refused missing "$WORK/none" "No such file or directory"
    tmp_refused "a file" "$WORK/a-file" "not a directory"
    if [ "$(id -u)" != 0 ]; then
        chmod 555 "$mnt"
        tmp_refused "not writable" "$mnt" "not writable"
        chmod 755 "$mnt"
    elif unshare -m true 2>/dev/null; then
        tmp_refused "on a read-only mount" "$mnt" "on a read-only file system" \
            unshare -m sh -c 'mount -t tmpfs -o ro tmpfs "$0" && exec "$@"' "$mnt"
        tmp_refused "on a noexec mount" "$mnt" "on a noexec mount" \
            unshare -m sh -c 'mount -t tmpfs -o noexec tmpfs "$0" && exec "$@"' "$mnt"
    else
        echo "skip - read-only and noexec --sandbox-tmp: no mount namespace here"
    fi
    (cd "$WORK" && "$AKA" sandbox run --sandbox-tmp sbx -- true >/dev/null 2>&1)
    check "a relative --sandbox-tmp works" test $? -eq 0
    check "no leftovers after temp-dir tests" no_leftovers
}

setup
t_network
t_private_read
t_allowlist_walk
t_state_inputs
t_write_outside
t_ro_input
t_clean_env
t_timeout
t_forkbomb 64
t_forkbomb 0
t_output_cap
t_interrupt
t_artifacts
t_isolation_none
t_missing_bwrap
t_impossible_gpus
t_sandbox_tmp
echo "sandbox_isolation: $PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
