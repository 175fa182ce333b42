# lib_episode.sh — sourced by bench scripts that run `aka eval` / `aka profile` as an agent
# would inside an episode, without a campaign: the episode worktree is made by hand, as
# tests/integration/eval_native.sh makes one (a workspace with .aka/campaign.json and a
# worktree holding the kernel). Needs $root (the checkout).
#
# episode OP KERNEL FRAMEWORK PLATFORM ISOLATION [OP_DIR]: a workspace and worktree under
# $EPISODES/ep-OP (default /tmp/aka-episodes: never under a device call's $OUT, of which at
# most 8 files come back, so that an episode's files cannot crowd out the results) with
# KERNEL (a path under the operator's directory, or absolute) as the kernel; sets WS and WT.
episode() {
    local op=$1 kernel=$2 fw=$3 platform=$4 iso=$5 dir=${6:-$root/examples/ops/$1}
    local top=${EPISODES:-/tmp/aka-episodes}/ep-$op
    WS=$top/ws WT=$top/wt
    rm -rf "$top"
    mkdir -p "$WS/.aka" "$WT"
    echo "gitdir: $WS/.git/worktrees/e0001" >"$WT/.git"
    case $kernel in /*) cp "$kernel" "$WT/" ;; *) cp "$dir/$kernel" "$WT/" ;; esac
    printf '{"op_dir": "%s", "framework": "%s", "platform": "%s", "kernel": "%s", "sandbox_isolation": "%s", "mode": "development"}\n' \
        "$dir" "$fw" "$platform" "$(basename "$kernel")" "$iso" >"$WS/.aka/campaign.json"
}

# The toolkit's bin/ncu is a launcher that picks the newest install under
# /opt/nvidia/nsight-compute/, which a job (binding the profiler's own tree only) does not
# see: put the install itself first on PATH (docs/profile.md).
ncu_on_path() {
    for d in /opt/nvidia/nsight-compute/*/; do [ -x "$d/ncu" ] && PATH=${d%/}:$PATH; done
}

# user_stacks: every judge and runner process's user stacks, for a job that stalls
# (eu-stack, which bench/make_devcarry.sh carries in .devcarry/eus; root outside the
# sandbox may read them). Prints nothing where eu-stack was not carried.
user_stacks() {
    local eus=$root/.devcarry/eus p
    [ -x "$eus/eu-stack" ] || return 0
    for p in $(pgrep -f '^\./(refrun|candrun|judge plan)'); do
        echo "--- stack $(date -u +%T) pid $p $(tr '\0' ' ' <"/proc/$p/cmdline")"
        LD_LIBRARY_PATH=$eus timeout 15 "$eus/eu-stack" -p "$p" 2>&1 | head -150
    done
}
