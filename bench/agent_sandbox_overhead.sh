#!/bin/bash
# agent_sandbox_overhead.sh — what the agent sandbox costs (docs/measurements.md).
#
#   bench/agent_sandbox_overhead.sh AKA [N] [BASELINE_AKA]
#
# 1. start: the agent policy's exact bwrap argv (taken from the command.json of a confined
#    `aka agent-session` whose CLI is /usr/bin/true; its generated /etc files recreated)
#    around /usr/bin/true, against /usr/bin/true alone; N runs each, timed by bash's
#    $EPOCHREALTIME around the command (the same fork/exec cost on both sides).
# 2. invocation: `aka agent-session` (guard, capture, parse: everything an agent turn goes
#    through) with --agent-sandbox bwrap against none, the CLI /usr/bin/true; the wall time
#    the runtime measured (spawn to reaped) and the whole process's.
# 3. episode: a campaign of N episodes whose fake Claude agent hands off `blocked` at once
#    (no evaluation: the episode is only its machinery), wall time per episode, for
#    --agent-sandbox bwrap and none, and, with BASELINE_AKA (a build from before the
#    agent sandbox: Git worktrees, no view), for that binary.
# Prints median, p90, min and max in ms.
# PATH is the system's alone: a python3 shim in a home directory (pyenv) would be found by
# an unconfined fake agent and not by a confined one, and cost ~0.5 s per start.
set -euo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
AKA=$(realpath "${1:?usage: $0 AKA [N] [BASELINE_AKA]}")
N=${2:-30}
BASE=${3:+$(realpath "$3")}
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/aka-asb-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT

stats() { # label, then one number (seconds) per line on stdin
  python3 -c '
import statistics, sys
v = sorted(float(x) * 1000 for x in sys.stdin if x.strip())
p90 = v[min(len(v) - 1, int(round(0.9 * (len(v) - 1))))]
print("%-44s n=%3d  median %8.2f  p90 %8.2f  min %8.2f  max %8.2f ms" %
      (sys.argv[1], len(v), statistics.median(v), p90, v[0], v[-1]))' "$1"
}
now() { echo "$EPOCHREALTIME"; }
elapsed() { python3 -c 'import sys; print(float(sys.argv[2]) - float(sys.argv[1]))' "$1" "$2"; }

mkdir -p "$T/wt" "$T/wt.view"
echo "brief" >"$T/wt/BRIEF.md"
git init -q "$T/wt"
session() { # MODE CAPTURE: one agent-session, prints "runtime_wall process_wall"
  local t0 t1
  t0=$(now)
  "$AKA" agent-session --backend claude --cli /usr/bin/true --worktree "$T/wt" \
    --brief "$T/wt/BRIEF.md" --capture "$2" --agent-sandbox "$1" --view "$T/wt.view" >"$T/res.json"
  t1=$(now)
  echo "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["wall_seconds"])' \
    "$T/res.json") $(elapsed "$t0" "$t1")"
}

# ---- 1. start cost ----------------------------------------------------------------------------
session bwrap "$T/cap0" >/dev/null
mapfile -t ARGV < <(python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["argv"]
print("\n".join(a[:a.index("--") + 1] + ["/usr/bin/true"]))' "$T/cap0/command.json")
CTL=$(python3 -c '
import json, os, sys
a = json.load(open(sys.argv[1]))["argv"]
print(os.path.dirname(a[a.index("/etc/passwd") - 1]))' "$T/cap0/command.json")
mkdir -p "$CTL"
printf 'sandbox:x:1000:1000::/tmp:/bin/sh\n' >"$CTL/passwd"
printf 'sandbox:x:1000:\n' >"$CTL/group"
printf '127.0.0.1\tlocalhost\n' >"$CTL/hosts"
"${ARGV[@]}" || { echo "the policy argv does not run" >&2; exit 1; }
for _ in 1 2 3; do "${ARGV[@]}"; /usr/bin/true; done # warm-up
# Interleaved, so that a change of the machine's load falls on both series alike.
for _ in $(seq "$N"); do
  t0=$(now); "${ARGV[@]}"; t1=$(now); elapsed "$t0" "$t1" >>"$T/start.bwrap"
  t0=$(now); /usr/bin/true; t1=$(now); elapsed "$t0" "$t1" >>"$T/start.direct"
done
rm -rf "$CTL"
echo "argv: ${#ARGV[@]} words (bwrap ... -- /usr/bin/true)"
stats "start: bwrap (agent policy) true" <"$T/start.bwrap"
stats "start: true" <"$T/start.direct"

# ---- 2. one agent invocation ---------------------------------------------------------------
for i in $(seq "$N"); do
  for mode in none bwrap; do session "$mode" "$T/cap-$mode-$i" >>"$T/inv.$mode"; done
done
for mode in none bwrap; do
  stats "invocation $mode: runtime wall" < <(cut -d' ' -f1 "$T/inv.$mode")
  stats "invocation $mode: aka agent-session process" < <(cut -d' ' -f2 "$T/inv.$mode")
done

# ---- 3. one episode -------------------------------------------------------------------------
. "$SRC/tests/lib/campaign_fixture.sh"
slow_vector_add "$SRC" "$T/op"
mkdir -p "$T/fake"
write_finish_py "$T/fake/finish.py"
printf '{"turns":[{"actions":[{"usage":{"input":1,"output":1}},{"sh":"python3 %s blocked"}]}]}\n' \
  "$T/fake/finish.py" >"$T/fake/scenario.json"
CONFIGS=(none bwrap) # LABEL BINARY FLAGS: N blocked episodes after V0, wall time of each
declare -A BIN=([none]=$AKA [bwrap]=$AKA) FLAGS=(
  [none]="--agent-sandbox none --agent-writable-path $T/fake"
  [bwrap]="--agent-sandbox bwrap --agent-writable-path $T/fake")
[ -z "$BASE" ] || { CONFIGS+=(baseline); BIN[baseline]=$BASE; FLAGS[baseline]=""; }
optimize() { # LABEL ITERS
  local d=$T/ep-$1
  # shellcheck disable=SC2086 # FLAGS are words
  AKA_FAKE_SCENARIO="$T/fake/scenario.json" AKA_FAKE_LOG=/dev/null AKA_FAKE_STATE="$T/fake" \
    "${BIN[$1]}" optimize --op-dir "$T/op" --platform cpu --framework C --agent-cli claude \
    --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$d" --handoff-resumes 0 \
    ${FLAGS[$1]} --max-iters "$2" >/dev/null 2>"$d.err" || { cat "$d.err" >&2; exit 1; }
}
for c in "${CONFIGS[@]}"; do mkdir -p "$T/ep-$c"; optimize "$c" 0; done # V0
for i in $(seq "$N"); do # interleaved, one episode per run
  for c in "${CONFIGS[@]}"; do
    t0=$(now); optimize "$c" "$i"; t1=$(now); elapsed "$t0" "$t1" >>"$T/episode.$c"
  done
done
for c in "${CONFIGS[@]}"; do
  grep -q '"status": "blocked"' "$T/ep-$c"/kernel_opt_*/memory/v"$N".json ||
    { echo "$c: not blocked" >&2; exit 1; }
  stats "episode ($c): aka optimize run of 1 episode" <"$T/episode.$c"
done
