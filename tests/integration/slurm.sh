#!/bin/bash
# slurm.sh — the slurm transport against a real single-node Slurm (Debian's slurmctld and
# slurmd, started here with their own slurm.conf and gres.conf in a temp dir: AuthType
# auth/none, no munge, no accounting; two GRES gpu declared on regular files of the temp
# dir, AutoDetect off; a low-priority partition for aka and a high-priority one that
# preempts it with PreemptMode CANCEL).
#   1. a job runs as an allocation's step: its allowlisted file, its exit status, its stderr
#      apart from srun's messages, a missing command is 127;
#   2. a job of 2 GPUs gets an allocation with --gres=gpu:2 (the node's GPU indices 0,1 in
#      its notes); this node has no /dev/nvidia*, so the sandbox cannot be built there: an
#      environment failure (75), never the job's;
#   3. a job preempted by the scheduler is retried in a fresh allocation and completes; the
#      note names PREEMPTED;
#   4. a job whose every allocation is cancelled (scancel) is exit 75, "ended under the job:
#      CANCELLED", after AKA_SLURM_ATTEMPTS (3) attempts;
#   5. a built-in-agent campaign on vector_add (native C, CPU; a slow seed) completes with
#      --sandbox slurm while one of its allocations is cancelled mid-job (retried, nothing
#      recorded against a candidate), its ABBA verification ran as steps of one allocation;
#   6. a campaign whose every allocation is cancelled stops with exit 75 and
#      .aka/environment-failure.json; nothing beyond V0 is recorded, and V0's failure names
#      the environment;
#   7. SIGTERM to aka ends the job (143) and cancels its allocation, running or pending.
# Exit 77 (skipped) when slurmctld/slurmd are not installed, when not root (slurmd launches
# jobs as their user), or when the daemons do not come up.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
skip() { echo "SKIP: $*"; exit 77; }
for tool in slurmctld slurmd sbatch srun scontrol scancel squeue sinfo bwrap python3; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/deps.sh installs slurmctld, slurmd, slurm-client)"
done
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to launch jobs as their user"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-slurm-test.XXXXXX")
chmod 755 "$TMP"
PIDS=()
# The daemons, then any slurmstepd of this cluster (its log is ours) that outlived them.
stop_slurm() {
    local p f
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for _ in $(seq 50); do
        kill -0 "${PIDS[@]}" 2>/dev/null || break
        sleep 0.1
    done
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    for f in /proc/[0-9]*/fd/*; do
        [ "$(readlink "$f" 2>/dev/null)" = "$TMP/log/d.log" ] || continue
        p=${f#/proc/}
        p=${p%%/*}
        [[ "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" == slurmstepd* ]] && kill -9 "$p" 2>/dev/null || true
    done
    # proctrack/linuxproc can miss a sandbox whose step the scheduler ended: a bwrap of
    # one of this test's job directories is this test's to end.
    for f in /proc/[0-9]*/cmdline; do
        p=${f#/proc/}
        p=${p%%/*}
        tr '\0' ' ' <"$f" 2>/dev/null | grep -q "^bwrap .*$TMP/jobs/" && kill -9 "$p" 2>/dev/null || true
    done
    wait 2>/dev/null || true
}
trap 'stop_slurm; [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; tail -n 5 "$TMP/log/ctld.log" "$TMP/log/d.log" >&2 || true; exit 1; }

# ---- the cluster -------------------------------------------------------------------------------
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
HOST=$(hostname -s)
CTLD_PORT=$(free_port)
D_PORT=$(free_port)
mkdir -p "$TMP/state" "$TMP/spool" "$TMP/log" "$TMP/jobs"
: >"$TMP/nvidia0"
: >"$TMP/nvidia1"
cat >"$TMP/slurm.conf" <<EOF
ClusterName=akatest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$D_PORT
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool
SlurmctldPidFile=$TMP/ctld.pid
SlurmdPidFile=$TMP/d.pid
SlurmctldLogFile=$TMP/log/ctld.log
SlurmdLogFile=$TMP/log/d.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=akat Nodes=ALL Default=YES MaxTime=INFINITE State=UP PriorityTier=1
PartitionName=akahi Nodes=ALL MaxTime=INFINITE State=UP PriorityTier=10
EOF
cat >"$TMP/gres.conf" <<EOF
AutoDetect=off
NodeName=$HOST Name=gpu File=$TMP/nvidia[0-1]
EOF
export SLURM_CONF=$TMP/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" >"$TMP/log/ctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -f "$SLURM_CONF" >"$TMP/log/d.out" 2>&1 &
PIDS+=($!)
up=no
for _ in $(seq 150); do
    if [ "$(sinfo -h -p akat -o %t 2>/dev/null)" = idle ]; then up=yes; break; fi
    sleep 0.2
done
[ "$up" = yes ] || skip "slurmctld/slurmd did not come up: $(tail -n 3 "$TMP/log/ctld.out" "$TMP/log/d.out" | tr '\n' ' ')"
echo "ok: single-node slurm up ($HOST, ports $CTLD_PORT/$D_PORT)"
SL=(--sandbox slurm --slurm-partition akat --sandbox-tmp "$TMP/jobs")

# Cancel the allocation of each aka job step that starts, at most $1 times (0: every one);
# the ids go to $2, one a line.
cancel_steps() {
    local max=$1 out=$2 n=0 id
    : >"$out"
    while :; do
        for id in $(squeue -s -h -o '%i %j' 2>/dev/null | awk '$1 ~ /\.0$/ && $2 == "env" {sub(/\.0$/, "", $1); print $1}'); do
            grep -qx "$id" "$out" && continue
            sleep 0.3
            scancel "$id" && echo "$id" >>"$out"
            n=$((n + 1))
            [ "$max" != 0 ] && [ "$n" -ge "$max" ] && return 0
        done
        sleep 0.05
    done
}

# ---- 1. a job as a step --------------------------------------------------------------------------
echo shipped >"$TMP/a.txt"
rc=0
"$AKA" sandbox run "${SL[@]}" --input "$TMP/a.txt" -- sh -c 'cat a.txt; echo to-err >&2; exit 3' \
    >"$TMP/o1" 2>"$TMP/e1" || rc=$?
[ "$rc" = 3 ] || fail "job: exit $rc, expected 3: $(cat "$TMP/e1")"
[ "$(cat "$TMP/o1")" = shipped ] || fail "job stdout: $(cat "$TMP/o1")"
[ "$(cat "$TMP/e1")" = to-err ] || fail "job stderr (srun's messages kept apart): $(cat "$TMP/e1")"
rc=0
"$AKA" sandbox run "${SL[@]}" -- no-such-command >/dev/null 2>&1 || rc=$?
[ "$rc" = 127 ] || fail "missing command: exit $rc, expected 127"
[ -z "$(ls -A "$TMP/jobs")" ] || fail "job directories left: $(ls "$TMP/jobs")"
[ -z "$(squeue -h -t PD,R)" ] || fail "allocations left: $(squeue -h -t PD,R)"
echo "ok: a job runs as the step of its allocation (exit, stdout, stderr, 127); nothing left"

# ---- 2. GPUs from the scheduler ------------------------------------------------------------------
rc=0
"$AKA" sandbox run "${SL[@]}" --gpus 2 --json -- true >"$TMP/o2" 2>"$TMP/e2" || rc=$?
[ "$rc" = 75 ] || fail "GPU job on a node without GPUs: exit $rc, expected 75"
python3 - "$TMP/o2" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "environment_error", r["status"]
assert any(n.startswith("slurm allocation ") and n.endswith(", GPUs 0,1") for n in r["notes"]), r["notes"]
assert "could not be built on the slurm node" in r["error"], r["error"]
EOF
echo "ok: a 2-GPU job gets gres gpu:2 (indices 0,1); a node that cannot build its sandbox is exit 75"

# ---- 3. preempted by the scheduler ---------------------------------------------------------------
rc=0
"$AKA" sandbox run "${SL[@]}" --json -- sh -c 'sleep 3; echo finished' >"$TMP/o3" 2>"$TMP/e3" &
job=$!
for _ in $(seq 200); do squeue -s -h -o %i | grep -q '\.0$' && break; sleep 0.05; done
srun -p akahi --exclusive -N1 -n2 true >/dev/null 2>&1 || fail "the high-priority job did not run"
wait "$job" || rc=$?
[ "$rc" = 0 ] || fail "preempted job: exit $rc: $(cat "$TMP/e3")"
python3 - "$TMP/o3" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "completed" and r["stdout"] == "finished\n", r
notes = [n for n in r["notes"] if n.startswith("attempt 1 of 3:")]
# The state is read when srun returns: PREEMPTED, or COMPLETING while the node still ends it.
assert notes and "ended under the job" in notes[0] and "retried in a fresh allocation" in notes[0], r["notes"]
assert "PREEMPTED" in notes[0] or "COMPLETING" in notes[0], notes[0]
EOF
echo "ok: a preempted job is retried in a fresh allocation and completes"

# ---- 4. cancelled every time -------------------------------------------------------------------
cancel_steps 0 "$TMP/cancelled4" &
watcher=$!
rc=0
"$AKA" sandbox run "${SL[@]}" -- sh -c 'sleep 5; echo finished' >"$TMP/o4" 2>"$TMP/e4" || rc=$?
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true
[ "$rc" = 75 ] || fail "cancelled job: exit $rc, expected 75: $(cat "$TMP/e4")"
grep -q "ended under the job: CANCELLED" "$TMP/e4" || fail "cancelled job: $(cat "$TMP/e4")"
[ "$(wc -l <"$TMP/cancelled4")" = 3 ] || fail "expected 3 attempts, cancelled: $(cat "$TMP/cancelled4")"
! grep -q finished "$TMP/o4" || fail "the cancelled job printed its output"
echo "ok: a job cancelled by the scheduler on every attempt is exit 75 after 3 attempts"

# ---- 5. a campaign, one allocation cancelled under it ---------------------------------------------
# vector_add whose seed's default configuration is slow (tests/lib/campaign_fixture.sh): an
# episode always has a candidate to verify, so the ABBA check below cannot miss by noise.
# shellcheck source=tests/lib/campaign_fixture.sh
. "$SRC/tests/lib/campaign_fixture.sh"
OP=$TMP/vector_add
cp -r "$SRC/examples/ops/vector_add" "$OP"
slow_seed "$OP/seeds/C/kernel.c"
campaign() { # PARENT
    mkdir -p "$1"
    "$AKA" optimize --op-dir "$OP" --platform cpu --framework C --workspace "$1" \
        --agent-cli builtin --max-iters 3 --fast-episodes 0 --verify-repeats 1 \
        --verify-run-timeout 60 --max-dispersion-pct 90 --no-auto-recovery "${SL[@]}" \
        >"$1.out" 2>"$1.err"
}
: >"$TMP/log/d.log"
cancel_steps 1 "$TMP/cancelled5" &
watcher=$!
campaign "$TMP/c5" || { tail -20 "$TMP/c5.err"; fail "campaign with one cancelled allocation"; }
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true
[ "$(wc -l <"$TMP/cancelled5")" = 1 ] || fail "no allocation was cancelled during the campaign"
python3 - "$TMP/c5/kernel_opt_vector_add_c_cpu" <<'EOF'
import glob, json, os, sys
ws = sys.argv[1]
names = sorted(os.path.basename(p) for p in glob.glob(f"{ws}/memory/v*.json"))
assert names[:2] == ["v0.json", "v1.json"], names
statuses = [json.load(open(f"{ws}/memory/{n}")).get("status") for n in names]
assert statuses[:2] == ["baseline", "framework_baseline"], statuses
assert not os.path.exists(f"{ws}/.aka/environment-failure.json")
EOF
# Same-allocation ABBA: one allocation ran four steps (I C C I), as slurmd logged them.
grep -q "ABBA verification, 1 x I C C I" "$TMP/c5.err" || fail "no episode reached ABBA verification"
python3 - "$TMP/log/d.log" <<'EOF'
import re, sys, collections
steps = collections.defaultdict(set)
for m in re.finditer(r"StepId=(\d+)\.(\d+)", open(sys.argv[1]).read()):
    steps[m.group(1)].add(int(m.group(2)))
most = max((len(s) for s in steps.values()), default=0)
assert most >= 4, dict(steps)
EOF
echo "ok: a campaign completes over slurm with an allocation cancelled under it; ABBA ran in one allocation"

# ---- 6. a campaign whose allocations are all cancelled ---------------------------------------------
cancel_steps 0 "$TMP/cancelled6" &
watcher=$!
rc=0
campaign "$TMP/c6" || rc=$?
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true
[ "$rc" = 75 ] || { tail -5 "$TMP/c6.err"; fail "campaign under cancellation: exit $rc, expected 75"; }
WS6=$TMP/c6/kernel_opt_vector_add_c_cpu
[ -f "$WS6/.aka/environment-failure.json" ] || fail "no environment-failure.json"
grep -q "CANCELLED" "$WS6/.aka/environment-failure.json" || fail "marker: $(cat "$WS6/.aka/environment-failure.json")"
# Nothing beyond V0, and V0's failure (the baseline's, never a candidate's) names the environment.
python3 - "$WS6" <<'EOF'
import glob, json, os, sys
ws = sys.argv[1]
names = sorted(os.path.basename(p) for p in glob.glob(f"{ws}/memory/v*.json"))
assert names in ([], ["v0.failed.json"]), names
for n in names:
    reason = json.load(open(f"{ws}/memory/{n}"))["quality_gate"]["failure_reason"]
    assert reason.startswith("environment: slurm allocation") and "CANCELLED" in reason, reason
EOF
echo "ok: a campaign whose allocations are all cancelled stops with exit 75 and its environment-failure marker"

# ---- 7. stopped: the allocation is cancelled, running or pending ------------------------------------
no_allocation_left() { # WHAT
    for _ in $(seq 50); do
        squeue -h -t PD,R -o %j | grep -q '^aka-' || return 0
        sleep 0.1
    done
    fail "$1: an aka allocation is left: $(squeue -h)"
}
"$AKA" sandbox run "${SL[@]}" -- sleep 60 >/dev/null 2>&1 &
job=$!
for _ in $(seq 200); do squeue -s -h -o %i | grep -q '\.0$' && break; sleep 0.05; done
kill -TERM "$job"
rc=0
wait "$job" || rc=$?
[ "$rc" = 143 ] || fail "SIGTERM while running: exit $rc, expected 143"
no_allocation_left "SIGTERM while running"
blocker=$(sbatch --parsable -p akahi --exclusive -N1 -n2 -o /dev/null --wrap 'exec sleep 120')
"$AKA" sandbox run "${SL[@]}" -- true >/dev/null 2>&1 &
job=$!
for _ in $(seq 200); do squeue -h -t PD -o %j | grep -q '^aka-' && break; sleep 0.05; done
squeue -h -t PD -o %j | grep -q '^aka-' || fail "the aka allocation never pended"
kill -TERM "$job"
rc=0
wait "$job" || rc=$?
scancel "$blocker"
[ "$rc" = 143 ] || fail "SIGTERM while pending: exit $rc, expected 143"
no_allocation_left "SIGTERM while pending"
echo "ok: SIGTERM ends the job (143) and cancels its allocation, running or pending"

[ -z "$(ls -A "$TMP/jobs")" ] || fail "job directories left: $(ls "$TMP/jobs")"
echo "PASS"
